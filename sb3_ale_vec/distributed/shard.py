"""The actor side of RayAleVecEnv: one shard's native engine, its step returned as numpy columns.

A shard builds on ``NativeVectorizer`` and ``build_batch`` directly and never imports SB3 or torch
(``AleNativeVecEnv`` would: seconds of start-up and hundreds of MB per actor). The SB3 contract's
rules are sb3/contract.py's (which loads no SB3): the driver turns the columns into SB3's list of
info dicts, and the shard answers env_method and keeps set_attr's values as it says.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from sb3_ale_vec._native import NativeVectorizer
from sb3_ale_vec.options import build_batch
from sb3_ale_vec.sb3.contract import SetAttrs, env_method_answers, info_columns


class Shard:
    """The Ray actor of one shard: a native engine for a contiguous block of envs.

    :param games: ROM id of each of the shard's envs
    :param preset: as for ``AleNativeVecEnv``
    :param layout: the observation layout ``AleNativeVecEnv`` would use (``"chw"``, ``"hwc"``, ...)
    :param options: engine options, as ``build_batch`` takes them (threads already per shard)
    """

    def __init__(self, games: list[str], preset: str, layout: str, options: dict[str, Any]) -> None:
        batch = build_batch(games, len(games), preset, layout=layout, next_step_autoreset=False, **options)
        self.native = NativeVectorizer(batch, "shard")
        self.action_meanings = list(batch.action_meanings)
        self.attrs = SetAttrs(len(games))
        self._raise_next = False

    def where(self) -> tuple[str, int]:
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def imported(self, names: list[str]) -> list[bool]:
        """Which of these modules this process has loaded (tests: a shard stays light)."""
        return [name in sys.modules for name in names]

    def reset(self, seeds: list[int | None]) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Reset every env with its seed (None: continue its own stream); obs and reset infos."""
        self.native.send_reset(seeds)
        batch = self.native.recv_reset()
        return batch.obs, [batch.reset_info(j) for j in range(self.native.num_envs)]

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        """One step: obs, rewards, dones, info columns, the final obs of the envs that are done, the
        reset infos of the envs that reset, the failed envs (local ids) and their error, seconds."""
        start = time.perf_counter()
        if self._raise_next:
            self._raise_next = False
            raise RuntimeError("injected shard error")
        self.native.send(actions)
        b = self.native.recv()
        failed = set(b.failed)
        resets = {j: b.reset_info(j) for j in np.flatnonzero(b.reset).tolist() if j not in failed}
        return (b.obs, b.rewards, b.dones, info_columns(b), b.final_obs, resets, sorted(failed), b.error,
                time.perf_counter() - start)

    def call(self, how: str, name: str, local: list[int], args: tuple, kwargs: dict[str, Any]) -> list[Any]:
        """``get_attr`` (``(found, value)`` per env: the driver answers what was never set),
        ``set_attr``, ``env_method`` or ``get_images`` for the shard's envs ``local``."""
        if how == "get_attr":
            return self.attrs.get(name, local)
        if how == "set_attr":
            self.attrs.set(name, args[0], local)
            return []
        if how == "env_method":
            return env_method_answers("shard", name, local, self.action_meanings, self.native.screens)
        if how == "get_images":
            return self.native.screens()
        if how == "_inject_fault":  # tests: env local[0]'s next step fails in the engine
            from sb3_ale_vec import _testing

            return _testing._inject_fault(self.native._vec, local[0])
        if how == "_raise_next":  # tests: the next step raises in Python, as an unexpected bug would
            self._raise_next = True
            return []
        if how == "_hang":  # tests: this process stops answering for args[0] seconds
            time.sleep(args[0])
            return []
        raise ValueError(f"unknown call {how!r}")
