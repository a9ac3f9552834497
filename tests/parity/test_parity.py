"""Bit-for-bit parity with SB3's own Atari pipeline, step by step, on real emulators.

Reference: VecTransposeImage(VecFrameStack(make_atari_env("<Game>NoFrameskip-v4", n, seed), 4)).
Every observation, reward, done, info key (terminal_observation, TimeLimit.truncated, episode r/l,
the ALE's lives and frame numbers) and reset_infos must be equal: zero differing pixels.
"""

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.atari_wrappers import AtariWrapper
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack, VecTransposeImage

from all_roms import TALL_SAMPLE
from helpers import compare_rollouts, make_pair
from sb3_ale_vec import AleNativeVecEnv
from sb3_ale_vec.games import camel_name

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)

# FIRE and lives (Breakout), FIRE without lives (Pong), no FIRE and pooling-sensitive (MsPacman),
# large unclipped rewards (SpaceInvaders), lives == 0 frames (Qbert), FIRE + lives (Seaquest).
GAMES = ["breakout", "pong", "ms_pacman", "space_invaders", "qbert", "seaquest"]


def _run(game, steps, compare_kwargs=None, **settings):
    ref, ours = make_pair(game, **settings)
    try:
        stats = compare_rollouts(ref, ours, steps, **(compare_kwargs or {}))
    finally:
        ref.close()
        ours.close()
    # terminal_observation, auto-reset and episode stats are compared only where episodes end
    assert stats.dones > 0, "no episode ended: the run compared no terminal observation"
    return stats


# The options of AtariWrapper that change what a game's run returns, each a default and another value.
OPTIONS = {"noop_max": (30, 0), "terminal_on_life_loss": (True, False), "clip_reward": (True, False),
           "max_frames": (108_000, 600)}


def _row(bits: str) -> dict:
    """A row of the matrix: one value of each option, "0" its default and "1" the other."""
    return {name: values[int(bit)] for (name, values), bit in zip(OPTIONS.items(), bits)}


# Covered pairwise, not as a full product: each game runs two rows that differ in every option (so it
# meets every value of every option), and the three pairs of rows together hold every combination of
# values of every two options. 12 runs; the four rows of one option changed at a time that this
# replaced (24 runs) covered a subset of these pairs (tests/parity/test_coverage.py holds the set).
ROWS = {"breakout": ("0000", "1111"), "pong": ("0011", "1100"), "ms_pacman": ("0101", "1010"),
        "space_invaders": ("0011", "1100"), "qbert": ("0101", "1010"), "seaquest": ("0000", "1111")}
# Observations channels last (SB3's VecFrameStack without VecTransposeImage): the same emulation in
# another layout, so two rows take it rather than two runs of their own (each repeated a default row's
# reference, up to 1,500 steps of 4 envs), each game keeping a row channels first.
CHANNELS_LAST = {("breakout", "1111"), ("seaquest", "0000")}
MATRIX = [(game, {**_row(bits), **({"channels_last": True} if (game, bits) in CHANNELS_LAST else {})})
          for game in GAMES for bits in ROWS[game]]


@pytest.mark.parametrize("game, settings", MATRIX, ids=[f"{g}-{b}" for g in GAMES for b in ROWS[g]])
@pytest.mark.slow
@pytest.mark.deep  # the full option matrix; the other parity tests of this front-end stay in core
def test_options_pairwise(game, settings):
    # Two whole games in every env (a game over, the reset after it, and a game played through from
    # there), as long as that takes: 291 to 1,850 steps here; at most 2,500, where game overs under the
    # defaults take longest. Running all 2,000-2,500 steps, where most rows were done by 300, took 2.8
    # times the steps (25,000 in all, against 9,063).
    defaults = all(settings[name] == values[0] for name, values in OPTIONS.items())
    stats = _run(game, 2500 if defaults else 2000, compare_kwargs={"until_episodes": 2}, **settings)
    assert stats.episodes >= 2 * 4, stats
    if settings["max_frames"] < 108_000:
        assert stats.truncations > 0, "the frame limit was never reached: the test would not test it"


