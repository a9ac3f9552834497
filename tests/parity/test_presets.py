"""Every preset behind every front-end, each against its reference pipeline on real emulators.

- AleNativeVecEnv(preset="gymnasium"): SB3's DummyVecEnv over Monitor + AtariPreprocessing +
  FrameStackObservation, as SB3 would run gymnasium's own chain;
- AleNativeVecEnv(preset="ale") and AleVectorEnv(preset="ale"): ale-py's AtariVectorEnv (same-step);
- AleVectorEnv(preset="sb3"): gymnasium's SyncVectorEnv over AtariWrapper + FrameStackObservation;
- the true game scores of the Gymnasium facade against the games' own unclipped rewards.
"""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv
from all_roms import TALL_SAMPLE
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
from gymnasium.wrappers.vector import RecordEpisodeStatistics
from helpers import assert_same_infos, compare_rollouts, make_pair, no_frameskip_id
from stable_baselines3.common.atari_wrappers import AtariWrapper
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv
from sb3_ale_vec.games import camel_name

gym.register_envs(ale_py)
SAME = AutoresetMode.SAME_STEP


@pytest.mark.parametrize("game, kwargs", [("breakout", {}), ("ms_pacman", {"grayscale": False}),
                                          ("pong", {"max_num_frames_per_episode": 400}),
                                          *[(g, {"max_num_frames_per_episode": 400}) for g in TALL_SAMPLE]])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_sb3_front_end_with_the_gymnasium_preset_equals_dummy_vec_env_over_gymnasiums_chain(game, kwargs):
    def make():
        env = Monitor(gym.make(f"ALE/{camel_name(game)}-v5", frameskip=1,
                               max_num_frames_per_episode=kwargs.get("max_num_frames_per_episode", 108_000)))
        return FrameStackObservation(AtariPreprocessing(env, grayscale_obs=kwargs.get("grayscale", True)), 4,
                                     padding_type="zero")
    ref = DummyVecEnv([make] * 3)
    ref.seed(3)
    ours = AleNativeVecEnv(game, 3, seed=3, preset="gymnasium", **kwargs)
    assert ref.observation_space == ours.observation_space and ref.action_space == ours.action_space
    assert np.array_equal(ref.reset(), ours.reset()) and ref.reset_infos == ours.reset_infos
    rng, ends = np.random.default_rng(0), 0
    for t in range(500):
        actions = rng.integers(0, ours.action_space.n, 3)
        (o1, r1, d1, i1), (o2, r2, d2, i2) = ref.step(actions), ours.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2), t
        assert_same_infos(i1, i2, t)
        assert ref.reset_infos == ours.reset_infos, t
        ends += int(d2.sum())
    assert ends > 0 or game == "ms_pacman"
    ref.close()
    ours.close()


@pytest.mark.parametrize("game", ["breakout", *TALL_SAMPLE])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_sb3_front_end_with_the_ale_preset_equals_ale_pys_vector_env(game):
    # What a DummyVecEnv of ALE's env would return: the step's info, and the reset's in reset_infos.
    kwargs = {"episodic_life": True, "max_num_frames_per_episode": 2000 if game == "breakout" else 600}
    ref = AtariVectorEnv(game, 3, autoreset_mode=SAME, **kwargs)
    ours = AleNativeVecEnv(game, 3, seed=9, preset="ale", **kwargs)
    o1, info = ref.reset(seed=9)
    assert np.array_equal(o1, ours.reset())
    keys = ("lives", "episode_frame_number", "frame_number")
    assert ours.reset_infos == [{k: int(info[k][i]) for k in keys} for i in range(3)]
    rng, ends = np.random.default_rng(1), 0
    for t in range(400):
        actions = rng.integers(0, ours.action_space.n, 3)
        (o1, r1, term, trunc, info), (o2, r2, d2, i2) = ref.step(actions), ours.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(term | trunc, d2), t
        for i in range(3):
            ale_info = {k: int(info[k][i]) for k in keys}
            if d2[i]:  # reset in the same step: ALE reports the new episode's info
                assert ours.reset_infos[i] == ale_info and np.array_equal(i2[i]["terminal_observation"],
                                                                          info["final_obs"][i]), t
                assert i2[i]["TimeLimit.truncated"] == bool(trunc[i] and not term[i])
            else:
                assert {k: i2[i][k] for k in keys} == ale_info, t
        ends += int(d2.sum())
    assert ends > 0
    ref.close()
    ours.close()


