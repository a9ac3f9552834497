"""RayAleVecEnv's faults, each kind on a real Ray cluster against the real emulator: lost, hung and
raising shards, in steps and outside them, seeds, configuration and teardown."""

import gc
import os
import signal
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from helpers import assert_same_infos  # noqa: E402
from sb3_ale_vec import AleNativeVecEnv, EngineError  # noqa: E402
from sb3_ale_vec.distributed import RayAleVecEnv  # noqa: E402
from sb3_ale_vec.options import ALE_MAX_SEED  # noqa: E402

pytestmark = pytest.mark.slow

OPTIONS = {"max_num_frames_per_episode": 600}


def _pair(num_envs, num_shards, seed, **kwargs):
    return (AleNativeVecEnv("breakout", num_envs, seed=seed, **OPTIONS),
            RayAleVecEnv("breakout", num_envs, num_shards=num_shards, seed=seed, **OPTIONS, **kwargs))


def _same_rows(ref_step, our_step, rows, where):
    (o1, r1, d1, i1), (o2, r2, d2, i2) = ref_step, our_step
    assert np.array_equal(o1[rows], o2[rows]), where
    assert np.array_equal(r1[rows], r2[rows]) and np.array_equal(d1[rows], d2[rows]), where
    assert_same_infos([i1[i] for i in rows], [i2[i] for i in rows], where)


# One pair (6 envs over 3 shards: [0, 1], [2, 3], [4, 5]) for the fault tests that break a shard
# and see it replaced: a replacement is the fault's own cost, a new env of 3 actors is not (seconds
# each on busy cores). Each test seeds both envs and counts restarts from where they stand; others
# build envs of their own. Without episodic life a seeded reset is a real one (SB3's EpisodicLifeEnv
# makes a reset in mid-game one no-op step), so every env, rebuilt and replaced ones included, starts
# each test exactly as a new pair's would (``_warm`` checks it); these tests see no life lost (the
# first comes at step 22).
SHARED_OPTIONS = {**OPTIONS, "episodic_life": False}
_SHARED: list[tuple[AleNativeVecEnv, RayAleVecEnv]] = []


def _shared_pair(seed):
    """The shared pair, both seeded with ``seed`` for their next reset (``_warm``'s)."""
    if not _SHARED:
        _SHARED.append((AleNativeVecEnv("breakout", 6, seed=seed, **SHARED_OPTIONS),
                        RayAleVecEnv("breakout", 6, num_shards=3, seed=seed, max_restarts_per_shard=1000,
                                     **SHARED_OPTIONS)))
    ref, ours = _SHARED[0]
    ref.seed(seed), ours.seed(seed)
    return ref, ours


def _close_shared():
    while _SHARED:
        for env in _SHARED.pop():
            env.close()


@pytest.fixture(scope="module", autouse=True)
def _shared_pair_closed_at_the_end():
    yield
    _close_shared()


def _warm(ref, ours, steps=10):
    rng = np.random.default_rng(0)
    assert np.array_equal(ref.reset(), ours.reset())
    for t in range(steps):
        actions = rng.integers(0, 4, ours.num_envs)
        _same_rows(ref.step(actions), ours.step(actions), range(ours.num_envs), t)
    return rng


def _placement_groups() -> int:
    return sum(pg["state"] != "REMOVED" for pg in ray.util.placement_group_table().values())


@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_an_env_failing_in_a_shard_gives_global_ids_and_keeps_every_other_result(cluster):
    ref, ours = _shared_pair(seed=1)
    rng = _warm(ref, ours)
    ours._call("_inject_fault", "", [3])  # shard 1 (envs 2..3), its local env 1
    actions = rng.integers(0, 4, 6)
    o, r, d, i = ref.step(actions)
    with pytest.raises(EngineError, match="env 3: injected fault") as caught:
        ours.step(actions)
    error = caught.value
    assert error.env_ids == [3] and "\x1b" not in str(error)
    others = [0, 1, 2, 4, 5]
    _same_rows((o, r, d, i), (error.obs, error.rewards, error.dones, error.infos), others, "EngineError")
    assert not error.obs[3].any() and error.infos[3] == {}
    with pytest.raises(RuntimeError, match=r"envs \[3\] failed in an earlier step: reset\(\) rebuilds them"):
        ours.step(actions)
    mine, theirs = ours.reset(), ref.reset()  # env 3 rebuilt (a new game); the others as the reference
    assert np.array_equal(mine[others], theirs[others]) and mine[3].any()
    ours.step(actions)


