"""``python -m sb3_ale_vec.bench --ray 1,2,4``: RayAleVecEnv with 1..K shards against one AleNativeVecEnv.

Every configuration steps the same game, ``num_envs`` and random actions (drawn before the clock
starts). The native engine runs in this process; the shards run on the Ray cluster that
``ray.init()`` finds (``RAY_ADDRESS``), else on a local two-node ``ray.cluster_utils.Cluster``
with one logical CPU per shard. Transport is the wall time of a step minus the time its slowest
shard spent stepping. Driver ms is the driver process's CPU time per step (submitting the tasks,
the one ``ray.get``, building SB3's infos): what grows with the number of shards. Bytes are the
actions sent plus the arrays received per step.
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
        env.steps, env.shard_busy_s, env.bytes_moved = 0, 0.0, 0
    start, cpu = time.perf_counter(), time.process_time()
    for a in actions[warmup:]:
        obs, *_ = env.step(a)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    steps = len(actions) - warmup
    result = {"steps_per_s": steps * env.num_envs / wall, "ms_per_step": 1e3 * wall / steps,
              "kib_per_step": obs.nbytes / 1024}
    if hasattr(env, "shard_busy_s"):
        result["transport_ms_per_step"] = 1e3 * (wall - env.shard_busy_s) / steps
        result["driver_cpu_ms_per_step"] = 1e3 * cpu / steps
        result["bytes_per_step"] = env.bytes_moved / steps
    return result


def main_ray(game: str, num_envs: int, shards: list[int], steps: int, warmup: int, repeats: int) -> dict[str, Any]:
    """Measure, print a table and return the runs: {configuration: [result per repeat]}."""
    import ray

    from sb3_ale_vec import AleNativeVecEnv
    from sb3_ale_vec.distributed import RayAleVecEnv

    cluster = None
    if not ray.is_initialized():
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": (max(shards) + 1) // 2,
                                                                "include_dashboard": False})
        cluster.add_node(num_cpus=(max(shards) + 1) // 2)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
    configs: dict[str, Any] = {"native, 1 thread": lambda: AleNativeVecEnv(game, num_envs, seed=0, num_threads=1)}
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
    print(f"{'configuration':<20} {'steps/s':>9} {'ms/step':>8} {'transport ms':>13} {'driver CPU ms':>14} "
          f"{'bytes/step':>11}")
    for name, results in runs.items():
        rates = [r["steps_per_s"] for r in results]
        ms = statistics.median(r["ms_per_step"] for r in results)
        cells = []
        for key, width, form in (("transport_ms_per_step", 13, ".2f"), ("driver_cpu_ms_per_step", 14, ".2f"),
                                 ("bytes_per_step", 11, ",.0f")):
            values = [r[key] for r in results if key in r]
            cells.append(f"{statistics.median(values):{width}{form}}" if values else " " * width)
        print(f"{name:<20} {statistics.median(rates):>9,.0f} {ms:>8.2f} {' '.join(cells)}")
    if cluster is not None:
        ray.shutdown()
        cluster.shutdown()
    return runs
