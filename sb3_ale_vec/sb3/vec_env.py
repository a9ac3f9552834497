"""AleNativeVecEnv: the native engine behind Stable-Baselines3's VecEnv contract."""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Sequence
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common import atari_wrappers
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from sb3_ale_vec import _engine
from sb3_ale_vec._core import EngineCore, EngineError
from sb3_ale_vec.games import camel_name
from sb3_ale_vec.options import build_batch, check_actions, check_int, check_preset
from sb3_ale_vec.sb3.layout import channels_first, sb3_layout

# Attributes the engine fixes at construction: set_attr cannot change them.
_ENGINE_OPTIONS = frozenset(n for n in dir(_engine.EnvConfig) if not n.startswith("_")) | {"channels_last", "game"}
# The gymnasium id whose registration each preset's reference pipeline starts from.
_SPEC_IDS = {"sb3": "{}NoFrameskip-v4", "gymnasium": "ALE/{}-v5", "ale": "ALE/{}-v5"}


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


class AleNativeVecEnv(VecEnv):
    """Many Atari games stepped natively on a pool of threads, behind SB3's ``VecEnv`` contract.

    With ``preset="sb3"`` (the default) it reproduces, bit for bit,
    ``VecTransposeImage(VecFrameStack(make_atari_env("<Game>NoFrameskip-v4", num_envs, seed), 4))``
    (or, with ``channels_last=True``, the same without ``VecTransposeImage``): observations, rewards,
    dones, ``terminal_observation``, ``TimeLimit.truncated`` and ``info["episode"]``, the true
    full-game score written as SB3's ``Monitor`` under ``AtariWrapper`` writes it.

    :param game: ROM id (``"breakout"``); ``"Breakout"``, ``"BreakoutNoFrameskip-v4"`` and
        ``"ALE/Breakout-v5"`` name the same game; or one per env, for multi-task batches (games with
        different action sets need ``full_action_space=True``; fire reset is decided per game)
    :param num_envs: number of emulators
    :param seed: base seed: env i gets ``seed + i`` at the first ``reset()`` (``VecEnv.seed``)
    :param preset: whose pipeline each env reproduces, and so the defaults of the ``None`` options:
        ``"sb3"`` (SB3's ``AtariWrapper``), ``"gymnasium"`` (``AtariPreprocessing`` +
        ``FrameStackObservation``) or ``"ale"`` (ale-py's ``AtariVectorEnv``), each behind SB3's
        same-step auto-reset, as a ``DummyVecEnv`` of that pipeline would be
    :param frameskip: emulator frames per agent step
    :param maxpool: max-pool the last two frames of each skip (RGB, before the gray conversion)
    :param grayscale: gray observations (OpenCV's RGB2GRAY), else RGB
    :param img_height: observation height (OpenCV ``INTER_AREA`` resize)
    :param img_width: observation width
    :param stack_num: frames per observation, newest last, zero-padded after every done
    :param channels_last: ``(h, w, stack)`` instead of ``(stack, h, w)``
    :param noop_max: at most this many no-op frames after a real reset (drawn from 1..noop_max)
    :param use_fire_reset: FIRE, then action 2, after every reset and life loss
        (``None``: when the game has FIRE, as ``AtariWrapper``; with ``full_action_space`` every game has it)
    :param episodic_life: a life loss ends the episode but continues the game (``None``: True)
    :param life_loss_info: a life loss is a done (with ``terminal_observation``, the obs itself) that
        resets nothing, not even the frame stack: ALE's vector-env option, for ``episodic_life=False``
    :param reward_clipping: rewards become their sign (``None``: True)
    :param repeat_action_probability: ALE's sticky actions (``None``: the preset's, 0 for sb3 and ale,
        0.25 for gymnasium as in ``ALE/*-v5``)
    :param action_repeat_probability: SB3 ``StickyActionEnv``'s sticky actions
    :param full_action_space: all 18 actions instead of the game's minimal set
    :param max_num_frames_per_episode: ALE truncates a game after this many frames (0: never)
    :param mode: game mode (``None``: the game's default)
    :param difficulty: game difficulty (``None``: the game's default)
    :param env_frameskip: the frame skip of gymnasium's ``AtariEnv`` below SB3's wrappers (its
        ``frameskip``): 1 as in ``*NoFrameskip-v4``, 4 as in ``ALE/*-v5``, or a ``(low, high)``
        range drawn every step as in plain ``*-v4``. ``frameskip`` repeats these steps.
    :param num_threads: worker threads (0: one per core, at most ``num_envs``)
    :param thread_affinity_offset: pin worker t to core ``offset + t`` (-1: no pinning)
    :param render_mode: ``"rgb_array"`` (``get_images`` and video) or ``None``
    """

    def __init__(
        self,
        game: str,
        num_envs: int,
        *,
        seed: int | None = None,
        preset: str = "sb3",
        frameskip: int = 4,
        maxpool: bool = True,
        grayscale: bool = True,
        img_height: int = 84,
        img_width: int = 84,
        stack_num: int = 4,
        channels_last: bool = False,
        noop_max: int = 30,
        use_fire_reset: bool | None = None,
        episodic_life: bool | None = None,
        life_loss_info: bool = False,
        reward_clipping: bool | None = None,
        repeat_action_probability: float | None = None,
        action_repeat_probability: float = 0.0,
        full_action_space: bool = False,
        max_num_frames_per_episode: int = 108_000,
        mode: int | None = None,
        difficulty: int | None = None,
        env_frameskip: int | tuple[int, int] = 1,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        render_mode: str | None = "rgb_array",
    ) -> None:
        check_preset(preset)
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be 'rgb_array' or None, got {render_mode!r}")
        num_envs = check_int("num_envs", num_envs, 1)
        layout, self._transposed = sb3_layout(preset, channels_last)
        batch = build_batch(
            game, num_envs, preset, layout=layout,
            next_step_autoreset=False, frameskip=frameskip, maxpool=maxpool, grayscale=grayscale,
            img_height=img_height, img_width=img_width, stack_num=stack_num, noop_max=noop_max,
            use_fire_reset=use_fire_reset, episodic_life=episodic_life, life_loss_info=life_loss_info,
            reward_clipping=reward_clipping, repeat_action_probability=repeat_action_probability,
            action_repeat_probability=action_repeat_probability, full_action_space=full_action_space,
            max_num_frames_per_episode=max_num_frames_per_episode, mode=mode, difficulty=difficulty,
            env_frameskip=env_frameskip, num_threads=num_threads, thread_affinity_offset=thread_affinity_offset)
        self.games = batch.games
        self.game = batch.games[0] if len(set(batch.games)) == 1 else list(batch.games)
        self.preset = preset
        # Before VecEnv.__init__, which asks get_attr("render_mode").
        self.render_mode = render_mode
        self._attrs: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._action_meanings = batch.action_meanings
        self._configs = batch.configs
        self.config = batch.configs[0]
        self._engine = EngineCore(batch, type(self).__name__)

        obs_shape = self._view(np.empty(self._engine.obs_shape, np.uint8)).shape
        observation_space = spaces.Box(0, 255, obs_shape, np.uint8)
        super().__init__(num_envs, observation_space, spaces.Discrete(len(self._action_meanings)))
        # VecEnv.__init__ replaced metadata; AtariEnv's, with its fps, is what video recorders read.
        self.metadata = dict(ale_py.env.AtariEnv.metadata)
        self._specs = [gym.spec(_SPEC_IDS[preset].format(camel_name(g))) for g in self.games]
        self.spec = self._specs[0]
        self.t_start = time.time()  # Monitor's t_start: info["episode"]["t"] counts from here
        # A step that step_wait() did not return whole (Ctrl-C, or an error): its results are lost,
        # so the envs' state and the caller's disagree, and only reset() makes them agree again.
        self._unfinished = False
        self.seed(seed)

    # -- the VecEnv contract ------------------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Reset every env, using (then clearing) the seeds and options set since the last reset.

        As with ``EpisodicLifeEnv``, an env whose game is still running after a life loss is not
        restarted: it plays one NOOP step and goes on (its seed is then unused).
        """
        # A step still in flight finishes first; its results are dropped.
        self._unfinished = False
        self._engine.send_reset(self._seeds)
        batch = self._engine.recv_reset()
        self.reset_infos = [batch.reset_info(i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return self._view(batch.obs)

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Env i gets ``seed + i`` at the next ``reset()``; None draws a base seed (below 2**31 for
        the ale preset, whose seeds are C ints)."""
        if seed is None and self._engine.max_seed is not None:
            seed = int(np.random.randint(0, self._engine.max_seed - self.num_envs))
        elif seed is not None and self._engine.max_seed is not None and seed + self.num_envs - 1 > self._engine.max_seed:
            raise ValueError(f"the ale preset takes seeds in [0, {self._engine.max_seed}]: seed + num_envs - 1 "
                             f"= {seed + self.num_envs - 1} is too large")
        return super().seed(seed)

    def step_async(self, actions: np.ndarray) -> None:
        self._check_finished()
        if self._engine.pending:
            raise RuntimeError("step_async() called twice without step_wait()")
        self._engine.send(check_actions(actions, self.num_envs, self.action_space.n, column_ok=True))

    def _check_finished(self) -> None:
        if self._unfinished:
            raise RuntimeError("the last step_wait() was interrupted (Ctrl-C) or failed before it returned, so "
                               "its results are lost: reset() before stepping again")

    def step_wait(self) -> VecEnvStepReturn:
        self._check_finished()
        if not self._engine.pending:
            raise RuntimeError("step_wait() called without step_async()")
        self._unfinished = True  # until this step reaches the caller whole
        batch = self._engine.recv()
        failed = set(batch.failed)
        truncated, lives = batch.time_limit.tolist(), batch.lives.tolist()
        episode_frames, frames = batch.episode_frame_number.tolist(), batch.frame_number.tolist()
        game_end, reset = batch.game_end.tolist(), batch.reset.tolist()
        now = round(time.time() - self.t_start, 6)
        infos: list[dict[str, Any]] = []
        for i in range(self.num_envs):
            if i in failed:
                infos.append({})
                continue
            # The ALE info of the step's last frame, as AtariEnv returns it through the wrappers.
            info: dict[str, Any] = {"lives": lives[i], "episode_frame_number": episode_frames[i],
                                    "frame_number": frames[i]}
            if game_end[i]:  # Monitor below the chain: only a real game end is an episode
                info["episode"] = {"r": round(float(batch.episode_return[i]), 6),
                                   "l": int(batch.episode_length[i]), "t": now}
            info["TimeLimit.truncated"] = truncated[i]
            if i in batch.final_obs:
                info["terminal_observation"] = self._view(batch.final_obs[i])
            if reset[i]:
                self.reset_infos[i] = batch.reset_info(i)
            infos.append(info)
        dones, obs = batch.dones, self._view(batch.obs)
        self._unfinished = False  # the whole step reaches the caller, an EngineError's included
        if failed:
            raise EngineError(f"{batch.error} (the other envs stepped normally: see this error's obs, rewards, "
                              "dones and infos; reset() rebuilds the failed envs)", sorted(failed), obs,
                              batch.rewards, dones, infos)
        return obs, batch.rewards, dones, infos

    def _view(self, obs: np.ndarray) -> np.ndarray:
        """The engine's arrays in the memory layout SB3's pipeline hands out (sb3/layout.py)."""
        return channels_first(obs) if self._transposed else obs

    def send(self, actions: np.ndarray) -> None:
        """``step_async``: start a step of every env and return at once (emulation overlaps the caller)."""
        self.step_async(actions)

    def recv(self) -> VecEnvStepReturn:
        """``step_wait``: wait for the step that ``send`` started."""
        return self.step_wait()

    def close(self) -> None:
        """Join the worker threads and free the emulators; calling it again does nothing."""
        self._engine.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """The current RGB screen of every env, ``(210, 160, 3)``, as ``AtariEnv.render()``."""
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array`"
                          " to obtain images.")
            return [None for _ in range(self.num_envs)]
        return self._engine.screens()

    # -- attributes, methods and wrappers, per env ---------------------------------------------

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "render_mode" and self.config.stack_num > 1 and built_by(VecFrameStack):
            # Every VecEnvWrapper asks for render_mode while it is built: the moment to catch this.
            warnings.warn(
                f"VecFrameStack over an AleNativeVecEnv that already stacks {self.config.stack_num} frames: "
                f"observations will hold {self.config.stack_num} x n_stack frames. Build the env with "
                "stack_num=1 (make_ale_vec_env's default) to stack with VecFrameStack, or drop VecFrameStack.",
                UserWarning, stacklevel=2)
        values = []
        for i in self._get_indices(indices):
            if attr_name in self._attrs[i]:
                values.append(self._attrs[i][attr_name])
            elif attr_name in ("spec", "game"):
                values.append(self._specs[i] if attr_name == "spec" else self.games[i])
            elif attr_name in ("render_mode", "metadata", "action_space"):
                values.append(getattr(self, attr_name))
            elif attr_name == "observation_space":
                values.append(self.observation_space)
            else:
                raise AttributeError(f"AleNativeVecEnv envs have no attribute {attr_name!r}")
        return values

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if attr_name in _ENGINE_OPTIONS:
            raise AttributeError(f"{attr_name!r} is fixed when the engine is built: make a new AleNativeVecEnv")
        for i in self._get_indices(indices):
            self._attrs[i][attr_name] = value

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        indices = list(self._get_indices(indices))
        if method_name == "get_action_meanings":
            return [list(self._action_meanings) for _ in indices]
        if method_name == "render":
            images = self.get_images()
            return [images[i] for i in indices]
        raise AttributeError(f"AleNativeVecEnv envs have no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """True for the SB3 wrappers whose job the engine does, Monitor included (true game scores)."""
        if wrapper_class is Monitor and built_by(VecMonitor):
            warnings.warn(
                "VecMonitor over AleNativeVecEnv replaces the true full-game scores in info['episode'] with "
                "clipped per-life sums. The env already reports episodes as SB3's Monitor does: drop VecMonitor, "
                "or use sb3_ale_vec.AleVecMonitor to also write monitor.csv files.", UserWarning, stacklevel=2)
        if self.preset != "sb3":  # other chains are not SB3's wrappers; Monitor stands for the true scores
            return [wrapper_class is Monitor for _ in self._get_indices(indices)]
        c = self.config
        emulated = {
            Monitor: True,
            atari_wrappers.AtariWrapper: True,
            atari_wrappers.NoopResetEnv: c.noop_max > 0,
            atari_wrappers.MaxAndSkipEnv: c.frameskip > 1,
            atari_wrappers.EpisodicLifeEnv: c.episodic_life,
            atari_wrappers.FireResetEnv: None,  # per game
            atari_wrappers.WarpFrame: c.grayscale,
            atari_wrappers.ClipRewardEnv: c.reward_clipping,
            atari_wrappers.StickyActionEnv: c.action_repeat_probability > 0,
        }
        if wrapper_class is atari_wrappers.FireResetEnv:
            return [self._configs[i].fire_reset for i in self._get_indices(indices)]
        return [emulated.get(wrapper_class, False) for _ in self._get_indices(indices)]

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    @property
    def num_threads(self) -> int:
        return self._engine.num_threads
