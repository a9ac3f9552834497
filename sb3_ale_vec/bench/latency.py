"""A step's time, not only the mean: resets computed ahead against made inline, under a CPU quota or
beside a load, in paired rounds.

    python -m sb3_ale_vec.bench.latency --loop idle:1 --quota 1.5            # a 1.5-CPU quota (root)
    python -m sb3_ale_vec.bench.latency --loop idle:1 --beside "stress-ng --cpu 2"

Each variant (`ahead`: as shipped; `inline`: every reset made when its episode ends; with --other,
`other`: `ahead` from another tree's build, e.g. one without idle threads) is a child process of its own, stepping `AtariVectorEnv` with the same random actions, the variants taking turns round by
round. With --quota each child runs in a cgroup of its own holding that many CPUs (cgroup v2's
`cpu.max`, else v1's `cpu.cfs_quota_us`: Kubernetes' and Slurm's CPU limits), and the table also gives
how often its quota ran out (throttled periods per 1,000 steps). The loop is the caller's gap between
two steps: `tight` (none) or `idle:MS` (a sleep: a policy on a GPU). Figures are medians over rounds
of each round's percentiles of `step()`'s time, the gap excluded.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = ("ahead", "inline")
PERIOD_US = 100_000  # the kernel's default quota period


def serve(variant: str, game: str, n: int, threads: int, gap_ms: float) -> None:
    """The child: steps on each "STEPS" line read, answers one JSON line of its percentiles."""
    import numpy as np

    from sb3_ale_vec import AtariVectorEnv

    env = AtariVectorEnv(game, n, num_threads=threads)
    if variant == "inline":
        env._native._vec._reset_ahead = False
    env.reset(seed=0)
    rng = np.random.default_rng(0)  # the same actions in both children, round by round
    print("READY", flush=True)
    for line in sys.stdin:
        steps = int(line)
        actions = rng.integers(0, env.single_action_space.n, (steps, n))
        times = np.empty(steps)
        start = time.perf_counter()
        for k in range(steps):
            t0 = time.perf_counter()
            env.step(actions[k])
            times[k] = time.perf_counter() - t0
            if gap_ms > 0:
                time.sleep(gap_ms / 1000)
        wall = time.perf_counter() - start
        p50, p99, p999 = (float(np.percentile(times, q)) * 1000 for q in (50, 99, 99.9))
        print("RESULT", json.dumps({"p50": p50, "p99": p99, "p99.9": p999, "max": float(times.max()) * 1000,
                                    "steps_per_s": steps * n / wall}), flush=True)
    env.close()


class Quota:
    """A cgroup holding `cpus` CPUs, for one child (root only)."""

    def __init__(self, name: str, cpus: float) -> None:
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        if v2.is_file() and "cpu" in v2.read_text().split():
            self.dir, self.v2 = Path("/sys/fs/cgroup") / name, True
        elif Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").is_file():
            self.dir, self.v2 = Path("/sys/fs/cgroup/cpu") / name, False
        else:
            raise SystemExit("--quota needs cgroup v2's cpu controller or v1's cpu controller mounted")
        self.dir.mkdir(exist_ok=True)
        quota = int(cpus * PERIOD_US)
        if self.v2:
            (self.dir / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (self.dir / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.dir / "cpu.cfs_quota_us").write_text(str(quota))

    def add(self, pid: int) -> None:
        (self.dir / "cgroup.procs").write_text(str(pid))

    def throttled(self) -> int:
        for line in (self.dir / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "nr_throttled":
                return int(value)
        return 0

    def remove(self) -> None:
        try:
            self.dir.rmdir()
        except OSError:
            pass  # a child still in it: the kernel frees the group once it is empty and removed


def measure(args: argparse.Namespace) -> dict[str, list[dict]]:
    gap = float(args.loop.partition(":")[2] or 0) if args.loop.startswith("idle") else 0.0
    script = [sys.executable, "-m", "sb3_ale_vec.bench.latency", "serve"]
    variants = [*VARIANTS, *(["other"] if args.other else [])]
    children, quotas = {}, {}
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    beside = subprocess.Popen(shlex.split(args.beside), stdout=subprocess.DEVNULL) if args.beside else None
    try:
        for v in variants:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(args.other)) if v == "other" else None
            children[v] = subprocess.Popen([*script, "ahead" if v == "other" else v, args.game, str(args.num_envs),
                                            str(args.threads), str(gap)],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            if args.quota:
                quotas[v] = Quota(f"sb3ale-latency-{os.getpid()}-{v}", args.quota)
                quotas[v].add(children[v].pid)
            if children[v].stdout.readline().strip() != "READY":
                raise SystemExit(f"the {v} child did not start")
        for r in range(args.rounds):
            for v in variants[r % len(variants):] + variants[:r % len(variants)]:  # another first each round
                before = quotas[v].throttled() if v in quotas else 0
                children[v].stdin.write(f"{args.steps}\n")
                children[v].stdin.flush()
                line = children[v].stdout.readline()
                result = json.loads(line.partition("RESULT ")[2])
                if v in quotas:
                    result["throttled_per_1000"] = (quotas[v].throttled() - before) * 1000 / args.steps
                runs[v].append(result)
    finally:
        for child in children.values():
            child.stdin.close()
            child.wait()
        for quota in quotas.values():
            quota.remove()
        if beside:
            beside.terminate()
            beside.wait()
    return runs


def report(args: argparse.Namespace, runs: dict[str, list[dict]]) -> None:
    where = f"{args.quota}-CPU quota" if args.quota else "no quota"
    print(f"\n{args.game}, N={args.num_envs}, {args.threads} threads, loop {args.loop}, {where}"
          f"{', beside ' + args.beside if args.beside else ''}; medians of {args.rounds} rounds of {args.steps} steps")
    keys = ["steps_per_s", "p50", "p99", "p99.9", "max"] + (["throttled_per_1000"] if args.quota else [])
    print(f"{'variant':8}" + "".join(f"{k:>20}" for k in keys))
    for v, r in runs.items():
        print(f"{v:8}" + "".join(f"{statistics.median(x[k] for x in r):>20.3f}" for k in keys))
    for v in [v for v in runs if v != "inline"]:
        for k in ("steps_per_s", "p99", "p99.9"):
            ratios = [a[k] / b[k] for a, b in zip(runs[v], runs["inline"])]
            print(f"{v} / inline, {k}: median {statistics.median(ratios):.3f} "
                  f"(rounds {min(ratios):.3f}-{max(ratios):.3f})")


def main(argv: list[str] | None = None) -> None:
    if argv is None and sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="breakout")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--loop", default="idle:1", help="tight or idle:MS")
    p.add_argument("--quota", type=float, help="CPUs of a cgroup quota for each child (root)")
    p.add_argument("--beside", help="a command run for the whole measurement, e.g. 'stress-ng --cpu 2'")
    p.add_argument("--other", help="another tree with its build in place: the variant 'other'")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=3000)
    args = p.parse_args(argv)
    if args.loop != "tight" and not args.loop.startswith("idle:"):
        raise SystemExit(f"--loop {args.loop!r}: tight or idle:MS")
    report(args, measure(args))


if __name__ == "__main__":
    main()
