"""The SB3 VecEnv contract of AleNativeVecEnv, checked against SB3's own Atari pipeline."""

import os
import time
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from stable_baselines3.common import atari_wrappers
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack

import sb3_ale_vec
from helpers import compare_rollouts, make_pair, make_reference
from sb3_ale_vec import AleNativeVecEnv


@pytest.fixture
def env():
    env = AleNativeVecEnv("breakout", 2, seed=0)
    yield env
    env.close()


def test_is_a_vec_env_built_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = AleNativeVecEnv("breakout", 1)
    assert isinstance(env, VecEnv) and env.num_envs == 1 and type(env.num_envs) is int
    assert not hasattr(env, "no_such_attribute")
    env.close()


@pytest.mark.parametrize("kwargs, shape", [
    ({}, (4, 84, 84)),
    ({"channels_last": True}, (84, 84, 4)),
    ({"stack_num": 1}, (1, 84, 84)),
    ({"grayscale": False}, (12, 84, 84)),
    ({"grayscale": False, "channels_last": True, "img_height": 64, "img_width": 48}, (64, 48, 12)),
])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_observation_space(kwargs, shape):
    env = AleNativeVecEnv("pong", 2, **kwargs)
    assert env.observation_space == spaces.Box(0, 255, shape, np.uint8)
    assert is_image_space(env.observation_space)
    assert env.reset().shape == (2, *shape)
    env.close()


def test_spaces_metadata_and_meanings_equal_the_reference():
    for game in ("breakout", "ms_pacman"):
        ref = make_reference(game, 1, seed=0)
        env = AleNativeVecEnv(game, 1)
        assert env.observation_space == ref.observation_space
        assert env.action_space == ref.action_space
        assert env.get_attr("metadata") == ref.get_attr("metadata")
        assert env.metadata["render_fps"] == 30
        assert env.env_method("get_action_meanings") == ref.env_method("get_action_meanings")
        for wrapper in (Monitor, atari_wrappers.AtariWrapper, atari_wrappers.NoopResetEnv,
                        atari_wrappers.MaxAndSkipEnv, atari_wrappers.EpisodicLifeEnv,
                        atari_wrappers.FireResetEnv, atari_wrappers.WarpFrame, atari_wrappers.ClipRewardEnv,
                        atari_wrappers.StickyActionEnv, VecFrameStack):
            assert env.env_is_wrapped(wrapper) == ref.env_is_wrapped(wrapper), (game, wrapper)
        ref.close()
        env.close()
    assert AleNativeVecEnv("breakout", 1, full_action_space=True).action_space == spaces.Discrete(18)


@pytest.mark.parametrize("name", ["breakout", "Breakout", "BreakoutNoFrameskip-v4", "ALE/Breakout-v5"])
def test_game_names(name):
    env = AleNativeVecEnv(name, 1)
    assert env.game == "breakout" and env.get_attr("spec")[0].id == "BreakoutNoFrameskip-v4"
    env.close()


def test_unknown_game_lists_the_closest_ids():
    with pytest.raises(ValueError, match="Closest ROM ids: 'breakout'"):
        AleNativeVecEnv("brekout", 1)


@pytest.mark.tsan
def test_step_returns_fresh_owned_arrays(env):
    env.reset()
    actions = np.array([1, 1])
    obs, rewards, dones, infos = env.step(actions)
    kept = obs.copy(), rewards.copy(), dones.copy()
    for _ in range(30):
        env.step(actions)
    for before, now in zip(kept, (obs, rewards, dones)):
        assert np.array_equal(before, now)
        assert now.flags.writeable
    assert rewards.flags.c_contiguous and dones.flags.c_contiguous
    # VecTransposeImage's view of VecFrameStack's channels-last memory, as in SB3's pipeline
    assert obs.transpose(0, 2, 3, 1).flags.c_contiguous
    assert obs.dtype == np.uint8 and rewards.dtype == np.float32 and dones.dtype == np.bool_
    assert isinstance(infos, list) and all(isinstance(i, dict) for i in infos)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.tsan
def test_terminal_observation_on_every_done_only():
    env = AleNativeVecEnv("breakout", 2, seed=3)
    env.reset()
    seen = 0
    for _ in range(400):
        _, _, dones, infos = env.step(np.random.default_rng(0).integers(0, 4, 2))
        for done, info in zip(dones, infos):
            assert ("terminal_observation" in info) == done
            assert isinstance(info["TimeLimit.truncated"], bool)
            if done:
                seen += 1
                assert info["terminal_observation"].shape == env.observation_space.shape
    assert seen > 0
    env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.tsan
