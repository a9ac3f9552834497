"""RayAleVecEnv on a real 3-node Ray cluster on this machine, against one AleNativeVecEnv (and SB3's pipeline)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common import atari_wrappers  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402

from conftest import add_node  # noqa: E402
from helpers import assert_same_infos, compare_rollouts, make_reference  # noqa: E402
from sb3_ale_vec import AleNativeVecEnv  # noqa: E402
from sb3_ale_vec.distributed import RayAleVecEnv  # noqa: E402

pytestmark = pytest.mark.slow  # a 3-node cluster takes a while to start

# Short games (a frame limit of 240 = 60 steps), so that under a hundred steps see life losses (from
# step 22 on), game ends with episode stats and time-limit truncations (from step 46 on).
OPTIONS = {"max_num_frames_per_episode": 240}


def _pair(num_envs, num_shards, seed, **kwargs):
    return (AleNativeVecEnv("breakout", num_envs, seed=seed, **OPTIONS),
            RayAleVecEnv("breakout", num_envs, num_shards=num_shards, seed=seed, **OPTIONS, **kwargs))


# Pairs that tests only step and read, built once and reused (each actor's start is seconds on busy
# cores): one alive at a time, so that they never hold more than 3 of the cluster's 6 CPUs. A test
# re-seeds both envs before its first reset, so what ran on them before changes nothing.
_SHARED: dict[int, tuple[AleNativeVecEnv, RayAleVecEnv]] = {}


def _shared_pair(num_shards, seed=7):
    """5 envs over num_shards shards (uneven splits) beside one engine."""
    if num_shards not in _SHARED:
        _close_shared()
        _SHARED[num_shards] = _pair(5, num_shards, seed=seed)
    ref, ours = _SHARED[num_shards]
    ref.seed(seed), ours.seed(seed)
    return ref, ours


def _close_shared():
    while _SHARED:
        for env in _SHARED.popitem()[1]:
            env.close()


@pytest.fixture(scope="module", autouse=True)
def _shared_pairs_closed_at_the_end():
    yield
    _close_shared()


@pytest.fixture
def alone(cluster):
    """The cluster with no shared pair alive: for tests that build or break actors of their own."""
    _close_shared()
    return cluster


def _step_both(ref, ours, rng):
    actions = rng.integers(0, ours.action_space.n, ours.num_envs)
    return ref.step(actions), ours.step(actions)


def _same_rows(ref_step, our_step, rows, where):
    (o1, r1, d1, i1), (o2, r2, d2, i2) = ref_step, our_step
    assert np.array_equal(o1[rows], o2[rows]), where
    assert np.array_equal(r1[rows], r2[rows]) and np.array_equal(d1[rows], d2[rows]), where
    assert_same_infos([i1[i] for i in rows], [i2[i] for i in rows], where)


@pytest.mark.parametrize("num_shards", [1, 2, 3])
def test_same_results_as_one_engine_for_any_sharding(cluster, num_shards):
    ref, ours = _shared_pair(num_shards)
    info = ours.shard_info()
    assert [s["env_ids"] for s in info] == [list(ids) for ids in np.array_split(range(5), num_shards)]
    assert len({s["node_id"] for s in info}) == num_shards  # SPREAD: one node per shard here
    stats = compare_rollouts(ref, ours, 90, action_seed=num_shards, reset_every=70)
    # Life losses (dones that are not truncations), games ended with their stats, truncations, a reset mid-run.
    assert stats.dones > stats.truncations and stats.episodes and stats.truncations and stats.resets_mid_run
    for a, b in zip(ref.get_images(), ours.get_images()):
        assert np.array_equal(a, b)


def test_attributes_methods_and_wrappers_across_shards(cluster):
    ref, ours = _shared_pair(3)  # envs [0, 1], [2, 3], [4]
    assert ours.observation_space == ref.observation_space and ours.action_space == ref.action_space
    assert ours.get_attr("spec", [4, 0])[0].id == "BreakoutNoFrameskip-v4"
    assert ours.get_attr("render_mode") == ref.get_attr("render_mode") == ["rgb_array"] * 5
    ours.set_attr("note", "x", indices=[1, 4])
    ours.set_attr("note", "y", indices=[0])
    assert ours.get_attr("note", [4, 0, 1]) == ["x", "y", "x"]
    with pytest.raises(AttributeError, match="no attribute 'note'"):
        ours.get_attr("note", 2)
    assert ours.env_method("get_action_meanings", indices=[2, 4]) == ref.env_method("get_action_meanings", indices=[2, 4])
    for wrapper in (Monitor, atari_wrappers.FireResetEnv, atari_wrappers.StickyActionEnv):
        assert ours.env_is_wrapped(wrapper) == ref.env_is_wrapped(wrapper)


def test_bad_actions_raise_and_change_nothing(cluster):
    ref, ours = _shared_pair(3)
    assert np.array_equal(ref.reset(), ours.reset())
    good = np.array([1, 2, 3, 0, 1])
    for actions, error, match in [(np.array([0.0, 1.0, 0.0, 0.0, 0.0]), TypeError, "integers"),
                                  (np.array([0, 1]), ValueError, "shape"),
                                  (np.array([0, 4, 0, 0, 0]), ValueError, "out of range")]:
        with pytest.raises(error, match=match):
            ours.step(actions)
        _same_rows(ref.step(good), ours.step(good), range(5), match)
    with pytest.raises(TypeError, match="seed"):
        ours.seed(1.5)
        ours.reset()


def test_ram_info_taller_screens_and_a_mixed_height_batch_across_shards(alone):
    """One pair for what two tests built alike: info["ram"], info["terminal_ram"] and the reset infos'
    RAM come back from the shards as one engine gives them; Pooyan's 220 rows and Pac-Man's 250 beside
    Breakout's 210, each shard's ROMs its own: the same frames, infos and screens as one engine, and
    each env's spec."""
    games = ["pooyan", "breakout", "pacman", "pooyan"]
    ref = AleNativeVecEnv(games, 4, seed=5, full_action_space=True, ram_info=True, **OPTIONS)
    ours = RayAleVecEnv(games, 4, num_shards=2, seed=5, full_action_space=True, ram_info=True, **OPTIONS)
    stats = compare_rollouts(ref, ours, 90, reset_every=70)
    assert stats.dones > stats.truncations and stats.truncations and stats.resets_mid_run
    ref_step, our_step = ref.step(np.zeros(4, dtype=np.int64)), ours.step(np.zeros(4, dtype=np.int64))
    _same_rows(ref_step, our_step, range(4), "the last step")
    assert all(info["ram"].shape == (128,) and info["ram"].dtype == np.uint8 for info in our_step[3])
    assert all(info["ram"].shape == (128,) for info in ours.reset_infos)
    assert [image.shape[0] for image in ours.get_images()] == [220, 210, 250, 220]
    assert all(np.array_equal(a, b) for a, b in zip(ref.get_images(), ours.get_images()))
    assert ours.get_attr("spec") == ref.get_attr("spec")
    ref.close()
    ours.close()


