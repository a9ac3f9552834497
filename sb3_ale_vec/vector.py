"""AleVectorEnv: the native engine as a Gymnasium ``VectorEnv``, synchronous or EnvPool-style batched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ale_py
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sb3_ale_vec._core import EngineCore, EngineError
from sb3_ale_vec.options import build_batch, check_actions, check_float, check_int, check_preset
from sb3_ale_vec.scores import GameScores

_STEP_INFO_KEYS = ("lives", "episode_frame_number", "frame_number")


def direction_table() -> np.ndarray:
    """ALE action id for (horizontal + 1, vertical + 1, fire), as gymnasium's AtariEnv.map_action_idx."""
    table = np.zeros((3, 3, 2), dtype=np.int64)
    for h, horizontal in enumerate(("LEFT", "", "RIGHT")):
        for v, vertical in enumerate(("DOWN", "", "UP")):
            for fire in (0, 1):
                name = vertical + horizontal + ("FIRE" if fire else "")
                table[h, v, fire] = ale_py.Action[name or "NOOP"].value
    return table


_METADATA = {"render_modes": ["rgb_array"], "render_fps": ale_py.env.AtariEnv.metadata["render_fps"]}


class _Metadata:
    """AleVectorEnv.metadata: reading it while RecordEpisodeStatistics is built turns off the env's own scores."""

    def __get__(self, env: Any, owner: type) -> dict[str, Any]:
        if env is None:
            return _METADATA
        env._scores.check_not_wrapped()
        return env._metadata

    def __set__(self, env: Any, value: dict[str, Any]) -> None:
        env._metadata = value