@pytest.mark.parametrize("game, frames", [("space_invaders", 108_000), *[(g, 600) for g in TALL_SAMPLE]])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, SAME])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_gymnasium_front_end_with_the_ale_preset_equals_ale_pys_vector_env(mode, game, frames):
    kwargs = {"episodic_life": True, "max_num_frames_per_episode": frames}
    ref = AtariVectorEnv(game, 3, autoreset_mode=mode, **kwargs)
    ours = AleVectorEnv(game, 3, preset="ale", autoreset_mode=mode, **kwargs)
    keys = ("lives", "episode_frame_number", "frame_number")
    (o1, i1), (o2, i2) = ref.reset(seed=2), ours.reset(seed=2)
    assert np.array_equal(o1, o2) and all(np.array_equal(i1[k], i2[k]) for k in keys)
    rng, ends = np.random.default_rng(2), 0
    for t in range(400):
        actions = rng.integers(0, ours.single_action_space.n, 3)
        (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) = ref.step(actions), ours.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and r2.dtype == np.float64, t
        assert np.array_equal(te1, te2) and np.array_equal(tr1, tr2), t
        assert all(np.array_equal(i1[k], i2[k]) for k in keys), t
        if mode == SAME and "final_obs" in i2:
            for k in np.flatnonzero(i2["_final_obs"]):
                assert np.array_equal(i1["final_obs"][k], i2["final_obs"][k]), t
        ends += int((te2 | tr2).sum())
    assert ends > 0
    ref.close()
    ours.close()


@pytest.mark.parametrize("game", ["breakout", *TALL_SAMPLE])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_gymnasium_front_end_with_the_sb3_preset_equals_sync_vector_env_over_atari_wrapper(game):
    env_id, settings = no_frameskip_id(game)
    frames = 108_000 if game == "breakout" else 800

    def make():
        env = gym.make(env_id, max_num_frames_per_episode=frames, **settings)
        return FrameStackObservation(AtariWrapper(env), 4, padding_type="zero")
    ref = SyncVectorEnv([make] * 3, autoreset_mode=SAME)
    ours = AleVectorEnv(game, 3, preset="sb3", autoreset_mode=SAME, max_num_frames_per_episode=frames)
    (o1, _), (o2, _) = ref.reset(seed=4), ours.reset(seed=4)
    assert np.array_equal(o1[..., 0], o2)
    rng, ends = np.random.default_rng(4), 0
    for t in range(400):
        actions = rng.integers(0, ours.single_action_space.n, 3)
        (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) = ref.step(actions), ours.step(actions)
        assert np.array_equal(o1[..., 0], o2) and np.array_equal(r1, r2), t
        assert np.array_equal(te1, te2) and np.array_equal(tr1, tr2), t
        for k in np.flatnonzero(te2 | tr2):
            assert np.array_equal(i1["final_obs"][k][..., 0], i2["final_obs"][k]), t
        ends += int((te2 | tr2).sum())
    assert ends > 0
    ref.close()
    ours.close()