def test_killed_shard_ends_its_envs_truncated_and_the_others_go_on(alone):
    ref, ours = _pair(6, 3, seed=3, max_restarts_per_shard=1)
    rng = np.random.default_rng(0)
    last = ref.reset()
    assert np.array_equal(last, ours.reset())
    for t in range(10):
        ref_step, our_step = _step_both(ref, ours, rng)
        _same_rows(ref_step, our_step, range(6), t)
        last = ref_step[0]
    victim = ours.shard_info()[1]
    ids, others = victim["env_ids"], [i for i in range(6) if i not in victim["env_ids"]]
    os.kill(victim["pid"], signal.SIGKILL)
    ref_step, (obs, rewards, dones, infos) = _step_both(ref, ours, rng)
    _same_rows(ref_step, (obs, rewards, dones, infos), others, "after the kill")
    assert dones[ids].all() and not rewards[ids].any()
    for i in ids:
        assert infos[i]["TimeLimit.truncated"] is True
        assert np.array_equal(infos[i]["terminal_observation"], last[i])
        # A new game: the frame stack holds only the reset frame (SB3 zero-pads after a done).
        assert not obs[i, :3].any() and obs[i, 3].any()
    now = ours.shard_info()[1]
    assert now["restarts"] == 1 and now["pid"] != victim["pid"] and now["env_ids"] == ids
    for t in range(5):  # the others exactly as without the fault; the replacement steps on
        _same_rows(*_step_both(ref, ours, rng), others, t)
    os.kill(now["pid"], signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"shard 1 \(envs 2..3\) died again after 1 restarts"):
        ours.step(np.zeros(6, int))
    ref.close()
    ours.close()


def test_removed_node_ends_its_shard_and_training_goes_on(alone):
    cluster = alone
    ref, ours = _pair(6, 3, seed=5)
    rng = np.random.default_rng(1)
    ref.reset(), ours.reset()
    for t in range(10):
        _same_rows(*_step_both(ref, ours, rng), range(6), t)
    head = cluster.head_node.node_id
    k, victim = next((k, s) for k, s in enumerate(ours.shard_info()) if s["node_id"] != head)
    node = next(n for n in cluster.list_all_nodes() if n.node_id == victim["node_id"])
    others = [i for i in range(6) if i not in victim["env_ids"]]
    cluster.remove_node(node)
    ref_step, (obs, _, dones, infos) = _step_both(ref, ours, rng)
    _same_rows(ref_step, (obs, _, dones, infos), others, "after the node left")
    assert dones[victim["env_ids"]].all() and all(infos[i]["TimeLimit.truncated"] for i in victim["env_ids"])
    moved = ours.shard_info()[k]
    assert moved["restarts"] == 1 and moved["node_id"] in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    for t in range(5):
        _same_rows(*_step_both(ref, ours, rng), others, t)
    ref.close()
    ours.close()
    add_node(cluster)  # back to 3 nodes for the tests after