@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_an_exception_in_a_shard_fails_its_envs_only(cluster):
    ref, ours = _shared_pair(seed=2)
    rng = _warm(ref, ours)
    ours._call("_raise_next", "", [4])  # shard 2 (envs 4..5) raises in Python at its next step
    actions = rng.integers(0, 4, 6)
    ref_step = ref.step(actions)
    with pytest.raises(EngineError, match=r"shard 2 \(envs 4..5\): injected shard error") as caught:
        ours.step(actions)
    error = caught.value
    assert error.env_ids == [4, 5] and "\x1b" not in str(error) and not error.obs[4:].any()
    _same_rows(ref_step, (error.obs, error.rewards, error.dones, error.infos), range(4), "the other shards")
    ours.reset()
    ours.step(actions)


@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_a_hung_shard_is_replaced_after_step_timeout(cluster):
    ref, ours = _shared_pair(seed=3)
    rng = _warm(ref, ours)
    last = ref.step(np.zeros(6, int))[0]
    ours.step(np.zeros(6, int))
    before, restarts = ours.shard_info()[0]["pid"], ours.restarts[0]
    ours._actors[0].call.remote("_hang", "", [], (600,), {})  # busy for 10 minutes: the step waits on it
    actions = rng.integers(0, 4, 6)
    start = time.monotonic()
    timeout, ours.step_timeout_s = ours.step_timeout_s, 3.0  # as RayAleVecEnv(..., step_timeout_s=3.0)
    try:
        ref_step, (obs, rewards, dones, infos) = ref.step(actions), ours.step(actions)
    finally:
        ours.step_timeout_s = timeout
    assert 3.0 <= time.monotonic() - start < 60
    _same_rows(ref_step, (obs, rewards, dones, infos), [2, 3, 4, 5], "after the hang")
    assert dones[:2].all() and all(infos[i]["TimeLimit.truncated"] for i in (0, 1))
    assert all(np.array_equal(infos[i]["terminal_observation"], last[i]) for i in (0, 1))
    now = ours.shard_info()[0]
    assert now["restarts"] == restarts + 1 and now["pid"] != before


@pytest.mark.parametrize("how", ["get_attr", "env_method", "get_images", "set_attr", "reset"])
@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_a_shard_lost_outside_a_step_is_replaced_there(cluster, how):
    ref, ours = _shared_pair(seed=4)
    rng = _warm(ref, ours)
    ours.set_attr("note", "x", indices=[2, 5])
    last = ref.step(np.ones(6, int))[0]
    ours.step(np.ones(6, int))
    restarts = ours.restarts[1]
    os.kill(ours.shard_info()[1]["pid"], signal.SIGKILL)  # envs 2..3
    time.sleep(0.5)
    if how == "reset":
        mine, theirs = ours.reset(), ref.reset()  # the replacement's envs start new games there
        assert np.array_equal(mine[[0, 1, 4, 5]], theirs[[0, 1, 4, 5]]) and mine[[2, 3]].any()
    else:
        call = {"get_attr": lambda: ours.get_attr("note", [2, 5]), "set_attr": lambda: ours.set_attr("y", 1, 3),
                "env_method": lambda: ours.env_method("get_action_meanings", indices=[3]),
                "get_images": lambda: ours.get_images()}[how]
        result = call()
        if how == "get_attr":
            assert result == ["x", "x"]
    assert ours.shard_info()[1]["restarts"] == restarts + 1
    assert ours.get_attr("note", [2, 5]) == ["x", "x"]  # set_attr replayed on the replacement
    if how != "reset":  # its envs end as truncated episodes at the next step; the others go on
        actions = rng.integers(0, 4, 6)
        ref_step, (obs, rewards, dones, infos) = ref.step(actions), ours.step(actions)
        _same_rows(ref_step, (obs, rewards, dones, infos), [0, 1, 4, 5], how)
        assert dones[[2, 3]].all() and infos[2]["TimeLimit.truncated"]
        assert np.array_equal(infos[3]["terminal_observation"], last[3])


