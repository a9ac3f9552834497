"""The one-line switch: SB3's Atari recipe with make_atari_env replaced by make_ale_vec_env."""

import argparse
import time

from stable_baselines3 import A2C
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.vec_env import VecFrameStack

from sb3_ale_vec import make_ale_vec_env

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--env", default="PongNoFrameskip-v4")
parser.add_argument("--n-envs", type=int, default=4)
parser.add_argument("--timesteps", type=int, default=20_000)
parser.add_argument("--reference", action="store_true", help="run SB3's own make_atari_env instead")
args = parser.parse_args()

make = make_atari_env if args.reference else make_ale_vec_env  # <- the only change
env = VecFrameStack(make(args.env, n_envs=args.n_envs, seed=0), n_stack=4)

model = A2C("CnnPolicy", env, seed=0, verbose=0)
start = time.perf_counter()
model.learn(total_timesteps=args.timesteps)
elapsed = time.perf_counter() - start
print(f"{make.__name__}: {model.num_timesteps} steps in {elapsed:.1f}s, {model.num_timesteps / elapsed:,.0f} steps/s")
env.close()
