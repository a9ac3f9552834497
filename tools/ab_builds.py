"""A/B of two builds of this package, each run a fresh process, the builds taking turns (old, new,
new, old, ...), so a busy machine slows both alike; prints medians and the median of paired ratios.

    git worktree add ../old <commit> && (cd ../old && python setup.py build_ext --inplace)
    python tools/ab_builds.py --old ../old --new . step breakout 8 1 2000 8    # game N threads steps rounds
    python tools/ab_builds.py --old ../old --new . ppo breakout 8 4096 4       # game N timesteps rounds

`step` times AleNativeVecEnv's synchronous steps (random actions, seed 0); `ppo` runs
`bench --ppo`'s measurement (rl-zoo3's Atari PPO, rollout and learn() steps/s, ms by part).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

STEP = """
import json, time, numpy as np
from sb3_ale_vec import AleNativeVecEnv
env = AleNativeVecEnv({game!r}, {n}, seed=0, num_threads={threads})
env.reset()
actions = np.random.default_rng(0).integers(0, env.action_space.n, ({steps}, {n}))
for a in actions[:20]:
    env.step(a)
start = time.perf_counter()
for a in actions:
    env.step(a)
print("RESULT", json.dumps({{"steps_per_s": {steps} * {n} / (time.perf_counter() - start)}}))
"""
PPO = """
import json, sb3_ale_vec.bench.ppo as b
print("RESULT", json.dumps(b._measure_ppo("sb3_ale_vec", {game!r}, {n}, {timesteps})))
"""


def run(tree: str, code: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"{tree} failed: {out.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("kind", choices=["step", "ppo"])
    parser.add_argument("args", nargs="+")
    a = parser.parse_args()
    if a.kind == "step":
        game, n, threads, steps, rounds = a.args[0], *map(int, a.args[1:5])
        code, keys = STEP.format(game=game, n=n, threads=threads, steps=steps), ["steps_per_s"]
    else:
        game, n, timesteps, rounds = a.args[0], *map(int, a.args[1:4])
        code = PPO.format(game=game, n=n, timesteps=timesteps)
        keys = ["rollout_steps_per_s", "learn_steps_per_s", "ms_env", "ms_obs_to_tensor", "ms_forward",
                "ms_buffer", "ms_other"]
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for r in range(rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[name].append(run(getattr(a, name), code))
    print(f"{a.kind} {' '.join(a.args)}: medians of {rounds} runs each; new/old is the median of paired ratios")
    for key in keys:
        old, new = (statistics.median(x[key] for x in runs[name]) for name in ("old", "new"))
        ratios = [y[key] / x[key] for x, y in zip(runs["old"], runs["new"])]
        print(f"{key:>22}: old {old:10.2f}  new {new:10.2f}  new/old {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
