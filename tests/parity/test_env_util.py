"""make_ale_vec_env against SB3's make_atari_env: the one-line switch gives the same envs."""

import numpy as np
import pytest
from stable_baselines3.common.env_util import make_atari_env, make_vec_env
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
    # Every step asserted, until every env has ended two whole games (a reset's path, then play again)
    # or 1,000 steps: v5's 16 frames a step end two games of Breakout in about 200.
    compare_rollouts(ref, ours, 1000, until_episodes=2)
    assert ours.observation_space.shape == ((4, *ref.observation_space.shape[1:]) if transpose else ref.observation_space.shape)
    ref.close()
    ours.close()


def test_single_frames_by_default():
    env = make_ale_vec_env("PongNoFrameskip-v4", n_envs=3)
    assert env.observation_space.shape == (84, 84, 1) and env.num_envs == 3
    assert env.get_attr("spec")[0].id == "PongNoFrameskip-v4"
    env.close()


@pytest.mark.parametrize("env_id, kwargs", [
    ("PongNoFrameskip-v4", {}),
    ("ALE/Breakout-v5", {"env_kwargs": {"mode": None, "render_mode": None}}),
    ("Breakout-v4", {"wrapper_kwargs": {"frame_skip": 1, "noop_max": 0, "terminal_on_life_loss": False,
                                        "clip_reward": False, "action_repeat_probability": 0.2}}),
    ("ALE/Klax-v5", {"env_kwargs": {"repeat_action_probability": 0.0, "frameskip": 1}}),  # no v4 id; taller screen
])
def test_each_envs_spec_is_make_atari_envs(env_id, kwargs):
    """get_attr("spec"): gym.make's kwargs (make_vec_env's render_mode, then env_kwargs) and the wrappers
    that Monitor and AtariWrapper put over AtariEnv, as the reference's envs report them."""
    ref, ours = make_atari_env(env_id, n_envs=2, **kwargs), make_ale_vec_env(env_id, n_envs=2, **kwargs)
    assert ours.get_attr("spec") == ref.get_attr("spec")
    ref.close(), ours.close()


@pytest.mark.parametrize("env_id, ours_id, env_kwargs", [
    ("BreakoutNoFrameskip-v4", "BreakoutNoFrameskip-v4", {"obs_type": "ram"}),
    ("ALE/Pong-v5", "ALE/Pong-ram-v5", {"obs_type": "ram"}),
    ("ALE/Pong-v5", "ALE/Pong-v5", {"obs_type": "ram", "frameskip": 2, "repeat_action_probability": 0.0}),
])
def test_the_ram_workflows_spec_is_make_vec_envs(env_id, ours_id, env_kwargs):
    ref = make_vec_env(env_id, n_envs=2, env_kwargs=env_kwargs)
    ours = make_ale_vec_env(ours_id, n_envs=2, env_kwargs=env_kwargs if ours_id == env_id else None)
    assert ours.get_attr("spec") == ref.get_attr("spec")
    ref.close(), ours.close()


@pytest.mark.parametrize("options, env_kwargs, wrapper_kwargs", [
    ({}, {}, {}),
    ({"repeat_action_probability": 0.25, "mode": 2, "frameskip": 3, "reward_clipping": False},
     {"repeat_action_probability": 0.25, "mode": 2}, {"frame_skip": 3, "clip_reward": False}),
    ({"obs_type": "ram", "frameskip": 1}, {"obs_type": "ram"}, None),
])
def test_the_vec_envs_spec_is_that_of_the_pipeline_its_options_mean(options, env_kwargs, wrapper_kwargs):
    """AleNativeVecEnv built directly: the spec of make_atari_env (make_vec_env for AtariEnv's own obs)
    with those options."""
    ours = AleNativeVecEnv("space_invaders", 2, **options)
    ref = (make_vec_env("SpaceInvadersNoFrameskip-v4", 2, env_kwargs=env_kwargs) if wrapper_kwargs is None else
           make_atari_env("SpaceInvadersNoFrameskip-v4", 2, env_kwargs=env_kwargs, wrapper_kwargs=wrapper_kwargs))
    assert ours.get_attr("spec") == ref.get_attr("spec")
    ref.close(), ours.close()


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
