"""True game scores for the Gymnasium front-ends, in RecordEpisodeStatistics' own format."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from sb3_ale_vec._native import StepBatch


class GameScores:
    """``info["episode"]`` (``r``, ``l``, ``t``) and ``info["_episode"]`` on the step where a game
    really ends, when enabled: ``r`` is the unclipped score of the whole game, ``l`` its agent
    steps, ``t`` the seconds since it started."""

    def __init__(self, num_envs: int, enabled: bool) -> None:
        self.enabled = enabled
        self._start = np.full(num_envs, time.perf_counter())

    def restart(self, env_ids: np.ndarray) -> None:
        self._start[env_ids] = time.perf_counter()

    def add(self, infos: dict[str, Any], batch: StepBatch) -> None:
        ends = batch.game_end
        if not self.enabled or not ends.any():
            return
        now, ids = time.perf_counter(), batch.env_ids
        infos["episode"] = {"r": np.where(ends, batch.episode_return, 0.0),
                            "l": np.where(ends, batch.episode_steps, 0),
                            "t": np.where(ends, np.round(now - self._start[ids], 6), 0.0)}
        infos["_episode"] = ends.copy()
        self._start[ids[ends]] = now
