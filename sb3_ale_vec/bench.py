"""Side-by-side throughput: this engine against SB3's and ALE's Atari vector envs, in one run.

    python -m sb3_ale_vec.bench --game breakout --num-envs 8 --steps 2000 --repeats 5

Every peer runs the same workload: SB3's default Atari preprocessing (84x84 gray, frame skip 4
with max-pool, stack of 4, no-op and fire reset, episodic life, clipped rewards) and the same
random actions, generated before the clock starts. Peers take turns, repetition by repetition,
so a busy machine slows them alike; the table gives the median and the spread of steps/s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

Stepper = tuple[Callable[[np.ndarray], None], Callable[[], None], int]  # step, close, n_actions


def _ours(game: str, n: int) -> Stepper:
    from sb3_ale_vec import AleNativeVecEnv

    env = AleNativeVecEnv(game, n, seed=0)
    env.reset()
    return env.step, env.close, int(env.action_space.n)


def _sb3(game: str, n: int, vec_env: str) -> Stepper:
    import ale_py
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecFrameStack

    from sb3_ale_vec.games import camel_name

    gym.register_envs(ale_py)
    cls, kwargs = (SubprocVecEnv, {"start_method": "fork"}) if vec_env == "subproc" else (DummyVecEnv, {})
    env = VecFrameStack(make_atari_env(f"{camel_name(game)}NoFrameskip-v4", n_envs=n, seed=0,
                                       vec_env_cls=cls, vec_env_kwargs=kwargs), 4)
    env.reset()
    return env.step, env.close, int(env.action_space.n)


def _ale_vector(game: str, n: int, autoreset_mode: str) -> Stepper:
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(game, n, episodic_life=True, autoreset_mode=autoreset_mode)
    env.reset(seed=0)
    return env.step, env.close, int(env.single_action_space.n)


PEERS: dict[str, Callable[[str, int], Stepper]] = {
    "sb3_ale_vec": _ours,
    "ale_py AtariVectorEnv (same-step)": lambda g, n: _ale_vector(g, n, "SameStep"),
    "ale_py AtariVectorEnv (next-step)": lambda g, n: _ale_vector(g, n, "NextStep"),
    "SB3 make_atari_env + SubprocVecEnv": lambda g, n: _sb3(g, n, "subproc"),
    "SB3 make_atari_env + DummyVecEnv": lambda g, n: _sb3(g, n, "dummy"),
}


def measure(make: Callable[[str, int], Stepper], game: str, n: int, steps: int, warmup: int) -> float:
    """Agent steps per second (summed over envs) of one fresh env over `steps` batched steps."""
    step, close, n_actions = make(game, n)
    try:
        actions = np.random.default_rng(0).integers(0, n_actions, (warmup + steps, n))
        for a in actions[:warmup]:
            step(a)
        start = time.perf_counter()
        for a in actions[warmup:]:
            step(a)
        return steps * n / (time.perf_counter() - start)
    finally:
        close()


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=1000, help="batched steps per measurement")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="all", help="comma-separated names from: " + ", ".join(PEERS))
    args = parser.parse_args(argv)
    names = list(PEERS) if args.peers == "all" else [p.strip() for p in args.peers.split(",")]
    for name in names:
        if name not in PEERS:
            parser.error(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")

    results: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(args.repeats):
        for name in names:  # interleaved: each repetition runs every peer once
            results[name].append(measure(PEERS[name], args.game, args.num_envs, args.steps, args.warmup))
            print(f"  repeat {rep + 1}/{args.repeats}  {name:<38} {results[name][-1]:>9,.0f} steps/s", flush=True)

    ours = statistics.median(results["sb3_ale_vec"]) if "sb3_ale_vec" in results else None
    print(f"\n{args.game}, num_envs={args.num_envs}, {args.steps} steps x {args.repeats} repeats (median, min-max)")
    print(f"{'peer':<38} {'steps/s':>10} {'min':>9} {'max':>9} {'ours / peer':>12}")
    for name, values in results.items():
        med = statistics.median(values)
        ratio = f"{ours / med:>11.2f}x" if ours else ""
        print(f"{name:<38} {med:>10,.0f} {min(values):>9,.0f} {max(values):>9,.0f} {ratio}")
    return results


if __name__ == "__main__":
    main()
