"""The actor side of RayAleVecEnv: one shard's native engine, its step returned as numpy columns.

A shard builds on ``EngineCore`` and ``build_batch`` directly and never imports SB3 or torch
(``AleNativeVecEnv`` would: seconds of start-up and hundreds of MB per actor). The driver turns
the columns into SB3's list of info dicts.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from sb3_ale_vec._core import EngineCore
from sb3_ale_vec.options import build_batch

# The per-env info values every step has, as columns (row j is the shard's env j).
INFO_COLUMNS = ("lives", "episode_frame_number", "frame_number", "TimeLimit.truncated",
                "game_end", "episode_return", "episode_length")


class Shard:
    """The Ray actor of one shard: a native engine for a contiguous block of envs.

    :param games: ROM id of each of the shard's envs
    :param preset: as for ``AleNativeVecEnv``
    :param layout: the observation layout ``AleNativeVecEnv`` would use (``"chw"``, ``"hwc"``, ...)
    :param options: engine options, as ``build_batch`` takes them (threads already per shard)
    """

    def __init__(self, games: list[str], preset: str, layout: str, options: dict[str, Any]) -> None:
        batch = build_batch(games, len(games), preset, layout=layout, next_step_autoreset=False, **options)
        self.core = EngineCore(batch, "shard")
        self.action_meanings = list(batch.action_meanings)
        self.attrs: list[dict[str, Any]] = [{} for _ in games]  # set_attr values, per env
        self._raise_next = False

    def where(self) -> tuple[str, int]:
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def imported(self, names: list[str]) -> list[bool]:
        """Which of these modules this process has loaded (tests: a shard stays light)."""
        return [name in sys.modules for name in names]

    def reset(self, seeds: list[int | None]) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Reset every env with its seed (None: continue its own stream); obs and reset infos."""
        self.core.send_reset(seeds)
        batch = self.core.recv_reset()
        return batch.obs, [batch.reset_info(j) for j in range(self.core.num_envs)]

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        """One step: obs, rewards, dones, info columns, the final obs of the envs that are done, the
        reset infos of the envs that reset, the failed envs (local ids) and their error, seconds."""
        start = time.perf_counter()
        if self._raise_next:
            self._raise_next = False
            raise RuntimeError("injected shard error")
        self.core.send(actions)
        b = self.core.recv()
        columns = dict(zip(INFO_COLUMNS, (b.lives, b.episode_frame_number, b.frame_number, b.time_limit,
                                          b.game_end, b.episode_return, b.episode_length)))
        failed = set(b.failed)
        resets = {j: b.reset_info(j) for j in np.flatnonzero(b.reset).tolist() if j not in failed}
        return (b.obs, b.rewards, b.dones, columns, b.final_obs, resets, sorted(failed), b.error,
                time.perf_counter() - start)

    def call(self, how: str, name: str, local: list[int], args: tuple, kwargs: dict[str, Any]) -> list[Any]:
        """``get_attr`` (``(found, value)`` per env: the driver answers what was never set),
        ``set_attr``, ``env_method`` or ``get_images`` for the shard's envs ``local``."""
        if how == "get_attr":
            return [(name in self.attrs[j], self.attrs[j].get(name)) for j in local]
        if how == "set_attr":
            for j in local:
                self.attrs[j][name] = args[0]
            return []
        if how == "env_method":
            if name == "get_action_meanings":
                return [list(self.action_meanings) for _ in local]
            if name == "render":
                return [self.core.screens()[j] for j in local]
            raise AttributeError(f"AleNativeVecEnv envs have no method {name!r}")
        if how == "get_images":
            return self.core.screens()
        if how == "_inject_fault":  # tests: env local[0]'s next step fails in the engine
            return self.core._inject_fault(local[0])
        if how == "_raise_next":  # tests: the next step raises in Python, as an unexpected bug would
            self._raise_next = True
            return []
        if how == "_hang":  # tests: this process stops answering for args[0] seconds
            time.sleep(args[0])
            return []
        raise ValueError(f"unknown call {how!r}")
