"""True game scores for the Gymnasium facade, in RecordEpisodeStatistics' own format."""

from __future__ import annotations

import inspect
import time
import warnings
from typing import Any

import numpy as np
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from sb3_ale_vec._core import StepBatch


def built_by(wrapper: type) -> bool:
    """Whether a `wrapper` instance being constructed is asking us (its __init__ is on the stack)."""
    frame = inspect.currentframe()
    for _ in range(24):
        frame = frame.f_back if frame is not None else None
        if frame is None:
            return False
        if frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), wrapper):
            return True
    return False


class GameScores:
    """``info["episode"]`` (``r``, ``l``, ``t``) and ``info["_episode"]`` on the step where a game
    really ends, when the chain hides that end from a ``RecordEpisodeStatistics`` above it (clipped
    rewards, or SB3's episodic life): ``r`` is the unclipped score of the whole game, ``l`` its agent
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

    def check_not_wrapped(self) -> None:
        """Called whenever the metadata is read: RecordEpisodeStatistics reads it while it is built."""
        if self.enabled and built_by(RecordEpisodeStatistics):
            warnings.warn(
                "RecordEpisodeStatistics over AleVectorEnv records the chain's episodes (clipped rewards, or "
                "single lives), not the games: the env reports the true full-game scores in info['episode'] "
                "itself. It now leaves that key to the wrapper; drop the wrapper to keep the true scores.",
                UserWarning, stacklevel=3)
            self.enabled = False
