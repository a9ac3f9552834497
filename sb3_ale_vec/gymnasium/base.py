"""The one Gymnasium front-end behind ``AleVectorEnv`` and the ale-py drop-in ``AtariVectorEnv``.

Seeds, reset masks, partial resets, batches, final observations, failed envs and true scores live
here, once. A front-end only says how its infos, rewards and final observations look (its
``_translate`` and ``_finals``) and which of the two seed conventions it follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ale_py
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sb3_ale_vec._native import NativeVectorizer, EngineError, StepBatch
from sb3_ale_vec.options import Batch, check_actions, check_float
from sb3_ale_vec.gymnasium.scores import GameScores


def direction_table() -> np.ndarray:
    """ALE action id for (horizontal + 1, vertical + 1, fire), as gymnasium's AtariEnv.map_action_idx."""
    table = np.zeros((3, 3, 2), dtype=np.int64)
    for h, horizontal in enumerate(("LEFT", "", "RIGHT")):
        for v, vertical in enumerate(("DOWN", "", "UP")):
            for fire in (0, 1):
                name = vertical + horizontal + ("FIRE" if fire else "")
                table[h, v, fire] = ale_py.Action[name or "NOOP"].value
    return table


def continuous_to_discrete(actions: Any, count: int, space: spaces.Box, threshold: float,
                           directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(radius, theta, fire) float32 rows to ALE action ids and paddle strengths, as gymnasium's AtariEnv."""
    array = np.asarray(actions)
    if array.dtype != np.float32:
        raise TypeError(f"continuous actions must be float32 (radius, theta, fire), got dtype {array.dtype}")
    if array.shape != (count, 3):
        raise ValueError(f"continuous actions must have shape ({count}, 3), got {array.shape}")
    if not np.all((array >= space.low) & (array <= space.high)):
        raise ValueError("continuous actions must lie in [0, 1] x [-pi, pi] x [0, 1]")
    ids, strengths = joystick(np, array, threshold, directions)
    return ids.astype(np.int64), strengths.copy()


def is_int_seed(seed: Any) -> bool:
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))


def seed_convention(xp: Any, per_reset: bool, seed: Any, ids: Any) -> Any:
    """The seeds of the envs ``ids`` being reset, in numpy or jax.numpy (``xp``). ale-py's convention
    (``per_reset``): an int counts up over the envs reset, an array holds one per env reset.
    SyncVectorEnv's: env i gets ``seed + i``, or ``seed[i]`` of an array of one per env."""
    if is_int_seed(seed) or getattr(seed, "ndim", None) == 0:
        return seed + (xp.arange(len(ids), dtype=ids.dtype) if per_reset else ids)
    return seed if per_reset else seed[ids]


def joystick(xp: Any, actions: Any, threshold: float, directions: Any) -> tuple[Any, Any]:
    """gymnasium AtariEnv's polar joystick, in numpy or jax.numpy (``xp``): (radius, theta, fire)
    float32 rows to ALE action ids (``directions``: direction_table()) and paddle strengths (the radius)."""
    radius, theta, fire = actions[:, 0], actions[:, 1], actions[:, 2]
    x, y = radius * xp.cos(theta), radius * xp.sin(theta)
    horizontal = (x > threshold).astype(xp.int32) - (x < -threshold).astype(xp.int32) + 1
    vertical = (y > threshold).astype(xp.int32) - (y < -threshold).astype(xp.int32) + 1
    return directions[horizontal, vertical, (fire > threshold).astype(xp.int32)], radius


