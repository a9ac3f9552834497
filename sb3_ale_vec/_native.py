"""The engine handling both front-ends share: the native engine, its checks, and one typed batch per recv."""

from __future__ import annotations

import atexit
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sb3_ale_vec import _engine
from sb3_ale_vec.options import ALE_MAX_SEED, Batch, check_int, seed_words


# At the interpreter's exit the idle threads stop at once (waiting for none): one still inside a prepare
# when the process ends may be the last thread out, which tears the address space down at its priority.
atexit.register(_engine._stop_background)
_exit_hooked_pid: int | None = None  # the process that registered the finalizer below


def _hook_os_exit() -> None:
    """multiprocessing's fork and forkserver children end with os._exit, which runs no atexit hook; they
    run multiprocessing's finalizers first (BaseProcess._bootstrap), whose registry each child starts
    empty: registered here, once in each process that makes an engine (where atexit runs too, the second
    call finds the threads gone). A bare os.fork() child that calls os._exit runs nothing at all: there is
    no hook to take, and its idle threads end with the process."""
    global _exit_hooked_pid
    if _exit_hooked_pid == os.getpid():
        return
    _exit_hooked_pid = os.getpid()
    import multiprocessing.util

    multiprocessing.util.Finalize(None, _engine._stop_background, exitpriority=-100)  # after the others

# A call refused at once because another call (another thread's, a signal handler's, an XLA step)
# is using the engine: nothing was consumed, so it may simply be made again. A RuntimeError.
EngineBusy = _engine.EngineBusy


class EngineError(RuntimeError):
    """Some envs failed during a step. The others stepped normally: their results are attached.

    :ivar env_ids: the envs that failed; ``reset()`` rebuilds them, steps are refused until then
    :ivar obs: the batch of observations, with zeros in the rows of the failed envs
    :ivar rewards: the rewards (0 for failed envs)
    :ivar dones: the dones (False for failed envs)
    :ivar infos: the infos (``{}`` for failed envs, SB3 API), or the batched infos (Gymnasium API)
    """

    def __init__(self, message: str, env_ids: list[int], obs: np.ndarray, rewards: np.ndarray,
                 dones: np.ndarray, infos: Any) -> None:
        super().__init__(message)
        self.env_ids, self.obs, self.rewards, self.dones, self.infos = env_ids, obs, rewards, dones, infos


@dataclass
class StepBatch:
    """One recv: row k is env ``env_ids[k]``. Arrays are fresh: later steps never write into them."""

    obs: np.ndarray
    env_ids: np.ndarray             # int64
    rewards: np.ndarray             # float32, clipped if configured
    terminated: np.ndarray
    truncated: np.ndarray
    reset: np.ndarray               # the row's obs starts a new episode: an auto-reset or a requested reset
    reset_requested: np.ndarray     # the row is the result of send_reset (a batched reset's rows come late)
    time_limit: np.ndarray          # SB3's TimeLimit.truncated
    lives: np.ndarray               # info of the step's last frame, before any auto-reset
    episode_frame_number: np.ndarray
    frame_number: np.ndarray
    game_end: np.ndarray            # the game ended here: episode_* are its true score and lengths
    episode_return: np.ndarray      # unclipped
    episode_length: np.ndarray      # gymnasium AtariEnv steps (SB3 Monitor's "l")
    episode_steps: np.ndarray       # agent steps (RecordEpisodeStatistics' "l")
    final_obs: dict[int, np.ndarray]  # row -> the full stack at its done, for every done row
    failed: list[int]               # env ids whose task failed (their rows are zeros)
    error: str | None
    _raw: dict[str, Any]
    ram: np.ndarray | None = None   # ram_info: (rows, 128) uint8, the RAM at each row's observation
    final_ram: dict[int, np.ndarray] = field(default_factory=dict)  # row -> the RAM at final_obs[row]

    @property
    def dones(self) -> np.ndarray:
        return self.terminated | self.truncated

    def reset_info(self, k: int) -> dict[str, Any]:
        """The info the reset of row k returned (its reset flag must be set): ``{}`` after SB3's FireResetEnv,
        with ram_info its ``"ram"``."""
        raw = self._raw
        info: dict[str, Any] = {}
        if not raw["reset_empty"][k]:
            info = {"lives": int(raw["reset_lives"][k]),
                    "episode_frame_number": int(raw["reset_episode_frame_number"][k]),
                    "frame_number": int(raw["reset_frame_number"][k])}
            if raw["reset_has_seeds"][k]:  # numpy's generate_state gives np.uint32 values
                info["seeds"] = (np.uint32(raw["reset_seeds"][k, 0]), np.uint32(raw["reset_seeds"][k, 1]))
        if self.ram is not None:
            info["ram"] = self.ram[k]
        return info

    @property
    def reset_lives(self) -> np.ndarray:
        return self._raw["reset_lives"]

    @property
    def reset_episode_frame_number(self) -> np.ndarray:
        return self._raw["reset_episode_frame_number"]

    @property
    def reset_frame_number(self) -> np.ndarray:
        return self._raw["reset_frame_number"]


