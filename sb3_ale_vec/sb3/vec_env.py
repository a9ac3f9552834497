"""AleNativeVecEnv: the native engine behind Stable-Baselines3's VecEnv contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvObs, VecEnvStepReturn

from sb3_ale_vec import _engine
from sb3_ale_vec._native import NativeVectorizer, EngineError
from sb3_ale_vec.options import check_actions, table_options
from sb3_ale_vec.sb3.contract import SB3Contract, SetAttrs, info_columns


class AleNativeVecEnv(SB3Contract, VecEnv):
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
    :param obs_type: ``None`` (the preset's frames) or ``"ram"``, ``"rgb"``, ``"grayscale"``: ``AtariEnv``'s
        own observations with no preprocessing, as ``make_vec_env("<Game>-ramNoFrameskip-v4")`` gives
        them (then ``frameskip`` is ``AtariEnv``'s; ``frameskip=1`` for the ``NoFrameskip`` ids;
        ``sb3_ale_vec.obs_types`` says what the other options mean)
    :param ram_info: ``info["ram"]``, the RAM (128 uint8) at each observation's frame, and
        ``info["terminal_ram"]`` beside ``terminal_observation`` (also in ``reset_infos``)
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
        obs_type: str | None = None,
        ram_info: bool = False,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        render_mode: str | None = "rgb_array",
    ) -> None:
        batch, _ = self._describe(game, num_envs, preset, channels_last, render_mode, table_options(locals()))
        self._attrs = SetAttrs(len(batch.games))
        self._native = NativeVectorizer(batch, type(self).__name__)
        # A step that step_wait() did not return whole (Ctrl-C, or an error): its results are lost,
        # so the envs' state and the caller's disagree, and only reset() makes them agree again.
        self._unfinished = False
        self._start(_engine.obs_shape(batch.configs[0]), seed)

    # -- the VecEnv contract (the rest is SB3Contract's, sb3/contract.py) ------------------------

    def reset(self) -> VecEnvObs:
        """Reset every env, using (then clearing) the seeds and options set since the last reset.

        As with ``EpisodicLifeEnv``, an env whose game is still running after a life loss is not
        restarted: it plays one NOOP step and goes on (its seed is then unused).
        """
        # A step still in flight finishes first; its results are dropped.
        self._native.send_reset(self._seeds)
        self._unfinished = False
        batch = self._native.recv_reset()
        self.reset_infos = [batch.reset_info(i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return self._view(batch.obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._check_finished()
        if self._native.pending:
            raise RuntimeError("step_async() called twice without step_wait()")
        self._native.send(check_actions(actions, self.num_envs, self.action_space.n, column_ok=True))

    def _check_finished(self) -> None:
        if self._unfinished:
            raise RuntimeError("the last step_wait() was interrupted (Ctrl-C) or failed before it returned, so "
                               "its results are lost: reset() before stepping again")

    def step_wait(self) -> VecEnvStepReturn:
        self._check_finished()
        if not self._native.pending:
            raise RuntimeError("step_wait() called without step_async()")
        self._unfinished = True  # until this step reaches the caller whole
        try:
            batch = self._native.recv()
        except _engine.EngineBusy:  # refused before it took anything: the step is still to be received
            self._unfinished = False
            raise
        infos = self._step_infos(info_columns(batch), batch.final_obs, batch.failed, self._episode_time())
        failed = set(batch.failed)
        for i in np.flatnonzero(batch.reset).tolist():
            if i not in failed:
                self.reset_infos[i] = batch.reset_info(i)
        dones, obs = batch.dones, self._view(batch.obs)
        self._unfinished = False  # the whole step reaches the caller, an EngineError's included
        if failed:
            raise EngineError(f"{batch.error} (the other envs stepped normally: see this error's obs, rewards, "
                              "dones and infos; reset() rebuilds the failed envs)", sorted(failed), obs,
                              batch.rewards, dones, infos)
        return obs, batch.rewards, dones, infos

    def send(self, actions: np.ndarray) -> None:
        """``step_async``: start a step of every env and return at once (emulation overlaps the caller)."""
        self.step_async(actions)

    def recv(self) -> VecEnvStepReturn:
        """``step_wait``: wait for the step that ``send`` started."""
        return self.step_wait()

    def close(self) -> None:
        """Join the worker threads and free the emulators; calling it again does nothing."""
        self._native.close()

    @property
    def num_threads(self) -> int:
        return self._native.num_threads

    # -- SB3Contract's hooks: set_attr's values and the screens, here in this process -------------

    def _stored(self, name: str, indices: list[int]) -> list[tuple[bool, Any]]:
        return self._attrs.get(name, indices)

    def _store(self, name: str, value: Any, indices: list[int]) -> None:
        self._attrs.set(name, value, indices)

    def _screens(self) -> Sequence[np.ndarray]:
        return self._native.screens()
