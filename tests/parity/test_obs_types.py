"""obs_type ("rgb", "grayscale", "ram"): each env is gymnasium's AtariEnv alone, on real emulators.

References: SyncVectorEnv([gym.make("ALE/<Game>-v5", obs_type=..., frameskip=..., ...)] * n) for
AleVectorEnv; SB3's make_vec_env(id, env_kwargs={"obs_type": "ram"}) (MlpPolicy's RAM workflow) for
make_ale_vec_env and AleNativeVecEnv. Everything returned must be equal, step by step.
"""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from stable_baselines3.common.env_util import make_vec_env

from helpers import compare_rollouts
from gymnasium_runs import compare as compare_steps
from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, make_ale_vec_env
from sb3_ale_vec.games import camel_name

gym.register_envs(ale_py)

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
ENV_KEYS = ("frameskip", "repeat_action_probability", "full_action_space", "max_num_frames_per_episode")


def gym_pair(games, obs_type, mode=NEXT, **kwargs):
    """SyncVectorEnv of ALE/<Game>-v5 with obs_type, and AleVectorEnv alike."""
    ref = SyncVectorEnv([lambda g=g: gym.make(f"ALE/{camel_name(g)}-v5", obs_type=obs_type, **kwargs) for g in games],
                        autoreset_mode=mode)
    return ref, AleVectorEnv(games, len(games), obs_type=obs_type, autoreset_mode=mode, **kwargs)


def compare(ref, ours, steps, seed=3, reset_mask_every=0):
    """test_gymnasium's comparison (spaces, resets, masked resets, steps), then both closed."""
    try:
        return compare_steps(ref, ours, steps, seed, reset_mask_every)
    finally:
        ref.close()
        ours.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.parametrize("obs_type", ["rgb", "grayscale", "ram"])
def test_spaces_and_a_short_run_equal_atari_env(obs_type):
    ref, ours = gym_pair(["breakout"] * 2, obs_type, max_num_frames_per_episode=200)
    assert ours.single_observation_space == gym.make("ALE/Breakout-v5", obs_type=obs_type).observation_space
    assert compare(ref, ours, 60) > 0  # the frame cap ends both games: a reset is compared too


def test_sb3_ram_space_is_make_vec_envs():
    ref = make_vec_env("BreakoutNoFrameskip-v4", n_envs=2, env_kwargs={"obs_type": "ram"})
    for ours in (make_ale_vec_env("BreakoutNoFrameskip-v4", 2, env_kwargs={"obs_type": "ram"}),
                 make_ale_vec_env("Breakout-ramNoFrameskip-v4", 2), AleNativeVecEnv("breakout", 2, obs_type="ram")):
        assert ours.observation_space == ref.observation_space == gym.spaces.Box(0, 255, (128,), np.uint8)
        assert ours.action_space == ref.action_space
        ours.close()


@pytest.mark.slow
@pytest.mark.parametrize("game", ["breakout", "pong", "ms_pacman"])
@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("settings", [{}, {"frameskip": 1, "repeat_action_probability": 0.0},
                                      {"frameskip": 3, "repeat_action_probability": 0.5}])
@pytest.mark.deep  # the RAM option matrix
def test_ram_observations_equal_sync_vector_env_of_v5(game, mode, settings):
    frames = 70 * settings.get("frameskip", 4)  # games cut off every 70 steps, between the masked resets
    ref, ours = gym_pair([game] * 3, "ram", mode, max_num_frames_per_episode=frames, **settings)
    assert compare(ref, ours, 400, reset_mask_every=97) > 0


@pytest.mark.slow
@pytest.mark.parametrize("obs_type", ["rgb", "grayscale"])
def test_screen_observations_equal_sync_vector_env_of_v5(obs_type):
    ref, ours = gym_pair(["space_invaders", "pong"], obs_type, SAME, max_num_frames_per_episode=800,
                         full_action_space=True)
    assert compare(ref, ours, 300) > 0


@pytest.mark.slow
def test_multi_game_ram_batch_equals_one_v5_env_per_game():
    ref, ours = gym_pair(["breakout", "pong", "ms_pacman"], "ram", NEXT, full_action_space=True,
                         max_num_frames_per_episode=1000)
    assert compare(ref, ours, 400) > 0


@pytest.mark.slow
@pytest.mark.parametrize("env_id, frames", [("BreakoutNoFrameskip-v4", 250), ("Breakout-v4", 600),
                                            ("ALE/Breakout-v5", 800), ("PongNoFrameskip-v4", 250)])
