"""PPO on Atari in plain JAX + optax, the rollout inside jax.jit: one lax.scan over AtariVectorEnv.xla()'s step.

Each iteration is one jitted call: the rollout (policy, sampling and env steps, all in a scan, the env
stepped by the engine's XLA FFI target with no Python in the loop), then GAE and the PPO epochs.

    pip install "sb3-ale-vec[jax]" optax
    python examples/ppo_atari_jax.py --game breakout --num-envs 8 --total-steps 2000000

The env is ale-py's AtariVectorEnv settings (84x84 gray, 4 frames, frameskip 4, 30 no-ops, fire
reset, clipped rewards). Its NEXT_STEP autoreset makes the step after a done a reset whose action is
ignored: that fake transition is masked out of the loss (``valid``), and ``done`` cuts the bootstrap.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sb3_ale_vec import AtariVectorEnv


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="breakout")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=128, help="rollout length per env and iteration")
    p.add_argument("--total-steps", type=int, default=1_000_000, help="env steps (agent steps of all envs)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.1)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def init_params(key, num_actions, stack):
    """The Nature CNN (NCHW), orthogonal init as in CleanRL's PPO."""
    ortho = jax.nn.initializers.orthogonal
    shapes = [("c1", (32, stack, 8, 8), np.sqrt(2)), ("c2", (64, 32, 4, 4), np.sqrt(2)),
              ("c3", (64, 64, 3, 3), np.sqrt(2)), ("fc", (3136, 512), np.sqrt(2)),
              ("pi", (512, num_actions), 0.01), ("v", (512, 1), 1.0)]
    params = {}
    for (name, shape, scale), k in zip(shapes, jax.random.split(key, len(shapes))):
        fan_out_first = len(shape) == 4  # conv kernels: orthogonal over (out, in * kh * kw)
        w = ortho(scale)(k, (shape[0], int(np.prod(shape[1:])))).reshape(shape) if fan_out_first else \
            ortho(scale)(k, shape)
        params[name] = {"w": w, "b": jnp.zeros(shape[0] if fan_out_first else shape[1])}
    return params


