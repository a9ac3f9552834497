"""The actor side of RayAleVecEnv: one shard's AleNativeVecEnv, and its step packed into one object."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from sb3_ale_vec.vec_env import AleNativeVecEnv

_SCALARS = (bool, int, float)


def pack_infos(infos: list[dict[str, Any]]) -> tuple[dict[str, np.ndarray], dict[int, dict[str, Any]]]:
    """Infos as one column per scalar key every env has, plus whole dicts for envs with more keys
    (terminal observation, episode stats): per env, only its row crosses the network."""
    keys = [k for k, v in infos[0].items() if type(v) in _SCALARS] if infos else []
    columns = {}
    for key in keys:
        values = [info.get(key) for info in infos]
        kind = type(values[0])
        if all(type(v) is kind for v in values):
            columns[key] = np.array(values, dtype=np.float64 if kind is float else kind)
    extras = {i: info for i, info in enumerate(infos) if info.keys() - columns.keys() or len(info) != len(columns)}
    return columns, extras


def unpack_infos(columns: dict[str, np.ndarray], extras: dict[int, dict[str, Any]], n: int) -> list[dict[str, Any]]:
    lists = {key: column.tolist() for key, column in columns.items()}
    return [dict(extras[i]) if i in extras else {key: values[i] for key, values in lists.items()} for i in range(n)]


class Shard:
    """The Ray actor of one shard: an ``AleNativeVecEnv`` for envs ``first .. first + num_envs - 1``."""

    def __init__(self, game: str | list[str], num_envs: int, seed: int | None, options: dict[str, Any]) -> None:
        self.env = AleNativeVecEnv(game, num_envs, seed=seed, **options)

    def where(self) -> tuple[str, int]:
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def reset(self, seeds: list[int | None] | None, options: list[dict[str, Any]] | None) -> tuple[np.ndarray, list]:
        if seeds is not None:  # else: the seeds this shard was built with (a replacement's fresh ones)
            self.env._seeds = seeds  # SB3's VecEnv field that seed() fills: one seed per env, used once
            self.env.set_options(options)
        return self.env.reset(), self.env.reset_infos

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        start = time.perf_counter()
        obs, rewards, dones, infos = self.env.step(actions)
        columns, extras = pack_infos(infos)
        # reset_infos only change at a done (auto-reset), as DummyVecEnv's.
        resets = {i: self.env.reset_infos[i] for i in np.flatnonzero(dones).tolist()}
        return obs, rewards, dones, columns, extras, resets, time.perf_counter() - start

    def call(self, how: str, name: str, local: list[int], args: tuple, kwargs: dict[str, Any]) -> list[Any]:
        if how == "get_attr":
            return self.env.get_attr(name, local)
        if how == "set_attr":
            return self.env.set_attr(name, args[0], local)
        if how == "env_method":
            return self.env.env_method(name, *args, indices=local, **kwargs)
        if how == "get_images":
            return list(self.env.get_images())
        raise ValueError(f"unknown call {how!r}")

    def close(self) -> None:
        self.env.close()
