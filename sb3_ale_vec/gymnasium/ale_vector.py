"""AtariVectorEnv: a drop-in for ``ale_py.vector_env.AtariVectorEnv`` (ale-py 0.12.1) on this engine,
and ``VectorAtariEnv``, the names of ALE's older vector-env guide."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from sb3_ale_vec._native import StepBatch
from sb3_ale_vec.gymnasium.base import GymVectorBase
from sb3_ale_vec.options import build_batch, check_int, table_options

_INFO_KEYS = ("lives", "frame_number", "episode_frame_number")


class AtariVectorEnv(GymVectorBase):
    """ale-py's ``AtariVectorEnv`` with the same constructor, the same results and the same infos.

    For the same ``reset(seed=...)`` and actions it returns what ale-py 0.12.1's class returns, in both
    autoreset modes: observations ``(stack, h, w[, 3])``, int32 rewards, terminations, truncations and
    the info arrays ``env_id``, ``lives``, ``frame_number`` and ``episode_frame_number`` (int32); ale-py's
    own test suite passes against it unchanged. It differs on purpose where ale-py leaves memory
    uninitialised or fails late:

    - ``info["final_obs"]`` (``SAME_STEP``) holds zeros in the rows of envs that did not end, where
      ale-py's rows hold whatever memory was there;
    - bad actions, seeds and masks raise ``TypeError``/``ValueError`` before anything runs (ale-py
      asserts, or fails later inside a worker), and ``max_num_frames_per_episode`` must be >= 1;
    - ``autoreset_mode=DISABLED`` is refused with ``batch_size < num_envs`` (ended envs could never be reset).

    The constructor's arguments are ale-py's (see ``ale_py.vector_env.AtariVectorEnv``), and one more:
    ``ram_info=True`` adds ``info["ram"]``, the RAM (128 uint8) of each returned state, and in
    ``SAME_STEP`` ``info["final_ram"]`` beside ``final_obs`` (zeros where not done, as there).
    """

    _seed_per_reset = True
    _empty_mask_ok = True

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
        ram_info: bool = False,
    ) -> None:
        check_int("max_num_frames_per_episode", max_num_frames_per_episode, 1)  # ale-py's own bound
        batch = build_batch(
            game, check_int("num_envs", num_envs, 1), "ale", layout="frames", continuous=continuous,
            next_step_autoreset=AutoresetMode(autoreset_mode) != AutoresetMode.SAME_STEP, **table_options(locals()))
        self.grayscale = grayscale
        self._start(batch, batch_size, AutoresetMode(autoreset_mode), continuous, continuous_action_threshold, true_scores=False)
        self.ale = _VectorInterface(self)

    # -- ale-py's infos ----------------------------------------------------------------------------

    def _translate(self, batch: StepBatch) -> tuple[np.ndarray, dict[str, Any]]:
        # ALE reports the info of the state it returns: after any reset, the new episode's.
        info = {"env_id": batch.env_ids.astype(np.int32)}
        for key in _INFO_KEYS:
            info[key] = np.where(batch.reset, getattr(batch, f"reset_{key}"), getattr(batch, key)).astype(np.int32)
        if batch.ram is not None:
            info["ram"] = batch.ram
        return batch.rewards.astype(np.int32), info

    def _reset_infos(self, batch: StepBatch) -> dict[str, Any]:
        return self._translate(batch)[1]

    def _partial_infos(self, batch: StepBatch) -> dict[str, Any]:
        return self._translate(batch)[1]  # every env: the reset ones report their reset's info

    def _finals(self, batch: StepBatch, dones: np.ndarray, infos: dict[str, Any]) -> None:
        final_obs = np.zeros_like(batch.obs)
        for k in np.flatnonzero(dones).tolist():
            final_obs[k] = batch.final_obs[k]
        infos["final_obs"] = final_obs
        if batch.ram is not None:
            final_ram = np.zeros_like(batch.ram)
            for k in np.flatnonzero(dones).tolist():
                final_ram[k] = batch.final_ram[k]
            infos["final_ram"] = final_ram


class _VectorInterface:
    """``envs.ale``: the part of ale-py's native ``ALEVectorInterface`` that users call directly."""

    def __init__(self, env: AtariVectorEnv) -> None:
        self._env = env

    def reset(self, env_ids: Any, seeds: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Reset envs ``env_ids`` with ``seeds`` (one each, negative: unseeded), as ale-py's."""
        env = self._env
        ids, seeds = np.asarray(env_ids, dtype=np.int64).reshape(-1), np.asarray(seeds, dtype=np.int64).reshape(-1)
        if len(ids) != len(seeds):
            raise ValueError(f"reset needs one seed per env_id, got {len(ids)} env_ids and {len(seeds)} seeds")
        for i in ids.tolist():
            if not 0 <= i < env.num_envs:
                raise IndexError(f"reset env_id {i} is out of range [0, {env.num_envs})")
        if len(set(ids.tolist())) != len(ids):
            raise ValueError(f"reset has a duplicate env_id in {ids.tolist()}")
        mask = np.zeros(env.num_envs, dtype=bool)
        mask[ids] = True
        order = np.argsort(ids)  # reset() takes seeds in env order
        return env.reset(seed=seeds[order], options={"reset_mask": mask})

    def send(self, action_ids: np.ndarray, paddle_strength: np.ndarray) -> None:
        """Step the envs the last recv (or reset) returned with ALE action indices and paddle strengths."""
        self._env._native.send(np.asarray(action_ids, dtype=np.int64).reshape(-1), None,
                               np.asarray(paddle_strength, dtype=np.float32).reshape(-1))

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        return self._env.recv()


class VectorAtariEnv(AtariVectorEnv):
    """``AtariVectorEnv`` under the names of ALE's older vector-env guide, an API ale-py never shipped:
    ``VectorAtariEnv(game="Breakout", num_envs=8, frame_skip=4, fire_reset=True,
    max_episode_steps=108000, seed=0)``. ``game`` takes any spelling ale-py's registry knows;
    ``frame_skip``, ``fire_reset`` and ``max_episode_steps`` (frames) are ``frameskip``,
    ``use_fire_reset`` and ``max_num_frames_per_episode``; ``seed`` seeds the first ``reset()``
    that passes none. Every other keyword is ``AtariVectorEnv``'s.
    """

    def __init__(self, game: str, num_envs: int = 1, *, frame_skip: int = 4, fire_reset: bool = True,
                 max_episode_steps: int = 108000, seed: int | None = None, **kwargs: Any) -> None:
        for old, new in (("frame_skip", "frameskip"), ("fire_reset", "use_fire_reset"),
                         ("max_episode_steps", "max_num_frames_per_episode")):
            if new in kwargs:
                raise TypeError(f"pass {old}= or {new}=, not both")
        super().__init__(game, num_envs, frameskip=frame_skip, use_fire_reset=fire_reset,
                         max_num_frames_per_episode=max_episode_steps, **kwargs)
        self._first_seed = None if seed is None else check_int("seed", seed, 0)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None and self._first_seed is not None:
            seed, self._first_seed = self._first_seed, None
        return super().reset(seed=seed, options=options)
