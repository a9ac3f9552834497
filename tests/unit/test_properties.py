"""Property-based: random valid configurations and action sequences keep every invariant."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sb3_ale_vec import AleNativeVecEnv

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)

CONFIGS = st.fixed_dictionaries({
    "game": st.sampled_from(["breakout", "pong", "ms_pacman", "qbert", "space_invaders"]),
    "num_envs": st.integers(1, 3),
    "stack_num": st.integers(1, 4),
    "grayscale": st.booleans(),
    "channels_last": st.booleans(),
    "frameskip": st.integers(1, 5),
    "size": st.sampled_from([(84, 84), (64, 48), (105, 80), (100, 120)]),
    "noop_max": st.integers(0, 30),
    "episodic_life": st.booleans(),
    "reward_clipping": st.booleans(),
    "use_fire_reset": st.sampled_from([None, False]),
    "max_num_frames_per_episode": st.sampled_from([0, 400, 3000]),
    "num_threads": st.integers(1, 3),
})


def _make(config, seed):
    kwargs = dict(config)
    kwargs["img_height"], kwargs["img_width"] = kwargs.pop("size")
    return AleNativeVecEnv(kwargs.pop("game"), kwargs.pop("num_envs"), seed=seed, **kwargs)


def _rollout(config, seed, actions):
    env = _make(config, seed)
    n, space = env.num_envs, env.observation_space
    trace = [env.reset()]
    assert trace[0].shape == (n, *space.shape) and trace[0].dtype == np.uint8
    for step, raw in enumerate(actions):
        a = (np.asarray(raw[:n] + [0] * (n - len(raw[:n]))) % env.action_space.n).astype(np.int64)
        obs, rewards, dones, infos = env.step(a)
        assert obs.shape == (n, *space.shape) and obs.dtype == np.uint8 and obs.flags.writeable
        assert rewards.shape == (n,) and rewards.dtype == np.float32 and dones.dtype == np.bool_
        if config["reward_clipping"]:
            assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        for i, info in enumerate(infos):
            assert dones[i] == ("terminal_observation" in info), (step, i)
            assert isinstance(info["TimeLimit.truncated"], bool)
            assert not info["TimeLimit.truncated"] or dones[i]
            if dones[i]:
                terminal = info["terminal_observation"]
                assert terminal.shape == space.shape and terminal.dtype == np.uint8
            if "episode" in info:  # its sums: test_episode_stats_are_the_summed_rewards_...
                assert dones[i]
        trace.append(obs)
    env.close()
    return np.stack(trace)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, seed=st.integers(0, 2**40),
       actions=st.lists(st.lists(st.integers(0, 17), min_size=1, max_size=3), min_size=1, max_size=250))
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_invariants_and_determinism(config, seed, actions):
    first = _rollout(config, seed, actions)
    assert np.array_equal(first, _rollout(config, seed, actions))


PLAIN = st.fixed_dictionaries({
    "game": st.sampled_from(["breakout", "pong", "ms_pacman", "qbert", "space_invaders", "seaquest"]),
    "preset": st.sampled_from(["sb3", "gymnasium", "ale"]),
    "num_envs": st.integers(1, 3),
    "frameskip": st.integers(1, 5),
    "max_num_frames_per_episode": st.integers(60, 600),
    "repeat_action_probability": st.sampled_from([0.0, 0.25]),
})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=PLAIN, seed=st.integers(0, 2**31 - 4),  # env i gets seed + i, a C int for the ale preset
       actions=st.lists(st.integers(0, 17), min_size=60, max_size=200))
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_episode_stats_are_the_summed_rewards_when_the_agent_sees_every_frame(config, seed, actions):
    # No clipping, no life episodes, no no-ops, no FIRE: the agent sees every frame of every game,
    # so info["episode"] must be the sum of its rewards, and its length the frames of its steps.
    kwargs = dict(config)
    env = AleNativeVecEnv(kwargs.pop("game"), kwargs.pop("num_envs"), seed=seed, episodic_life=False,
                          reward_clipping=False, noop_max=0, use_fire_reset=False, **kwargs)
    n, skip = env.num_envs, config["frameskip"]
    env.reset()
    returns, steps, games = np.zeros(n), np.zeros(n, dtype=np.int64), 0
    for raw in actions:
        _, rewards, dones, infos = env.step(np.full(n, raw % env.action_space.n, dtype=np.int64))
        returns += rewards
        steps += 1
        for i, info in enumerate(infos):
            assert ("episode" in info) == dones[i], "every done ends a game, and only a done"
            if dones[i]:
                assert info["episode"]["r"] == returns[i]
                assert skip * (steps[i] - 1) < info["episode"]["l"] <= skip * steps[i]
                returns[i], steps[i], games = 0, 0, games + 1
    env.close()
    assert games > 0 or len(actions) * skip < config["max_num_frames_per_episode"]
