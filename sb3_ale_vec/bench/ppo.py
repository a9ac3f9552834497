"""`bench --ppo`: SB3 PPO CnnPolicy throughput on this engine against make_atari_env + SubprocVecEnv.

Each run is a fresh child process; the two backends take turns. Reports rollout collection steps/s,
whole learn() steps/s (rollouts plus gradient updates) and where a rollout step's time goes, medians
over the runs. ``--device cuda`` puts the policy on a GPU (default: SB3's "auto").
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any


PARTS = ("env", "obs_to_tensor", "forward", "buffer", "other")  # where a rollout step's time goes


def _measure_ppo(backend: str, game: str, n: int, timesteps: int, device: str = "auto") -> dict[str, float]:
    """SB3 PPO CnnPolicy (rl-zoo3's Atari settings): rollout and whole learn() steps/s, and a rollout
    step's time by part: the env's step, SB3's obs_as_tensor, the policy's forward, the rollout
    buffer's add, and the rest of collect_rollouts (SB3's Python: actions to numpy, infos, callbacks)."""
    import stable_baselines3.common.on_policy_algorithm as on_policy
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    vec = None
    if backend in ("sb3_ale_vec", "sb3_ale_vec inline"):
        from sb3_ale_vec import AleNativeVecEnv

        env = AleNativeVecEnv(game, n, seed=0)
        vec = env._native._vec
        if backend == "sb3_ale_vec inline":  # the A/B: every reset made when its episode ends
            vec._reset_ahead = False
    else:
        env = _sb3_subproc(game, n)

    seconds = dict.fromkeys(("rollout", *PARTS), 0.0)
    model = PPO("CnnPolicy", env, n_steps=128, n_epochs=4, batch_size=256, learning_rate=2.5e-4, clip_range=0.1,
                ent_coef=0.01, vf_coef=0.5, seed=0, device=device)
    sync = torch.cuda.synchronize if model.device.type == "cuda" else (lambda: None)

    def timed(fn, part):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            sync()  # a GPU's work counts where it was asked for
            seconds[part] += time.perf_counter() - start
            return out
        return wrapper

    class Timer(BaseCallback):
        def _on_rollout_start(self) -> None:
            sync()
            self.t = time.perf_counter()

        def _on_rollout_end(self) -> None:
            seconds["rollout"] += time.perf_counter() - self.t

        def _on_step(self) -> bool:
            return True

    model.env.step = timed(model.env.step, "env")
    model.policy.forward = timed(model.policy.forward, "forward")  # only collect_rollouts calls forward
    model.rollout_buffer.add = timed(model.rollout_buffer.add, "buffer")
    to_tensor = on_policy.obs_as_tensor
    on_policy.obs_as_tensor = timed(to_tensor, "obs_to_tensor")
    try:
        start = time.perf_counter()
        model.learn(timesteps, callback=Timer())
        total = time.perf_counter() - start
    finally:
        on_policy.obs_as_tensor = to_tensor
    # Game resets (SB3's dones count lives lost too) and those swapped in, prepared ahead.
    resets = {"resets": vec._game_resets, "swapped": vec._resets_taken} if vec is not None else {}
    env.close()
    steps = model.num_timesteps / n  # vectorized steps
    seconds["other"] = seconds["rollout"] - sum(seconds[p] for p in PARTS[:-1])
    return {"rollout_steps_per_s": model.num_timesteps / seconds["rollout"],
            "learn_steps_per_s": model.num_timesteps / total, "device": model.device.type, **resets,
            **{f"ms_{p}": 1000 * seconds[p] / steps for p in PARTS}}


def _sb3_subproc(game: str, n: int):
    import ale_py
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecFrameStack

    from sb3_ale_vec.games import camel_name

    gym.register_envs(ale_py)
    return VecFrameStack(make_atari_env(f"{camel_name(game)}NoFrameskip-v4", n_envs=n, seed=0,
                                        vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "fork"}), 4)


def call_in_child(module: str, function: str, args: tuple, label: str) -> Any:
    """``module.function(*args)`` in a fresh Python process, its JSON result; None, with a note, if it fails."""
    code = f"import json, {module} as m; print('RESULT', json.dumps(m.{function}(*{args!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        print(f"  {label} failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1][len("RESULT "):])


def main_ppo(game: str, n: int, timesteps: int, repeats: int, device: str = "auto") -> dict[str, Any]:
    backends = ["sb3_ale_vec", "sb3_ale_vec inline", "sb3 subproc"]
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _ in range(repeats):
        for backend in backends:
            result = call_in_child(__name__, "_measure_ppo", (backend, game, n, timesteps, device), backend)
            if result is not None:
                runs[backend].append(result)
    done = {b: r for b, r in runs.items() if r}
    devices = sorted({r["device"] for results in done.values() for r in results})
    print(f"\nSB3 PPO CnnPolicy on {game}, num_envs={n}, {timesteps} timesteps x {repeats}, device {'/'.join(devices)}")
    median = {b: {k: statistics.median(r[k] for r in results) for k in results[0] if k != "device"}
              for b, results in done.items()}
    print(f"{'backend':<18} {'rollout steps/s':>16} {'learn() steps/s':>16} {'game resets':>12} {'swapped':>8}")
    for backend, m in median.items():
        counts = (f" {sum(r['resets'] for r in done[backend]):>12} {sum(r['swapped'] for r in done[backend]):>8}"
                  if "resets" in m else "")
        print(f"{backend:<18} {m['rollout_steps_per_s']:>16,.0f} {m['learn_steps_per_s']:>16,.0f}{counts}")
    if "sb3_ale_vec" in median and "sb3 subproc" in median:
        ours, theirs = median["sb3_ale_vec"], median["sb3 subproc"]
        print(f"{'ours / subproc':<18} {ours['rollout_steps_per_s'] / theirs['rollout_steps_per_s']:>15.2f}x "
              f"{ours['learn_steps_per_s'] / theirs['learn_steps_per_s']:>15.2f}x")
    print(f"\nA rollout step (all {n} envs), ms by part (medians):")
    print(f"{'backend':<18}" + "".join(f"{p:>15}" for p in PARTS) + f"{'total':>10}")
    for backend, m in median.items():
        print(f"{backend:<18}" + "".join(f"{m['ms_' + p]:>15.2f}" for p in PARTS) +
              f"{sum(m['ms_' + p] for p in PARTS):>10.2f}")
    return {"game": game, "num_envs": n, "timesteps": timesteps, "device": devices, "ppo": runs}
