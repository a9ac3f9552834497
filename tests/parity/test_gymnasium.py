"""AleVectorEnv against Gymnasium's own pipeline, step by step, on real emulators.

Reference: SyncVectorEnv([FrameStackObservation(AtariPreprocessing(gym.make("ALE/<Game>-v5",
frameskip=1), ...), 4, padding_type=...)] * n, autoreset_mode=...). Observations, rewards (float64),
terminations, truncations and every batched info key (final_obs / final_info included) must be equal.
"""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import AtariPreprocessing
from sb3_ale_vec import AleVectorEnv, EngineError, _testing

from all_roms import TALL_SAMPLE
from compare import assert_equal
from gymnasium_runs import compare, make_ours, make_reference, run

gym.register_envs(ale_py)

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
# FIRE and lives, FIRE without lives, pooling-sensitive gray, big rewards, lives == 0 frames.
GAMES = ["breakout", "pong", "ms_pacman", "space_invaders", "qbert"]


# Breakout and Pong in every run (the core tier), the other games in the deep tier (`bash .ci/deep`).
CORE_GAMES = ("breakout", "pong")


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("game", [g if g in CORE_GAMES else pytest.param(g, marks=pytest.mark.deep) for g in GAMES])
@pytest.mark.slow
@pytest.mark.wheel
def test_default_preset_equals_gymnasium(game, mode):
    run([game] * 3, mode, 700)


@pytest.mark.parametrize("game", ["breakout", "space_invaders", "qbert"])
@pytest.mark.slow
@pytest.mark.wheel
def test_terminal_on_life_loss(game):
    assert run([game] * 3, SAME, 600, terminal_on_life_loss=True) > 0


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.slow
def test_short_episodes_end_in_truncation(mode):
    # ALE's frame limit inside a skip, so that both autoreset modes handle many truncations.
    assert run(["pong"] * 2, mode, 400, max_num_frames_per_episode=250) >= 10


@pytest.mark.parametrize("settings", [
    {"grayscale_obs": False},
    {"padding": "reset"},
    {"frame_skip": 3, "screen_size": 64, "repeat_action_probability": 0.0},
    {"frame_skip": 1, "noop_max": 0},
    {"full_action_space": True},
])
@pytest.mark.slow
@pytest.mark.wheel
@pytest.mark.deep  # the option matrix
def test_settings(settings):
    run(["ms_pacman"] * 2, SAME, 400, **settings)


@pytest.mark.parametrize("game", ["pong", "breakout"])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_continuous_actions_and_paddle_strength(game):
    # AtariPreprocessing's no-ops call step(0), which a continuous AtariEnv refuses: noop_max=0.
    run([game] * 3, NEXT, 500, continuous=True, noop_max=0)


@pytest.mark.tsan
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_reset_mask_resets_only_the_masked_envs():
    run(["breakout"] * 4, NEXT, 300, reset_mask_every=37)


@pytest.mark.slow
@pytest.mark.wheel
def test_multi_game_batch_equals_one_reference_env_per_game():
    run(["breakout", "pong", "ms_pacman"], SAME, 500, full_action_space=True)


@pytest.mark.parametrize("game", TALL_SAMPLE)
@pytest.mark.slow  # the ROMs with screens of 214 to 250 rows: about 2 s each
@pytest.mark.wheel
def test_taller_screens_equal_gymnasium(game):
    assert run([game] * 2, SAME, 300, max_num_frames_per_episode=600) > 0


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.wheel
def test_a_batch_of_mixed_screen_heights_equals_one_reference_env_per_game():
    # Pong's 210 rows and Pooyan's 220 in one engine (one resize per height); render() gives each env
    # its own screen, as SyncVectorEnv's tuple of AtariEnv.render()s.
    games = ["pong", "pooyan"]
    kwargs = {"full_action_space": True, "max_num_frames_per_episode": 200, "render_mode": "rgb_array"}
    ref, ours = make_reference(games, SAME, **kwargs), make_ours(games, SAME, **kwargs)
    try:
        assert compare(ref, ours, 60) > 0
        assert [s.shape for s in ours.render()] == [(210, 160, 3), (220, 160, 3)]
        assert_equal(ref.render(), ours.render(), "render")
    finally:
        ref.close()
        ours.close()


def test_different_action_sets_need_the_full_action_space():
    with pytest.raises(ValueError, match="full_action_space=True"):
        AleVectorEnv(["breakout", "pong"], 2)


