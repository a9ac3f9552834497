"""``python -m sb3_ale_vec.bench --xla``: steps/s of a jitted ``lax.scan`` over ``xla()``'s step.

Three ways to step the same envs, on equal work (same game, ale-py's default AtariVectorEnv
settings, same thread count, same seeded random actions drawn before the clock starts):

- ``ours, jit scan``: one ``jax.jit``-compiled ``lax.scan`` over our ``xla()`` step;
- ``ours, Python loop``: a Python loop over ``AtariVectorEnv.step()``;
- ``ale-py, jit scan``: the same scan over ale-py 0.12.1's own ``xla()`` step.

Every run is a fresh process (``python -m sb3_ale_vec.bench.jax_scan CONFIG GAME N STEPS``), the
configurations interleaved round by round; the scan is compiled (and the loop warmed up) before the
clock starts. The table gives medians and the ratios of the medians.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

CONFIGS = ("ours, jit scan", "ours, Python loop", "ale-py, jit scan")
WARMUP = 20


def _env(config: str, game: str, n: int) -> Any:
    if config.startswith("ale-py"):
        import ale_py

        return ale_py.AtariVectorEnv(game, num_envs=n)
    from sb3_ale_vec import AtariVectorEnv

    return AtariVectorEnv(game, num_envs=n)


def measure(config: str, game: str, n: int, steps: int) -> dict[str, float]:
    """One run in this process: env steps per second over `steps` batched steps."""
    env = _env(config, game, n)
    env.action_space.seed(0)
    actions = np.stack([env.action_space.sample() for _ in range(steps + WARMUP)]).astype(np.int32)
    if config.endswith("Python loop"):
        env.reset(seed=0)
        for a in actions[:WARMUP]:
            env.step(a)
        start = time.perf_counter()
        for a in actions[WARMUP:]:
            env.step(a)
        wall = time.perf_counter() - start
    else:
        import jax

        handle, reset, step = env.xla()
        handle, _ = reset(handle, seed=0)
        scan = jax.jit(lambda h, xs: jax.lax.scan(lambda c, a: step(c, a), h, xs))
        handle, out = scan(handle, actions[:WARMUP])  # compiles the warm-up's length; the run's below
        jax.block_until_ready(out)
        run = scan.lower(handle, actions[WARMUP:]).compile()
        start = time.perf_counter()
        jax.block_until_ready(run(handle, actions[WARMUP:]))
        wall = time.perf_counter() - start
    env.close()
    return {"steps_per_s": steps * n / wall}


def _child(config: str, game: str, n: int, steps: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "sb3_ale_vec.bench.jax_scan", config, game, str(n), str(steps)],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{config} N={n} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main_xla(game: str, sizes: list[int], env_steps: int, repeats: int) -> dict[str, Any]:
    """Measure, print a table and return {f"{config} N={n}": [steps/s per run]}."""
    runs: dict[str, list[float]] = {}
    for r in range(repeats):
        for n in sizes:
            for config in CONFIGS:
                value = _child(config, game, n, max(50, env_steps // n))["steps_per_s"]
                runs.setdefault(f"{config} N={n}", []).append(value)
                print(f"round {r + 1}/{repeats}: {config:18s} N={n:<3d} {value:9.0f} env steps/s", flush=True)
    print(f"\n{game}, ale-py's AtariVectorEnv defaults, {env_steps} env steps per run, median of {repeats} fresh processes")
    print(f"{'N':>4s} " + " ".join(f"{c:>18s}" for c in CONFIGS) + "   scan/loop  ours/ale-py")
    for n in sizes:
        med = [statistics.median(runs[f"{c} N={n}"]) for c in CONFIGS]
        print(f"{n:4d} " + " ".join(f"{m:18.0f}" for m in med) + f"   {med[0] / med[1]:9.2f}  {med[0] / med[2]:11.2f}")
    return runs


if __name__ == "__main__":
    name, game_arg, n_arg, steps_arg = sys.argv[1:5]
    print(json.dumps(measure(name, game_arg, int(n_arg), int(steps_arg))))
