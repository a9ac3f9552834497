"""Resets ahead decided the same way in every run, with the idle threads for real: free (every prepare
done in time), late (held: none starts) or both, the same seeds give the same run on every ROM; every
check owed is made, whatever abandons the job that carries it; and the run-time re-check catches a swap the
table should not have allowed (refused, counted, warned once, no batch lost)."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest
from all_roms import ROMS
from batched_runs import assert_same, trajectories

from sb3_ale_vec import AtariVectorEnv, _testing, reset_table


def _settle(vec, timeout: float = 60) -> None:
    """Waits until no prepare is waiting or running (the idle threads or the workers ran them all)."""
    deadline = time.monotonic() + timeout
    while not vec._prepares_idle and time.monotonic() < deadline:
        time.sleep(0.002)
    assert vec._prepares_idle, "the prepares asked for never ran"


class Paced:
    """`env` stepped with the idle threads for real: before each step every prepare is done (free),
    except while `late(t)` (held: no thread starts one, so episodes that end then reset for real and
    their jobs are reclaimed). At close, resets ahead go off (the checks still owed run as jobs of
    their own) and settle: every check owed is made by then."""

    def __init__(self, env, late=lambda t: False):
        self.env, self.vec, self.late, self.t = env, env._native._vec, late, 0
        self.single_action_space = env.single_action_space

    def reset(self, **kwargs):
        _testing._hold_prepares(self.vec, self.late(self.t))  # the reset's own prepares too
        return self.env.reset(**kwargs)

    def step(self, actions):
        held = self.late(self.t)
        _testing._hold_prepares(self.vec, held)
        if not held:
            _settle(self.vec)
        self.t += 1
        return self.env.step(actions)

    def counts(self) -> dict[str, int]:
        self.vec._reset_ahead = False  # first, while held: the jobs waiting are reclaimed, their checks queued
        _testing._hold_prepares(self.vec, False)
        _settle(self.vec)
        v = self.vec
        return dict(games=v._game_resets, taken=v._resets_taken, checked=v._resets_checked,
                    dropped=v._resets_check_dropped, mismatches=v.reset_ahead_mismatches,
                    abandoned=v._replays_abandoned)


def _run(env, actions: np.ndarray, seed: int = 7):
    """Trajectories and counts; every re-check agreed, every replay ran whole, no check dropped."""
    try:
        out = trajectories(env, actions, seed=seed), env.counts()
        assert out[1]["mismatches"] == 0 and out[1]["abandoned"] == 0 and out[1]["dropped"] == 0, out[1]
        return out
    finally:
        env.env.close()


# Breakout and Pong in every run (the core tier), the other games in the deep tier (`bash .ci/deep`).
CORE_GAMES = ("breakout", "pong")


@pytest.mark.slow  # every ROM ale-py runs, twice: about 1 s each
@pytest.mark.parametrize("game", [g if g in CORE_GAMES else pytest.param(g, marks=pytest.mark.deep) for g in ROMS])
def test_every_rom_runs_alike_with_prepares_late_or_in_time(game):
    # Late: the idle threads are there and every prepare is queued, but none starts (held), so every
    # reset is made for real and every job reclaimed. Mixed: in time but for the episodes that end in
    # steps 35-44 (late there). The same seeds must give the same run, frame for frame. Without sticky
    # actions, where the no-ops and FIRE are replayed too (with them, test_reset_ahead's every-ROM test
    # holds the swaps to ale-py's own frames).
    kwargs = dict(num_threads=2, repeat_action_probability=0.0, max_num_frames_per_episode=160)
    # 120 steps: each env's episodes end at steps 40 (late), 80 and 120 (in time).
    late_env = Paced(AtariVectorEnv(game, 2, **kwargs), late=lambda t: True)
    actions = np.random.default_rng(3).integers(0, late_env.single_action_space.n, (2, 120))
    late, counted_late = _run(late_env, actions)
    mixed, counted = _run(Paced(AtariVectorEnv(game, 2, **kwargs), late=lambda t: 35 <= t < 45), actions)
    assert_same(late, mixed)
    assert counted_late["taken"] == 0, counted_late
    vetted = reset_table.vetted(game, -1, -1, False)
    # 2 envs x (the reset at 0, real; 40, real: late; 80 and 120 swapped); each swap checked (the key's first 8).
    assert counted["taken"] == (4 if vetted else 0) and counted["checked"] == counted["taken"], (game, counted)


@pytest.mark.slow  # about 3 s
def test_a_check_owed_is_made_whatever_abandons_the_job_that_carries_it():
    # Each of Breakout's first 8 swaps in the engine is re-checked by the job that prepares the next
    # reset. Here such jobs are abandoned before any thread starts them: by a seeded reset (its
    # console is rebuilt) and by resets ahead switched off at the end. The checks they carry must not be
    # lost: every swap's check is made, checked == taken, none dropped.
    env = Paced(AtariVectorEnv("breakout", 2, num_threads=2, max_num_frames_per_episode=160),  # 40 steps
                late=lambda t: 75 <= t < 86 or t >= 164)  # the jobs made at the swaps of 80 and 165 wait
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for t in range(200):
        if t == 85:  # the jobs that carry the checks of step 80's swaps have waited since
            assert (env.vec._resets_taken, env.vec._resets_checked, env.vec._prepares_idle) == (4, 2, False)
            env.env.reset(seed=1)  # episodes now end at 125 and 165 (swapped)
        env.step(rng.integers(0, 4, 2))
    assert (env.vec._resets_taken, env.vec._resets_checked, env.vec._prepares_idle) == (8, 6, False)
    counts = env.counts()  # resets ahead off: the checks of the swaps at 165 still owed, run then
    env.env.close()
    assert counts["taken"] == 8 and counts["checked"] == 8 and counts["dropped"] == 0, counts


@pytest.mark.slow  # about 2 s
def test_a_check_still_owed_when_the_env_closes_is_counted_as_dropped():
    before = _testing._reset_checks_dropped()
    env = Paced(AtariVectorEnv("breakout", 2, num_threads=2, max_num_frames_per_episode=160), late=lambda t: t >= 79)
    env.reset(seed=0)
    for _ in range(90):  # both envs swap after step 80, their checks owed by jobs that never start
        env.step(np.zeros(2, dtype=np.int64))
    assert (env.vec._resets_taken, env.vec._resets_checked) == (4, 2)
    env.env.close()
    assert _testing._reset_checks_dropped() - before == 2


@pytest.mark.slow  # about 15 s
def test_a_swap_the_table_should_not_have_allowed_is_caught_refused_and_warned_once(monkeypatch):
    # Kung-Fu Master's reset keeps something of play (the table refuses it). Told otherwise, the engine
    # swaps its first resets, re-checks them against real resets in idle time, finds the difference,
    # counts it, resets for real from then on, and warns once for the key (4 envs of it), at the
    # caller's next call: with warnings as errors, that call raises before it sends anything, and the
    # same call made again goes on (no batch is lost).
    monkeypatch.setattr(reset_table, "vetted", lambda *key: True)
    env = Paced(AtariVectorEnv("kung_fu_master", 4, num_threads=2, max_num_frames_per_episode=2000))
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    raised, refused_at, returned = [], None, 0
    frames, ended = np.zeros(4, dtype=np.int64), np.ones(4, dtype=bool)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*differed from the real reset", category=RuntimeWarning)
        for _ in range(3000):
            actions = rng.integers(0, env.single_action_space.n, 4)
            try:
                _, _, terminated, truncated, info = env.step(actions)
            except RuntimeWarning as warning:
                raised.append(str(warning))
                refused_at = env.vec._resets_taken
                _, _, terminated, truncated, info = env.step(actions)
                # The call made again is the step the refused call never sent: 4 frames on, not 8.
                going = ~(ended | terminated | truncated)
                assert going.any() and (info["episode_frame_number"][going] - frames[going] == 4).all()
            frames, ended = info["episode_frame_number"].copy(), terminated | truncated
            returned += 1
            if refused_at is not None and returned > 600 + refused_at:
                break  # 1.2 episodes more of each env: none of them swaps any more
    try:
        assert len(raised) == 1 and "kung_fu_master" in raised[0], raised
        assert env.vec.reset_ahead_mismatches > 0 and env.vec._resets_taken == refused_at
    finally:
        env.env.close()


def test_two_keys_refused_in_one_recv_are_each_warned_with_warnings_as_errors():
    # One recv can report two keys refused (two games of one engine). With warnings as errors the next
    # call raises for the first, the call after it for the second: neither is lost, and once both are
    # told the calls go on.
    env = AtariVectorEnv("breakout", 2, num_threads=1)
    try:
        env.reset(seed=0)
        keys = ["pong.bin (mode 0, difficulty 0, no sticky actions)",
                "breakout.bin (mode 0, difficulty 0, sticky actions)"]
        env._native._refused += keys  # as recv() leaves them when the engine reports both at once
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            for key in keys:
                with pytest.raises(RuntimeWarning, match=re.escape(key)):
                    env.step(np.zeros(2, dtype=np.int64))
            env.step(np.zeros(2, dtype=np.int64))
    finally:
        env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_run_time_checks_pass_where_the_table_allows():
    # Breakout's swaps are re-checked, each of the key's first eight in the engine (charged per swap),
    # and every check agrees.
    env = Paced(AtariVectorEnv("breakout", 2, num_threads=2, max_num_frames_per_episode=160))
    actions = np.random.default_rng(1).integers(0, 4, (2, 300))
    _, counts = _run(env, actions)
    assert counts["taken"] == 14 and counts["checked"] == 8, counts
