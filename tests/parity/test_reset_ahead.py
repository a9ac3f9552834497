"""Resets computed ahead of time (native/env/reset_ahead.*) change no result. With them on (and waited for,
so that a loaded machine still swaps: helpers.swapping), every front-end equals its reference, ale-py's
`AtariVectorEnv` or Gymnasium's wrappers, on every ROM, with sticky actions, in non-default modes and
difficulties, over long episodes, across reseeds and failed-env rebuilds; and the swaps really happen
wherever the shipped table (sb3_ale_vec/reset_table.csv) allows them, and never where it refuses: each
"yes" of the table is held to ale-py's and Gymnasium's frames here."""

from __future__ import annotations


import gymnasium as gym
import numpy as np
import pytest
from ale_py import ALEInterface, roms
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from all_roms import ROMS, TALL_SCREENS, screen_height
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
from helpers import resets_replayed, resets_taken, swapping
from batched_runs import assert_same, trajectories
from gymnasium_runs import compare

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, EngineError, _testing, reset_table
from sb3_ale_vec.games import camel_name

STICKY = 0.25


def _gym_run(cls, game: str, ahead: bool, actions: np.ndarray, **kwargs):
    env = cls(game, actions.shape[0], num_threads=2, **kwargs)
    if ahead:
        swapping(env)
    else:
        env._native._vec._reset_ahead = False
    try:
        out = trajectories(env, actions, seed=7), (resets_taken(env), resets_replayed(env))
        assert env._native._vec._replays_abandoned == 0  # every post-reset script predicted right
        return out
    finally:
        env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.parametrize("sticky", [0.0, STICKY])  # without: the no-ops and FIRE are replayed too
@pytest.mark.parametrize("cls", [AleVectorEnv, AtariVectorEnv])
@pytest.mark.parametrize("game", ["breakout", "pong"])  # pong: paddles
def test_gymnasium_and_ale_presets_equal_with_and_without(cls, game, sticky):
    actions = np.random.default_rng(2).integers(0, 3, (3, 150))
    kwargs = dict(max_num_frames_per_episode=300, autoreset_mode=AutoresetMode.SAME_STEP,
                  repeat_action_probability=sticky)
    (inline, off), (ahead, on) = (_gym_run(cls, game, a, actions, **kwargs) for a in (False, True))
    assert_same(inline, ahead)
    assert off == (0, 0) and on[0] > 0 and (on[1] > 0) == (sticky == 0), on


def _sb3_run(game: str, ahead: bool, steps: int, n: int = 4):
    env = AleNativeVecEnv(game, n, seed=3, num_threads=2)
    if ahead:
        swapping(env)
    else:
        env._native._vec._reset_ahead = False
    rng = np.random.default_rng(1)
    out = [env.reset().copy()]
    try:
        for _ in range(steps):
            obs, rewards, dones, infos = env.step(rng.integers(0, env.action_space.n, n))
            # "episode" holds the wall-clock "t": compare its score and length only.
            out.append((obs.copy(), rewards.copy(), dones.copy(),
                        [sorted((k, str(v if k != "episode" else (v["r"], v["l"]))) for k, v in i.items()
                               if k != "terminal_observation") for i in infos],
                        [i.get("terminal_observation") for i in infos]))
        assert env._native._vec._replays_abandoned == 0
        return out, (resets_taken(env), resets_replayed(env))
    finally:
        env.close()


@pytest.mark.slow  # two runs of 4 Breakout envs to several game overs: about 10 s
def test_sb3_preset_equals_with_and_without():
    (inline, off), (ahead, on) = _sb3_run("breakout", False, 700), _sb3_run("breakout", True, 700)
    assert off == (0, 0) and on[0] > 0 and on[1] > 0, on  # SB3's v4: no sticky actions, so replayed
    for t, (a, b) in enumerate(zip(inline, ahead)):
        if t == 0:
            assert np.array_equal(a, b)
            continue
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2]), t
        assert a[3] == b[3], t
        assert all((x is None) == (y is None) and (x is None or np.array_equal(x, y)) for x, y in zip(a[4], b[4])), t


