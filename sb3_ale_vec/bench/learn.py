"""`bench --learn`: the learning table. rl-zoo3's Atari PPO settings trained through this engine (and,
with ``--with-sb3``, through SB3's own pipeline beside it), ``ep_rew_mean`` against steps and time.

    python -m sb3_ale_vec.bench --learn 200000 --game breakout --with-sb3 --out learn

Both runs take the same seed: since the engine is faithful down to the memory layout, their curves
against steps are the same curve (the run says whether they are), and only the clock differs.
The plot carries rl-zoo3's published 10M-step PPO results as reference lines and each game's
random-policy level, so a short run shows how far learning has left the random level.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sb3_ale_vec.bench.ppo import call_in_child

# rl-baselines3-zoo's benchmark.md, PPO, 10M steps (mean ± std of the final evaluation).
ZOO_10M = {"pong": (20.989, 0.105), "breakout": (398.033, 33.328)}
# What a uniformly random policy scores per game (full games, unclipped), as the issue and the
# Atari literature give them.
RANDOM = {"pong": -20.7, "breakout": 1.7}


def _train(backend: str, game: str, timesteps: int, seed: int, device: str) -> dict[str, Any]:
    """One run of rl-zoo3's PPO Atari hyperparameters (zoo_ppo.yml): a curve point per rollout."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.utils import safe_mean

    from sb3_ale_vec.games import camel_name
    from sb3_ale_vec.sb3.zoo import hyperparams

    hp = hyperparams["atari"]
    n = hp["n_envs"]
    if backend == "sb3_ale_vec":
        from sb3_ale_vec import AleNativeVecEnv

        env = AleNativeVecEnv(game, n, seed=seed)
    else:  # SB3's pipeline as rl-zoo3 builds it (DummyVecEnv), then VecFrameStack(4)
        import ale_py
        import gymnasium as gym
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import VecFrameStack

        gym.register_envs(ale_py)
        env = VecFrameStack(make_atari_env(f"{camel_name(game)}NoFrameskip-v4", n_envs=n, seed=seed), 4)

    def linear(start: float):
        return lambda progress: progress * start

    curve: list[tuple[int, float, float]] = []

    class Curve(BaseCallback):
        def _on_rollout_end(self) -> None:
            buffer = self.model.ep_info_buffer
            if buffer:
                curve.append((self.num_timesteps, time.perf_counter() - start,
                              float(safe_mean([e["r"] for e in buffer]))))

        def _on_step(self) -> bool:
            return True

    model = PPO(hp["policy"], env, n_steps=hp["n_steps"], n_epochs=hp["n_epochs"], batch_size=hp["batch_size"],
                learning_rate=linear(2.5e-4), clip_range=linear(0.1), vf_coef=hp["vf_coef"], ent_coef=hp["ent_coef"],
                seed=seed, device=device)
    start = time.perf_counter()
    model.learn(timesteps, callback=Curve())
    seconds = time.perf_counter() - start
    env.close()
    return {"backend": backend, "game": game, "timesteps": model.num_timesteps, "seconds": seconds,
            "device": model.device.type, "curve": curve}


def plot(runs: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = sorted({r["game"] for r in runs})
    fig, axes = plt.subplots(len(games), 2, figsize=(11, 3.6 * len(games)), squeeze=False)
    for row, game in zip(axes, games):
        for run in (r for r in runs if r["game"] == game):
            steps, seconds, rewards = zip(*run["curve"]) if run["curve"] else ((), (), ())
            style = "-" if run["backend"] == "sb3_ale_vec" else "--"
            row[0].plot(steps, rewards, style, label=run["backend"])
            row[1].plot([s / 60 for s in seconds], rewards, style, label=run["backend"])
        values = [v for r in runs if r["game"] == game for _, _, v in r["curve"]] + [RANDOM.get(game, 0.0)]
        lo, hi = min(values), max(values)
        pad = max(1.0, 0.1 * (hi - lo))
        for ax, xlabel in zip(row, ("timesteps", f"wall-clock minutes ({runs[0]['device']})")):
            if game in RANDOM:
                ax.axhline(RANDOM[game], color="grey", lw=0.8, ls=":", label=f"random policy: {RANDOM[game]}")
            if game in ZOO_10M:
                mean, std = ZOO_10M[game]
                label = f"rl-zoo3 PPO, 10M steps: {mean} ± {std}"
                if mean > hi + 5 * pad:  # a short run: keep its curve readable and say where the line is
                    ax.set_ylim(lo - pad, hi + pad)
                    ax.annotate(f"↑ {label} (above this scale)", (0.01, 0.97), xycoords="axes fraction",
                                va="top", fontsize=7, color="green")
                else:
                    ax.axhline(mean, color="green", lw=0.8, ls=":", label=label)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("ep_rew_mean (true game score)")
            ax.set_title(game)
            ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main_learn(games: list[str], timesteps: int, with_sb3: bool, seed: int, device: str,
               out: str | None) -> dict[str, Any]:
    backends = ["sb3_ale_vec"] + (["sb3 make_atari_env"] if with_sb3 else [])
    runs = [r for game in games for b in backends
            if (r := call_in_child(__name__, "_train", (b, game, timesteps, seed, device), f"{b} on {game}")) is not None]
    print(f"\nPPO, rl-zoo3's Atari settings (8 envs, n_steps 128), seed {seed}, {timesteps:,} timesteps per run")
    print(f"{'game':<10} {'backend':<20} {'first ep_rew_mean':>18} {'last':>8} {'minutes':>8} {'steps/s':>8}")
    for r in runs:
        first = r["curve"][0][2] if r["curve"] else float("nan")
        last = r["curve"][-1][2] if r["curve"] else float("nan")
        print(f"{r['game']:<10} {r['backend']:<20} {first:>18.2f} {last:>8.2f} {r['seconds'] / 60:>8.1f} "
              f"{r['timesteps'] / r['seconds']:>8.0f}")
    for game in games:
        pair = [r for r in runs if r["game"] == game]
        if len(pair) == 2:
            same = [p[::2] for p in pair[0]["curve"]] == [p[::2] for p in pair[1]["curve"]]
            print(f"{game}: the two curves against steps are {'identical' if same else 'DIFFERENT'}")
    results = {"seed": seed, "timesteps": timesteps, "zoo_10M": ZOO_10M, "random": RANDOM, "runs": runs}
    if out:
        with open(f"{out}.json", "w") as f:
            json.dump(results, f, indent=1)
        plot(runs, f"{out}.png")
        print(f"wrote {out}.json and {out}.png")
    return results
