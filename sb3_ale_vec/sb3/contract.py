"""The SB3 VecEnv contract, written once for AleNativeVecEnv and RayAleVecEnv.

SB3 reads more than obs, rewards and dones: the info dicts that a DummyVecEnv of ``AtariWrapper``
under ``Monitor`` returns, ``VecEnv.seed``'s seeds, and what get_attr, set_attr, env_method and
env_is_wrapped answer to its wrappers, callbacks and rl-zoo3. ``SB3Contract`` holds those rules and
needs no engine (the Ray driver builds none); a front-end adds only where its engines run and where
set_attr values live.

A Ray shard imports this module too (``info_columns``, ``SetAttrs``, ``env_method_answers``) and
must not load SB3 or torch, so SB3's classes are imported only inside the rules that name them.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import ale_py
import numpy as np
from gymnasium import spaces

from sb3_ale_vec import _engine
from sb3_ale_vec.options import ALE_MAX_SEED, OPTION_NAMES, Batch, build_batch, check_int, check_preset, seed_words
from sb3_ale_vec.sb3.layout import channels_first, sb3_layout
from sb3_ale_vec.sb3.spec import env_spec

# The StepBatch columns SB3's info dicts are made of: all that a shard sends of its infos.
INFO_COLUMNS = ("lives", "episode_frame_number", "frame_number", "time_limit", "game_end", "episode_return",
                "episode_length")
# The SB3 front-ends' keyword options (AleNativeVecEnv's signature, seed aside): the engine's, and
# how SB3 is shown the results.
SB3_OPTIONS = frozenset(OPTION_NAMES) | {"preset", "channels_last", "render_mode"}
# Attributes the engine fixes at construction: set_attr cannot change them.
ENGINE_OPTIONS = frozenset(n for n in dir(_engine.EnvConfig) if not n.startswith("_")) | {"channels_last", "game"}
# get_attr's answers for an attribute never set: per env, else the front-end's own, the same for all.
PER_ENV_ATTRS = ("spec", "game")
SHARED_ATTRS = ("render_mode", "metadata", "action_space", "observation_space")
def info_columns(batch: Any) -> dict[str, Any]:
    """The columns of a StepBatch that ``SB3Contract._step_infos`` reads, by INFO_COLUMNS name; with
    ram_info also ``ram`` (rows, 128) and ``final_ram`` (row -> the RAM beside its final obs)."""
    columns: dict[str, Any] = {name: getattr(batch, name) for name in INFO_COLUMNS}
    if batch.ram is not None:
        columns["ram"], columns["final_ram"] = batch.ram, batch.final_ram
    return columns


def check_option_names(owner: str, options: Mapping[str, Any]) -> None:
    """For a front-end that takes ``**options``: an unknown one raises as Python does for
    AleNativeVecEnv's signature (build_batch takes a few more keywords, front-end ones)."""
    unknown = [name for name in options if name not in SB3_OPTIONS]
    if unknown:
        raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}")


def env_method_answers(owner: str, name: str, indices: Sequence[int], action_meanings: Sequence[str],
                       images: Callable[[], Sequence[Any]]) -> list[Any]:
    """env_method's answers: the two ``AtariEnv`` methods SB3 and rl-zoo3 call through a VecEnv."""
    if name == "get_action_meanings":
        return [list(action_meanings) for _ in indices]
    if name == "render":
        screens = images()
        return [screens[i] for i in indices]
    raise AttributeError(f"{owner} envs have no method {name!r}")


class SetAttrs:
    """The values set_attr gave each env, which get_attr answers before the env's own."""

    def __init__(self, num_envs: int) -> None:
        self._values: list[dict[str, Any]] = [{} for _ in range(num_envs)]

    def get(self, name: str, indices: Sequence[int]) -> list[tuple[bool, Any]]:
        """``(found, value)`` per env."""
        return [(name in self._values[i], self._values[i].get(name)) for i in indices]

    def set(self, name: str, value: Any, indices: Sequence[int]) -> None:
        for i in indices:
            self._values[i][name] = value


def built_by(wrapper: type) -> bool:
    """Whether a `wrapper` instance being constructed is asking us (its __init__ is on the stack):
    used only to warn about SB3 wrappers that would undo the engine's work, never to change results."""
    frame = inspect.currentframe()
    for _ in range(24):
        frame = frame.f_back if frame is not None else None
        if frame is None:
            return False
        if frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), wrapper):
            return True
    return False