class NativeVectorizer:
    """Owns one native engine: closed and in-flight checks, seeds, failed envs, typed batches."""

    def __init__(self, batch: Batch, owner: str, batch_size: int = 0) -> None:
        self.owner = owner
        _hook_os_exit()
        self.num_envs = len(batch.configs)
        self._vec = _engine.Vectorizer(batch.configs, batch.num_threads, batch.thread_affinity_offset,
                                      check_int("batch_size", batch_size, 0, self.num_envs))
        self.obs_shape = tuple(self._vec.obs_shape)
        self.ram_info = batch.configs[0].ram_info  # one option for the batch: every config has the same
        self.max_seed = ALE_MAX_SEED if batch.preset == "ale" else None
        self.batch_size = self._vec.batch_size
        self._refused: list[str] = []  # keys the engine refused, not yet warned of

    @property
    def closed(self) -> bool:
        return self._vec.closed

    @property
    def pending(self) -> bool:
        """A send (or reset) whose results recv() has not returned yet; raises once closed."""
        return self.live().pending

    @property
    def num_threads(self) -> int:
        return self.live().num_threads

    def live(self) -> Any:
        if self._vec.closed:
            raise RuntimeError(f"this {self.owner} is closed")
        return self._vec

    def _warn_refused(self) -> None:
        """The warnings owed, before a call changes anything (a raised one loses nothing): the engine names
        each refused key once in its life, and the warning comes at the caller's next call (or close),
        never inside a recv, so an error filter (-W error) loses no batch."""
        while self._refused:  # one at a time: a warning raised as an error leaves the others owed
            key = self._refused.pop(0)
            warnings.warn(f"{self.owner}: a reset computed ahead of {key} differed from the real reset; this engine "
                          "resets that game for real from now on (reset_ahead_mismatches counts the checks that "
                          "differed). Please report it: sb3_ale_vec/reset_table.csv vouched for it.", RuntimeWarning,
                          stacklevel=3)

    def send_reset(self, seeds: list[Any], env_ids: np.ndarray | None = None) -> None:
        """Start resetting every env (or env_ids: the next recv returns every env, the others as they
        are), seeds[k] an int or None; steps in flight are dropped."""
        words = [seed_words(s) for s in seeds]
        if self.max_seed is not None and any(s is not None and s > self.max_seed for s in seeds):
            raise ValueError(f"the ale preset takes seeds in [0, {self.max_seed}] (ALE's are C ints), got "
                             f"{max(s for s in seeds if s is not None)}")
        self._warn_refused()
        self.live().send_reset(words, env_ids)

    def send(self, actions: np.ndarray, env_ids: np.ndarray | None = None, strengths: np.ndarray | None = None) -> None:
        self._warn_refused()
        self.live().send(actions, env_ids, strengths)

    def recv(self) -> StepBatch:
        raw = self.live().recv()
        self._refused += raw.get("reset_ahead_refused", [])
        rows = raw["final_rows"].tolist()
        finals = raw["final_obs"]
        return StepBatch(
            obs=raw["obs"], env_ids=raw["env_id"], rewards=raw["reward"], terminated=raw["terminated"],
            truncated=raw["truncated"], reset=raw["reset"], reset_requested=raw["reset_requested"], time_limit=raw["TimeLimit.truncated"], lives=raw["lives"],
            episode_frame_number=raw["episode_frame_number"], frame_number=raw["frame_number"],
            game_end=raw["game_end"], episode_return=raw["episode_return"], episode_length=raw["episode_length"],
            episode_steps=raw["episode_steps"], final_obs={k: finals[j] for j, k in enumerate(rows)},
            failed=list(raw["failed"]), error=raw["error"], _raw=raw, ram=raw.get("ram"),
            final_ram={k: raw["final_ram"][j] for j, k in enumerate(rows)} if "ram" in raw else {})

    def recv_reset(self) -> StepBatch:
        """recv() after send_reset(); a failed reset raises (resetting again rebuilds the env)."""
        batch = self.recv()
        if batch.failed:
            raise RuntimeError(f"reset failed: {batch.error} (reset() again rebuilds the failed envs)")
        return batch

    def screens(self) -> list[np.ndarray]:
        """Every env's current RGB screen, ``(rows, 160, 3)`` with its ROM's rows (210 for most, up to 250)."""
        engine = self.live()
        return [engine.screen_rgb(i) for i in range(self.num_envs)]

    def close(self) -> None:
        """Closes the engine, then warns of what it refused since the last call (xla()'s steps included)."""
        if not self._vec.closed:
            try:
                self._refused += self._vec._take_refused()
            except RuntimeError:  # EngineBusy: another thread's call holds it; close() goes on
                pass
        self._vec.close()
        self._warn_refused()
