"""Time to the first step, ours against ale-py's own vector env: each figure in a fresh process,
the peers taking turns, medians over the rounds (issue 35's startup figures, docs/benchmarks.md).

    python tools/startup.py                          # pong, 8 and 64 envs, 2 threads, 5 rounds
    python tools/startup.py --num-envs 8,64,128 --repeats 7

Per process: the import, then `AtariVectorEnv(game, n, num_threads)` built, `reset(seed=0)` and one
step (the figure asked of startup), the whole process's wall time, and its peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
if sys.argv[1] == "sb3_ale_vec":
    from sb3_ale_vec import AtariVectorEnv
else:
    from ale_py.vector_env import AtariVectorEnv
t1 = time.perf_counter()
env = AtariVectorEnv(sys.argv[2], int(sys.argv[3]), num_threads=int(sys.argv[4]))
env.reset(seed=0)
env.step(env.action_space.sample())
t2 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
env.close()
print(json.dumps({"import_s": t1 - t0, "first_step_s": t2 - t1, "peak_mib": rss}))
"""

PEERS = ("sb3_ale_vec", "ale_py")


def measure(peer: str, game: str, n: int, threads: int) -> dict:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, peer, game, str(n), str(threads)], check=True,
                         capture_output=True, text=True).stdout
    return {**json.loads(out.splitlines()[-1]), "process_s": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="pong")
    parser.add_argument("--num-envs", default="8,64")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(n) for n in args.num_envs.split(",")]
    runs: dict[tuple[str, int], list[dict]] = {}
    for _ in range(args.repeats):
        for n in sizes:
            for peer in PEERS:
                runs.setdefault((peer, n), []).append(measure(peer, args.game, n, args.threads))
    print(f"{args.game}, {args.threads} threads, medians of {args.repeats} fresh processes, taking turns")
    print(f"{'peer':<12} {'envs':>5} {'import s':>9} {'built+reset+step s':>19} {'process s':>10} {'peak MiB':>9}")
    for (peer, n), rows in runs.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"{peer:<12} {n:>5} {med['import_s']:>9.3f} {med['first_step_s']:>19.3f} {med['process_s']:>10.2f} "
              f"{med['peak_mib']:>9.0f}")
    for peer in PEERS:  # memory per env: the slope between the smallest and the largest batch
        lo, hi = min(sizes), max(sizes)
        if hi > lo:
            slope = (statistics.median(r["peak_mib"] for r in runs[(peer, hi)]) -
                     statistics.median(r["peak_mib"] for r in runs[(peer, lo)])) / (hi - lo)
            print(f"{peer}: {slope:.2f} MiB per env (peak memory, {lo} to {hi} envs)")


if __name__ == "__main__":
    main()
