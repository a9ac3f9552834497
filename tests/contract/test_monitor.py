"""True game scores everywhere SB3 reports them: monitor files, the logger, evaluation, VecNormalize."""

import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import EvalCallback
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.monitor import load_results
from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor, VecNormalize

from helpers import compare_rollouts, make_reference
from sb3_ale_vec import AleNativeVecEnv, AleVecMonitor, make_ale_vec_env


@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_monitor_files_equal_make_atari_env_ones(tmp_path):
    kwargs = {"n_envs": 2, "seed": 1, "start_index": 3}
    ref = VecFrameStack(make_atari_env("BreakoutNoFrameskip-v4", monitor_dir=str(tmp_path / "ref"), **kwargs), 4)
    ours = VecFrameStack(make_ale_vec_env("BreakoutNoFrameskip-v4", monitor_dir=str(tmp_path / "ours"), **kwargs), 4)
    compare_rollouts(ref, ours, 800)
    ref.close()
    ours.close()
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == ["3.monitor.csv", "4.monitor.csv"]
    expected, got = load_results(str(tmp_path / "ref")), load_results(str(tmp_path / "ours"))
    assert len(got) > 2
    assert sorted(zip(expected["r"], expected["l"])) == sorted(zip(got["r"], got["l"]))


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_one_file_with_info_keywords(tmp_path):
    env = AleVecMonitor(AleNativeVecEnv("breakout", 2, seed=0), filename=str(tmp_path / "run"),
                        info_keywords=("lives",))
    env.reset()
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(500):
        _, _, _, infos = env.step(rng.integers(0, 4, 2))
        episodes += [info["episode"] for info in infos if "episode" in info]
    env.close()
    results = load_results(str(tmp_path))
    assert list(results["r"]) == [e["r"] for e in episodes] and list(results["l"]) == [e["l"] for e in episodes]
    assert "lives" in results.columns


def test_sb3_vec_monitor_gets_a_warning_with_the_fix():
    with pytest.warns(UserWarning, match="AleVecMonitor"):
        VecMonitor(AleNativeVecEnv("pong", 1))


@pytest.mark.slow
def test_ppo_logs_the_same_episodes_as_with_sb3s_pipeline():
    """Same seeds, same policy: PPO's ep_info_buffer (rollout/ep_rew_mean) holds the same games."""
    buffers = []
    for env in (make_reference("breakout", 2, seed=0), AleNativeVecEnv("breakout", 2, seed=0)):
        model = PPO("CnnPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0)
        model.learn(512)
        buffers.append([(e["r"], e["l"]) for e in model.ep_info_buffer])
        env.close()
    assert buffers[0] and buffers[0] == buffers[1]


@pytest.mark.slow
def test_vec_normalize_and_eval_callback_see_true_scores(tmp_path):
    # Images stay uint8 (as rl-zoo's Atari settings: normalize rewards only).
    env = VecNormalize(AleNativeVecEnv("breakout", 2, seed=0), norm_obs=False)
    eval_env = VecNormalize(AleNativeVecEnv("breakout", 1, seed=100), norm_obs=False, training=False,
                            norm_reward=False)
    callback = EvalCallback(eval_env, n_eval_episodes=1, eval_freq=64, deterministic=False, verbose=0,
                            log_path=str(tmp_path))
    model = PPO("CnnPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(384, callback=callback)
    assert all(e["l"] > 100 and float(e["r"]).is_integer() for e in model.ep_info_buffer)  # frames, raw points
    assert callback.evaluations_length and min(callback.evaluations_length[-1]) > 100
    env.close()
    eval_env.close()
