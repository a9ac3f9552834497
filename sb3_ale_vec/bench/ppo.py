"""`bench --ppo`: SB3 PPO CnnPolicy throughput on this engine against make_atari_env + SubprocVecEnv.

Paired rounds: in each round four fresh child processes run one after another, the order rotated
round to round: this engine with resets ahead (``sb3_ale_vec``), the same with every reset made when
its episode ends (``sb3_ale_vec inline``), SB3's ``make_atari_env`` + ``SubprocVecEnv`` +
``VecFrameStack`` (``sb3 subproc``), and ``policy alone``: the same PPO on an env that hands back
fixed observations at no cost, so the same forward passes, buffer and updates with no emulation. A
busy machine slows a round's four alike, so the ratios are taken within each round (rollout and
whole learn() steps/s: ahead/inline, ours/subproc, ours/policy alone; the env's part of a rollout
step: ahead/inline, ours/subproc) and reported as medians over the rounds with their min and max;
steps/s and where a rollout step's time goes are medians too.
``--device cuda`` puts the policy on a GPU (default: SB3's "auto").
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any


PARTS = ("env", "obs_to_tensor", "forward", "buffer", "other")  # where a rollout step's time goes
BACKENDS = ("sb3_ale_vec", "sb3_ale_vec inline", "sb3 subproc", "policy alone")
RATIOS = {"ahead/inline": ("sb3_ale_vec", "sb3_ale_vec inline"), "ours/subproc": ("sb3_ale_vec", "sb3 subproc"),
          "ours/policy": ("sb3_ale_vec", "policy alone")}


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
    elif backend == "policy alone":
        env = _fixed_obs_env(game, n)
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


def _fixed_obs_env(game: str, n: int):
    """A VecEnv with this engine's spaces that returns one fixed batch of observations, no reward and
    no episode end, at no cost: PPO on it is the policy alone (forward passes, buffer, updates)."""
    import numpy as np
    from stable_baselines3.common.vec_env import VecEnv

    from sb3_ale_vec import AleNativeVecEnv

    probe = AleNativeVecEnv(game, 1, seed=0)
    obs_space, action_space = probe.observation_space, probe.action_space
    probe.close()

    class FixedObs(VecEnv):
        def __init__(self) -> None:
            super().__init__(n, obs_space, action_space)
            self.obs = np.random.default_rng(0).integers(0, 256, (n, *obs_space.shape), dtype=np.uint8)
            self.rewards, self.dones = np.zeros(n, np.float32), np.zeros(n, bool)

        def reset(self):
            return self.obs

        def step_async(self, actions) -> None:
            pass

        def step_wait(self):
            return self.obs, self.rewards, self.dones, [{} for _ in range(n)]

        def close(self) -> None:
            pass

        def get_attr(self, name, indices=None):
            return [getattr(self, name)] * n

        def set_attr(self, name, value, indices=None) -> None:
            setattr(self, name, value)

        def env_method(self, name, *args, indices=None, **kwargs):
            return [None] * n

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * n

    return FixedObs()


def call_in_child(module: str, function: str, args: tuple, label: str) -> Any:
    """``module.function(*args)`` in a fresh Python process, its JSON result; None, with a note, if it fails."""
    code = f"import json, {module} as m; print('RESULT', json.dumps(m.{function}(*{args!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        print(f"  {label} failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1][len("RESULT "):])


def _round_ratios(results: dict[str, dict[str, float]]) -> dict[str, float]:
    """One round's speed ratios, '<rollout|learn|env> <pair>', of the pairs whose both runs succeeded:
    rollout and learn() steps/s, and the env's part of a rollout step (b's ms over a's)."""
    pairs = [(name, a, b) for name, (a, b) in RATIOS.items() if a in results and b in results]
    ratios = {f"{kind} {name}": results[a][f"{kind}_steps_per_s"] / results[b][f"{kind}_steps_per_s"]
              for kind in ("rollout", "learn") for name, a, b in pairs}
    return {**ratios, **{f"env {name}": results[b]["ms_env"] / results[a]["ms_env"]
                         for name, a, b in pairs if b != "policy alone"}}


