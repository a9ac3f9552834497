"""Resets ahead decided the same way in every run: the idle threads' own path swaps and changes nothing,
the same seeds give the same run on every ROM whether the idle threads are starved or free, and the
run-time re-check catches a swap the table should not have allowed (refused, counted, warned once)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from all_roms import ROMS
from helpers import resets_taken, swapping
from test_batching import assert_same, trajectories

from sb3_ale_vec import AleVectorEnv, AtariVectorEnv, reset_table


def _run(env, actions: np.ndarray, seed: int = 7):
    """Trajectories, resets swapped, swaps re-checked; every re-check agreed, every replay ran whole."""
    try:
        out = trajectories(env, actions, seed=seed), resets_taken(env), env._native._vec._resets_checked
        assert env._native._vec.reset_ahead_mismatches == 0 and env._native._vec._replays_abandoned == 0
        return out
    finally:
        env.close()


def _starved(env):
    """Resets ahead on, but no prepare ever ready in time: as when the idle threads never get a core."""
    env._native._vec._reset_ahead = False
    return env


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_idle_threads_path_swaps_and_equals_real_resets():
    # As users run it: prepares off the env's own thread (helpers.swapping), on the pool's worker when
    # it has nothing queued or on an idle thread.
    # The caller leaves them time (a GPU policy's forward pass), so that each prepare is ready before
    # its episode ends: the swaps then really happen, and change no frame.
    n, steps = 3, 200
    actions = np.random.default_rng(4).integers(0, 4, (n, steps))
    kwargs = dict(num_threads=2, max_num_frames_per_episode=160)  # an episode every 40 steps
    free = AleVectorEnv("breakout", n, **kwargs)
    vec = free._native._vec
    assert vec._reset_ahead
    obs, _ = free.reset(seed=7)
    out = [obs.copy()]
    try:
        for t in range(steps):
            if t % 10 == 0:  # the gap: a prepare is queued at each reset, ready well before the next
                deadline = time.monotonic() + 60
                while not vec._prepares_idle and time.monotonic() < deadline:
                    time.sleep(0.005)
            out.append(free.step(actions[:, t])[:4])
        taken = resets_taken(free)
    finally:
        free.close()
    real = _starved(AleVectorEnv("breakout", n, **kwargs))
    expected = [real.reset(seed=7)[0]] + [real.step(actions[:, t])[:4] for t in range(steps)]
    real.close()
    assert taken >= n * 3, taken  # each env ends 4 episodes: the first reset is real, the rest swap
    for t, (a, b) in enumerate(zip(expected, out)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b)) if isinstance(a, tuple) else np.array_equal(a, b), t


@pytest.mark.slow  # every ROM ale-py runs, twice: about 1 s each
@pytest.mark.parametrize("game", ROMS)
def test_every_rom_runs_alike_with_the_idle_threads_starved_or_free(game):
    # Free: every reset the table allows is swapped (each prepared in time); starved: none is. The
    # same seeds must give the same run, frame for frame, whichever happened. Without sticky actions,
    # where the no-ops and FIRE are replayed too (with them, test_reset_ahead's every-ROM test holds
    # the swaps to ale-py's own frames).
    sticky = 0.0
    kwargs = dict(num_threads=2, repeat_action_probability=sticky, max_num_frames_per_episode=160)
    env = _starved(AtariVectorEnv(game, 2, **kwargs))
    # 120 steps: each env's episodes end at steps 40, 80 and 120, three resets.
    actions = np.random.default_rng(3).integers(0, env.single_action_space.n, (2, 120))
    starved, none, _ = _run(env, actions)
    free, taken, _ = _run(swapping(AtariVectorEnv(game, 2, **kwargs)), actions)
    assert_same(starved, free)
    assert none == 0 and (taken > 0) == reset_table.vetted(game, -1, -1, sticky > 0), (game, taken)


@pytest.mark.slow  # over 2.5 s in the quick tier
def test_a_swap_the_table_should_not_have_allowed_is_caught_refused_and_warned(monkeypatch):
    # Kung-Fu Master's reset keeps something of play (the table refuses it). Told otherwise, the engine
    # swaps its first resets, re-checks them against real resets in idle time, finds the difference,
    # warns once, counts it, and resets for real from then on.
    monkeypatch.setattr(reset_table, "vetted", lambda *key: True)
    env = swapping(AtariVectorEnv("kung_fu_master", 4, num_threads=2, max_num_frames_per_episode=2000))
    vec = env._native._vec
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2000):
            env.step(rng.integers(0, env.single_action_space.n, 4))
            if vec.reset_ahead_mismatches:
                break
        refused_at = resets_taken(env)
        for _ in range(600):  # 1.2 episodes more of each env: none of them swaps any more
            env.step(rng.integers(0, env.single_action_space.n, 4))
    try:
        assert vec.reset_ahead_mismatches > 0 and vec._resets_checked > 0
        assert resets_taken(env) == refused_at
        mismatch = [w for w in caught if "differed from the real reset" in str(w.message)]
        assert len(mismatch) == 1 and mismatch[0].category is RuntimeWarning, [str(w.message) for w in caught]
    finally:
        env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_run_time_checks_pass_where_the_table_allows():
    # Breakout's swaps are re-checked (the key's first eight in the engine) and every check agrees.
    env = swapping(AtariVectorEnv("breakout", 2, num_threads=2, max_num_frames_per_episode=160))
    actions = np.random.default_rng(1).integers(0, 4, (2, 300))
    _, taken, checked = _run(env, actions)
    assert taken >= 10 and checked >= 6, (taken, checked)