def test_seeds_are_used_once_and_reproduce_runs():
    def rollout(env, seed):
        env.seed(seed)
        frames = [env.reset()]
        assert env._seeds == [None] * env.num_envs and env._options == [{}] * env.num_envs
        rng = np.random.default_rng(0)
        frames += [env.step(rng.integers(0, 4, env.num_envs))[0] for _ in range(200)]
        return np.stack(frames)

    env = AleNativeVecEnv("ms_pacman", 3)
    a, b, c = rollout(env, 5), rollout(AleNativeVecEnv("ms_pacman", 3), 5), rollout(env, 6)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_same_seed_same_trajectory_within_a_batch():
    env = AleNativeVecEnv("qbert", 2)
    env._seeds = [11, 11]
    env.reset()
    for _ in range(300):
        obs, rewards, dones, _ = env.step(np.array([3, 3]))
        assert np.array_equal(obs[0], obs[1]) and rewards[0] == rewards[1] and dones[0] == dones[1]
    env.close()


def _thread_cpus(name: str | None = None) -> dict[int, str]:
    """Cpus_allowed_list of each thread of this process (named `name`, if given)."""
    cpus = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/comm") as f:
            if name is not None and f.read().strip() != name:
                continue
        with open(f"/proc/self/task/{task}/status") as f:
            cpus[int(task)] = next(line.split()[1] for line in f if line.startswith("Cpus_allowed_list"))
    return cpus


def test_thread_affinity_offset_pins_each_worker_to_its_core():
    # Three threads: two workers and the caller, which is not pinned; and two threads at the lowest priority
    # for the resets computed ahead, pinned as the workers are.
    before = _thread_cpus()
    env = AleNativeVecEnv("pong", 4, num_threads=3, thread_affinity_offset=1)
    deadline = time.monotonic() + 30  # threads name and lower themselves as they start: on a loaded machine, later
    while True:
        workers = {t: c for t, c in _thread_cpus("sb3ale-worker").items() if t not in before}
        idle = {t: c for t, c in _thread_cpus("sb3ale-idle").items() if t not in before}
        policies = {(os.sched_getscheduler(t), os.getpriority(os.PRIO_PROCESS, t)) for t in idle}
        if (len(workers) == 2 and len(idle) == 2 and policies == {(os.SCHED_BATCH, 19)}) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    env.close()
    cores = os.cpu_count()
    expected = sorted(str((1 + t) % cores) for t in range(2) if (1 + t) % cores in os.sched_getaffinity(0))
    assert len(workers) == 2 and expected and sorted(workers.values()) == expected, (workers, expected)
    assert sorted(idle.values()) == expected and policies == {(os.SCHED_BATCH, 19)}, (idle, policies)


@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_threads_follow_the_process_affinity_mask_not_the_machine():
    # What Ray, Kubernetes or Slurm give a process is its affinity mask: one CPU here means one thread.
    import subprocess
    import sys

    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
            "from sb3_ale_vec import AleNativeVecEnv\n"
            "print(AleNativeVecEnv('pong', 4).num_threads)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "1", result.stderr[-2000:]
    env = AleNativeVecEnv("pong", 4)
    assert env.num_threads == min(4, len(os.sched_getaffinity(0)))
    env.close()


@pytest.mark.tsan
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_results_do_not_depend_on_the_thread_count_or_pinning():
    runs = []
    for threads, offset in ((1, -1), (2, -1), (4, 0)):
        env = AleNativeVecEnv("seaquest", 6, seed=2, num_threads=threads, thread_affinity_offset=offset)
        assert env.num_threads == threads
        rng = np.random.default_rng(1)
        obs = [env.reset()]
        for _ in range(300):
            o, r, d, _ = env.step(rng.integers(0, env.action_space.n, 6))
            obs.append(o)
        runs.append(np.stack(obs))
        env.close()
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_attributes(env):
    assert env.get_attr("render_mode") == ["rgb_array"] * 2
    assert env.get_attr("spec", 1)[0].id == "BreakoutNoFrameskip-v4"
    with pytest.raises(AttributeError, match="no attribute 'no_such_attribute'"):
        env.get_attr("no_such_attribute")
    assert env.has_attr("render_mode") and not env.has_attr("action_masks")
    env.set_attr("note", 7, indices=[1])
    assert env.get_attr("note", indices=[1]) == [7]
    with pytest.raises(AttributeError, match="fixed"):
        env.set_attr("frameskip", 2)
    with pytest.raises(AttributeError, match="no method 'no_such_method'"):
        env.env_method("no_such_method")


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_images_equal_the_reference_screens():
    ref, ours = make_pair("pong", n_envs=2, seed=4)
    compare_rollouts(ref, ours, 60)
    for a, b in zip(ref.get_images(), ours.get_images()):
        assert b.shape == (210, 160, 3) and b.dtype == np.uint8 and np.array_equal(a, b)
    assert np.array_equal(ref.render(), ours.render())
    ref.close()
    ours.close()