@pytest.mark.slow
def test_ppo_trains_through_it_exactly_as_through_sb3s_pipeline(alone):
    """Deterministic torch on one thread: the same network as SB3's make_atari_env and as one engine
    (the shards' observations reach the policy in the pipeline's memory layout)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    params, episodes = [], []
    try:
        for env in (make_reference("breakout", 4, 0, env_kwargs=OPTIONS),
                    AleNativeVecEnv("breakout", 4, seed=0, **OPTIONS),
                    RayAleVecEnv("breakout", 4, num_shards=2, seed=0, **OPTIONS)):
            model = PPO("CnnPolicy", env, n_steps=64, batch_size=128, n_epochs=1, seed=0, device="cpu")
            model.learn(512)  # two rollouts and updates; each env's 128 steps end games at the frame limit
            assert model.num_timesteps == 512 and len(model.ep_info_buffer) > 0
            params.append([p.detach().clone() for p in model.policy.parameters()])
            episodes.append([(e["r"], e["l"]) for e in model.ep_info_buffer])
            env.close()
    finally:
        torch.use_deterministic_algorithms(False)
        torch.set_num_threads(threads)
    assert episodes[0] == episodes[1] == episodes[2]
    for other in params[1:]:
        assert all(torch.equal(a, b) for a, b in zip(params[0], other))


def test_rl_zoo_hook_builds_the_same_envs_on_ray(alone):
    cluster = alone
    from stable_baselines3.common.env_util import make_vec_env

    from sb3_ale_vec.zoo import AtariNative

    ref = AtariNative(make_vec_env("BreakoutNoFrameskip-v4", n_envs=3, seed=4))
    ours = AtariNative(make_vec_env("BreakoutNoFrameskip-v4", n_envs=3, seed=4), num_shards=2,
                       ray_address=cluster.address)
    assert isinstance(ours, RayAleVecEnv) and len(ours.shard_info()) == 2
    compare_rollouts(ref, ours, 50)
    ref.close()
    ours.close()
    evaluation = AtariNative(make_vec_env("BreakoutNoFrameskip-v4", n_envs=1), num_shards=2)  # rl-zoo's eval env
    assert len(evaluation.shard_info()) == 1
    evaluation.close()


def _placement_groups() -> int:
    return sum(pg["state"] != "REMOVED" for pg in ray.util.placement_group_table().values())


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_shards": 0}, ValueError, r"num_shards must be in \[1, 3\], got 0"),
    ({"num_shards": 4}, ValueError, r"num_shards must be in \[1, 3\], got 4"),
    ({"num_shards": 1.5}, TypeError, "num_shards must be an int"),
    ({"num_cpus_per_shard": 0}, ValueError, "num_cpus_per_shard"),
    ({"frameskip": 0}, ValueError, "frameskip"),
    ({"preset": "dopamine"}, ValueError, "preset"),
    ({"episodic_life": "yes"}, TypeError, "episodic_life"),
    ({"no_such_option": 1}, TypeError, "no_such_option"),
    ({"game": "brekout"}, ValueError, "Closest ROM ids: 'breakout'"),
])
def test_bad_options_raise_before_any_actor(cluster, kwargs, error, match):
    args = {"game": "breakout", "num_envs": 3, "num_shards": 2, **kwargs}
    before = _placement_groups()
    with pytest.raises(error, match=match):
        RayAleVecEnv(args.pop("game"), args.pop("num_envs"), **args)
    assert _placement_groups() == before


def test_close_frees_actors_and_placement_group(alone):
    total = ray.cluster_resources()["CPU"]
    env = RayAleVecEnv("pong", 3, num_shards=3)
    pids = [s["pid"] for s in env.shard_info()]
    assert _placement_groups() == 1
    env.close()
    env.close()
    deadline = time.time() + 30
    while time.time() < deadline and (ray.available_resources().get("CPU", 0) < total
                                      or any(os.path.exists(f"/proc/{pid}") for pid in pids)):
        time.sleep(0.2)
    assert ray.available_resources()["CPU"] == total and _placement_groups() == 0
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_imports_without_ray_and_says_what_to_install():
    code = ("import sys; sys.modules['ray'] = None\n"
            "import sb3_ale_vec\nfrom sb3_ale_vec.distributed import RayAleVecEnv\n"
            "RayAleVecEnv('pong', 2, num_shards=1)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0
    assert 'ImportError: RayAleVecEnv needs Ray: pip install "sb3-ale-vec[ray]"' in result.stderr
