"""make_ale_vec_env against SB3's make_atari_env: the one-line switch gives the same envs."""

import numpy as np
import pytest
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.vec_env import VecFrameStack, VecTransposeImage

from helpers import compare_rollouts
from sb3_ale_vec import AleNativeVecEnv, make_ale_vec_env


def _pair(env_id, n_envs=2, seed=0, transpose=False, **kwargs):
    ref = VecFrameStack(make_atari_env(env_id, n_envs=n_envs, seed=seed, **kwargs), 4)
    ours = VecFrameStack(make_ale_vec_env(env_id, n_envs=n_envs, seed=seed, **kwargs), 4)
    return (VecTransposeImage(ref), VecTransposeImage(ours)) if transpose else (ref, ours)


@pytest.mark.parametrize("env_id, kwargs, transpose", [
    ("PongNoFrameskip-v4", {}, False),
    ("BreakoutNoFrameskip-v4", {}, True),
    # v5: sticky actions and a frame skip of 4 inside the env, under AtariWrapper's 4 (16 frames a
    # step, as make_atari_env does); plain v4: a stochastic frame skip of 2-4 inside the env.
    ("ALE/Breakout-v5", {}, False),
    ("Breakout-v4", {}, False),
    ("SpaceInvadersNoFrameskip-v4", {"wrapper_kwargs": {"noop_max": 10, "frame_skip": 3, "screen_size": 64,
                                                         "terminal_on_life_loss": False, "clip_reward": False,
                                                         "action_repeat_probability": 0.1}}, False),
    ("MsPacmanNoFrameskip-v4", {"env_kwargs": {"repeat_action_probability": 0.25,
                                                "max_num_frames_per_episode": 1000}}, False),
    ("FreewayNoFrameskip-v4", {"env_kwargs": {"mode": 1, "difficulty": 1}}, False),
])
@pytest.mark.slow
def test_same_as_make_atari_env(env_id, kwargs, transpose):
    ref, ours = _pair(env_id, transpose=transpose, **kwargs)
    compare_rollouts(ref, ours, 1000)  # asserts every step
    assert ours.observation_space.shape == ((4, *ref.observation_space.shape[1:]) if transpose else ref.observation_space.shape)
    ref.close()
    ours.close()


def test_single_frames_by_default():
    env = make_ale_vec_env("PongNoFrameskip-v4", n_envs=3)
    assert env.observation_space.shape == (84, 84, 1) and env.num_envs == 3
    assert env.get_attr("spec")[0].id == "PongNoFrameskip-v4"
    env.close()


@pytest.mark.parametrize("kwargs, match", [
    ({"wrapper_kwargs": {"noop_max": 30, "warp_frame": False}}, "warp_frame"),
    ({"env_kwargs": {"obs_type": "grayscale"}}, "obs_type"),
    ({"env_kwargs": {"continuous": True}}, "continuous"),
])
def test_unsupported_options_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ale_vec_env("PongNoFrameskip-v4", **kwargs)


def test_non_atari_ids_are_refused():
    with pytest.raises(ValueError, match="not an Atari env"):
        make_ale_vec_env("CartPole-v1")
    with pytest.raises(ValueError, match="not a registered"):
        make_ale_vec_env("NoSuchGameNoFrameskip-v4")


def test_double_stacking_warns_with_the_fix():
    with pytest.warns(UserWarning, match="stack_num=1"):
        VecFrameStack(AleNativeVecEnv("pong", 1, stack_num=4), 4)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        VecFrameStack(make_ale_vec_env("PongNoFrameskip-v4"), 4).close()
        VecFrameStack(AleNativeVecEnv("pong", 1, stack_num=1, channels_last=True), 4).close()


@pytest.mark.slow
def test_drop_in_for_a_ppo_script():
    from stable_baselines3 import PPO

    env = VecFrameStack(make_ale_vec_env("BreakoutNoFrameskip-v4", n_envs=2, seed=0), 4)
    PPO("CnnPolicy", env, n_steps=16, batch_size=32, n_epochs=1).learn(32)
    assert np.asarray(env.reset()).shape == (2, 84, 84, 4)
    env.close()