def test_no_render_mode_gives_no_images():
    env = AleNativeVecEnv("pong", 1, render_mode=None)
    with pytest.warns(UserWarning, match="render mode"):
        assert env.get_images() == [None]
    env.close()


@pytest.mark.tsan
def test_close_is_idempotent_and_final(env):
    env.reset()
    env.step_async(np.array([0, 1]))
    env.close()  # with a step in flight
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.array([0, 0]))


BAD_ACTIONS = [
    (np.array([0.0, 1.0]), TypeError, "integers"),
    (np.array([True, False]), TypeError, "integers"),
    (np.array([0, 1], dtype=object), TypeError, "integers"),
    (np.array([0, 1, 2]), ValueError, "shape"),
    (np.array([[0, 1]]), ValueError, "shape"),
    (np.array([0, 4]), ValueError, "out of range"),
    (np.array([-1, 0]), ValueError, "out of range"),
]


@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_bad_actions_raise_and_change_nothing():
    # One reference for every bad action (each its own pair of envs cost 4 ROM loads): after each refusal
    # both take the same good step, and ours must still equal the reference.
    ref, ours = make_pair("breakout", n_envs=2, seed=9)
    try:
        compare_rollouts(ref, ours, 20)
        for k, (actions, error, match) in enumerate(BAD_ACTIONS):
            with pytest.raises(error, match=match):
                ours.step(actions)
            good = np.array([1 + k % 3, 2])
            assert np.array_equal(ref.step(good)[0], ours.step(good)[0]), (actions, error)
    finally:
        ref.close()
        ours.close()


def test_actions_of_shape_n_by_1_and_any_int_dtype(env):
    twin = AleNativeVecEnv("breakout", 2, seed=0)  # given the same actions as int64 (n,) arrays
    assert np.array_equal(env.reset(), twin.reset())
    for actions in (np.array([[1], [2]], dtype=np.int8), np.array([3, 0], dtype=np.uint16), [1, 1]):
        got, expected = env.step(actions), twin.step(np.asarray(actions, dtype=np.int64).reshape(2))
        assert all(np.array_equal(a, b) for a, b in zip(got[:3], expected[:3]))
    twin.close()


def test_step_wait_without_step_async(env):
    env.reset()
    with pytest.raises(RuntimeError, match="without step_async"):
        env.step_wait()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_envs": 0}, ValueError, "num_envs"),
    ({"num_envs": 2.0}, TypeError, "num_envs"),
    ({"frameskip": 0}, ValueError, "frameskip"),
    ({"stack_num": 0}, ValueError, "stack_num"),
    ({"img_height": 0}, ValueError, "img_height"),
    ({"noop_max": -1}, ValueError, "noop_max"),
    ({"repeat_action_probability": 1.5}, ValueError, "repeat_action_probability"),
    ({"num_threads": -2}, ValueError, "num_threads"),
    ({"preset": "dopamine"}, ValueError, "preset"),
    ({"render_mode": "human"}, ValueError, "render_mode"),
    ({"episodic_life": "yes"}, TypeError, "episodic_life"),
    ({"game": "ms_pacman", "use_fire_reset": True}, ValueError, "FIRE"),
])
def test_bad_options_raise(kwargs, error, match):
    args = {"game": "breakout", "num_envs": 1, **kwargs}
    with pytest.raises(error, match=match):
        AleNativeVecEnv(args.pop("game"), args.pop("num_envs"), **args)


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), ("7", TypeError)])
def test_bad_seeds_raise(env, seed, error):
    env._seeds = [seed, None]
    with pytest.raises(error, match="seed"):
        env.reset()


def test_engine_built_for_another_ale_py_is_refused(monkeypatch):
    monkeypatch.setattr(sb3_ale_vec, "_distribution_version", lambda name: "0.0.1")
    with pytest.raises(ImportError, match=f"ale-py=={sb3_ale_vec._engine.ALE_VERSION}"):
        sb3_ale_vec._check_ale_py()
