"""Chaos: a bounded random-action run over 4 shards on a 3-node cluster while shard processes are
killed (by a second process) and a node is removed and added back, on a seeded schedule. Every env's
data must equal a local model exactly: each shard a plain AleNativeVecEnv, replaced at each of the
run's faults by one seeded with ``replacement_seeds`` (so the envs of unaffected shards are exactly
those of a fault-free run, and no step is lost or counted twice)."""

import subprocess

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from conftest import add_node  # noqa: E402
from helpers import assert_same_infos  # noqa: E402
from sb3_ale_vec import AleNativeVecEnv  # noqa: E402
from sb3_ale_vec.distributed import RayAleVecEnv  # noqa: E402
from sb3_ale_vec.distributed.faults import replacement_seeds  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.deep]  # Ray's chaos run: the deep tier (`bash .ci/deep`)

OPTIONS = {"max_num_frames_per_episode": 600}
SEED, SHARDS, ENVS = 21, 4, 8
# Bounded by its faults: six kills in steps 50-499, the node's removal at 250 and its return at 350,
# then a game's length (600 frames: 150 steps) past the last, so that every shard is seen stepping on
# after its restart. (A run of 1,500 steps with the faults spread over it took 79-82 s in CI.)
FAULTS = 500
STEPS = FAULTS + 600 // 4


class Model:
    """The run as it must be: shard k is an AleNativeVecEnv for its envs, rebuilt at each restart."""

    def __init__(self, env_ids):
        self.env_ids = env_ids
        self.shards = [AleNativeVecEnv("breakout", len(ids), seed=SEED + ids[0], **OPTIONS) for ids in env_ids]
        self.obs = np.concatenate([s.reset() for s in self.shards])

    def step(self, actions, restarted):
        obs, rewards, dones, infos = np.zeros_like(self.obs), np.zeros(ENVS, np.float32), np.zeros(ENVS, bool), []
        for k, ids in enumerate(self.env_ids):
            rows = slice(ids[0], ids[-1] + 1)
            if k in restarted:  # its envs end truncated with their last obs; the new shard's games start
                self.shards[k].close()
                self.shards[k] = AleNativeVecEnv("breakout", len(ids), **OPTIONS)
                self.shards[k]._seeds = replacement_seeds(SEED, k, restarted[k], len(ids), ale=False)
                obs[rows], dones[rows] = self.shards[k].reset(), True
                infos += [{"TimeLimit.truncated": True, "terminal_observation": self.obs[i]} for i in ids]
                continue
            obs[rows], rewards[rows], dones[rows], part = self.shards[k].step(actions[rows])
            infos += part
        self.obs = obs
        return obs, rewards, dones, infos


def test_chaos_run_loses_no_step_and_leaves_other_shards_exact(cluster):
    env = RayAleVecEnv("breakout", ENVS, num_shards=SHARDS, seed=SEED, max_restarts_per_shard=20, **OPTIONS)
    model = Model([s["env_ids"] for s in env.shard_info()])
    assert np.array_equal(env.reset(), model.obs)
    rng = np.random.default_rng(SEED)
    kills = rng.choice(np.arange(50, FAULTS), 6, replace=False)
    schedule = {int(t): ("kill", int(rng.integers(SHARDS))) for t in kills}
    schedule[FAULTS // 2] = ("node", None)
    episodes, faults, restarts = np.zeros(ENVS, int), 0, [0] * SHARDS
    removed = None
    for t in range(STEPS):
        if t in schedule:
            kind, k = schedule[t]
            if kind == "kill":  # a second process kills the shard's worker
                subprocess.run(["kill", "-9", str(env.shard_info()[k]["pid"])], check=True)
            else:  # the node of some shard off the head node leaves the cluster
                head = cluster.head_node.node_id
                node_id = next(s["node_id"] for s in env.shard_info() if s["node_id"] != head)
                removed = next(n for n in cluster.list_all_nodes() if n.node_id == node_id)
                cluster.remove_node(removed)
            faults += 1
        if removed is not None and t == FAULTS // 2 + 100:
            add_node(cluster)  # and a node joins again
        actions = rng.integers(0, 4, ENVS)
        ours = env.step(actions)
        now = [s["restarts"] for s in env.shard_info()]
        restarted = {k: now[k] for k in range(SHARDS) if now[k] != restarts[k]}
        assert all(now[k] == restarts[k] + 1 for k in restarted), (t, restarts, now)  # one restart each, no more
        restarts = now
        expected = model.step(actions, restarted)
        for a, b in zip(expected[:3], ours[:3]):
            assert np.array_equal(a, b), t
        assert_same_infos(expected[3], ours[3], t)
        episodes += ["episode" in info for info in ours[3]]
    assert sum(restarts) >= faults and episodes.min() > 0  # every fault was seen; every env finished games
    assert ray.get([env._actors[k].where.remote() for k in range(SHARDS)])  # every shard alive at the end
    env.close()
    for shard in model.shards:
        shard.close()