@pytest.mark.parametrize("how", ["get_attr", "env_method"])
@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_a_shard_lost_between_step_async_and_step_wait_is_replaced_once(cluster, how):
    """Found lost by a call made while a step is in flight: replaced there, once; the step then
    returns that replacement's reset rows, and its envs go on from there."""
    from sb3_ale_vec.distributed.faults import replacement_seeds

    ref, ours = _shared_pair(seed=6)
    rng = _warm(ref, ours)
    ours.set_attr("note", "x", indices=[2, 5])  # so that get_attr asks the shards
    last = ref.step(np.ones(6, int))[0]
    ours.step(np.ones(6, int))
    restarts = ours.restarts[1]
    actions = rng.integers(0, 4, 6)
    ref_step = ref.step(actions)
    ours.step_async(actions)
    os.kill(ours.shard_info()[1]["pid"], signal.SIGKILL)  # envs 2..3
    time.sleep(0.5)
    if how == "get_attr":
        assert ours.get_attr("note", [2, 5]) == ["x", "x"]
    else:
        assert ours.env_method("get_action_meanings", indices=[3])[0][:2] == ["NOOP", "FIRE"]
    obs, rewards, dones, infos = ours.step_wait()
    assert ours.shard_info()[1]["restarts"] == restarts + 1  # once, not again in step_wait
    _same_rows(ref_step, (obs, rewards, dones, infos), [0, 1, 4, 5], how)
    assert dones[[2, 3]].all() and infos[2]["TimeLimit.truncated"]
    assert np.array_equal(infos[3]["terminal_observation"], last[3])
    # The replacement, modelled locally from its seeds: the rows handed out are its own.
    model = AleNativeVecEnv("breakout", 2, **SHARED_OPTIONS)
    model._seeds = replacement_seeds(6, 1, restarts + 1, 2, False)
    assert np.array_equal(model.reset(), obs[[2, 3]])
    for t in range(5):
        actions = rng.integers(0, 4, 6)
        assert np.array_equal(model.step(actions[[2, 3]])[0], ours.step(actions)[0][[2, 3]]), t
    model.close()


def test_shards_import_neither_sb3_nor_torch(cluster):
    _, env = _shared_pair(seed=0)  # its shards, first ones and replacements, have stepped, reset and answered calls
    for actor in env._actors:
        assert ray.get(actor.imported.remote(["stable_baselines3", "torch", "sb3_ale_vec._engine"])) == [
            False, False, True]


@pytest.mark.deep  # injected faults: the deep tier beside the chaos run
def test_lost_shards_are_replaced_together_with_reproducible_seeds(cluster):
    _close_shared()  # two envs of 3 shards each in turn, beside nothing
    runs = []
    for _ in range(2):  # the same seed and the same faults: the same results, every env
        env = RayAleVecEnv("breakout", 6, num_shards=3, seed=11, **OPTIONS)
        rng, out = np.random.default_rng(5), [env.reset()]
        for t in range(20):
            if t == 8:
                for k in (0, 2):
                    os.kill(env.shard_info()[k]["pid"], signal.SIGKILL)
            obs, rewards, dones, infos = env.step(rng.integers(0, 4, 6))
            out += [obs, rewards, dones]
        assert [s["restarts"] for s in env.shard_info()] == [1, 0, 1]
        runs.append(out)
        env.close()
    assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_the_ale_preset_builds_with_no_seed_every_time(cluster):
    env = RayAleVecEnv("breakout", 4, num_shards=2, preset="ale")
    for _ in range(200):
        env.seed()
        assert 0 <= min(env._seeds) and max(env._seeds) <= ALE_MAX_SEED
    env.reset()
    with pytest.raises(ValueError, match=r"the ale preset takes seeds in \[0, 2147483647\]"):
        env.seed(ALE_MAX_SEED - 2)
    env.close()


def test_configuration_that_cannot_hold_is_refused(cluster):
    before = _placement_groups()
    with pytest.raises(ValueError, match="address='127.0.0.1:1' names .* but Ray is already initialised"):
        RayAleVecEnv("pong", 2, num_shards=1, address="127.0.0.1:1")
    with pytest.raises(ValueError, match="thread_affinity_offset is not allowed with RayAleVecEnv"):
        RayAleVecEnv("pong", 2, num_shards=1, thread_affinity_offset=0)
    assert _placement_groups() == before
    RayAleVecEnv("pong", 2, num_shards=1, address=cluster.address).close()  # the same cluster: fine


def test_an_env_never_closed_frees_its_placement_group(cluster):
    before = _placement_groups()
    env = RayAleVecEnv("pong", 2, num_shards=2)
    assert _placement_groups() == before + 1
    del env
    gc.collect()
    deadline = time.time() + 30
    while time.time() < deadline and _placement_groups() != before:
        time.sleep(0.2)
    assert _placement_groups() == before


def test_close_and_ray_shutdown_in_either_order(cluster):
    _close_shared()  # ray.shutdown() ends every actor of this driver
    first = RayAleVecEnv("pong", 2, num_shards=1)
    second = RayAleVecEnv("pong", 2, num_shards=1)
    first.close()
    ray.shutdown()
    first.close(), second.close(), second.close()
    ray.init(address=cluster.address)
    with pytest.raises(RuntimeError, match="closed"):
        second.reset()
