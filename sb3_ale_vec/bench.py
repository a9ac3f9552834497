"""Side-by-side throughput: this engine against every peer and the emulator's own limit, in one run.

    python -m sb3_ale_vec.bench                               # Breakout, N=8, every peer
    python -m sb3_ale_vec.bench --num-envs 1,4,8,16 --out bench   # a scaling sweep, JSON + PNG
    python -m sb3_ale_vec.bench --ppo                         # SB3 PPO throughput instead
    python -m sb3_ale_vec.bench --ray 1,2,4 --num-envs 16     # RayAleVecEnv, 1..4 shards (bench_ray.py)

Every peer runs the same workload: SB3's default Atari preprocessing (84x84 gray, frame skip 4 with
max-pool, stack of 4, no-op and fire reset, episodic life, clipped rewards) and the same random
actions, generated before the clock starts. Each measurement runs in a fresh process (so peak
memory is its own), and peers take turns repetition by repetition, so a busy machine slows them
alike. The table gives the median steps/s with the spread, the ratios to this engine and to the
limit, and memory per env: the peak resident memory the envs added (worker processes included)
over what the process held after its imports, divided by num_envs. The limit is raw ``ALEInterface.act()``: one process per
core at once, frames/s divided by the frame skip; "1 core" is one such process alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

FRAMESKIP = 4
PEERS = {  # name: what it is
    "sb3_ale_vec": "this engine, AleNativeVecEnv (SB3 preset)",
    "sb3_ale_vec 1 thread": "this engine with num_threads=1",
    "ale_py same-step": "ale_py.vector_env.AtariVectorEnv, autoreset SameStep",
    "ale_py next-step": "ale_py.vector_env.AtariVectorEnv, autoreset NextStep",
    "envpool": "envpool Atari (if installed)",
    "sb3 subproc": "SB3 make_atari_env + VecFrameStack, SubprocVecEnv",
    "sb3 dummy": "SB3 make_atari_env + VecFrameStack, DummyVecEnv",
    "gymnasium async": "gymnasium AsyncVectorEnv of AtariPreprocessing + FrameStackObservation",
    "limit 1 core": "raw ALEInterface.act() frames/s / frameskip, one process",
    "limit all cores": "raw ALEInterface.act() frames/s / frameskip, one process per core at once",
}


# -- one measurement, run in a child process ------------------------------------------------------

def _make(peer: str, game: str, n: int) -> tuple[Any, Any, int]:
    """(step function, close function, number of actions) for a peer, after its reset."""
    from sb3_ale_vec.games import camel_name

    gym_id = f"{camel_name(game)}NoFrameskip-v4"
    if peer.startswith("sb3_ale_vec"):
        from sb3_ale_vec import AleNativeVecEnv

        words = peer.split()  # "sb3_ale_vec", or "sb3_ale_vec K thread(s)"
        env = AleNativeVecEnv(game, n, seed=0, num_threads=int(words[1]) if len(words) > 1 else 0)
        env.reset()
        return env.step, env.close, int(env.action_space.n)
    if peer.startswith("ale_py"):
        from ale_py.vector_env import AtariVectorEnv

        mode = "SameStep" if "same" in peer else "NextStep"
        env = AtariVectorEnv(game, n, episodic_life=True, autoreset_mode=mode)
        env.reset(seed=0)
        return env.step, env.close, int(env.single_action_space.n)
    if peer == "envpool":
        import envpool

        env = envpool.make(f"{camel_name(game)}-v5", env_type="gymnasium", num_envs=n, episodic_life=True,
                           reward_clip=True, repeat_action_probability=0.0, noop_max=30, seed=0)
        env.reset()
        return env.step, env.close, int(env.action_space.n)
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    if peer.startswith("sb3"):
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecFrameStack

        cls, kwargs = (SubprocVecEnv, {"start_method": "fork"}) if "subproc" in peer else (DummyVecEnv, {})
        env = VecFrameStack(make_atari_env(gym_id, n_envs=n, seed=0, vec_env_cls=cls, vec_env_kwargs=kwargs), 4)
        env.reset()
        return env.step, env.close, int(env.action_space.n)
    if peer == "gymnasium async":
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

        env = gym.make_vec(gym_id, n, vectorization_mode="async", vector_kwargs={"context": "fork"},
                           wrappers=[lambda e: FrameStackObservation(AtariPreprocessing(e), 4, padding_type="zero")])
        env.reset(seed=0)
        return env.step, env.close, int(env.single_action_space.n)
    raise ValueError(f"unknown peer {peer!r}")


def _raw_frames_per_second(game: str, seconds: float) -> float:
    import ale_py
    from ale_py import roms

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(roms.get_rom_path(game))
    actions = ale.getMinimalActionSet()
    choices = np.random.default_rng(0).integers(0, len(actions), 1 << 16)
    frames, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(1000):
            ale.act(actions[choices[(frames + i) & 0xFFFF]])
            if ale.game_over():
                ale.reset_game()
        frames += 1000
    return frames / (time.perf_counter() - start)


def _status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(key))
    except (OSError, StopIteration):
        return 0


def _peak_rss_mib() -> float:
    """Peak resident memory of this process and its children (Subproc and async peers)."""
    def hwm(pid: int) -> int:
        return _status_kib(pid, "VmHWM")

    try:
        children = [int(p) for p in open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()]
    except OSError:
        children = []
    return (hwm(os.getpid()) + sum(hwm(c) for c in children)) / 1024


def measure(peer: str, game: str, n: int, steps: int, warmup: int) -> dict[str, float]:
    """Agent steps/s (summed over envs) of one fresh peer, and its peak memory."""
    if peer.startswith("limit"):
        seconds = max(1.0, steps / 1000)
        procs = 1 if peer == "limit 1 core" else (os.cpu_count() or 1)
        if procs == 1:
            return {"steps_per_s": _raw_frames_per_second(game, seconds) / FRAMESKIP}
        cmd = [sys.executable, "-c", f"from sb3_ale_vec.bench import _raw_frames_per_second as f; "
               f"print(f({game!r}, {seconds}))"]
        children = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(procs)]
        return {"steps_per_s": sum(float(c.communicate()[0]) for c in children) / FRAMESKIP}
    baseline = _status_kib(os.getpid(), "VmRSS") / 1024  # imports done: what the envs add comes next
    step, close, n_actions = _make(peer, game, n)
    try:
        actions = np.random.default_rng(0).integers(0, n_actions, (warmup + steps, n))
        for a in actions[:warmup]:
            step(a)
        start = time.perf_counter()
        for a in actions[warmup:]:
            step(a)
        rate = steps * n / (time.perf_counter() - start)
        return {"steps_per_s": rate, "env_rss_mib": _peak_rss_mib() - baseline}
    finally:
        close()


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


# -- the orchestrator --------------------------------------------------------------------------

def _in_child(kind: str, *args: Any) -> dict[str, float] | None:
    code = f"import json, sb3_ale_vec.bench as b; print('RESULT', json.dumps(b.{kind}(*{args!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        print(f"  {args[0]} failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1][len("RESULT "):])


def _available(peer: str) -> bool:
    """Whether a peer's packages are installed (SB3's and gymnasium's Atari wrappers need OpenCV)."""
    needs = {"envpool": "envpool", "sb3 subproc": "cv2", "sb3 dummy": "cv2", "gymnasium async": "cv2"}
    if peer not in needs:
        return True
    try:
        __import__(needs[peer])
    except ImportError:
        return False
    return True


