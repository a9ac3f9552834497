"""AtariVectorEnv: a drop-in for ``ale_py.vector_env.AtariVectorEnv`` (ale-py 0.12.1) on this engine."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sb3_ale_vec._core import EngineCore, StepBatch
from sb3_ale_vec.options import build_batch, check_float, check_int
from sb3_ale_vec.vector import continuous_to_discrete, direction_table

_INFO_KEYS = ("lives", "frame_number", "episode_frame_number")


class AtariVectorEnv(VectorEnv):
    """ale-py's ``AtariVectorEnv`` with the same constructor, the same results and the same infos.

    For the same ``reset(seed=...)`` and actions it returns what ale-py 0.12.1's class returns, in both
    autoreset modes: observations ``(stack, h, w[, 3])``, int32 rewards, terminations, truncations and
    the info arrays ``env_id``, ``lives``, ``frame_number`` and ``episode_frame_number`` (int32).
    It differs on purpose where ale-py leaves memory uninitialised or crashes:

    - ``info["final_obs"]`` (``SAME_STEP``) holds zeros in the rows of envs that did not reset,
      where ale-py's rows hold whatever memory was there;
    - bad actions, seeds and masks raise ``TypeError``/``ValueError`` before anything runs (ale-py
      asserts, or fails later inside a worker), and ``max_num_frames_per_episode`` must be >= 1;
    - ``xla()`` is not provided.

    The constructor's arguments are ale-py's; see ``ale_py.vector_env.AtariVectorEnv``.
    """

    def __init__(
        self,
        game: str,
        num_envs: int,
        *,
        batch_size: int = 0,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        max_num_frames_per_episode: int = 108000,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        img_height: int = 84,
        img_width: int = 84,
        grayscale: bool = True,
        stack_num: int = 4,
        frameskip: int = 4,
        maxpool: bool = True,
        noop_max: int = 30,
        episodic_life: bool = False,
        life_loss_info: bool = False,
        reward_clipping: bool = True,
        use_fire_reset: bool = True,
    ) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        batch = build_batch(
            game, self.num_envs, "ale", layout="frames", next_step_autoreset=self.autoreset_mode != AutoresetMode.SAME_STEP,
            continuous=continuous, frameskip=frameskip, maxpool=maxpool, grayscale=grayscale, img_height=img_height,
            img_width=img_width, stack_num=stack_num, noop_max=noop_max, use_fire_reset=use_fire_reset,
            episodic_life=episodic_life, life_loss_info=life_loss_info, reward_clipping=reward_clipping,
            repeat_action_probability=repeat_action_probability, full_action_space=full_action_space,
            max_num_frames_per_episode=check_int("max_num_frames_per_episode", max_num_frames_per_episode, 1),
            num_threads=num_threads, thread_affinity_offset=thread_affinity_offset)
        self._engine = EngineCore(batch, type(self).__name__, batch_size)
        self.games = batch.games
        self.continuous = continuous
        self.continuous_action_threshold = check_float("continuous_action_threshold", continuous_action_threshold,
                                                       0.0, 1.0)
        self.grayscale = grayscale
        self.map_action_idx = direction_table().astype(np.int32)
        self._action_meanings = batch.action_meanings
        self.single_observation_space = Box(0, 255, self._engine.obs_shape, np.uint8)
        if continuous:  # radius, theta (polar joystick) and fire
            self.single_action_space = Box(np.array([0.0, -np.pi, 0.0], np.float32),
                                           np.array([1.0, np.pi, 1.0], np.float32), (3,), np.float32)
        else:
            self.single_action_space = Discrete(len(self._action_meanings))
        self.batch_size = self._engine.batch_size
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)
        self._env_ids: np.ndarray | None = None  # the envs the next send() addresses (the last recv's)
        # The last full batch (env ids, obs, info), for the envs a partial reset leaves alone: kept,
        # not copied, since every batch's arrays are fresh.
        self._last: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]] | None = None

    def reset(self, *, seed: int | np.ndarray | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Reset every env, or those of ``options["reset_mask"]``; ``seed`` is an int (consecutive
        seeds from it, one per env reset), an array of one seed per env reset (negative: unseeded) or None."""
        ids = np.arange(self.num_envs)
        if options is not None and "reset_mask" in options:
            ids = self._mask_ids(options["reset_mask"])
        seeds = self._seeds(seed, len(ids))
        partial = len(ids) != self.num_envs
        if partial and self.batch_size != self.num_envs:
            raise ValueError(f"a partial reset needs batch_size == num_envs (got batch_size={self.batch_size}, "
                             f"num_envs={self.num_envs})")
        self._engine.send_reset(seeds, ids if partial else None)
        batch = self._engine.recv_reset()
        obs, info = self._translate(batch, reset_rows=np.ones(len(batch.env_ids), bool))
        if partial:  # the envs not reset report their current observation and info
            last_ids, last_obs, last_info = self._last
            full, full_info = np.empty_like(last_obs), {key: np.empty_like(last_info[key]) for key in _INFO_KEYS}
            for rows, values, values_info in ((last_ids, last_obs, last_info), (batch.env_ids, obs, info)):
                full[rows] = values  # a batch's rows are in the order its envs finished
                for key in _INFO_KEYS:
                    full_info[key][rows] = values_info[key]
            obs, info = full, {"env_id": np.arange(self.num_envs, dtype=np.int32), **full_info}
            self._env_ids = np.arange(self.num_envs)
        self._remember(obs, info)
        return obs, info

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.send(actions)
        return self.recv()

    def send(self, actions: np.ndarray) -> None:
        """Start stepping the envs the last ``recv()`` (or ``reset()``) returned, in that order."""
        if self._env_ids is None:
            raise RuntimeError("send() called before reset()")
        strengths = None
        if self.continuous:
            indices, strengths = continuous_to_discrete(actions, self.batch_size, self.single_action_space,
                                                        self.continuous_action_threshold, self.map_action_idx)
        else:
            indices = self._discrete(actions)
        full = self.batch_size == self.num_envs and np.array_equal(self._env_ids, np.arange(self.num_envs))
        self._engine.send(indices, None if full else self._env_ids.astype(np.int64), strengths)

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        batch = self._engine.recv()
        if batch.failed:
            raise RuntimeError(f"{batch.error} (reset() rebuilds the failed envs)")
        obs, info = self._translate(batch, reset_rows=batch.reset)
        terminated, truncated = batch.terminated, batch.truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP and (terminated | truncated).any():
            final_obs = np.zeros_like(obs)
            for k in np.flatnonzero(batch.reset):
                final_obs[k] = batch.final_obs[k]
            info["final_obs"] = final_obs
        self._remember(obs, info)
        return obs, batch.rewards.astype(np.int32), terminated, truncated, info

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    def close_extras(self, **kwargs: Any) -> None:
        self._engine.close()

    # -- helpers -------------------------------------------------------------------------------

    def _translate(self, batch: StepBatch, reset_rows: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        # ALE reports the info of the state it returns: after an autoreset, the new episode's.
        info = {"env_id": batch.env_ids.astype(np.int32)}
        for key in _INFO_KEYS:
            info[key] = np.where(reset_rows, getattr(batch, f"reset_{key}"), getattr(batch, key)).astype(np.int32)
        self._env_ids = batch.env_ids
        return batch.obs, info

    def _remember(self, obs: np.ndarray, info: dict[str, np.ndarray]) -> None:
        if len(info["env_id"]) == self.num_envs:  # batched mode never resets partially
            self._last = (info["env_id"], obs, {key: info[key] for key in _INFO_KEYS})

    def _mask_ids(self, mask: Any) -> np.ndarray:
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"`reset_mask` must be a boolean numpy array, got {type(mask)} with dtype "
                            f"{getattr(mask, 'dtype', None)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`reset_mask` must have shape {(self.num_envs,)}, got {mask.shape}")
        if mask.all():
            return np.arange(self.num_envs)
        if self._last is None:
            raise RuntimeError(f"The first reset() must reset every environment (got {int(mask.sum())} of "
                               f"{self.num_envs})")
        return np.flatnonzero(mask)

    @staticmethod
    def _seeds(seed: Any, count: int) -> list[int | None]:
        if seed is None:
            return [None] * count
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            seeds = np.arange(int(seed), int(seed) + count)
        elif isinstance(seed, np.ndarray):
            if seed.shape != (count,):
                raise ValueError(f"`seed` must have one entry per sub-environment being reset, expected shape "
                                 f"{(count,)}, got {seed.shape}")
            if not np.issubdtype(seed.dtype, np.integer):
                raise TypeError(f"`seed` must hold integers, got dtype {seed.dtype}")
            seeds = seed.astype(np.int64)
        else:
            raise TypeError(f"Unsupported seed type {type(seed).__name__}: use an int, an array of ints or None")
        if (seeds > np.iinfo(np.int32).max).any():
            raise ValueError(f"ALE's seeds are 32-bit signed ints: at most {np.iinfo(np.int32).max}")
        return [int(s) if s >= 0 else None for s in seeds]  # ALE: a negative seed means unseeded

    def _discrete(self, actions: Any) -> np.ndarray:
        if not isinstance(actions, np.ndarray) or actions.dtype not in (np.int32, np.int64):
            raise TypeError(f"actions must be an int32 or int64 numpy array, got "
                            f"{getattr(actions, 'dtype', type(actions).__name__)}")
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {actions.shape}")
        n = self.single_action_space.n
        bad = np.flatnonzero((actions < 0) | (actions >= n))
        if bad.size:
            raise ValueError(f"action {actions[bad[0]]} (row {bad[0]}) is out of range: allowed 0..{n - 1}")
        return actions.astype(np.int64)

    def xla(self) -> tuple[Any, Any, Any]:
        """``(handle, reset, step)``: pure JAX functions of this env for ``jax.jit`` / ``lax.scan``, with
        ale-py 0.12.1's ``xla()`` contract (needs ``pip install "sb3-ale-vec[jax]"``; see ``sb3_ale_vec.xla``)."""
        from sb3_ale_vec.xla import xla_functions

        return xla_functions(self, "ale")