@pytest.mark.tsan
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_batched_recv_returns_the_first_envs_to_finish_and_equals_a_synchronous_run():
    n, batch = 6, 2
    per_env_actions = np.random.default_rng(3).integers(0, 4, (n, 4000))
    batched = AleVectorEnv("breakout", n, batch_size=batch, num_threads=2)
    assert batched.observation_space.shape == (batch, 4, 84, 84)
    obs, info = batched.reset(seed=11)
    ids = info["env_id"]
    assert obs.shape == (batch, 4, 84, 84) and len(set(ids.tolist())) == batch
    seen = {i: [(obs[k], 0.0, False, False)] for k, i in enumerate(ids)}
    counts = np.zeros(n, dtype=int)
    while counts.min() < 8:  # first to finish: a seeded reset (ROM reload) takes a hundred steps
        actions = per_env_actions[ids, counts[ids]]
        counts[ids] += 1
        obs, rewards, term, trunc, info = batched.step(actions)
        assert set(info) >= {"env_id", "lives", "_lives"} and len(obs) == batch
        ids = info["env_id"]
        for k, i in enumerate(ids):
            seen.setdefault(int(i), []).append((obs[k], rewards[k], term[k], trunc[k]))
    batched.close()

    sync = AleVectorEnv("breakout", n)
    obs, _ = sync.reset(seed=11)
    expected = [[(obs[i], 0.0, False, False)] for i in range(n)]
    for t in range(int(counts.max())):
        obs, rewards, term, trunc, _ = sync.step(per_env_actions[:, t])
        for i in range(n):
            expected[i].append((obs[i], rewards[i], term[i], trunc[i]))
    sync.close()
    for i, got in seen.items():
        for t, (x, y) in enumerate(zip(expected[i], got)):
            assert np.array_equal(x[0], y[0]) and x[1:] == y[1:], ("env", i, "step", t)


@pytest.mark.tsan
def test_send_recv_explicit_env_ids():
    env = AleVectorEnv("pong", 4, batch_size=4)
    env.reset(seed=0)
    env.send(np.array([1, 2]), env_ids=[3, 0])
    with pytest.raises(ValueError, match="still in flight"):
        env.send(np.array([1]), env_ids=[3])
    obs, _, _, _, info = env.recv()
    assert sorted(info["env_id"].tolist()) == [0, 3] and obs.shape == (2, 4, 84, 84)
    with pytest.raises(RuntimeError, match="nothing in flight"):
        env.recv()
    obs, *_ = env.step(np.zeros(4, dtype=np.int64))  # synchronous again: every env
    assert obs.shape == (4, 4, 84, 84)
    env.close()


@pytest.mark.tsan
def test_disabled_autoreset_refuses_to_step_an_ended_env_until_reset_mask():
    env = AleVectorEnv("pong", 2, autoreset_mode=AutoresetMode.DISABLED, max_num_frames_per_episode=100)
    env.reset(seed=0)
    ended = np.zeros(2, dtype=bool)
    while not ended.any():
        _, _, term, trunc, _ = env.step(np.zeros(2, dtype=np.int64))
        ended = term | trunc
    with pytest.raises(ValueError, match="reset_mask"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(options={"reset_mask": ended})
    env.step(np.zeros(2, dtype=np.int64))
    env.close()


@pytest.mark.parametrize("preset", ["gymnasium", "sb3"])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_life_loss_info_signals_each_life_loss_and_changes_nothing_else(preset):
    # The same run with and without the option: same frames, and terminated exactly where a life
    # went (0 < lives < lives before); with it nothing resets, so the episode continues.
    kwargs = {"preset": preset, "episodic_life": False, "autoreset_mode": SAME, "max_num_frames_per_episode": 3000}
    plain, signalled = AleVectorEnv("breakout", 2, **kwargs), AleVectorEnv("breakout", 2, life_loss_info=True, **kwargs)
    (o1, i1), (o2, i2) = plain.reset(seed=4), signalled.reset(seed=4)
    assert np.array_equal(o1, o2)
    lives, losses = i1.get("lives"), 0  # SB3's FireResetEnv returns an empty reset info
    rng = np.random.default_rng(0)
    for t in range(500):
        actions = rng.integers(0, 4, 2)
        (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) = plain.step(actions), signalled.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(u1, u2), t
        lost = (0 < i1["lives"]) & (i1["lives"] < lives) if lives is not None else np.zeros(2, bool)
        assert np.array_equal(t2, t1 | lost), t
        losses += int(lost.sum())
        lives = i1["lives"]
    assert losses > 0
    plain.close()
    signalled.close()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"batch_size": 5}, ValueError, r"batch_size must be in \[0, 4\]"),
    ({"autoreset_mode": "Sometimes"}, ValueError, "not a valid AutoresetMode"),
    ({"stack_padding": "edge"}, ValueError, "stack_padding must be 'zero' or 'reset'"),
    ({"use_fire_reset": True}, ValueError, "AtariPreprocessing has no fire reset"),
    ({"continuous_action_threshold": 2.0}, ValueError, "continuous_action_threshold must be in"),
    ({"preset": "dopamine"}, ValueError, "Unknown preset 'dopamine'"),
    ({"num_threads": -1}, ValueError, "num_threads must be >= 0"),
    ({"thread_affinity_offset": "0"}, TypeError, "thread_affinity_offset must be an int"),
])
def test_bad_options_raise_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        AleVectorEnv("breakout", 4, **kwargs)


def test_bad_actions_and_masks_raise_clear_errors():
    env = AleVectorEnv("breakout", 2, continuous=True)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="float32"):
        env.step(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="must lie in"):
        env.step(np.full((2, 3), 2.0, dtype=np.float32))
    for mask, error, match in [([True, False], TypeError, "must be a boolean numpy array"),
                               (np.ones(3, bool), ValueError, r"must have shape \(2,\)"),
                               (np.zeros(2, bool), ValueError, "at least one True")]:
        with pytest.raises(error, match=match):
            env.reset(options={"reset_mask": mask})
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros((2, 3), dtype=np.float32))


