"""close() and exit while every core is busy at normal priority: each front-end of this package and
ale-py's own AtariVectorEnv, each measurement a fresh process, the peers taking turns round by round
(the order reversed every other round), so that a shared machine slows them alike.

    python tools/close_bench.py                          # 4 busy processes, 6 rounds, this checkout
    python tools/close_bench.py --old ../before          # and another build tree, interleaved (before/after)

A measurement is a process that builds the env (Breakout, 8 envs, 2 threads), resets it with seed 0 and
steps it 400 times with random actions (episodes end, so resets are being prepared), then either times
close() ("close"), or ends the script with the env alive ("exit": the time from the script's last
statement to the end of its process, as this process sees it). A process past --timeout is killed and
counts its seconds since that point, a lower bound (the cell then says how many were cut so).
Busy processes are `while True: pass` in Python, killed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTS = ["ale", "sb3", "gymnasium"]
PEER = "ale-py"

SCRIPT = """
import sys, time
import numpy as np
front, what, game, n, threads, steps = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7])
if front == "ale-py":
    from ale_py.vector_env import AtariVectorEnv as Env
elif front == "ale":
    from sb3_ale_vec import AtariVectorEnv as Env
elif front == "gymnasium":
    from sb3_ale_vec import AleVectorEnv as Env
else:
    from sb3_ale_vec import AleNativeVecEnv as Env
if front == "sb3":
    env = Env(game, n, seed=0, num_threads=threads)
    env.reset()
else:
    env = Env(game, n, num_threads=threads)
    env.reset(seed=0)
rng = np.random.default_rng(1)
count = getattr(env, "single_action_space", env.action_space).n
for _ in range(steps):
    env.step(rng.integers(0, count, n))
print("MARK", time.time(), flush=True)
if what == "close":
    start = time.perf_counter()
    env.close()
    print("CLOSE", time.perf_counter() - start, flush=True)
"""


def measure(tree: str, front: str, what: str, a: argparse.Namespace) -> tuple[float, bool]:
    """(seconds, cut at --timeout) of close() or of the exit, in a fresh process running `front` from `tree`."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    command = [sys.executable, "-c", SCRIPT, front, what, a.game, str(a.num_envs), str(a.threads), str(a.steps)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/") as proc:
        try:
            stdout, stderr = proc.communicate(timeout=a.timeout)
            ended, cut = time.time(), False
        except subprocess.TimeoutExpired:
            ended, cut = time.time(), True  # before the kill: a process whose idle threads get no time dies slowly
            proc.kill()
            stdout, stderr = proc.communicate()
    said = dict(line.split(" ", 1) for line in stdout.decode().splitlines() if " " in line)
    if cut and "MARK" not in said:
        raise SystemExit(f"{front} from {tree} had not finished its steps after --timeout {a.timeout} s")
    if not cut and (proc.returncode != 0 or what == "close" and "CLOSE" not in said):
        raise SystemExit(f"{front} {what} from {tree} failed: {stderr.decode()[-2000:]}")
    return (float(said["CLOSE"]) if "CLOSE" in said and what == "close" else ended - float(said["MARK"])), cut


def cell(values: list[tuple[float, bool]], scale: float) -> str:
    seconds = [v * scale for v, _ in values]
    cut = sum(c for _, c in values)
    return (f"{'>=' if cut else ''}{statistics.median(seconds):.2f} ({min(seconds):.2f}-{max(seconds):.2f})"
            + (f" {cut} cut" if cut else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", help="another build tree (a checkout with its own built .so), run interleaved")
    parser.add_argument("--new", default=ROOT, help="the build tree measured (default: this checkout)")
    parser.add_argument("--busy", type=int, default=4, help="busy processes at normal priority")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--fronts", nargs="+", default=FRONTS + [PEER], choices=FRONTS + [PEER])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--timeout", type=float, default=300, help="seconds for one measurement's process")
    a = parser.parse_args()
    trees = {"new": a.new, **({"old": a.old} if a.old else {})}
    cells = [(name, front, what) for front in a.fronts for name in trees for what in ("close", "exit")
             if front != PEER or name == "new"]
    runs: dict[tuple[str, str, str], list[tuple[float, bool]]] = {c: [] for c in cells}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        for r in range(a.rounds):
            for name, front, what in cells if r % 2 == 0 else cells[::-1]:
                runs[name, front, what].append(measure(trees[name], front, what, a))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"{a.game}, {a.num_envs} envs, {a.threads} threads, {a.steps} steps, {a.busy} busy processes, "
          f"{os.cpu_count()} cores: medians (ranges) of {a.rounds} runs")
    for name, tree in trees.items() if a.old else []:
        print(f"  {name}: {os.path.abspath(tree)}")
    print(f"{'front-end':>10} {'tree':>4}  {'close() ms':<32} exit s")
    for name, front in dict.fromkeys((n, f) for n, f, _ in cells):
        print(f"{front:>10} {name if a.old and front != PEER else '':>4}  "
              f"{cell(runs[name, front, 'close'], 1000):<32} {cell(runs[name, front, 'exit'], 1)}")


if __name__ == "__main__":
    main()
