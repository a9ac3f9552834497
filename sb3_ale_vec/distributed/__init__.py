"""``RayAleVecEnv``: one SB3 ``VecEnv`` over native engines on a Ray cluster (``ray_vec_env.py``),
its shards (``shard.py``) and its fault model (``faults.py``).

``RayAleVecEnv`` is imported on first use: a shard imports ``sb3_ale_vec.distributed.shard``, which
must not pull in SB3 and torch through this package."""

from typing import Any

__all__ = ["RayAleVecEnv"]


def __getattr__(name: str) -> Any:
    if name == "RayAleVecEnv":
        from sb3_ale_vec.distributed.ray_vec_env import RayAleVecEnv

        return RayAleVecEnv
    raise AttributeError(f"module 'sb3_ale_vec.distributed' has no attribute {name!r}")
