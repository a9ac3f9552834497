"""Property-based: random valid configurations and action sequences keep every invariant."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sb3_ale_vec import AleNativeVecEnv

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
    plain = not (config["episodic_life"] or config["reward_clipping"] or config["noop_max"]) \
        and (config["use_fire_reset"] is False or "FIRE" not in env.get_action_meanings())
    returns, frames = np.zeros(n), np.zeros(n, dtype=np.int64)
    for step, raw in enumerate(actions):
        a = (np.asarray(raw[:n] + [0] * (n - len(raw[:n]))) % env.action_space.n).astype(np.int64)
        obs, rewards, dones, infos = env.step(a)
        assert obs.shape == (n, *space.shape) and obs.dtype == np.uint8 and obs.flags.writeable
        assert rewards.shape == (n,) and rewards.dtype == np.float32 and dones.dtype == np.bool_
        if config["reward_clipping"]:
            assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        returns += rewards
        for i, info in enumerate(infos):
            assert dones[i] == ("terminal_observation" in info), (step, i)
            assert isinstance(info["TimeLimit.truncated"], bool)
            assert not info["TimeLimit.truncated"] or dones[i]
            if dones[i]:
                terminal = info["terminal_observation"]
                assert terminal.shape == space.shape and terminal.dtype == np.uint8
            if "episode" in info:
                assert dones[i]
                if plain:  # no reset sequences, no clipping, no life episodes: the agent saw every reward
                    assert info["episode"]["r"] == returns[i]
                    assert config["frameskip"] * (frames[i]) < info["episode"]["l"] <= config["frameskip"] * (frames[i] + 1)
                returns[i], frames[i] = 0, -1
            elif dones[i] and plain:
                raise AssertionError("with plain settings every done is a game end")
        frames += 1
        trace.append(obs)
    env.close()
    return np.stack(trace)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, seed=st.integers(0, 2**40),
       actions=st.lists(st.lists(st.integers(0, 17), min_size=1, max_size=3), min_size=1, max_size=250))
def test_invariants_and_determinism(config, seed, actions):
    first = _rollout(config, seed, actions)
    assert np.array_equal(first, _rollout(config, seed, actions))