class SB3Contract:
    """The SB3 half of both front-ends, before SB3's ``VecEnv`` in their bases.

    A front-end calls ``_describe`` (every option checked, no engine built), builds its engines,
    then ``_start``. It provides ``_stored`` and ``_store`` (set_attr's values) and ``_screens``.
    """

    num_envs: int
    render_mode: str | None
    t_start: float

    def _describe(self, game: str | Sequence[str], num_envs: int, preset: str, channels_last: bool,
                  render_mode: str | None, options: dict[str, Any]) -> tuple[Batch, str]:
        """Check every option (in this order, so that each bad one raises the same error on every
        front-end) and keep what SB3 is shown of the batch; returns it and the engines' layout."""
        check_preset(preset)
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be 'rgb_array' or None, got {render_mode!r}")
        num_envs = check_int("num_envs", num_envs, 1)
        layout, self._transposed = sb3_layout(preset, channels_last)
        if options.get("obs_type") is not None:  # AtariEnv's own obs, as make_vec_env gives them
            if channels_last:
                raise ValueError(f"channels_last=True means nothing with obs_type={options['obs_type']!r}: the "
                                 "observations are AtariEnv's own (its RGB ones are channels-last already)")
            layout, self._transposed = "frames", False
        batch = build_batch(game, num_envs, preset, layout=layout, next_step_autoreset=False, **options)
        self.games = batch.games
        self.game = batch.games[0] if len(set(batch.games)) == 1 else list(batch.games)
        self.preset = preset
        self.render_mode = render_mode  # before VecEnv.__init__, which asks get_attr("render_mode")
        self._action_meanings, self._configs, self.config = batch.action_meanings, batch.configs, batch.configs[0]
        self._specs = [env_spec(preset, g, c, render_mode) for g, c in zip(self.games, batch.configs)]
        self.spec = self._specs[0]
        self._max_seed = ALE_MAX_SEED if preset == "ale" else None  # ALE's own seeds are C ints
        return batch, layout

    def _start(self, obs_shape: Sequence[int], seed: int | None) -> None:
        """``VecEnv.__init__`` with the spaces the engines' ``obs_shape`` gives, then AtariEnv's
        metadata, Monitor's clock and the first seeds."""
        observation_space = spaces.Box(0, 255, self._view(np.empty(obs_shape, np.uint8)).shape, np.uint8)
        super().__init__(len(self.games), observation_space, spaces.Discrete(len(self._action_meanings)))  # VecEnv
        # VecEnv.__init__ replaced metadata; AtariEnv's, with its fps, is what video recorders read.
        self.metadata = dict(ale_py.env.AtariEnv.metadata)
        self.t_start = time.time()  # Monitor's t_start: info["episode"]["t"] counts from here
        self.seed(seed)

    def _view(self, obs: np.ndarray) -> np.ndarray:
        """The engines' arrays in the memory layout SB3's pipeline hands out (sb3/layout.py)."""
        return channels_first(obs) if self._transposed else obs

    def _episode_time(self) -> float:
        return round(time.time() - self.t_start, 6)

    def _step_infos(self, columns: Mapping[str, Any], finals: Mapping[int, np.ndarray],
                    failed: Collection[int], now: float) -> list[dict[str, Any]]:
        """SB3's info dicts of a step's envs (row j of the columns), ``{}`` for a failed env; ``now``
        is ``_episode_time()`` at the step. ``finals`` (row -> stack at the done) are given out as they are;
        with ram_info, ``info["ram"]`` is the RAM at the obs and ``info["terminal_ram"]`` at ``terminal_observation``."""
        ram = columns.get("ram")
        lists = {name: columns[name].tolist() for name in INFO_COLUMNS}
        failed = set(failed)
        infos: list[dict[str, Any]] = []
        for j in range(len(lists["lives"])):
            if j in failed:
                infos.append({})
                continue
            # The ALE info of the step's last frame, as AtariEnv returns it through the wrappers.
            info: dict[str, Any] = {name: lists[name][j] for name in ("lives", "episode_frame_number", "frame_number")}
            if lists["game_end"][j]:  # Monitor below the chain: only a real game end is an episode
                info["episode"] = {"r": round(float(lists["episode_return"][j]), 6),
                                   "l": int(lists["episode_length"][j]), "t": now}
            info["TimeLimit.truncated"] = lists["time_limit"][j]
            if j in finals:
                info["terminal_observation"] = self._view(finals[j])
            if ram is not None:
                info["ram"] = ram[j]
                if j in finals:
                    info["terminal_ram"] = columns["final_ram"][j]
            infos.append(info)
        return infos

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Env i gets ``seed + i`` at the next ``reset()`` (``VecEnv.seed``). None draws the base seed
        as SB3 does, or for the ale preset uniformly among those whose envs' seeds fit a C int."""
        if seed is None and self._max_seed is not None:
            seed = int(np.random.randint(0, self._max_seed - self.num_envs + 2))
        elif seed is not None:
            seed_words(seed)  # a bad type or sign raises here, not at the next reset
            if self._max_seed is not None and seed + self.num_envs - 1 > self._max_seed:
                raise ValueError(f"the ale preset takes seeds in [0, {self._max_seed}]: seed + num_envs - 1 "
                                 f"= {seed + self.num_envs - 1} is too large")
        return super().seed(seed)  # type: ignore[misc]

    # -- attributes, methods and wrappers, per env ---------------------------------------------

    def _stored(self, name: str, indices: list[int]) -> list[tuple[bool, Any]]:
        raise NotImplementedError

    def _store(self, name: str, value: Any, indices: list[int]) -> None:
        raise NotImplementedError

    def _screens(self) -> Sequence[np.ndarray]:
        raise NotImplementedError

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """set_attr's value, else the env's own (PER_ENV_ATTRS, SHARED_ATTRS); others raise."""
        if attr_name == "render_mode" and self.config.stack_num > 1:
            from stable_baselines3.common.vec_env import VecFrameStack

            if built_by(VecFrameStack):  # every VecEnvWrapper asks for render_mode while it is built
                warnings.warn(
                    f"VecFrameStack over an {type(self).__name__} that already stacks {self.config.stack_num} "
                    f"frames: observations will hold {self.config.stack_num} x n_stack frames. Build the env with "
                    "stack_num=1 (make_ale_vec_env's default) to stack with VecFrameStack, or drop VecFrameStack.",
                    UserWarning, stacklevel=2)
        indices = list(self._get_indices(indices))  # type: ignore[attr-defined]
        values = []
        for i, (found, value) in zip(indices, self._stored(attr_name, indices)):
            if found:
                values.append(value)
            elif attr_name in PER_ENV_ATTRS:
                values.append(self._specs[i] if attr_name == "spec" else self.games[i])
            elif attr_name in SHARED_ATTRS:
                values.append(getattr(self, attr_name))
            else:
                raise AttributeError(f"{type(self).__name__} envs have no attribute {attr_name!r}")
        return values

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if attr_name in ENGINE_OPTIONS:
            raise AttributeError(f"{attr_name!r} is fixed when the engine is built: make a new {type(self).__name__}")
        self._store(attr_name, value, list(self._get_indices(indices)))  # type: ignore[attr-defined]

    def env_method(self, method_name: str, *method_args, indices: Any = None, **method_kwargs) -> list[Any]:
        indices = list(self._get_indices(indices))  # type: ignore[attr-defined]
        return env_method_answers(type(self).__name__, method_name, indices, self._action_meanings, self.get_images)

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    def get_images(self) -> Sequence[np.ndarray | None]:
        """The current RGB screen of every env, ``(rows, 160, 3)`` with its ROM's rows (210 for most, up to
        250), as ``AtariEnv.render()``: one array per env, as ``DummyVecEnv``'s."""
        if self.render_mode != "rgb_array":  # as SB3's DummyVecEnv
            warnings.warn(f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array`"
                          " to obtain images.")
            return [None for _ in range(self.num_envs)]
        return self._screens()

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """True for the SB3 wrappers whose job the engine does, Monitor included (true game scores)."""
        from stable_baselines3.common import atari_wrappers
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import VecMonitor

        if wrapper_class is Monitor and built_by(VecMonitor):
            warnings.warn(
                f"VecMonitor over {type(self).__name__} replaces the true full-game scores in info['episode'] with "
                "clipped per-life sums. The env already reports episodes as SB3's Monitor does: drop VecMonitor, "
                "or use sb3_ale_vec.AleVecMonitor to also write monitor.csv files.", UserWarning, stacklevel=2)
        indices = list(self._get_indices(indices))  # type: ignore[attr-defined]
        if self.preset != "sb3" or self.config.obs_type != _engine.ObsType.PROCESSED:  # not SB3's wrappers
            # (AtariEnv alone, or another preset's chain); Monitor stands for the true scores
            return [wrapper_class is Monitor for _ in indices]
        if wrapper_class is atari_wrappers.FireResetEnv:  # decided per game
            return [self._configs[i].fire_reset for i in indices]
        c = self.config
        emulated = {
            Monitor: True,
            atari_wrappers.AtariWrapper: True,
            atari_wrappers.NoopResetEnv: c.noop_max > 0,
            atari_wrappers.MaxAndSkipEnv: c.frameskip > 1,
            atari_wrappers.EpisodicLifeEnv: c.episodic_life,
            atari_wrappers.WarpFrame: c.grayscale,
            atari_wrappers.ClipRewardEnv: c.reward_clipping,
            atari_wrappers.StickyActionEnv: c.action_repeat_probability > 0,
        }
        return [emulated.get(wrapper_class, False) for _ in indices]
