"""close() and exit while every core is busy at normal priority: each front-end of this package and
ale-py's own AtariVectorEnv, each measurement a fresh process, the peers taking turns round by round
(the order reversed every other round), so that a shared machine slows them alike.

    python tools/close_bench.py                          # 4 busy processes, 6 rounds, this checkout
    python tools/close_bench.py --old ../before          # and another build tree, interleaved (before/after)

A measurement builds the env (Breakout, 8 envs, 2 threads), resets it with seed 0, steps it 400 times
with random actions (episodes end, so resets are being prepared), times close(); then builds a second
env, steps it alike and ends the script with it alive: "exit" is the time from the script's last
statement to the end of its process, as this process sees it. Busy processes are `while True: pass`
in Python, killed at the end.
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
import json, sys, time
import numpy as np
front, game, n, threads, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if front == "ale-py":
    from ale_py.vector_env import AtariVectorEnv as Env
elif front == "ale":
    from sb3_ale_vec import AtariVectorEnv as Env
elif front == "gymnasium":
    from sb3_ale_vec import AleVectorEnv as Env
else:
    from sb3_ale_vec import AleNativeVecEnv as Env

def make():
    if front == "sb3":
        env = Env(game, n, seed=0, num_threads=threads)
        env.reset()
    else:
        env = Env(game, n, num_threads=threads)
        env.reset(seed=0)
    return env

def play(env):
    rng = np.random.default_rng(1)
    count = getattr(env, "single_action_space", env.action_space).n
    for _ in range(steps):
        env.step(rng.integers(0, count, n))

env = make()
play(env)
print("CLOSING", time.time(), flush=True)
start = time.perf_counter()
env.close()
close_s = time.perf_counter() - start
live = make()
play(live)
print("RESULT", json.dumps({"close_s": close_s, "end": time.time()}), flush=True)
"""


def measure(tree: str, front: str, a: argparse.Namespace) -> tuple[float, float, bool]:
    """(close() seconds, exit seconds, timed out) of one fresh process running `front` from build tree
    `tree`. A process past --timeout is killed: if it was inside close(), close() took at least the
    seconds since (a lower bound), and its exit is not measured (nan)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    command = [sys.executable, "-c", SCRIPT, front, a.game, str(a.num_envs), str(a.threads), str(a.steps)]
    try:
        out = subprocess.run(command, capture_output=True, text=True, env=env, cwd="/", timeout=a.timeout)
    except subprocess.TimeoutExpired as expired:
        closing = [line for line in (expired.stdout or "").splitlines() if line.startswith("CLOSING ")]
        if not closing:
            raise SystemExit(f"{front} from {tree} did not reach close() in {a.timeout} s") from None
        return time.time() - float(closing[-1].split()[1]), float("nan"), True
    ended = time.time()
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{front} from {tree} failed ({out.returncode}): {out.stderr[-2000:]}")
    result = json.loads(lines[-1][len("RESULT "):])
    return result["close_s"], ended - result["end"], False


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
    parser.add_argument("--timeout", type=float, default=90, help="seconds for one measurement's process")
    a = parser.parse_args()
    trees = {"new": a.new, **({"old": a.old} if a.old else {})}
    cells = [(name, front) for front in a.fronts for name in trees if front != PEER or name == "new"]
    runs: dict[tuple[str, str], list[tuple[float, float, bool]]] = {cell: [] for cell in cells}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        for r in range(a.rounds):
            for name, front in cells if r % 2 == 0 else cells[::-1]:
                runs[name, front].append(measure(trees[name], front, a))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"{a.game}, {a.num_envs} envs, {a.threads} threads, {a.steps} steps, {a.busy} busy processes, "
          f"{os.cpu_count()} cores: medians (ranges) of {a.rounds} runs")
    for tree in trees.items() if a.old else []:
        print(f"  {tree[0]}: {os.path.abspath(tree[1])}")
    print(f"{'front-end':>16} {'tree':>4} {'close() ms':>26} {'exit s':>22}")
    for (name, front), times in runs.items():
        close = [t[0] for t in times]
        exits = [t[1] for t in times if not t[2]]
        cut = sum(t[2] for t in times)
        exit_cell = (f"{statistics.median(exits):8.2f} ({min(exits):5.2f}-{max(exits):5.2f})" if exits
                     else f"{'-':>22}")
        print(f"{front:>16} {name if front != PEER else '':>4} {1000 * statistics.median(close):10.1f} "
              f"({1000 * min(close):7.1f}-{1000 * max(close):7.1f}) {exit_cell}"
              + (f"  {cut} of {len(times)} killed inside close() after --timeout: their close() is a lower bound,"
                 " their exit unmeasured" if cut else ""))

if __name__ == "__main__":
    main()
