"""sb3_ale_vec.AtariVectorEnv beside ale-py's own AtariVectorEnv, step by step: the comparison every
drop-in parity test runs (final_obs rows of envs that did not end are uninitialised in ale-py: masked)."""

from __future__ import annotations

import numpy as np
from ale_py.vector_env import AtariVectorEnv as Reference
from sb3_ale_vec import AtariVectorEnv

from compare import assert_equal


def mask_final_obs(result, reset):
    """ale-py's final_obs rows of envs that did not reset are uninitialised: compare the others only."""
    if "final_obs" in result[4]:
        result[4]["final_obs"][~reset] = 0
    return result


def random_actions(rng, env, n):
    if env.continuous:
        return rng.uniform([0, -np.pi, 0], [1, np.pi, 1], (n, 3)).astype(np.float32)
    return rng.integers(0, env.single_action_space.n, n)


def run(game, steps, num_envs=3, seed=5, reset_mask_every=0, **kwargs):
    """Step ale-py's env and ours alike; returns the number of episode ends."""
    ref, ours = Reference(game, num_envs, **kwargs), AtariVectorEnv(game, num_envs, **kwargs)
    try:
        for name in ("single_observation_space", "single_action_space", "observation_space", "action_space"):
            assert getattr(ref, name) == getattr(ours, name), name
        expected = ref.reset(seed=seed)
        assert_equal(expected, ours.reset(seed=seed), "reset")
        frames = dict(zip(expected[1]["env_id"], expected[1]["episode_frame_number"]))
        rng, ends = np.random.default_rng(seed), 0
        for t in range(steps):
            if reset_mask_every and t % reset_mask_every == reset_mask_every - 1:
                mask = rng.random(num_envs) < 0.5
                mask[t % num_envs] = True
                seeds = rng.integers(-1, 2**31 - 1, int(mask.sum()))
                expected = ref.reset(seed=seeds, options={"reset_mask": mask})
                assert_equal(expected, ours.reset(seed=seeds.copy(), options={"reset_mask": mask.copy()}), f"mask t={t}")
                frames = dict(zip(expected[1]["env_id"], expected[1]["episode_frame_number"]))
            actions = random_actions(rng, ours, ours.batch_size)
            expected, got = ref.step(actions), ours.step(actions)
            # An env reset when its episode frame count went back (a life loss alone continues it).
            info = expected[4]
            reset = np.array([f < frames.get(i, 0) for i, f in zip(info["env_id"], info["episode_frame_number"])])
            frames.update(zip(info["env_id"], info["episode_frame_number"]))
            assert_equal(mask_final_obs(expected, reset), mask_final_obs(got, reset), f"t={t}")
            ends += int((expected[2] | expected[3]).sum())
        # final observations, auto-resets and their infos are compared only where episodes end
        assert ends > 0, "no episode ended: the run compared no final observation"
        return ends
    finally:
        ref.close()
        ours.close()