def main_ppo(game: str, n: int, timesteps: int, rounds: int, device: str = "auto") -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in BACKENDS}
    ratios: list[dict[str, float]] = []
    for r in range(rounds):
        order = BACKENDS[r % len(BACKENDS):] + BACKENDS[:r % len(BACKENDS)]  # a different one goes first
        results = {}
        for backend in order:
            result = call_in_child(__name__, "_measure_ppo", (backend, game, n, timesteps, device), backend)
            if result is not None:
                results[backend] = result
                runs[backend].append(result)
        ratios.append({"order": order[0], **_round_ratios(results)})
        print(f"  round {r + 1}/{rounds}: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios[-1].items() if k != "order"),
              file=sys.stderr)
    done = {b: r for b, r in runs.items() if r}
    devices = sorted({r["device"] for results in done.values() for r in results})
    print(f"\nSB3 PPO CnnPolicy on {game}, num_envs={n}, {timesteps} timesteps, {rounds} paired rounds, "
          f"device {'/'.join(devices)}")
    keys = [k for k in ratios[0] if k != "order"] if ratios else []
    print("\nPer round, speed ratios (steps/s; env: the env's ms per rollout step, inverted), the four runs one after"
          " another;\nahead/inline: sb3_ale_vec / sb3_ale_vec inline, ours/subproc: sb3_ale_vec / sb3 subproc, "
          "ours/policy: sb3_ale_vec / policy alone")
    print(f"{'round':<7} {'first':<19}" + "".join(f"{k.split()[0]:>13}" for k in keys))
    print(f"{'':<27}" + "".join(f"{k.split()[1]:>13}" for k in keys))
    for r, values in enumerate(ratios):
        print(f"{r + 1:<7} {values['order']:<19}" + "".join(f"{values[k]:>13.3f}" if k in values else f"{'-':>13}"
                                                            for k in keys))
    for name, fn in (("median", statistics.median), ("min", min), ("max", max)):
        print(f"{name:<7} {'':<19}" + "".join(f"{fn(v[k] for v in ratios if k in v):>13.3f}" for k in keys))
    median = {b: {k: statistics.median(r[k] for r in results) for k in results[0] if k != "device"}
              for b, results in done.items()}
    print(f"\nMedians:\n{'backend':<18} {'rollout steps/s':>16} {'learn() steps/s':>16} {'game resets':>12} {'swapped':>8}")
    for backend, m in median.items():
        counts = (f" {sum(r['resets'] for r in done[backend]):>12} {sum(r['swapped'] for r in done[backend]):>8}"
                  if "resets" in m else "")
        print(f"{backend:<18} {m['rollout_steps_per_s']:>16,.0f} {m['learn_steps_per_s']:>16,.0f}{counts}")
    by_round = {k: statistics.median(v[k] for v in ratios if k in v) for k in keys}
    for name in RATIOS:
        if f"rollout {name}" in by_round:
            print(f"{name.replace('/', ' / '):<18} {by_round[f'rollout {name}']:>15.2f}x "
                  f"{by_round[f'learn {name}']:>15.2f}x   (medians of the rounds' ratios)")
    print(f"\nA rollout step (all {n} envs), ms by part (medians):")
    print(f"{'backend':<18}" + "".join(f"{p:>15}" for p in PARTS) + f"{'total':>10}")
    for backend, m in median.items():
        print(f"{backend:<18}" + "".join(f"{m['ms_' + p]:>15.2f}" for p in PARTS) +
              f"{sum(m['ms_' + p] for p in PARTS):>10.2f}")
    return {"game": game, "num_envs": n, "timesteps": timesteps, "rounds": rounds, "device": devices, "ppo": runs,
            "ratios": ratios}