def _against_ale_py(game: str, steps: int, seed: int = 3, n: int = 2, reseed_at: int | None = None, **kwargs):
    """ale-py's own AtariVectorEnv and ours, the same seeds and actions, every step equal; ours swaps.
    Returns our resets taken from the spare."""
    ours = swapping(AtariVectorEnv(game, n, num_threads=2, **kwargs))
    ref = AlePyVectorEnv(game, n, num_threads=2, **kwargs)
    try:
        rng = np.random.default_rng(seed)
        expected, got = ref.reset(seed=seed), ours.reset(seed=seed)
        for t in range(steps):
            if t == reseed_at:  # a reseed mid-run, with prepares armed or running
                expected, got = ref.reset(seed=seed + 1), ours.reset(seed=seed + 1)
                assert np.array_equal(expected[0], got[0]), f"{game} reseed"
            actions = rng.integers(0, ref.single_action_space.n, n)
            expected, got = ref.step(actions), ours.step(actions)
            for name, x, y in zip(("obs", "rewards", "terminations", "truncations"), expected, got):
                assert np.array_equal(x, y), f"{game} t={t} {name}"
        return resets_taken(ours)
    finally:
        ref.close()
        ours.close()


def _vetted(game: str, sticky: bool, mode: int = -1, difficulty: int = -1) -> bool:
    """The shipped table's verdict, the one every env of ours is built with."""
    return reset_table.vetted(game, mode, difficulty, sticky)


# Breakout and Pong in every run (the core tier), the other games in the deep tier (`bash .ci/deep`).
CORE_GAMES = ("breakout", "pong")


@pytest.mark.slow  # every ROM ale-py runs: about 1 s each
@pytest.mark.parametrize("game", [g if g in CORE_GAMES else pytest.param(g, marks=pytest.mark.deep) for g in ROMS])
def test_every_rom_with_sticky_actions_equals_ale_py_and_swaps_where_allowed(game):
    # A 160-frame limit: an episode ends every 40 steps, so each env resets three times in 120 steps.
    kwargs = dict(repeat_action_probability=STICKY, max_num_frames_per_episode=160)
    taken = _against_ale_py(game, 120, **kwargs)
    # Each reset prepared (by its env, helpers.swapping) swaps where the table allows it, and the frames
    # above equal ale-py's: the reference holds each "yes" of the table.
    assert (taken > 0) == _vetted(game, sticky=True), (game, taken)


def _modes(game: str) -> tuple[int, int, int]:
    """The ROM's last mode and difficulty, and the frames its reset counts in them (a mode's set-up:
    827 for Video Cube's last)."""
    ale = ALEInterface()
    ale.loadROM(str(roms.get_rom_path(game)))
    modes, levels = ale.getAvailableModes(), ale.getAvailableDifficulties()
    ale.setMode(modes[-1])
    ale.setDifficulty(levels[-1])
    ale.reset_game()
    return modes[-1], levels[-1], ale.getEpisodeFrameNumber()


def _moded() -> list[str]:
    """The ROMs with a mode or difficulty besides their default: those the shipped table has more than
    one (mode, difficulty) of (test_reset_table.py holds its keys to ALE's, ROM by ROM). Asking ALE
    here loaded all 104 ROMs at every collection, 2.3 s, the quick tier's included."""
    pairs: dict[str, set] = {}
    for rom, mode, difficulty, _ in reset_table.verdicts():
        if (mode, difficulty) != (-1, -1):
            pairs.setdefault(rom, set()).add((mode, difficulty))
    return [r for r in ROMS if len(pairs.get(r, ())) > 1]


MODED = _moded()