@pytest.mark.parametrize("preset, mode", [("sb3", SAME), ("ale", AutoresetMode.NEXT_STEP), ("ale", SAME)])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_gymnasium_front_end_reports_true_game_scores(preset, mode):
    # Clipped rewards and (sb3) single lives hide the game; info["episode"] holds the whole game's
    # unclipped score and agent steps, checked against the same run unclipped (the same game).
    kwargs = {"preset": preset, "autoreset_mode": mode, "max_num_frames_per_episode": 3000}
    clipped = AleVectorEnv("breakout", 2, **kwargs)
    plain = AleVectorEnv("breakout", 2, reward_clipping=False, **kwargs)
    clipped.reset(seed=1)
    plain.reset(seed=1)
    returns, steps, games = np.zeros(2), np.zeros(2, int), 0
    rng = np.random.default_rng(3)
    for _ in range(900):
        actions = rng.integers(0, 4, 2)
        _, r, te, tr, info = clipped.step(actions)
        _, r_plain, _, _, _ = plain.step(actions)
        assert set(np.unique(r)) <= {-1.0, 0.0, 1.0}
        returns += r_plain
        steps += 1
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                assert info["episode"]["r"][i] == returns[i] and info["episode"]["l"][i] == steps[i]
                returns[i], steps[i], games = 0, 0, games + 1
        if preset == "ale" and mode == AutoresetMode.NEXT_STEP:
            steps -= te | tr  # the next step is the reset: no agent step of the game
    assert games >= 1
    clipped.close()
    plain.close()


@pytest.mark.parametrize("true_scores", [None, True, False])
def test_true_scores_are_explicit_and_record_episode_statistics_needs_them_off(true_scores):
    # The default (None) is on for a clipping preset; gymnasium's wrapper then refuses the key
    # clash itself. With true_scores=False the wrapper's own per-episode stats come through.
    env = AleVectorEnv("pong", 2, preset="ale", max_num_frames_per_episode=100, true_scores=true_scores)
    wrapped = RecordEpisodeStatistics(env)
    wrapped.reset(seed=0)
    seen = 0
    try:
        for _ in range(60):
            *_, info = wrapped.step(np.zeros(2, dtype=np.int64))
            seen += "episode" in info
    except ValueError as error:
        assert true_scores is not False and "'episode'" in str(error)
        seen = -1
    assert seen == -1 if true_scores is not False else seen > 0
    wrapped.close()


def test_true_scores_default_follows_the_chain():
    for preset, on in (("gymnasium", False), ("ale", True), ("sb3", True)):
        env = AleVectorEnv("pong", 1, preset=preset, **({"autoreset_mode": SAME} if preset == "sb3" else {}))
        assert env._scores.enabled is on, preset
        env.close()
    env = AleVectorEnv("pong", 1, preset="ale", reward_clipping=False)
    assert env._scores.enabled is False
    env.close()


# Quick smoke runs of each preset against its own reference (the full matrices are marked slow): 400
# frames an episode (100 steps), so that each run compares a reset.
@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_smoke_sb3_preset_equals_make_atari_env():
    ref, ours = make_pair("breakout", n_envs=2, seed=1, max_frames=400)
    try:
        assert compare_rollouts(ref, ours, 120).dones > 0
    finally:
        ref.close()
        ours.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_smoke_gymnasium_preset_equals_gymnasiums_chain():
    from gymnasium_runs import run

    assert run(["breakout"] * 2, SAME, 120, max_num_frames_per_episode=400) > 0


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_smoke_ale_preset_equals_ale_py():
    from ale_py_runs import run

    run("breakout", 120, max_num_frames_per_episode=400, autoreset_mode=SAME)


def test_ale_preset_seeds_are_c_ints():
    with pytest.raises(ValueError, match=r"seeds in \[0, 2147483647\]"):
        AleNativeVecEnv("pong", 2, preset="ale", seed=2**31 - 1)  # env 1 would get 2**31
    env = AleNativeVecEnv("pong", 2, preset="ale")  # unseeded: a base seed that fits
    assert all(0 <= s <= 2**31 - 1 for s in env._seeds)
    env.reset()
    gym_env = AleVectorEnv("pong", 2, preset="ale")
    with pytest.raises(ValueError, match="the ale preset takes seeds"):
        gym_env.reset(seed=2**31)
    env.close()
    gym_env.close()
