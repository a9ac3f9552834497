"""`bench --ppo`: SB3 PPO CnnPolicy throughput on this engine against make_atari_env + SubprocVecEnv.

Each run is a fresh child process; the two backends take turns. Reports rollout collection steps/s
and whole learn() steps/s (rollouts plus gradient updates), medians over the runs.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any


def _measure_ppo(backend: str, game: str, n: int, timesteps: int) -> dict[str, float]:
    """SB3 PPO CnnPolicy: rollout collection steps/s and whole learn() steps/s."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    if backend == "sb3_ale_vec":
        from sb3_ale_vec import AleNativeVecEnv

        env = AleNativeVecEnv(game, n, seed=0)
    else:
        env = _sb3_subproc(game, n)

    class Timer(BaseCallback):
        rollout_seconds = 0.0

        def _on_rollout_start(self) -> None:
            self.t = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.rollout_seconds += time.perf_counter() - self.t

        def _on_step(self) -> bool:
            return True

    timer = Timer()
    model = PPO("CnnPolicy", env, n_steps=128, n_epochs=4, batch_size=256, seed=0)
    start = time.perf_counter()
    model.learn(timesteps, callback=timer)
    total = time.perf_counter() - start
    env.close()
    return {"rollout_steps_per_s": model.num_timesteps / timer.rollout_seconds,
            "learn_steps_per_s": model.num_timesteps / total}


def _sb3_subproc(game: str, n: int):
    import ale_py
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecFrameStack

    from sb3_ale_vec.games import camel_name

    gym.register_envs(ale_py)
    return VecFrameStack(make_atari_env(f"{camel_name(game)}NoFrameskip-v4", n_envs=n, seed=0,
                                        vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "fork"}), 4)


def _in_child(backend: str, game: str, n: int, timesteps: int) -> dict[str, float] | None:
    code = (f"import json, sb3_ale_vec.bench.ppo as b; "
            f"print('RESULT', json.dumps(b._measure_ppo({backend!r}, {game!r}, {n}, {timesteps})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        print(f"  {backend} failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1][len("RESULT "):])


def main_ppo(game: str, n: int, timesteps: int, repeats: int) -> dict[str, Any]:
    backends = ["sb3_ale_vec", "sb3 subproc"]
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _ in range(repeats):
        for backend in backends:
            result = _in_child(backend, game, n, timesteps)
            if result is not None:
                runs[backend].append(result)
    print(f"\nSB3 PPO CnnPolicy on {game}, num_envs={n}, {timesteps} timesteps x {repeats}")
    print(f"{'backend':<14} {'rollout steps/s':>16} {'learn() steps/s':>16}")
    for backend, results in runs.items():
        if results:
            rollout = statistics.median(r["rollout_steps_per_s"] for r in results)
            learn = statistics.median(r["learn_steps_per_s"] for r in results)
            print(f"{backend:<14} {rollout:>16,.0f} {learn:>16,.0f}")
    if all(runs.values()):
        ratio = [statistics.median(r[k] for r in runs["sb3_ale_vec"]) / statistics.median(r[k] for r in runs["sb3 subproc"])
                 for k in ("rollout_steps_per_s", "learn_steps_per_s")]
        print(f"{'ours / subproc':<14} {ratio[0]:>15.2f}x {ratio[1]:>15.2f}x")
    return {"game": game, "num_envs": n, "timesteps": timesteps, "ppo": runs}