@pytest.mark.slow  # every ROM with a mode or difficulty besides its default: about 1 s each
@pytest.mark.parametrize("game", MODED)
@pytest.mark.deep  # every moded ROM: a sweep
def test_non_default_modes_and_difficulties_equal_gymnasium(game):
    chosen = _modes(game)
    # 160 frames past the reset's own: an episode every 40 steps.
    kwargs = dict(mode=chosen[0], difficulty=chosen[1], repeat_action_probability=STICKY,
                  max_num_frames_per_episode=chosen[2] + 160)

    envs = [gym.make(f"ALE/{camel_name(game)}-v5", frameskip=1, **kwargs) for _ in range(2)]
    # AtariPreprocessing's no-ops need NOOP as action 0 (Video Checkers' minimal set has none): read from
    # the reference's own envs (another gym.make only for this cost a ROM load, 0.3-0.4 s).
    noop_max = 30 if envs[0].unwrapped.get_action_meanings()[0] == "NOOP" else 0
    ref = SyncVectorEnv([lambda env=env: FrameStackObservation(AtariPreprocessing(env, noop_max=noop_max), 4,
                                                               padding_type="zero") for env in envs])
    ours = swapping(AleVectorEnv(game, 2, noop_max=noop_max, **kwargs))
    try:
        # Three episodes each, which 120 steps hold; where episodes end sooner, no more: Demon Attack's last
        # mode ends one every step, and each reset's no-ops end and reset again (120 steps took 60 s).
        assert compare(ref, ours, 120, until_ends=3) > 0
        taken = resets_taken(ours)
    finally:
        ref.close()
        ours.close()
    assert (taken > 0) == _vetted(game, True, chosen[0], chosen[1]), (game, chosen, taken)


@pytest.mark.slow  # 1,200 steps of three games: about 20 s
@pytest.mark.parametrize("game", ["pitfall2", "montezuma_revenge", "breakout"])  # pitfall2: a DPC cartridge
@pytest.mark.deep  # long runs: a soak of sticky actions
def test_long_episodes_with_sticky_actions_equal_ale_py(game):
    # 2,000 frames (500 steps) an episode: long play between the swaps, with its scores.
    taken = _against_ale_py(game, 1200, repeat_action_probability=STICKY, max_num_frames_per_episode=2000)
    assert taken > 0


@pytest.mark.slow  # over 2.5 s in the quick tier
def test_a_reseed_mid_run_equals_ale_py():
    assert _against_ale_py("breakout", 160, n=3, reseed_at=70, max_num_frames_per_episode=160) > 0


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_a_failed_env_rebuilt_by_reset_equals_a_run_without_resets_ahead():
    def run(ahead: bool):
        env = AtariVectorEnv("breakout", 3, num_threads=2, max_num_frames_per_episode=160)
        if ahead:
            swapping(env)
        else:
            env._native._vec._reset_ahead = False
        rng = np.random.default_rng(5)
        out = [env.reset(seed=1)[0]]
        try:
            for t in range(200):
                if t == 90:
                    _testing._inject_fault(env._native._vec, 1)
                    with pytest.raises(EngineError, match="env 1: injected fault"):
                        env.step(rng.integers(0, 4, 3))
                    out.append(env.reset(seed=2)[0])  # rebuilds env 1: a fresh emulator and spare
                out.append(env.step(rng.integers(0, 4, 3))[:4])
            return out, resets_taken(env)
        finally:
            env.close()

    (inline, off), (ahead, on) = run(False), run(True)
    assert off == 0 and on > 0
    for t, (a, b) in enumerate(zip(inline, ahead)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b)) if isinstance(a, tuple) else np.array_equal(a, b), t


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_taller_screens_tests_run_every_rom_ale_gives_more_than_210_rows():
    # (tests/unit/test_reset_table.py holds the docs' verdict and ROM tables to the shipped table.)
    heights = {rom: screen_height(rom) for rom in ROMS}
    assert {rom: h for rom, h in heights.items() if h != 210} == TALL_SCREENS
