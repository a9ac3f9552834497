"""Record a video of a policy playing, with SB3's VecVideoRecorder over sb3-ale-vec (needs moviepy)."""

import argparse
from pathlib import Path

import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecVideoRecorder

from sb3_ale_vec import AleNativeVecEnv

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--game", default="breakout")
parser.add_argument("--model", help="a saved PPO model (.zip); a random policy if left out")
parser.add_argument("--length", type=int, default=500, help="agent steps to record")
parser.add_argument("--folder", default="videos")
args = parser.parse_args()

env = VecVideoRecorder(AleNativeVecEnv(args.game, 1, seed=0), args.folder,
                       record_video_trigger=lambda step: step == 0, video_length=args.length,
                       name_prefix=args.game)
model = PPO.load(args.model) if args.model else None
obs = env.reset()
for _ in range(args.length + 1):
    actions = model.predict(obs)[0] if model else np.array([env.action_space.sample()])
    obs, _, _, _ = env.step(actions)
env.close()
print("wrote", ", ".join(str(p) for p in sorted(Path(args.folder).glob(f"{args.game}*.mp4"))))
