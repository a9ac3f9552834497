"""Test helpers: the reference pipeline (SB3's own Atari stack) and a step-by-step comparison."""

from __future__ import annotations

from dataclasses import dataclass

import ale_py
import gymnasium as gym
import numpy as np
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecTransposeImage

from sb3_ale_vec import AleNativeVecEnv, _testing
from sb3_ale_vec.games import camel_name

gym.register_envs(ale_py)


def no_frameskip_id(game: str) -> tuple[str, dict]:
    """``"<Game>NoFrameskip-v4"``; for the ROMs ale-py registers no v4 id for (Klax, Pac-Man, ...), its v5
    id and the v4 id's settings, to pass as env_kwargs."""
    v4 = f"{camel_name(game)}NoFrameskip-v4"
    if v4 in gym.registry:
        return v4, {}
    return f"ALE/{camel_name(game)}-v5", {k: gym.registry["PongNoFrameskip-v4"].kwargs[k]
                                          for k in ("frameskip", "repeat_action_probability", "full_action_space")}


def make_reference(game: str, n_envs: int, seed: int, channels_last: bool = False, env_kwargs=None,
                   wrapper_kwargs=None) -> VecEnv:
    """``VecTransposeImage(VecFrameStack(make_atari_env("<Game>NoFrameskip-v4", ...), 4))``."""
    env_id, settings = no_frameskip_id(game)
    env = VecFrameStack(make_atari_env(env_id, n_envs=n_envs, seed=seed, env_kwargs={**settings, **(env_kwargs or {})},
                                       wrapper_kwargs=wrapper_kwargs), 4)
    return env if channels_last else VecTransposeImage(env)


def make_pair(game: str, n_envs: int = 4, seed: int = 0, channels_last: bool = False,
              max_frames: int = 108_000, repeat_action_probability: float = 0.0, **wrapper_kwargs):
    """The reference and our env, configured alike (AtariWrapper's names -> ours)."""
    env_kwargs = {"max_num_frames_per_episode": max_frames, "repeat_action_probability": repeat_action_probability}
    ref = make_reference(game, n_envs, seed, channels_last, env_kwargs, wrapper_kwargs)
    ours = AleNativeVecEnv(
        game, n_envs, seed=seed, channels_last=channels_last, max_num_frames_per_episode=max_frames,
        repeat_action_probability=repeat_action_probability,
        frameskip=wrapper_kwargs.get("frame_skip", 4),
        img_height=wrapper_kwargs.get("screen_size", 84),
        img_width=wrapper_kwargs.get("screen_size", 84),
        noop_max=wrapper_kwargs.get("noop_max", 30),
        episodic_life=wrapper_kwargs.get("terminal_on_life_loss", True),
        reward_clipping=wrapper_kwargs.get("clip_reward", True),
        action_repeat_probability=wrapper_kwargs.get("action_repeat_probability", 0.0),
    )
    return ref, ours


@dataclass
class RolloutStats:
    steps: int = 0
    dones: int = 0
    episodes: int = 0
    truncations: int = 0
    resets_mid_run: int = 0


def assert_same_infos(ref_infos, our_infos, where) -> None:
    for i, (x, y) in enumerate(zip(ref_infos, our_infos)):
        assert x.keys() == y.keys(), (where, i, sorted(x), sorted(y))
        for key, value in x.items():
            if key == "terminal_observation":
                assert y[key].dtype == value.dtype and np.array_equal(value, y[key]), (where, i, key)
                # the memory layout too: SB3 hands it to the policy as it is (sb3/layout.py)
                assert y[key].strides == value.strides, (where, i, key, value.strides, y[key].strides)
            elif key == "episode":  # "t" is wall time
                assert (value["r"], value["l"]) == (y[key]["r"], y[key]["l"]), (where, i, value, y[key])
            elif isinstance(value, np.ndarray):  # ram_info's RAM
                assert y[key].dtype == value.dtype and np.array_equal(value, y[key]), (where, i, key)
            else:
                assert value == y[key] and type(value) is type(y[key]), (where, i, key, value, y[key])


def compare_rollouts(ref: VecEnv, ours: VecEnv | list[VecEnv], steps: int, action_seed: int = 1,
                     reset_every: int = 0, until_episodes: int = 0) -> RolloutStats:
    """Step both envs with the same random actions and assert that everything they return is equal.
    `ours` may be several envs, each held to the one reference run (stats: the first's).
    With until_episodes, at most `steps`: it stops once every env has ended that many whole games."""
    many = list(ours) if isinstance(ours, (list, tuple)) else [ours]
    for env in many:
        assert ref.observation_space == env.observation_space
        assert ref.action_space == env.action_space
    stats = RolloutStats()
    rng = np.random.default_rng(action_seed)
    n = many[0].num_envs
    games = np.zeros(n, dtype=int)
    for t in range(steps):
        if until_episodes and games.min() >= until_episodes:
            break
        if t % reset_every == 0 if reset_every else t == 0:
            o1 = ref.reset()
            for env in many:
                o2 = env.reset()
                assert np.array_equal(o1, o2), ("reset", t, int((o1 != o2).sum()))
                assert o1.strides == o2.strides, ("reset strides", t, o1.strides, o2.strides)
                assert_same_infos(ref.unwrapped.reset_infos, env.unwrapped.reset_infos, ("reset_infos", t))
            stats.resets_mid_run += t > 0
        actions = rng.integers(0, many[0].action_space.n, n)
        o1, r1, d1, i1 = ref.step(actions)
        for env in many:
            o2, r2, d2, i2 = env.step(actions)
            assert o1.shape == o2.shape and o2.dtype == np.uint8
            assert np.array_equal(o1, o2), ("obs", t, int((o1 != o2).sum()))
            assert o1.strides == o2.strides, ("obs strides", t, o1.strides, o2.strides)
            assert r2.dtype == np.float32 and np.array_equal(r1, r2), ("rewards", t, r1, r2)
            assert d2.dtype == np.bool_ and np.array_equal(d1, d2), ("dones", t, d1, d2)
            assert_same_infos(i1, i2, t)
            assert_same_infos(ref.unwrapped.reset_infos, env.unwrapped.reset_infos, ("reset_infos", t))
        stats.steps += n
        stats.dones += int(d1.sum())
        ended = ["episode" in info for info in i1]  # whole games (Monitor's episode stats)
        games += ended
        stats.episodes += sum(ended)
        stats.truncations += sum(info["TimeLimit.truncated"] for info in i1)
    return stats


def swapping(env):
    """`env` (any front-end of ours) with resets computed ahead on, each prepared by its env at its
    episode's end rather than by the idle-priority threads (which a loaded machine may never run):
    so that a test really takes the swapped path. Its swaps so far: `resets_taken(env)`."""
    _testing._reset_ahead_wait(env._native._vec, True)
    return env


def resets_taken(env) -> int:
    return env._native._vec._resets_taken


def resets_replayed(env) -> int:
    """Of the swapped resets, those whose no-ops and FIRE were computed ahead too (no sticky actions)."""
    return env._native._vec._resets_replayed

