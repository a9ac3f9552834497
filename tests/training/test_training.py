"""SB3 algorithms train, save, load, predict and evaluate through the native env."""

import warnings

import numpy as np
import pytest
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecEnvWrapper, VecTransposeImage, VecVideoRecorder

from helpers import make_reference
from sb3_ale_vec import AleNativeVecEnv

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("channels_last", [False, True])
def test_ppo_learns_saves_loads_and_predicts(tmp_path, channels_last):
    env = AleNativeVecEnv("breakout", 4, seed=0, channels_last=channels_last)
    model = PPO("CnnPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256
    if channels_last:  # SB3 transposes channel-last images itself, as for make_atari_env
        assert isinstance(model.get_env(), VecTransposeImage)
    else:
        assert model.get_env() is env
    model.save(tmp_path / "ppo")
    loaded = PPO.load(tmp_path / "ppo", env=env)
    obs = env.reset()
    actions, _ = loaded.predict(obs, deterministic=True)
    assert actions.shape == (4,) and np.array_equal(actions, model.predict(obs, deterministic=True)[0])
    env.close()


class TerminalRecorder(VecEnvWrapper):
    """Keeps every terminal_observation the env hands out, in step order, then env order."""

    def __init__(self, venv):
        super().__init__(venv)
        self.terminals = []

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.terminals += [infos[i]["terminal_observation"] for i in np.flatnonzero(dones)]
        return obs, rewards, dones, infos


def test_dqn_stores_terminal_observations_as_next_observations():
    # Short truncated episodes: DQN's replay buffer must hold each episode's terminal stack as the
    # next observation of its last transition (SB3 reads it from info["terminal_observation"]),
    # not the first observation of the next episode.
    env = TerminalRecorder(AleNativeVecEnv("pong", 2, seed=0, max_num_frames_per_episode=200))
    model = DQN("CnnPolicy", env, buffer_size=2000, learning_starts=100, train_freq=4, seed=0)
    model.learn(300)
    buffer = model.replay_buffer
    positions, envs = np.nonzero(buffer.timeouts[:buffer.pos])
    stored = [buffer.next_observations[p, e] for p, e in zip(positions, envs)]
    assert len(stored) >= 4 and len(stored) == len(env.terminals)
    for p, e, terminal, next_obs in zip(positions, envs, env.terminals, stored):
        assert np.array_equal(next_obs, terminal)
        assert not np.array_equal(next_obs, buffer.observations[p + 1, e])  # the reset's obs differs
    env.close()


def test_model_trained_on_sb3_pipeline_runs_here(tmp_path):
    ref = make_reference("breakout", 2, seed=0)
    model = PPO("CnnPolicy", ref, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    model.learn(32)
    model.save(tmp_path / "ref_model")
    ours = AleNativeVecEnv("breakout", 2, seed=0)
    loaded = PPO.load(tmp_path / "ref_model", env=ours)  # the spaces must be equal for this to work
    obs = ours.reset()
    assert np.array_equal(loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0])
    loaded.learn(64)
    ref.close()
    ours.close()


def test_evaluate_policy_reports_true_full_game_scores():
    """Same seed, same deterministic policy: the same full-game (unclipped) scores as SB3's pipeline."""
    ref = make_reference("space_invaders", 1, seed=7)
    model = PPO("CnnPolicy", ref, seed=0)
    results = []
    for env in (ref, AleNativeVecEnv("space_invaders", 1, seed=7)):
        env.seed(7)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*Monitor.*")  # evaluate_policy's "not wrapped" warning
            rewards, lengths = evaluate_policy(model, env, n_eval_episodes=2, deterministic=True,
                                               return_episode_rewards=True)
        results.append((rewards, lengths))
        env.close()
    assert results[0] == results[1]
    rewards, lengths = results[1]
    assert max(rewards) > 30  # unclipped: SpaceInvaders aliens are worth 5 to 30 points
    assert min(lengths) > 500  # emulator frames of a whole game, all lives


def test_video_recorder_writes_an_mp4(tmp_path):
    pytest.importorskip("moviepy")
    env = VecVideoRecorder(AleNativeVecEnv("pong", 2, seed=0), str(tmp_path), record_video_trigger=lambda s: s == 0,
                           video_length=40, name_prefix="pong")
    env.reset()
    for _ in range(45):
        env.step(np.zeros(2, dtype=np.int64))
    env.close()
    videos = list(tmp_path.glob("pong*.mp4"))
    assert videos and videos[0].stat().st_size > 1000
