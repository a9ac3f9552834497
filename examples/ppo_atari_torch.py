"""PPO in plain PyTorch over any Gymnasium vector env of stacked Atari frames, in CleanRL's style.

The same loop trains over ``AleVectorEnv``, over ``SyncVectorEnv`` + ``AtariPreprocessing`` +
``FrameStackObservation``, over ``sb3_ale_vec.AtariVectorEnv`` or over ale-py's own: the tests train
it on a pipeline and on this package's replacement with one seed and require equal networks.

Auto-reset is Gymnasium's default, next-step: the row after a done is the reset, whose action is
ignored, so it is left out of the loss; a truncated episode bootstraps from its final observation's
value (the observation the done step returned), a terminated one does not.

    python examples/ppo_atari_torch.py --steps 20000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn


def layer(module: nn.Module, gain: float = np.sqrt(2)) -> nn.Module:
    nn.init.orthogonal_(module.weight, gain)
    nn.init.constant_(module.bias, 0.0)
    return module


class Agent(nn.Module):
    """Nature CNN with an actor and a critic head (CleanRL's ppo_atari.py)."""

    def __init__(self, frames: int, actions: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            layer(nn.Conv2d(frames, 32, 8, stride=4)), nn.ReLU(),
            layer(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            layer(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten(),
            layer(nn.Linear(64 * 7 * 7, 512)), nn.ReLU())
        self.actor = layer(nn.Linear(512, actions), 0.01)
        self.critic = layer(nn.Linear(512, 1), 1.0)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.network(obs / 255.0)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)


def train(envs, total_steps: int, seed: int = 0, num_steps: int = 32, epochs: int = 2, minibatches: int = 2,
          lr: float = 2.5e-4, gamma: float = 0.99, gae_lambda: float = 0.95, clip: float = 0.1,
          ent_coef: float = 0.01, vf_coef: float = 0.5) -> tuple[Agent, list[tuple[float, bool]]]:
    """Train a PPO agent on ``envs`` (a Gymnasium vector env, next-step auto-reset, observations
    ``(n, stack, 84, 84)`` uint8); returns the agent and every finished episode, in order, as
    (return, whether it was truncated)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n = envs.num_envs
    agent = Agent(envs.single_observation_space.shape[0], int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
    obs_np, _ = envs.reset(seed=seed)
    after_done = np.zeros(n, bool)  # the next step of these envs is their reset
    returns, running = [], np.zeros(n)
    for _ in range(max(1, total_steps // (num_steps * n))):
        obs, acts, logps, vals = [], [], [], []
        rews, terms, dones, valid = (np.zeros((num_steps, n), np.float32) for _ in range(4))
        for t in range(num_steps):
            x = torch.as_tensor(obs_np)  # as the env hands it out, memory layout included
            with torch.no_grad():
                logits, value = agent(x)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs.append(x)
            acts.append(action)
            logps.append(dist.log_prob(action))
            vals.append(value)
            valid[t] = ~after_done
            obs_np, reward, terminated, truncated, _ = envs.step(action.numpy())
            rews[t], terms[t], dones[t] = reward, terminated, terminated | truncated
            running += np.where(after_done, 0.0, reward)
            for i in np.flatnonzero((terminated | truncated) & ~after_done):
                returns.append((float(running[i]), bool(truncated[i] and not terminated[i])))
                running[i] = 0.0
            after_done = terminated | truncated
        with torch.no_grad():
            next_value = agent(torch.as_tensor(obs_np))[1].numpy()
        values = torch.stack(vals).numpy()
        advantages = np.zeros((num_steps, n), np.float32)
        last = np.zeros(n, np.float32)
        for t in reversed(range(num_steps)):
            following = next_value if t == num_steps - 1 else values[t + 1]  # a done's: its final obs
            delta = rews[t] + gamma * following * (1.0 - terms[t]) - values[t]
            last = (delta + gamma * gae_lambda * (1.0 - dones[t]) * last) * valid[t]
            advantages[t] = last
        targets = advantages + values
        b_obs, b_act, b_logp = torch.cat(obs), torch.cat(acts), torch.cat(logps)
        b_adv, b_tgt, b_valid = (torch.as_tensor(a.reshape(-1)) for a in (advantages, targets, valid))
        for _ in range(epochs):
            for mb in np.array_split(rng.permutation(num_steps * n), minibatches):
                mb = torch.as_tensor(mb)
                w = b_valid[mb]
                if w.sum() == 0:
                    continue
                logits, value = agent(b_obs[mb])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = (dist.log_prob(b_act[mb]) - b_logp[mb]).exp()
                adv = b_adv[mb]
                mean = (adv * w).sum() / w.sum()
                std = (((adv - mean) ** 2 * w).sum() / w.sum()).sqrt()
                adv = (adv - mean) / (std + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip))
                loss = (pg * w).sum() / w.sum() + vf_coef * (0.5 * (value - b_tgt[mb]) ** 2 * w).sum() / w.sum() \
                    - ent_coef * (dist.entropy() * w).sum() / w.sum()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    return agent, returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout")
    args = parser.parse_args()
    from sb3_ale_vec import AleVectorEnv

    envs = AleVectorEnv(args.game, args.envs, episodic_life=True, repeat_action_probability=0.0)
    start = time.perf_counter()
    _, returns = train(envs, args.steps, args.seed, num_steps=args.num_steps, epochs=4, minibatches=4)
    seconds = time.perf_counter() - start
    envs.close()
    last = [r for r, _ in returns[-20:]]
    print(f"{len(returns)} episodes (lives); mean return of the last 20: {np.mean(last) if last else float('nan'):.2f}; "
          f"{args.steps / seconds:,.0f} steps/s")


if __name__ == "__main__":
    main()
