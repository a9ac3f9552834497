"""Soak test: millions of random steps and resets; resident memory must stay flat, results exact.

    python -m sb3_ale_vec.bench.soak --steps 2000000          # the long run
    python -m sb3_ale_vec.bench.soak --steps 20000            # CI's short run

Checks every step's shapes, dtypes and done/terminal_observation pairing, reports resident memory
as it goes, then replays one stretch with 1, 2 and 4 threads and requires identical results.
Exits with status 1 on any failure.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np

from sb3_ale_vec import AleNativeVecEnv


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def digest(game: str, num_envs: int, steps: int, threads: int) -> str:
    """A hash of everything a seeded run returns."""
    env = AleNativeVecEnv(game, num_envs, seed=123, num_threads=threads)
    rng = np.random.default_rng(7)
    h = hashlib.sha256(env.reset().tobytes())
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(rng.integers(0, env.action_space.n, num_envs))
        h.update(obs.tobytes() + rewards.tobytes() + dones.tobytes())
        for info in infos:
            if "terminal_observation" in info:
                h.update(info["terminal_observation"].tobytes())
            if "episode" in info:
                h.update(repr((info["episode"]["r"], info["episode"]["l"])).encode())
    env.close()
    return h.hexdigest()


def soak(game: str, num_envs: int, steps: int, reset_every: int, report_every: int) -> list[str]:
    problems: list[str] = []
    env = AleNativeVecEnv(game, num_envs, seed=0)
    shape = (num_envs, *env.observation_space.shape)
    rng = np.random.default_rng(0)
    env.reset()
    start, baseline, games = time.perf_counter(), None, 0
    for t in range(1, steps + 1):
        if t % reset_every == 0:
            env.reset()
        obs, rewards, dones, infos = env.step(rng.integers(0, env.action_space.n, num_envs))
        if obs.shape != shape or obs.dtype != np.uint8 or rewards.dtype != np.float32 or dones.dtype != np.bool_:
            problems.append(f"step {t}: bad shapes or dtypes")
        for done, info in zip(dones, infos):
            if done != ("terminal_observation" in info) or ("episode" in info and not done):
                problems.append(f"step {t}: done and terminal_observation/episode disagree")
            games += "episode" in info
        if t % report_every == 0 or t == steps:
            rss = rss_mib()
            baseline = baseline or rss  # the first report comes after warm-up
            rate = t * num_envs / (time.perf_counter() - start)
            print(f"step {t:>9,}  games {games:>6,}  rss {rss:7.1f} MiB (+{rss - baseline:5.1f})  "
                  f"{rate:8,.0f} steps/s", flush=True)
    env.close()
    growth = rss_mib() - (baseline or 0)
    if growth > 16 + 0.05 * (baseline or 0):
        problems.append(f"resident memory grew by {growth:.1f} MiB")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=250_000, help="batched steps")
    parser.add_argument("--reset-every", type=int, default=10_007, help="an explicit reset() every N steps")
    parser.add_argument("--report-every", type=int, default=None)
    parser.add_argument("--replay-steps", type=int, default=1000, help="steps of the thread-count replay")
    args = parser.parse_args(argv)
    report_every = args.report_every or max(1, args.steps // 10)
    problems = soak(args.game, args.num_envs, args.steps, args.reset_every, report_every)
    digests = {threads: digest(args.game, args.num_envs, args.replay_steps, threads) for threads in (1, 2, 4)}
    print("replay digests by num_threads:", {k: v[:16] for k, v in digests.items()})
    if len(set(digests.values())) != 1:
        problems.append("results differ across num_threads")
    for problem in problems[:20]:
        print("PROBLEM:", problem)
    print("soak:", "FAILED" if problems else "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
