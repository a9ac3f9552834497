"""Scheduling never changes a result: a full batch that queues its resets first returns, env by
env, what the plain env-id order returns; and the benchmark's task profile records every task."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from batched_runs import assert_same, make, trajectories


@pytest.mark.parametrize("front_end", ["gymnasium", "ale"])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_resets_first_returns_what_env_id_order_returns(front_end, mode, threads):
    actions = np.random.default_rng(5).integers(0, 4, (6, 120))
    runs = []
    for resets_first in (True, False):
        env = make(front_end, 6, mode, threads, 0, 300)  # frame limit 300: many resets
        env._native._vec._resets_first = resets_first
        try:
            runs.append(trajectories(env, actions, seed=11))
        finally:
            env.close()
    assert_same(*runs)


def test_profile_records_each_task_with_its_thread_and_reset_flag():
    env = make("ale", 4, AutoresetMode.NEXT_STEP, 2, 0, 200)
    engine = env._native._vec
    try:
        env.reset(seed=3)
        engine._profile(True)
        resets = []
        ended = np.zeros(4, bool)
        for t in range(60):
            _, _, terminated, truncated, _ = env.step(np.full(4, t % 4))
            resets.append(ended.copy())  # NEXT_STEP: the step after a done is the reset
            ended = terminated | truncated
        rec = engine._take_profile()
        engine._profile(False)
        assert engine._take_profile()["env"].size == 0
    finally:
        env.close()
    assert rec["batch"].tolist() == sorted(rec["batch"].tolist()) and rec["batch"].max() == 59
    assert sorted(rec["env"][rec["batch"] == 7].tolist()) == [0, 1, 2, 3]
    assert set(rec["thread"].tolist()) <= {0, 1}
    assert (rec["sent_ns"] <= rec["start_ns"]).all() and (rec["start_ns"] <= rec["end_ns"]).all()
    flags = np.zeros((60, 4), bool)
    flags[rec["batch"], rec["env"]] = rec["reset"].astype(bool)
    assert (flags == np.array(resets)).all() and flags.any()


@pytest.mark.parametrize("front_end", ["sb3", "ale"])
def test_overhead_breakdown_puts_python_and_engine_times_on_one_clock(front_end):
    from sb3_ale_vec.bench.step_profile import overhead_run

    parts = overhead_run("breakout", 4, 2, 60, front_end)
    # Python's perf_counter_ns and the engine's records are one clock: every stage of every step
    # starts after the one before it (a clock mismatch would make some negative or huge).
    step = parts["step"]["median_us"]
    for key in ("front-end and send", "dispatch to first task", "tasks", "last task to caller awake",
                "caller awake to return"):
        assert 0 <= parts[key]["median_us"] <= step, (key, parts)
    assert parts["tasks"]["median_us"] >= parts["work / threads"]["median_us"] * 0.5
