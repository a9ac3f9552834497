"""A/B of two builds of this package, each run a fresh process, the builds taking turns (old, new,
new, old, ...), so a busy machine slows both alike; prints medians and the median of paired ratios.

    git worktree add ../old <commit> && (cd ../old && python setup.py build_ext --inplace)
    python tools/ab_builds.py --old ../old --new . step breakout 8 1 2000 8    # game N threads steps rounds
    python tools/ab_builds.py --old ../old --new . ppo breakout 8 4096 4       # game N timesteps rounds
    python tools/ab_builds.py --old ../old --new . profile breakout 8 2 2000 6 1   # ... rounds gap_ms

`step` times AleNativeVecEnv's synchronous steps (random actions, seed 0); `ppo` runs
`bench --ppo`'s measurement (rl-zoo3's Atari PPO, rollout and learn() steps/s, ms by part); `profile`
steps AtariVectorEnv with the engine's task records on (a sleep of gap_ms between steps: a GPU policy's
gap), and counts the batches whose tasks ran on fewer pool threads than the batch could use (a thread
held by other work when the batch came), and each batch's span.
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

PROFILE = """
import json, time, numpy as np
from sb3_ale_vec import AtariVectorEnv
env = AtariVectorEnv({game!r}, {n}, num_threads={threads})
engine = env._native._vec
rng = np.random.default_rng(0)
env.reset(seed=0)
for _ in range(50):
    env.step(rng.integers(0, env.single_action_space.n, {n}))
engine._profile(True)
for _ in range({steps}):
    env.step(rng.integers(0, env.single_action_space.n, {n}))
    time.sleep({gap_ms} / 1e3)
rec = engine._take_profile()
env.close()
fewer, spans = 0, []
for b in np.unique(rec["batch"]):
    m = rec["batch"] == b
    fewer += len(np.unique(rec["thread"][m])) < min({threads}, int(m.sum()))
    spans.append((rec["end_ns"][m].max() - rec["sent_ns"][m].min()) / 1e3)
print("RESULT", json.dumps({{"batches_on_fewer_threads_pct": 100 * fewer / len(spans),
                            "batch_us_median": float(np.median(spans)), "batch_us_p99": float(np.percentile(spans, 99))}}))
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
    parser.add_argument("kind", choices=["step", "ppo", "profile"])
    parser.add_argument("args", nargs="+")
    a = parser.parse_args()
    if a.kind == "step":
        game, n, threads, steps, rounds = a.args[0], *map(int, a.args[1:5])
        code, keys = STEP.format(game=game, n=n, threads=threads, steps=steps), ["steps_per_s"]
    elif a.kind == "profile":
        game, n, threads, steps, rounds, gap_ms = a.args[0], *map(int, a.args[1:5]), float(a.args[5])
        code = PROFILE.format(game=game, n=n, threads=threads, steps=steps, gap_ms=gap_ms)
        keys = ["batches_on_fewer_threads_pct", "batch_us_median", "batch_us_p99"]
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
        ratios = [y[key] / x[key] for x, y in zip(runs["old"], runs["new"]) if x[key]]  # a count may be 0
        paired = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})" if ratios else "n/a"
        print(f"{key:>28}: old {old:10.2f}  new {new:10.2f}  new/old {paired}")


if __name__ == "__main__":
    main()