def test_gymnasium_make_vec_builds_the_native_vector_env():
    env = gym.make_vec("sb3_ale_vec/MsPacman-v5", num_envs=3, batch_size=2, autoreset_mode=SAME)
    assert isinstance(env, AleVectorEnv) and env.games == ["ms_pacman"] * 3 and env.batch_size == 2
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 4, 84, 84) and len(info["env_id"]) == 2
    env.close()


@pytest.mark.tsan
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_a_failing_env_in_a_batch_keeps_the_others_data():
    ref, env = AleVectorEnv("breakout", 4, batch_size=4), AleVectorEnv("breakout", 4, batch_size=4)
    ref.reset(seed=1), env.reset(seed=1)
    actions = np.array([1, 2, 3, 0])
    for _ in range(10):
        ref.step(actions), env.step(actions)
    _testing._inject_fault(env._native._vec, 2)
    expected = ref.step(actions)
    with pytest.raises(EngineError, match="env 2: injected fault") as caught:
        env.step(actions)
    error = caught.value
    assert error.env_ids == [2] and not error.obs[2].any()
    keep = [0, 1, 3]
    assert np.array_equal(error.obs[keep], expected[0][keep]) and np.array_equal(error.rewards[keep], expected[1][keep])
    with pytest.raises(RuntimeError, match="env 2 failed in an earlier step"):
        env.step(actions)
    env.reset(seed=1)  # rebuilds env 2
    env.step(actions)
    ref.close(), env.close()


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_terminated_and_truncated_together_as_atari_env(mode):
    # A life lost (terminal_on_life_loss) on the very frame the frame limit hits: AtariEnv reports both.
    # Find that frame in a run without the limit, then set the limit to it and replay.
    kwargs = {"terminal_on_life_loss": True, "repeat_action_probability": 0.0}
    ref = make_reference(["breakout"], mode, **kwargs)
    ref.reset(seed=3)
    rng = np.random.default_rng(3)
    actions, terminated = [], False
    while not terminated:
        actions.append(rng.integers(0, 4, 1))
        *_, te, _, info = ref.step(actions[-1])
        terminated = bool(te[0])
    frame = int((info["final_info"] if mode == SAME else info)["episode_frame_number"][0])  # SAME: info is the reset's
    ref.close()
    ref, ours = (make(["breakout"], mode, max_num_frames_per_episode=frame, **kwargs)
                 for make in (make_reference, make_ours))
    assert_equal(ref.reset(seed=3), ours.reset(seed=3), "reset")
    for t, action in enumerate(actions):
        expected, got = ref.step(action), ours.step(action)
        for name, x, y in zip(("obs", "rewards", "terminations", "truncations", "infos"), expected, got):
            assert_equal(x, y, f"t={t} {name}")
    assert expected[2][0] and expected[3][0], "the replay ends by both on its last step"
    ref.close()
    ours.close()


def test_disabled_autoreset_with_batches_is_refused_at_construction():
    with pytest.raises(ValueError, match="DISABLED needs batch_size == num_envs"):
        AleVectorEnv("pong", 4, batch_size=2, autoreset_mode=AutoresetMode.DISABLED)


def test_a_partial_reset_returns_each_envs_own_stack_not_the_callers_array():
    env = AleVectorEnv("breakout", 3)
    obs, _ = env.reset(seed=1)
    for _ in range(5):
        obs, *_ = env.step(np.ones(3, dtype=np.int64))
    expected = obs.copy()
    obs[:] = 7  # a caller that writes into what it was given
    mask = np.array([False, True, False])
    again, info = env.reset(seed=[None, 4, None], options={"reset_mask": mask})
    assert np.array_equal(again[~mask], expected[~mask])
    fresh = AleVectorEnv("breakout", 3)
    assert np.array_equal(again[1], fresh.reset(seed=[0, 4, 0])[0][1])
    assert info["_seeds"].tolist() == [False, True, False]  # SyncVectorEnv: infos of the reset envs only
    env.close()
    fresh.close()


# nosan: ALE's own VideoCheckersSettings copies a bool it never initialised (UBSan: "load of value 190,
# which is not a valid value for type 'bool'", VideoCheckers.hpp:35, when ale-py's isSupportedROM clones it).
@pytest.mark.nosan
def test_no_ops_without_noop_as_action_0_are_refused_as_gymnasium_refuses_them():
    # Video Checkers' minimal action set starts with FIRE: AtariPreprocessing refuses its no-ops.
    with pytest.raises(ValueError, match="first action meaning must be 'NOOP'"):
        AtariPreprocessing(gym.make("ALE/VideoCheckers-v5", frameskip=1))
    with pytest.raises(ValueError, match="noop_max=30 needs NOOP as action 0"):
        AleVectorEnv("video_checkers", 1)
    AleVectorEnv("video_checkers", 1, noop_max=0).close()
