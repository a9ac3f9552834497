"""DQN on Atari through sb3-ale-vec: every done carries terminal_observation, which DQN stores."""

import argparse
import time

from stable_baselines3 import DQN

from sb3_ale_vec import AleNativeVecEnv

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--game", default="pong")
parser.add_argument("--num-envs", type=int, default=4)
parser.add_argument("--timesteps", type=int, default=50_000)
parser.add_argument("--buffer-size", type=int, default=100_000)
args = parser.parse_args()

env = AleNativeVecEnv(args.game, args.num_envs, seed=0)
# rl-zoo3's Atari DQN settings, with a smaller buffer.
model = DQN("CnnPolicy", env, buffer_size=args.buffer_size, learning_rate=1e-4, batch_size=32,
            learning_starts=min(100_000, args.timesteps // 2), target_update_interval=1000, train_freq=4,
            gradient_steps=1, exploration_fraction=0.1, exploration_final_eps=0.01,
            optimize_memory_usage=False, seed=0, verbose=0)
start = time.perf_counter()
model.learn(args.timesteps)
elapsed = time.perf_counter() - start
print(f"trained {model.num_timesteps} steps in {elapsed:.1f}s: {model.num_timesteps / elapsed:,.0f} steps/s")
print(f"replay buffer holds {model.replay_buffer.size()} transitions x {args.num_envs} envs")
env.close()
