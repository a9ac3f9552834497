"""AleVecMonitor: SB3 monitor files (monitor.csv) written from the engine's true game scores."""

from __future__ import annotations

import time
from collections.abc import Sequence

from stable_baselines3.common.monitor import ResultsWriter
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper


class AleVecMonitor(VecEnvWrapper):
    """Write ``info["episode"]`` rows to SB3 monitor files, leaving the infos untouched.

    Use it where SB3 code would use ``VecMonitor``: SB3's ``VecMonitor`` replaces the engine's
    full-game, unclipped scores with its own clipped per-life sums. The files have SB3's format,
    so ``stable_baselines3.common.monitor.load_results`` and ``results_plotter`` read them.

    :param venv: an ``AleNativeVecEnv``, possibly wrapped
    :param filename: one file for all envs (as ``VecMonitor``); ``.monitor.csv`` is appended
    :param filenames: one file per env (as ``make_vec_env(monitor_dir=...)``'s ``Monitor`` per env)
    :param info_keywords: extra info keys to log, read from the info of the step that ended the game
    """

    def __init__(self, venv: VecEnv, filename: str | None = None, filenames: Sequence[str | None] | None = None,
                 info_keywords: tuple[str, ...] = ()) -> None:
        super().__init__(venv)
        if filename is not None and filenames is not None:
            raise ValueError("give filename (one file) or filenames (one per env), not both")
        if filenames is not None and len(filenames) != venv.num_envs:
            raise ValueError(f"filenames needs one entry per env ({venv.num_envs}), got {len(filenames)}")
        self.info_keywords = tuple(info_keywords)
        self.t_start = getattr(venv.unwrapped, "t_start", time.time())
        spec = venv.get_attr("spec", 0)[0]
        header = {"t_start": self.t_start, "env_id": str(spec and spec.id)}

        def writer(path):
            return ResultsWriter(path, header=header, extra_keys=self.info_keywords) if path else None

        if filenames is not None:
            self._writers = [writer(path) for path in filenames]
        else:
            self._writers = [writer(filename)] * venv.num_envs

    def reset(self) -> VecEnvObs:
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        for writer, info in zip(self._writers, infos):
            if writer is not None and "episode" in info:
                row = dict(info["episode"])
                row.update({key: info[key] for key in self.info_keywords})
                writer.write_row(row)
        return obs, rewards, dones, infos

    def close(self) -> None:
        for writer in {id(w): w for w in self._writers if w is not None}.values():
            writer.close()
        self.venv.close()
