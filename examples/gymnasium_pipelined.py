"""Overlap policy inference with emulation: AleVectorEnv's EnvPool-style batches vs synchronous steps.

A stand-in policy takes a fixed time per call (as a network forward pass would). Synchronously, the
emulators wait for it and it waits for them. With batch_size = num_envs / 2, one half of the envs
steps while the policy works on the other half's observations, and no worker idles at the end of
a batch. It pays off when the machine has cores to spare while the policy runs, and when emulating
half a batch takes longer than one policy call (the policy is called twice as often).

    python examples/gymnasium_pipelined.py --num-envs 16 --inference-ms 1
"""

import argparse
import time

import numpy as np

from sb3_ale_vec import AleVectorEnv


def policy(obs: np.ndarray, n_actions: int, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Random actions, after `seconds` of pretend inference (the GIL is released while it sleeps)."""
    time.sleep(seconds)
    return rng.integers(0, n_actions, len(obs))


def run(game: str, num_envs: int, batch_size: int, steps: int, warmup: int, seconds: float) -> float:
    envs = AleVectorEnv(game, num_envs, batch_size=batch_size)
    rng = np.random.default_rng(0)
    n_actions = envs.single_action_space.n
    obs, info = envs.reset(seed=0)
    env_steps, start = 0, 0.0
    while env_steps < warmup + steps:
        if start == 0.0 and env_steps >= warmup:  # past the seeded resets (each reloads its ROM)
            env_steps, start = 0, time.perf_counter()
        envs.send(policy(obs, n_actions, seconds, rng))  # the envs named by the last recv
        obs, rewards, terminations, truncations, info = envs.recv()
        env_steps += len(obs)
    rate = env_steps / (time.perf_counter() - start)
    envs.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=8000, help="timed env steps per mode")
    parser.add_argument("--warmup", type=int, default=1000, help="env steps before timing")
    parser.add_argument("--inference-ms", type=float, default=2.0)
    args = parser.parse_args()
    seconds = args.inference_ms / 1000
    sync = run(args.game, args.num_envs, 0, args.steps, args.warmup, seconds)
    batched = run(args.game, args.num_envs, args.num_envs // 2, args.steps, args.warmup, seconds)
    print(f"synchronous (batch_size={args.num_envs}): {sync:,.0f} env steps/s")
    print(f"batched (batch_size={args.num_envs // 2}):     {batched:,.0f} env steps/s ({batched / sync:.2f}x)")


if __name__ == "__main__":
    main()
