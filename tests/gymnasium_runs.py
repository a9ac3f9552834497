"""AleVectorEnv beside Gymnasium's own pipeline, step by step: the reference, ours configured alike, and
the comparison every Gymnasium parity test runs (SyncVectorEnv over AtariPreprocessing + FrameStackObservation)."""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
from gymnasium.vector import SyncVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
from sb3_ale_vec import AleVectorEnv
from sb3_ale_vec.games import camel_name

from compare import assert_equal

gym.register_envs(ale_py)

ENV_KEYS = ("repeat_action_probability", "full_action_space", "continuous", "max_num_frames_per_episode", "mode",
            "difficulty", "render_mode")
PRE_KEYS = ("noop_max", "terminal_on_life_loss", "grayscale_obs", "frame_skip", "screen_size")


def make_reference(games, mode, padding="zero", **kwargs):
    def make(game):
        env = gym.make(f"ALE/{camel_name(game)}-v5", frameskip=1, **{k: kwargs[k] for k in ENV_KEYS if k in kwargs})
        env = AtariPreprocessing(env, **{k: kwargs[k] for k in PRE_KEYS if k in kwargs})
        return FrameStackObservation(env, 4, padding_type=padding)
    return SyncVectorEnv([lambda g=g: make(g) for g in games], autoreset_mode=mode)


def make_ours(games, mode, padding="zero", **kwargs):
    """AleVectorEnv configured as make_reference (gymnasium's names -> ours)."""
    size = kwargs.get("screen_size", 84)
    return AleVectorEnv(
        games, len(games), autoreset_mode=mode, stack_padding=padding, noop_max=kwargs.get("noop_max", 30),
        episodic_life=kwargs.get("terminal_on_life_loss", False), grayscale=kwargs.get("grayscale_obs", True),
        frameskip=kwargs.get("frame_skip", 4), img_height=size, img_width=size,
        **{k: kwargs[k] for k in ENV_KEYS if k in kwargs})


def random_actions(rng, env, n):
    if isinstance(env.single_action_space, gym.spaces.Box):
        return rng.uniform([0, -np.pi, 0], [1, np.pi, 1], (n, 3)).astype(np.float32)
    return rng.integers(0, env.single_action_space.n, n)


def compare(ref, ours, steps, seed=7, reset_mask_every=0, until_ends=0):
    """Same seeds and actions into both; everything returned must be equal. Returns episode ends. With
    until_ends, stops early once every env has ended that many episodes."""
    assert ours.single_observation_space == ref.single_observation_space
    assert ours.single_action_space == ref.single_action_space
    assert ours.observation_space == ref.observation_space
    n = ref.num_envs
    assert_equal(ref.reset(seed=seed), ours.reset(seed=seed), "reset")
    rng = np.random.default_rng(seed)
    ends = np.zeros(n, dtype=int)
    for t in range(steps):
        if until_ends and ends.min() >= until_ends:
            break
        if reset_mask_every and t % reset_mask_every == reset_mask_every - 1:
            mask = rng.random(n) < 0.5
            mask[t % n] = True
            seeds = [int(s) if m else None for s, m in zip(rng.integers(0, 2**40, n), mask)]
            assert_equal(ref.reset(seed=seeds, options={"reset_mask": mask}),
                         ours.reset(seed=seeds, options={"reset_mask": mask.copy()}), f"reset_mask t={t}")
        actions = random_actions(rng, ref, n)
        expected, got = ref.step(actions), ours.step(actions)
        for name, x, y in zip(("obs", "rewards", "terminations", "truncations", "infos"), expected, got):
            assert_equal(x, y, f"t={t} {name}")
        ends += expected[2] | expected[3]
    return int(ends.sum())


def run(games, mode, steps, **kwargs):
    ref, ours = make_reference(games, mode, **kwargs), make_ours(games, mode, **kwargs)
    try:
        return compare(ref, ours, steps, reset_mask_every=kwargs.pop("reset_mask_every", 0))
    finally:
        ref.close()
        ours.close()


