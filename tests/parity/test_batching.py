"""Batching never changes a trajectory: each env, fed its own fixed action sequence, produces in a
batched (EnvPool-style) run exactly the observations, rewards, flags, infos and final observations
of the synchronous run, on both Gymnasium front-ends, in both autoreset modes, on 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batched_runs import assert_same, make, trajectories

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)

@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front_end=st.sampled_from(["gymnasium", "ale"]),
       mode=st.sampled_from([AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]),
       threads=st.sampled_from([1, 2]), num_envs=st.integers(2, 5), data=st.data(),
       seed=st.integers(0, 2**20), limit=st.integers(120, 400))
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_a_batched_run_equals_the_synchronous_run_env_by_env(front_end, mode, threads, num_envs, data, seed, limit):
    batch_size = data.draw(st.integers(1, num_envs - 1), label="batch_size")
    actions = np.random.default_rng(seed).integers(0, 4, (num_envs, 60))
    sync_env = make(front_end, num_envs, mode, threads, 0, limit)
    batched_env = make(front_end, num_envs, mode, threads, batch_size, limit)
    try:
        sync, batched = trajectories(sync_env, actions, seed), trajectories(batched_env, actions, seed)
    finally:
        sync_env.close()
        batched_env.close()
    assert_same(sync, batched)
    ends = [(r[2], r[3]) for rows in sync.values() for r in rows]
    assert any(te for te, _ in ends) or any(tr for _, tr in ends) or limit > 240


@pytest.mark.parametrize("front_end", ["gymnasium", "ale"])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_episodes_end_by_termination_and_by_truncation_in_a_batched_run(front_end, mode):
    # One fixed case that surely reaches both kinds of ends (the property test draws its own).
    actions = np.random.default_rng(7).integers(0, 4, (4, 150))
    sync_env, batched_env = make(front_end, 4, mode, 2, 0, 200), make(front_end, 4, mode, 2, 3, 200)
    try:
        sync, batched = trajectories(sync_env, actions, 11), trajectories(batched_env, actions, 11)
    finally:
        sync_env.close()
        batched_env.close()
    assert_same(sync, batched)
    flags = [(r[2], r[3]) for rows in sync.values() for r in rows]
    assert any(te and not tr for te, tr in flags) and any(tr and not te for te, tr in flags)