def test_sb3_ram_workflow_equals_make_vec_env(env_id, frames):
    """make_vec_env(id, env_kwargs={"obs_type": "ram"}): obs, rewards, dones, Monitor's episodes,
    TimeLimit.truncated, terminal_observation and reset_infos, seed for seed (frame skips drawn per
    step for plain v4, sticky actions for v5); the frame cap cuts games off before each reset."""
    kwargs = {"obs_type": "ram", "max_num_frames_per_episode": frames}
    ref = make_vec_env(env_id, n_envs=3, seed=11, env_kwargs=kwargs)
    ours = make_ale_vec_env(env_id, 3, seed=11, env_kwargs=kwargs)
    stats = compare_rollouts(ref, ours, 700, reset_every=300)
    assert stats.episodes > 0 and stats.truncations > 0 and stats.resets_mid_run > 0


@pytest.mark.slow
def test_old_ram_id_and_the_one_line_switch_equal_make_vec_env():
    """"Breakout-ramNoFrameskip-v4" (ale-py 0.9+ registers no -ram id) and AleNativeVecEnv(obs_type="ram",
    frameskip=1) are the NoFrameskip-v4 id with obs_type="ram"."""
    ours = [make_ale_vec_env("Breakout-ramNoFrameskip-v4", 2, seed=4),
            AleNativeVecEnv("breakout", 2, seed=4, obs_type="ram", frameskip=1)]
    ref = make_vec_env("BreakoutNoFrameskip-v4", n_envs=2, seed=4, env_kwargs={"obs_type": "ram"})
    assert compare_rollouts(ref, ours, 1500).episodes > 0  # one reference run, both of ours held to it


@pytest.mark.parametrize("kwargs, match", [
    ({"obs_type": "pixels"}, "obs_type must be None .* 'rgb', 'grayscale', 'ram', got 'pixels'"),
    ({"obs_type": "ram", "noop_max": 5}, r"noop_max=5 means nothing with obs_type='ram'.*allowed: 30 or 0"),
    ({"obs_type": "ram", "stack_num": 2}, "stack_num=2 means nothing"),
    ({"obs_type": "rgb", "img_height": 60}, "img_height=60 means nothing"),
    ({"obs_type": "ram", "episodic_life": True}, "episodic_life=True means nothing"),
    ({"obs_type": "grayscale", "reward_clipping": True}, "reward_clipping=True means nothing"),
    ({"obs_type": "ram", "preset": "ale"}, "not allowed with preset='ale'"),
])
def test_options_that_mean_nothing_without_preprocessing_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AleVectorEnv("breakout", 1, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"obs_type": "ram", "channels_last": True}, "channels_last=True means nothing"),
    ({"obs_type": "ram", "env_frameskip": 4}, "pass frameskip=4"),
    ({"obs_type": "ram", "env_frameskip": (2, 5)}, "pass frameskip=1 with the range"),
    ({"obs_type": "ram", "action_repeat_probability": 0.25}, "action_repeat_probability=0.25 means nothing"),
])
def test_sb3_options_that_mean_nothing_with_obs_type_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AleNativeVecEnv("breakout", 1, **kwargs)


def test_obs_type_of_the_wrong_type_raises():
    with pytest.raises(TypeError, match="obs_type must be None or a str, got int"):
        AleVectorEnv("breakout", 1, obs_type=3)


def test_make_ale_vec_env_refuses_what_atari_wrapper_cannot_take():
    with pytest.raises(ValueError, match="AtariWrapper cannot take RAM"):
        make_ale_vec_env("BreakoutNoFrameskip-v4", 1, env_kwargs={"obs_type": "ram"}, wrapper_kwargs={"noop_max": 5})
    with pytest.raises(ValueError, match="obs_type'\\]='grayscale'"):
        make_ale_vec_env("BreakoutNoFrameskip-v4", 1, env_kwargs={"obs_type": "grayscale"})


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.parametrize("obs_type", ["rgb", "grayscale"])
def test_taller_screens_as_atari_env_gives_them(obs_type):
    # Pooyan's screen has 220 rows: the observation is the ROM's own screen, as AtariEnv's.
    ref, ours = gym_pair(["pooyan"] * 2, obs_type, max_num_frames_per_episode=200)
    assert ours.single_observation_space.shape[0] == 220
    assert compare(ref, ours, 60) > 0


def test_whole_screens_of_different_heights_in_one_batch_are_refused():
    with pytest.raises(ValueError, match="differ in rows"):
        AleVectorEnv(["pong", "pooyan"], 2, obs_type="rgb", full_action_space=True)
    AleVectorEnv(["pong", "pooyan"], 2, obs_type="ram", full_action_space=True).close()  # RAM has no rows