class GymVectorBase(VectorEnv):
    """A Gymnasium ``VectorEnv`` over one native engine; see ``AleVectorEnv`` for the behaviour."""

    #: ale-py's seeds: one per env *reset* (an int counts up over them, negative means unseeded);
    #: otherwise SyncVectorEnv's: one per *env* (an int gives env i ``seed + i``).
    _seed_per_reset = False
    #: an all-False reset_mask returns every env as it is (ale-py), instead of raising (gymnasium).
    _empty_mask_ok = False

    def _start(self, batch: Batch, batch_size: int, autoreset_mode: AutoresetMode | str, continuous: bool,
               continuous_action_threshold: float, true_scores: bool) -> None:
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.continuous = continuous
        self.continuous_action_threshold = check_float("continuous_action_threshold", continuous_action_threshold,
                                                       0.0, 1.0)
        self._native = NativeVectorizer(batch, type(self).__name__, batch_size)
        self.num_envs, self.batch_size = self._native.num_envs, self._native.batch_size
        if self.autoreset_mode == AutoresetMode.DISABLED and self._batched:
            self._native.close()
            raise ValueError("autoreset_mode=DISABLED needs batch_size == num_envs: ended envs are reset with "
                             "options={'reset_mask': ...}, which a batched env cannot take")
        self.games = batch.games
        self._action_meanings = batch.action_meanings
        self.map_action_idx = direction_table().astype(np.int32)
        self._scores = GameScores(self.num_envs, true_scores)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = spaces.Box(0, 255, self._native.obs_shape, np.uint8)
        if continuous:  # AtariEnv's: radius, theta (a polar joystick) and fire
            self.single_action_space = spaces.Box(np.array([0.0, -np.pi, 0.0], np.float32),
                                                  np.array([1.0, np.pi, 1.0], np.float32), (3,), np.float32)
        else:
            self.single_action_space = spaces.Discrete(len(self._action_meanings))
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)  # AutoresetMode.DISABLED bookkeeping

    # -- gymnasium's VectorEnv API ------------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int | None] | np.ndarray | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env, or those of ``options["reset_mask"]`` (``batch_size == num_envs`` only).

        Envs a mask leaves alone report their current observation and info. In batched mode every
        env resets and the first ``batch_size`` to finish are returned (``info["env_id"]``).
        """
        ids = None  # every env
        if options is not None and options.get("reset_mask") is not None:
            ids = self._mask_ids(options["reset_mask"])
        self._native.send_reset(self._seeds(seed, np.arange(self.num_envs) if ids is None else ids), ids)
        # A partial reset returns every env: those left alone as they are (the engine's rule).
        batch = self._native.recv_reset()
        reset = batch.env_ids[batch.reset_requested]
        self._scores.restart(reset)
        self._needs_reset[reset] = False
        return batch.obs, self._reset_infos(batch) if ids is None else self._partial_infos(batch)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.send(actions)
        return self.recv()

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start stepping ``env_ids``: by default every env, or in batched mode the envs the last
        ``recv()`` (or ``reset()``) returned, in that order. ``recv()`` then returns the first min(batch_size, envs in flight)
        to finish, in the order they finished."""
        ids = None if env_ids is None else np.asarray(env_ids, dtype=np.int64).reshape(-1)  # None: the engine's
        count = self.batch_size if ids is None else len(ids)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._needs_reset[slice(None) if ids is None else ids].any():
            raise ValueError(f"envs {np.flatnonzero(self._needs_reset).tolist()} have ended: with "
                             "autoreset_mode=DISABLED, reset them with options={'reset_mask': ...} first")
        strengths = None
        if self.continuous:
            indices, strengths = continuous_to_discrete(actions, count, self.single_action_space,
                                                        self.continuous_action_threshold, self.map_action_idx)
        else:
            indices = check_actions(actions, count, self.single_action_space.n)
        self._native.send(indices, ids, strengths)

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Wait for the next batch: observations, rewards, terminations, truncations and infos."""
        batch = self._native.recv()
        dones = batch.terminated | batch.truncated
        rewards, infos = self._translate(batch)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and dones.any():
            self._finals(batch, dones, infos)
        self._scores.add(infos, batch)
        self._needs_reset[batch.env_ids] = dones
        if batch.failed:
            raise EngineError(f"{batch.error} (the other envs stepped normally: see this error's obs, rewards, "
                              "dones (terminated | truncated) and infos; reset() rebuilds the failed envs)",
                              batch.failed, batch.obs, rewards, dones, infos)
        return batch.obs, rewards, batch.terminated, batch.truncated, infos

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    def close_extras(self, **kwargs: Any) -> None:
        self._native.close()

    @property
    def num_threads(self) -> int:
        return self._native.num_threads

    def xla(self) -> tuple[Any, Any, Any]:
        """``(handle, reset, step)``: pure JAX functions of this env for ``jax.jit`` / ``lax.scan``, with
        ale-py 0.12.1's ``xla()`` contract and this front-end's seeds and infos (needs
        ``pip install "sb3-ale-vec[jax]"``; see ``sb3_ale_vec.gymnasium.xla``)."""
        from sb3_ale_vec.gymnasium.xla import xla_functions

        return xla_functions(self, "ale" if self._seed_per_reset else "gymnasium")

    # -- what each front-end says -------------------------------------------------------------------

    def _translate(self, batch: StepBatch) -> tuple[np.ndarray, dict[str, Any]]:
        """A step's rewards and infos (rows of the batch; reset rows carry the reset's info)."""
        raise NotImplementedError

    def _reset_infos(self, batch: StepBatch) -> dict[str, Any]:
        """The infos of a full reset (or of a batched reset's first rows)."""
        raise NotImplementedError

    def _partial_infos(self, batch: StepBatch) -> dict[str, Any]:
        """The infos of a masked reset: ``batch`` holds every env, those reset with ``reset_requested``."""
        raise NotImplementedError

    def _finals(self, batch: StepBatch, dones: np.ndarray, infos: dict[str, Any]) -> None:
        """SAME_STEP: add the final observations of the rows that are done (``batch.final_obs``)."""
        raise NotImplementedError

    # -- shared helpers ------------------------------------------------------------------------------

    @property
    def _batched(self) -> bool:
        return self.batch_size < self.num_envs

    def _mask_ids(self, mask: Any) -> np.ndarray | None:
        # ale-py's checks and messages, which cover gymnasium's SyncVectorEnv's.
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"`reset_mask` must be a boolean numpy array, got {type(mask)} with dtype "
                            f"{getattr(mask, 'dtype', None)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`reset_mask` must have shape {(self.num_envs,)}, got {mask.shape}")
        if not mask.any() and not self._empty_mask_ok:
            raise ValueError("`reset_mask` must contain at least one True value")
        # A partial reset's own rules (not in batched mode, not first) are the engine's.
        return None if mask.all() else np.flatnonzero(mask)

    def _seeds(self, seed: Any, ids: np.ndarray) -> list[int | None]:
        """One seed (or None) per env of ``ids``, by the front-end's convention."""
        if seed is None:
            return [None] * len(ids)
        if is_int_seed(seed):  # in Python ints: a seed may be any non-negative int
            return seed_convention(np, self._seed_per_reset, int(seed), np.asarray(ids, dtype=object)).tolist()
        if self._seed_per_reset:
            if not isinstance(seed, np.ndarray):
                raise TypeError(f"Unsupported seed type {type(seed).__name__}: use an int, an array of ints or None")
            if seed.shape != (len(ids),):
                raise ValueError(f"`seed` must have one entry per sub-environment being reset, expected shape "
                                 f"{(len(ids),)}, got {seed.shape}")
            if not np.issubdtype(seed.dtype, np.integer):
                raise TypeError(f"`seed` must hold integers, got dtype {seed.dtype}")
            return [int(s) if s >= 0 else None for s in seed]  # ALE: a negative seed means unseeded
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed as a list needs num_envs={self.num_envs} entries (one per env), got {len(seeds)}")
        return seed_convention(np, False, np.asarray(seeds + [None], dtype=object)[:-1], ids).tolist()