def _plot(results: dict[str, dict[int, list[float]]], game: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for peer, by_n in results.items():
        ns = sorted(by_n)
        ax.plot(ns, [statistics.median(by_n[n]) for n in ns], marker="o", label=peer)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("num_envs")
    ax.set_ylabel("agent steps / s (median)")
    ax.set_title(f"{game}: SB3 Atari preprocessing, {os.cpu_count()} cores")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", default="8", help="comma-separated list, e.g. 1,2,4,8,16,32,64")
    parser.add_argument("--steps", type=int, default=1000, help="batched steps per measurement")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="all", help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--ppo", type=int, nargs="?", const=4096, default=0, metavar="TIMESTEPS",
                        help="measure SB3 PPO throughput (this engine vs make_atari_env + SubprocVecEnv)")
    parser.add_argument("--threads", default="",
                        help="comma-separated thread counts: also measure this engine with each (scaling)")
    parser.add_argument("--out", help="write OUT.json and OUT.png")
    parser.add_argument("--ray", default="", metavar="SHARDS",
                        help="comma-separated shard counts: RayAleVecEnv against one AleNativeVecEnv (bench_ray.py)")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.num_envs.split(",")]
    if args.ray:
        from sb3_ale_vec.bench_ray import main_ray

        return main_ray(args.game, sizes[0], [int(k) for k in args.ray.split(",")], args.steps, args.warmup,
                        args.repeats)
    names = list(PEERS) if args.peers == "all" else [p.strip() for p in args.peers.split(",")]
    for k in (int(x) for x in args.threads.split(",") if x):
        name = f"sb3_ale_vec {k} thread{'s' if k > 1 else ''}"
        PEERS.setdefault(name, f"this engine with num_threads={k}")
        if name not in names:
            names.insert(1, name)
    for name in names:
        if name not in PEERS:
            parser.error(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
    skipped = [name for name in names if not _available(name)]
    names = [name for name in names if name not in skipped]
    for name in skipped:
        print(f"note: {name} is not installed, skipped ({PEERS[name]}); `pip install sb3-ale-vec[bench]`")
    try:
        from tqdm import tqdm
    except ImportError:  # no progress bar, same results
        def tqdm(items, **_):
            return items

    if args.ppo:
        return _main_ppo(args, sizes, tqdm)

    jobs = [(rep, n, name) for rep in range(args.repeats) for n in sizes for name in names
            if not (name.startswith("limit") and n != sizes[0])]
    runs: dict[str, dict[int, list[dict[str, float]]]] = {name: {} for name in names}
    for rep, n, name in tqdm(jobs, desc="measuring", unit="run"):
        result = _in_child("measure", name, args.game, n, args.steps, args.warmup)
        if result is not None:
            runs[name].setdefault(n, []).append(result)

    rates = {name: {n: [r["steps_per_s"] for r in by_n[n]] for n in by_n} for name, by_n in runs.items() if by_n}
    limit = statistics.median(rates["limit all cores"][sizes[0]]) if "limit all cores" in rates else None
    for n in sizes:
        ours = statistics.median(rates["sb3_ale_vec"][n]) if n in rates.get("sb3_ale_vec", {}) else None
        print(f"\n{args.game}, num_envs={n}, {args.steps} steps x {args.repeats} repeats, {os.cpu_count()} cores")
        print(f"{'peer':<22} {'steps/s':>9} {'min':>8} {'max':>8} {'ours/peer':>10} {'peer/limit':>11} "
              f"{'MiB/env':>8}")
        for name in names:
            values = rates.get(name, {}).get(n if not name.startswith("limit") else sizes[0])
            if not values:
                continue
            med = statistics.median(values)
            mems = [r["env_rss_mib"] for r in runs[name].get(n, []) if "env_rss_mib" in r]
            mem = f"{statistics.median(mems) / n:8.1f}" if mems else f"{'':>8}"
            vs_ours = f"{ours / med:9.2f}x" if ours else f"{'':>10}"
            vs_limit = f"{med / limit:10.2f}x" if limit else f"{'':>11}"
            print(f"{name:<22} {med:>9,.0f} {min(values):>8,.0f} {max(values):>8,.0f} {vs_ours} {vs_limit} {mem}")
    report = {"game": args.game, "cores": os.cpu_count(), "steps": args.steps, "repeats": args.repeats,
              "runs": {name: {str(n): v for n, v in by_n.items()} for name, by_n in runs.items()}}
    if args.out:
        with open(f"{args.out}.json", "w") as f:
            json.dump(report, f, indent=1)
        _plot({k: v for k, v in rates.items() if not k.startswith("limit")}, args.game, f"{args.out}.png")
        print(f"\nwrote {args.out}.json and {args.out}.png")
    return report


def _main_ppo(args: argparse.Namespace, sizes: list[int], tqdm) -> dict[str, Any]:
    backends = ["sb3_ale_vec", "sb3 subproc"]
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _, backend in tqdm([(r, b) for r in range(args.repeats) for b in backends], desc="PPO", unit="run"):
        result = _in_child("_measure_ppo", backend, args.game, sizes[0], args.ppo)
        if result is not None:
            runs[backend].append(result)
    print(f"\nSB3 PPO CnnPolicy on {args.game}, num_envs={sizes[0]}, {args.ppo} timesteps x {args.repeats}")
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
    report = {"game": args.game, "num_envs": sizes[0], "timesteps": args.ppo, "ppo": runs}
    if args.out:
        with open(f"{args.out}.json", "w") as f:
            json.dump(report, f, indent=1)
    return report


if __name__ == "__main__":
    main()