def network(params, obs):
    x = obs.astype(jnp.float32) / 255.0
    for name, stride in (("c1", 4), ("c2", 2), ("c3", 1)):
        x = jax.lax.conv_general_dilated(x, params[name]["w"], (stride, stride), "VALID",
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
        x = jax.nn.relu(x + params[name]["b"][None, :, None, None])
    x = jax.nn.relu(x.reshape(x.shape[0], -1) @ params["fc"]["w"] + params["fc"]["b"])
    return x @ params["pi"]["w"] + params["pi"]["b"], (x @ params["v"]["w"] + params["v"]["b"])[:, 0]


def make_iteration(step, args, optimizer):
    def rollout(params, handle, obs, prev_done, ep_return, key):
        def body(carry, _):
            handle, obs, prev_done, ep_return, key = carry
            key, sample_key = jax.random.split(key)
            logits, value = network(params, obs)
            action = jax.random.categorical(sample_key, logits)
            logp = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
            handle, (next_obs, reward, terminated, truncated, _) = step(handle, action.astype(jnp.int32))
            done = terminated | truncated
            ep_return = ep_return + reward
            finished = jnp.where(done, ep_return, jnp.nan)  # clipped return of each episode that ended
            transition = (obs, action, logp, value, reward.astype(jnp.float32), done, ~prev_done, finished)
            return (handle, next_obs, done, jnp.where(done, 0, ep_return), key), transition

        return jax.lax.scan(body, (handle, obs, prev_done, ep_return, key), None, length=args.num_steps)

    def loss_fn(params, batch):
        obs, action, old_logp, advantage, target, valid = batch
        logits, value = network(params, obs)
        log_probs = jax.nn.log_softmax(logits)
        logp = log_probs[jnp.arange(action.shape[0]), action]
        ratio = jnp.exp(logp - old_logp)
        adv = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - args.clip, 1 + args.clip) * adv)
        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1)
        per_sample = pg + args.vf_coef * 0.5 * (value - target) ** 2 - args.ent_coef * entropy
        return (per_sample * valid).sum() / jnp.maximum(valid.sum(), 1.0)

    @jax.jit
    def iteration(params, opt_state, handle, obs, prev_done, ep_return, key):
        key, rollout_key, perm_key = jax.random.split(key, 3)
        (handle, obs, prev_done, ep_return, _), traj = rollout(params, handle, obs, prev_done, ep_return, rollout_key)
        t_obs, t_action, t_logp, t_value, t_reward, t_done, t_valid, finished = traj
        _, last_value = network(params, obs)

        def gae(carry, x):
            next_adv, next_value = carry
            reward, value, done = x
            delta = reward + args.gamma * next_value * (1 - done) - value
            adv = delta + args.gamma * args.gae_lambda * (1 - done) * next_adv
            return (adv, value), adv

        _, advantages = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value),
                                     (t_reward, t_value, t_done.astype(jnp.float32)), reverse=True)
        flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]),
                            (t_obs, t_action, t_logp, advantages, advantages + t_value, t_valid.astype(jnp.float32)))
        size = flat[1].shape[0] // args.minibatches * args.minibatches

        def epoch(state, k):
            def minibatch(state, idx):
                params, opt_state = state
                loss, grads = jax.value_and_grad(loss_fn)(params, jax.tree.map(lambda x: x[idx], flat))
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), loss

            order = jax.random.permutation(k, flat[1].shape[0])[:size].reshape(args.minibatches, -1)
            return jax.lax.scan(minibatch, state, order)

        (params, opt_state), losses = jax.lax.scan(epoch, (params, opt_state), jax.random.split(perm_key, args.epochs))
        return params, opt_state, handle, obs, prev_done, ep_return, key, losses.mean(), finished

    return iteration


def main():
    args = parse_args()
    env = AtariVectorEnv(args.game, num_envs=args.num_envs)
    handle, reset, step = env.xla()
    handle, (obs, _) = reset(handle, seed=args.seed)
    key = jax.random.PRNGKey(args.seed)
    key, init_key = jax.random.split(key)
    params = init_params(init_key, env.single_action_space.n, env.single_observation_space.shape[0])
    optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(args.lr, eps=1e-5))
    opt_state = optimizer.init(params)
    iteration = make_iteration(step, args, optimizer)
    prev_done = jnp.zeros(args.num_envs, bool)
    ep_return = jnp.zeros(args.num_envs, jnp.int32)
    per_iteration = args.num_envs * args.num_steps
    iterations = max(1, args.total_steps // per_iteration)
    returns, start, steps = [], None, 0
    for i in range(iterations):
        params, opt_state, handle, obs, prev_done, ep_return, key, loss, finished = iteration(
            params, opt_state, handle, obs, prev_done, ep_return, key)
        finished = np.asarray(finished)
        returns.extend(finished[~np.isnan(finished)].tolist())
        if start is None:  # the first call compiles: time from the second on
            start = time.perf_counter()
            continue
        steps += per_iteration
        if i % 10 == 0 or i == iterations - 1:
            recent = np.mean(returns[-20:]) if returns else float("nan")
            print(f"iteration {i + 1}/{iterations}: loss {float(loss):.4f}, episodes {len(returns)}, "
                  f"mean return (last 20, clipped) {recent:.2f}, {steps / (time.perf_counter() - start):.0f} env steps/s "
                  f"(rollout + update)", flush=True)
    env.close()
    print(f"done: {len(returns)} episodes, mean return of the first 20 {np.mean(returns[:20]) if returns else float('nan'):.2f}, "
          f"of the last 20 {np.mean(returns[-20:]) if returns else float('nan'):.2f}")


if __name__ == "__main__":
    main()