class AleVectorEnv(VectorEnv):
    """Many Atari games on native threads, as a Gymnasium ``VectorEnv``.

    With ``preset="gymnasium"`` (the default) each env reproduces, bit for bit,
    ``FrameStackObservation(AtariPreprocessing(gym.make("ALE/<Game>-v5", frameskip=1), ...), stack_num,
    padding_type="zero")`` in a ``SyncVectorEnv`` with the same ``autoreset_mode``: gray from ALE's own
    palette before the max-pool, no fire reset, unclipped rewards, sticky actions 0.25, and
    ``episodic_life`` as ``terminal_on_life_loss``. ``preset="sb3"`` gives SB3's ``AtariWrapper`` chain,
    ``preset="ale"`` the chain of ale-py's ``AtariVectorEnv``. Where the chain hides the game (clipped
    rewards, SB3's episodic life), ``info["episode"]`` reports each game's true score when it ends.

    With ``batch_size < num_envs`` it works as EnvPool does: ``recv()`` returns the first
    ``batch_size`` envs to finish, ``info["env_id"]`` names them, and the next ``send()`` (or
    ``step()``) addresses exactly those.

    :param game: ROM id or gymnasium id, or one per env (multi-task batches; with different action
        sets, ``full_action_space=True`` gives every game all 18 actions)
    :param num_envs: number of envs
    :param preset: ``"gymnasium"``, ``"sb3"`` or ``"ale"``: whose chain, and the defaults of the options left as None
    :param batch_size: envs per ``recv()`` (0: all, synchronous)
    :param autoreset_mode: ``NEXT_STEP`` (gymnasium's default), ``SAME_STEP`` (``final_obs`` /
        ``final_info`` in the infos) or ``DISABLED`` (reset done envs with ``options["reset_mask"]``)
    :param stack_padding: ``"zero"`` or ``"reset"`` (``FrameStackObservation``'s ``padding_type``)
    :param episodic_life: a life loss terminates the episode (gymnasium's ``terminal_on_life_loss``)
    :param life_loss_info: report a life loss as terminated, without resetting anything (ALE's option)
    :param continuous: actions are ``(radius, theta, fire)`` float32 triples, mapped as gymnasium's
        ``AtariEnv`` maps them (``continuous_action_threshold``), the radius as the paddle strength
    :param num_threads: worker threads (0: one per core, at most ``num_envs``)
    :param thread_affinity_offset: pin worker t to core ``offset + t`` (-1: no pinning)

    The other options are those of ``AleNativeVecEnv``.
    """

    metadata = _Metadata()

    def __init__(
        self,
        game: str | Sequence[str],
        num_envs: int,
        *,
        preset: str = "gymnasium",
        batch_size: int = 0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        frameskip: int = 4,
        maxpool: bool = True,
        grayscale: bool = True,
        img_height: int = 84,
        img_width: int = 84,
        stack_num: int = 4,
        stack_padding: str = "zero",
        noop_max: int = 30,
        use_fire_reset: bool | None = None,
        episodic_life: bool | None = None,
        life_loss_info: bool = False,
        reward_clipping: bool | None = None,
        repeat_action_probability: float | None = None,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        max_num_frames_per_episode: int = 108_000,
        mode: int | None = None,
        difficulty: int | None = None,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        render_mode: str | None = "rgb_array",
    ) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        spec = check_preset(preset)
        if stack_padding not in ("zero", "reset"):
            raise ValueError(f"stack_padding must be 'zero' or 'reset', got {stack_padding!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be 'rgb_array' or None, got {render_mode!r}")
        batch = build_batch(
            game, self.num_envs, preset, layout=spec.gym_layout, pad_with_reset=stack_padding == "reset",
            next_step_autoreset=self.autoreset_mode != AutoresetMode.SAME_STEP, continuous=continuous,
            frameskip=frameskip, maxpool=maxpool, grayscale=grayscale, img_height=img_height, img_width=img_width,
            stack_num=stack_num, noop_max=noop_max, use_fire_reset=use_fire_reset, episodic_life=episodic_life,
            life_loss_info=life_loss_info, reward_clipping=reward_clipping,
            repeat_action_probability=repeat_action_probability, full_action_space=full_action_space,
            max_num_frames_per_episode=max_num_frames_per_episode, mode=mode, difficulty=difficulty,
            num_threads=num_threads, thread_affinity_offset=thread_affinity_offset)
        self.games = batch.games
        self.preset = preset
        self.continuous = continuous
        self.continuous_action_threshold = check_float("continuous_action_threshold", continuous_action_threshold,
                                                       0.0, 1.0)
        self._engine = EngineCore(batch, type(self).__name__, batch_size)
        self.batch_size = self._engine.batch_size
        self._action_meanings = batch.action_meanings
        self.render_mode = render_mode
        config = batch.configs[0]  # what the chain hides from a RecordEpisodeStatistics above it
        self._scores = GameScores(self.num_envs, config.reward_clipping or (preset == "sb3" and config.episodic_life))
        self.metadata = {**_METADATA, "autoreset_mode": self.autoreset_mode}

        self.single_observation_space = spaces.Box(0, 255, self._engine.obs_shape, np.uint8)
        if continuous:
            # AtariEnv's continuous space: radius, theta (polar joystick) and fire.
            self.single_action_space = spaces.Box(np.array([0.0, -np.pi, 0.0], np.float32),
                                                  np.array([1.0, np.pi, 1.0], np.float32), (3,), np.float32)
            self._directions = direction_table()
        else:
            self.single_action_space = spaces.Discrete(len(self._action_meanings))
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)

        self._obs: np.ndarray | None = None  # the last observation of every env (reset_mask keeps rows)
        self._env_ids = np.arange(self.num_envs)  # the envs the next send addresses
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)  # AutoresetMode.DISABLED bookkeeping

    # -- gymnasium's VectorEnv API ------------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env, or those of ``options["reset_mask"]`` (synchronous mode only).

        ``seed`` is None, an int (env i gets ``seed + i``) or one seed (or None) per env. In batched
        mode every env resets and the first ``batch_size`` to finish are returned.
        """
        if seed is None:
            seeds: list[Any] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed as a list needs num_envs={self.num_envs} entries, got {len(seeds)}")
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            mask = self._check_mask(mask)
        if mask is None:
            self._engine.send_reset(seeds)
            self._needs_reset[:] = False
        else:
            ids = np.flatnonzero(mask)
            self._engine.send_reset([seeds[i] for i in ids], ids)
            self._needs_reset[ids] = False
        batch = self._engine.recv_reset()
        ids, obs = batch.env_ids, batch.obs
        self._scores.restart(ids)
        infos: dict[str, Any] = {}
        for k, i in enumerate(ids.tolist()):
            infos = self._add_info(infos, batch.reset_info(k), k if self._batched else i)
        if self._batched:
            infos["env_id"] = ids
            self._env_ids = ids
            return obs, infos
        if mask is not None:
            assert self._obs is not None  # _check_mask requires an earlier reset
            full = self._obs.copy()
            full[ids] = obs
            obs = full
        self._obs = obs
        return obs, infos

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.send(actions)
        return self.recv()

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start stepping ``env_ids``; by default every env, or in batched mode the envs the last
        ``recv()`` (or ``reset()``) returned.

        ``recv()`` then returns the first min(batch_size, envs in flight) to finish, in the order they
        finished, with ``info["env_id"]`` whenever that is not every env.
        """
        self._engine.live()
        if env_ids is not None:
            ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
        else:
            ids = self._env_ids if self._batched else None  # None: every env, the zero-copy batch
        rows = self.num_envs if ids is None else len(ids)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._needs_reset[slice(None) if ids is None else ids].any():
            raise ValueError(f"envs {np.flatnonzero(self._needs_reset).tolist()} have ended: with "
                             "autoreset_mode=DISABLED, reset them with options={'reset_mask': ...} first")
        if self.continuous:
            indices, strengths = self._continuous_actions(actions, rows)
        else:
            indices, strengths = check_actions(actions, rows, self.single_action_space.n), None
        self._engine.send(indices, ids, strengths)

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Wait for the next batch: obs, rewards, terminations, truncations and batched infos."""
        batch = self._engine.recv()
        ids, obs, terminated, truncated, reset = batch.env_ids, batch.obs, batch.terminated, batch.truncated, batch.reset
        infos: dict[str, Any] = {key: getattr(batch, key).copy() for key in _STEP_INFO_KEYS}
        resets = np.flatnonzero(reset).tolist()
        if resets and self.autoreset_mode == AutoresetMode.SAME_STEP:
            final_obs = np.full(len(ids), None, dtype=object)
            final_info: dict[str, Any] = {}
            for k in resets:
                final_obs[k] = batch.final_obs[k]
                final_info = self._add_info(final_info, {key: int(infos[key][k]) for key in _STEP_INFO_KEYS}, k)
            infos.update({"final_obs": final_obs, "_final_obs": reset.copy(), "final_info": final_info,
                          "_final_info": reset.copy()})
        for key in _STEP_INFO_KEYS:
            infos["_" + key] = np.ones(len(ids), dtype=bool)
        for k in resets:  # the info of a reset is the reset's (in batched mode, maybe a seeded one)
            infos = self._add_info(infos, batch.reset_info(k), k)
        self._scores.add(infos, batch)
        self._needs_reset[ids] = terminated | truncated
        self._env_ids = ids
        if len(ids) < self.num_envs:  # a partial batch names its rows
            infos["env_id"] = ids
        else:
            self._obs = obs
        rewards = batch.rewards.astype(np.float64)
        if batch.failed:
            infos["env_id"] = ids
            raise EngineError(f"{batch.error} (the other envs stepped normally: see this error's obs, rewards, "
                              "dones (terminated | truncated) and infos; reset() rebuilds the failed envs)",
                              batch.failed, obs, rewards, terminated | truncated, infos)
        return obs, rewards, terminated, truncated, infos

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Every env's current RGB screen, ``(210, 160, 3)``, as ``AtariEnv.render()``."""
        if self.render_mode != "rgb_array":
            return None
        return tuple(self._engine.screens())

    def close_extras(self, **kwargs: Any) -> None:
        self._engine.close()

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    @property
    def num_threads(self) -> int:
        return self._engine.num_threads

    # -- helpers --------------------------------------------------------------------------------------

    @property
    def _batched(self) -> bool:
        return self.batch_size < self.num_envs

    def _check_mask(self, mask: Any) -> np.ndarray:
        # The checks of gymnasium's SyncVectorEnv.reset.
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not mask.any():
            raise ValueError("`options['reset_mask']` must contain at least one True value")
        if self._batched:
            raise ValueError("reset_mask needs batch_size == num_envs (in batched mode, reset() resets every env)")
        if self._obs is None:
            raise ValueError("reset() every env once before resetting some with reset_mask")
        return mask

    def _continuous_actions(self, actions: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
        return continuous_to_discrete(actions, count, self.single_action_space, self.continuous_action_threshold,
                                      self._directions)

    def xla(self) -> tuple[Any, Any, Any]:
        """``(handle, reset, step)``: pure JAX functions of this env for ``jax.jit`` / ``lax.scan``, ale-py's
        ``xla()`` contract with this env's seeds and infos and float32 rewards (``NEXT_STEP`` autoreset only;
        needs ``pip install "sb3-ale-vec[jax]"``; see ``sb3_ale_vec.xla``)."""
        from sb3_ale_vec.xla import xla_functions

        return xla_functions(self, "gymnasium")


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
    # The polar joystick, thresholded per axis, in float32.
    radius, theta, fire = array[:, 0], array[:, 1], array[:, 2]
    x, y = radius * np.cos(theta), radius * np.sin(theta)
    horizontal = (x > threshold).astype(np.int64) - (x < -threshold).astype(np.int64) + 1
    vertical = (y > threshold).astype(np.int64) - (y < -threshold).astype(np.int64) + 1
    ids = directions[horizontal, vertical, (fire > threshold).astype(np.int64)]
    return ids.astype(np.int64), radius.copy()


def register_envs() -> None:
    """Register ``sb3_ale_vec/<Game>-v5`` for every ROM, for ``gymnasium.make_vec``:
    ``gym.make_vec("sb3_ale_vec/Breakout-v5", num_envs=8, batch_size=4)`` builds an ``AleVectorEnv``."""
    from ale_py import roms
    from gymnasium.envs.registration import register, registry

    from sb3_ale_vec.games import camel_name

    for rom in roms.get_all_rom_ids():
        env_id = f"sb3_ale_vec/{camel_name(rom)}-v5"
        if env_id not in registry:
            register(env_id, vector_entry_point="sb3_ale_vec.vector:AleVectorEnv", kwargs={"game": rom})
