"""sb3_ale_vec.AtariVectorEnv against ale-py's own AtariVectorEnv, step by step, on real emulators.

Same constructor arguments, same reset seeds, same actions: observations, rewards, terminations,
truncations and every info array must be equal (dtypes and shapes included). The one difference on
purpose: final_obs rows of envs that did not end hold uninitialised memory in ale-py, zeros here.
"""

from __future__ import annotations

import inspect
from inspect import Parameter

import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as Reference
from gymnasium.vector import AutoresetMode
from sb3_ale_vec import AtariVectorEnv

from ale_py_runs import run
from all_roms import TALL

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
KEYWORD_ONLY = Parameter.KEYWORD_ONLY


@pytest.mark.wheel
def test_constructor_is_ale_pys():
    """ale-py's parameters, in its order, and one keyword of ours after them (any call of ale-py's works)."""
    ours, ref = inspect.signature(AtariVectorEnv.__init__), inspect.signature(Reference.__init__)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in ref.parameters.values()] + [("ram_info", KEYWORD_ONLY, False)]


# FIRE and lives, FIRE without lives, colourful, lives == 0 frames, big rewards, paddles.
GAMES = ["breakout", "pong", "ms_pacman", "qbert", "seaquest", "space_invaders"]


# Breakout and Pong in every run (the core tier), the other games in the deep tier (`bash .ci/deep`).
CORE_GAMES = ("breakout", "pong")


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("game", [g if g in CORE_GAMES else pytest.param(g, marks=pytest.mark.deep) for g in GAMES])
@pytest.mark.slow
@pytest.mark.wheel
def test_defaults_equal_ale_py(game, mode):
    run(game, 1000 if game == "pong" else 500, autoreset_mode=mode)  # a Pong game takes ~850 random steps


@pytest.mark.parametrize("settings", [
    {"episodic_life": True, "autoreset_mode": SAME},
    {"episodic_life": True},
    {"grayscale": False, "img_height": 64, "img_width": 48},
    {"max_num_frames_per_episode": 250, "autoreset_mode": SAME},
    {"max_num_frames_per_episode": 250},
    {"noop_max": 0, "life_loss_info": True, "autoreset_mode": SAME},
    {"reward_clipping": False, "use_fire_reset": False, "stack_num": 2, "frameskip": 3},
    {"img_height": 210, "img_width": 160, "maxpool": False, "full_action_space": True},
    {"repeat_action_probability": 0.25, "frameskip": 1, "noop_max": 1, "max_num_frames_per_episode": 300},
])
@pytest.mark.parametrize("game", ["breakout", "space_invaders"])
@pytest.mark.slow
@pytest.mark.wheel
@pytest.mark.deep  # the drop-in's option matrix
def test_settings_equal_ale_py(game, settings):
    run(game, 400, **settings)


# Gray at 84x84 (the float area pass), and RGB at half the 250-row screens (integer blocks there).
@pytest.mark.parametrize("settings", [{}, {"grayscale": False, "img_height": 125, "img_width": 80}])
@pytest.mark.parametrize("game", TALL)
@pytest.mark.slow  # the ROMs with screens of 214 to 250 rows: about 1 s each
@pytest.mark.deep  # every tall ROM: a sweep (core keeps a sample elsewhere)
def test_taller_screens_equal_ale_py(game, settings):
    run(game, 300, num_envs=2, max_num_frames_per_episode=600, **settings)


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_partial_resets_with_seeds_equal_ale_py(mode):
    # a frame cap of 20 steps: envs the masks leave alone for longer end their episodes too
    run("breakout", 300, num_envs=4, reset_mask_every=25, autoreset_mode=mode, max_num_frames_per_episode=80)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.wheel
def test_continuous_actions_equal_ale_py():
    run("pong", 300, continuous=True, max_num_frames_per_episode=600)


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_batched_one_thread_equals_ale_py(mode):
    # One worker each: both run the queued envs in the order they were sent, so batches match.
    run("breakout", 300, num_envs=5, batch_size=2, num_threads=1, autoreset_mode=mode, max_num_frames_per_episode=200)


def test_final_obs_rows_of_envs_that_did_not_end_are_zeros():
    env = AtariVectorEnv("pong", 3, autoreset_mode=SAME, max_num_frames_per_episode=40)
    env.reset(seed=0)
    seen = 0
    for _ in range(30):
        obs, _, term, trunc, info = env.step(np.zeros(3, dtype=np.int64))
        if "final_obs" in info:
            seen += 1
            assert not info["final_obs"][~(term | trunc)].any()
            assert info["final_obs"][term | trunc].any()
    assert seen > 0
    env.close()


@pytest.mark.parametrize("call, error, match", [
    (lambda e: e.step(np.zeros(3, dtype=np.float64)), TypeError, "must be integers"),
    (lambda e: e.step(np.zeros(2, dtype=np.int64)), ValueError, r"shape \(3,\)"),
    (lambda e: e.step(np.full(3, 9, dtype=np.int64)), ValueError, "out of range"),
    (lambda e: e.reset(seed=np.zeros(2, dtype=np.int64)), ValueError, "one entry per sub-environment"),
    (lambda e: e.reset(seed="x"), TypeError, "Unsupported seed type"),
    (lambda e: e.reset(seed=2**31), ValueError, "C ints"),
    (lambda e: e.reset(options={"reset_mask": np.ones(3)}), TypeError, "boolean numpy array"),
])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_bad_input_raises_clear_errors(call, error, match):
    env = AtariVectorEnv("pong", 3)
    env.reset(seed=0)
    with pytest.raises(error, match=match):
        call(env)
    env.close()


def test_bad_constructor_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="max_num_frames_per_episode must be >= 1"):
        AtariVectorEnv("pong", 2, max_num_frames_per_episode=0)
    with pytest.raises(TypeError, match="frameskip must be an int"):
        AtariVectorEnv("pong", 2, frameskip=4.0)
    with pytest.raises(ValueError, match="Unknown Atari game"):
        AtariVectorEnv("pongg", 2)
    env = AtariVectorEnv("pong", 2)
    with pytest.raises(RuntimeError, match="first reset"):
        env.reset(options={"reset_mask": np.array([True, False])})
    env.close()
