"""PPO with CnnPolicy on an Atari game through sb3-ale-vec, with rl-zoo3's Atari hyperparameters."""

import argparse
import time

from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy

from sb3_ale_vec import AleNativeVecEnv

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--game", default="breakout")
parser.add_argument("--num-envs", type=int, default=8)
parser.add_argument("--timesteps", type=int, default=100_000)
parser.add_argument("--eval-episodes", type=int, default=5)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--progress-bar", action="store_true", help="needs `pip install tqdm rich`")
args = parser.parse_args()

env = AleNativeVecEnv(args.game, args.num_envs, seed=args.seed)
model = PPO("CnnPolicy", env, n_steps=128, n_epochs=4, batch_size=256, learning_rate=2.5e-4, clip_range=0.1,
            vf_coef=0.5, ent_coef=0.01, seed=args.seed, verbose=0)
start = time.perf_counter()
model.learn(args.timesteps, progress_bar=args.progress_bar)
elapsed = time.perf_counter() - start
print(f"trained {model.num_timesteps} steps in {elapsed:.1f}s: {model.num_timesteps / elapsed:,.0f} steps/s")

# Full-game, unclipped scores: the env reports them as SB3's Monitor would.
eval_env = AleNativeVecEnv(args.game, 1, seed=args.seed + 1000)
mean, std = evaluate_policy(model, eval_env, n_eval_episodes=args.eval_episodes)
print(f"evaluation over {args.eval_episodes} games: {mean:.1f} +/- {std:.1f}")
env.close()
eval_env.close()
