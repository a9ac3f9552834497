"""``python -m sb3_ale_vec.bench --ray 1,2,4``: RayAleVecEnv with 1..K shards against one AleNativeVecEnv.

Every configuration steps the same game, ``num_envs`` and random actions (drawn before the clock
starts). The native engine runs in this process; the shards run on the Ray cluster that
``ray.init()`` finds (``RAY_ADDRESS``), else on a local one with one CPU per shard. Transport is
the wall time of a step minus the time its slowest shard spent stepping: sending the actions,
packing, moving and unpacking the results, and joining them in env order.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np


def _measure(env: Any, actions: np.ndarray, warmup: int) -> dict[str, float]:
    env.reset()
    for a in actions[:warmup]:
        env.step(a)
    if hasattr(env, "shard_busy_s"):
        env.steps, env.shard_busy_s = 0, 0.0
    start = time.perf_counter()
    for a in actions[warmup:]:
        obs, *_ = env.step(a)
    wall = time.perf_counter() - start
    steps = len(actions) - warmup
    result = {"steps_per_s": steps * env.num_envs / wall, "ms_per_step": 1e3 * wall / steps,
              "kib_per_step": obs.nbytes / 1024}
    if hasattr(env, "shard_busy_s"):
        result["transport_ms_per_step"] = 1e3 * (wall - env.shard_busy_s) / steps
    return result


def main_ray(game: str, num_envs: int, shards: list[int], steps: int, warmup: int, repeats: int) -> dict[str, Any]:
    """Measure, print a table and return the runs: {configuration: [result per repeat]}."""
    import ray

    from sb3_ale_vec import AleNativeVecEnv
    from sb3_ale_vec.distributed import RayAleVecEnv

    if not ray.is_initialized():
        ray.init(num_cpus=max(shards), include_dashboard=False, log_to_driver=False)
    configs: dict[str, Any] = {
        "native, all cores": lambda: AleNativeVecEnv(game, num_envs, seed=0),
        "native, 1 thread": lambda: AleNativeVecEnv(game, num_envs, seed=0, num_threads=1),
    }
    for k in shards:
        configs[f"ray, {k} shard{'s' if k > 1 else ''}"] = lambda k=k: RayAleVecEnv(game, num_envs, num_shards=k, seed=0)
    rng = np.random.default_rng(0)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    for _ in range(repeats):  # configurations take turns, so a busy machine slows them alike
        for name, make in configs.items():
            env = make()
            runs[name].append(_measure(env, rng.integers(0, env.action_space.n, (warmup + steps, num_envs)), warmup))
            env.close()
    nodes = len([n for n in ray.nodes() if n["Alive"]])
    print(f"\n{game}, num_envs={num_envs}, {steps} steps x {repeats} repeats, Ray cluster of {nodes} node(s), "
          f"{int(ray.cluster_resources()['CPU'])} CPUs")
    print(f"{'configuration':<20} {'steps/s':>9} {'min':>8} {'max':>8} {'ms/step':>8} {'transport ms/step':>18} "
          f"{'obs KiB/step':>13}")
    for name, results in runs.items():
        rates = [r["steps_per_s"] for r in results]
        ms = statistics.median(r["ms_per_step"] for r in results)
        transport = [r["transport_ms_per_step"] for r in results if "transport_ms_per_step" in r]
        cost = f"{statistics.median(transport):18.2f}" if transport else f"{'':>18}"
        print(f"{name:<20} {statistics.median(rates):>9,.0f} {min(rates):>8,.0f} {max(rates):>8,.0f} {ms:>8.2f} "
              f"{cost} {results[0]['kib_per_step']:>13,.0f}")
    return runs