@pytest.mark.parametrize("game, settings", [
    ("breakout", {}),  # mid-game reset() under episodic life is a soft reset, as EpisodicLifeEnv
    ("space_invaders", {"terminal_on_life_loss": False, "max_frames": 300}),  # games cut off before the resets
])
@pytest.mark.slow
@pytest.mark.deep  # part of the option matrix
def test_reset_mid_run(game, settings):
    stats = _run(game, 1500, compare_kwargs={"reset_every": 97}, **settings)
    assert stats.resets_mid_run > 0


@pytest.mark.parametrize("game, settings", [
    ("breakout", {"repeat_action_probability": 0.25}),  # ALE's sticky actions, as ALE/*-v5
    ("ms_pacman", {"action_repeat_probability": 0.25}),  # SB3's StickyActionEnv
])
@pytest.mark.slow
@pytest.mark.deep  # part of the option matrix
def test_sticky_actions(game, settings):
    _run(game, 1500, compare_kwargs={"until_episodes": 2}, **settings)


@pytest.mark.parametrize("game, settings", [
    ("pong", {"frame_skip": 1, "max_frames": 600}),  # Pong has no lives: a frame cap ends its games
    ("breakout", {"frame_skip": 2}),
    ("qbert", {"frame_skip": 5, "screen_size": 64}),
    ("ms_pacman", {"screen_size": 105}),  # integer scale factors: OpenCV's block-average path
    ("seaquest", {"screen_size": 200}),  # wider than the screen: OpenCV's bilinear path
])
@pytest.mark.slow
@pytest.mark.deep  # part of the option matrix
def test_frame_skip_and_screen_size(game, settings):
    _run(game, 800, **settings)


@pytest.mark.slow
def test_seeds_make_noop_counts_match():
    """Different seeds give different no-op counts; both match the reference for each seed."""
    first_frames = []
    for seed in (0, 123):
        ref, ours = make_pair("ms_pacman", n_envs=2, seed=seed)
        compare_rollouts(ref, ours, 50)
        first_frames.append([info["episode_frame_number"] for info in ours.reset_infos])
        ref.close()
        ours.close()
    assert first_frames[0] != first_frames[1]


@pytest.mark.parametrize("game", TALL_SAMPLE)
@pytest.mark.slow  # the ROMs with screens of 214 to 250 rows: about 3 s each
def test_taller_screens(game):
    ref, ours = make_pair(game, n_envs=2, seed=4, max_frames=1000)
    try:
        assert compare_rollouts(ref, ours, 400).dones > 0
        assert ref.get_attr("spec")[0].id == ours.get_attr("spec")[0].id  # v5's where ale-py has no v4 id
        for a, b in zip(ref.get_images(), ours.get_images()):  # the screen's own rows, as AtariEnv.render()
            assert a.shape == b.shape and np.array_equal(a, b)
    finally:
        ref.close()
        ours.close()


@pytest.mark.slow
def test_multi_game_batch_equals_one_sb3_pipeline_per_game():
    # One ROM per env, all 18 actions: each env must be SB3's AtariWrapper chain for its own game
    # (fire reset decided per game, as AtariWrapper decides it), Pooyan's 220 screen rows among 210s.
    games = ["breakout", "pong", "ms_pacman", "space_invaders", "pooyan"]
    env_ids = [f"{camel_name(g)}NoFrameskip-v4" for g in games]
    ref = DummyVecEnv([lambda i=i: AtariWrapper(Monitor(gym.make(i, full_action_space=True, render_mode="rgb_array")))
                       for i in env_ids])
    ref.seed(3)
    ref = VecTransposeImage(VecFrameStack(ref, 4))
    ours = AleNativeVecEnv(games, len(games), seed=3, full_action_space=True)
    try:
        assert ours.get_attr("game") == games
        assert compare_rollouts(ref, ours, 1500).dones > 0
        images = ours.get_images()  # each env's own screen: Pooyan's (220, 160, 3) among (210, 160, 3)s
        assert [i.shape[0] for i in images] == [210] * 4 + [220]
        assert all(np.array_equal(a, b) for a, b in zip(ref.get_images(), images))
    finally:
        ref.close()
        ours.close()
