"""Side-by-side throughput: this engine against its peers and the emulator's own limit, in one run.

    python -m sb3_ale_vec.bench            # about a minute: Breakout, N=8, 1 thread and all cores
    python -m sb3_ale_vec.bench --full     # Breakout, Pong, MsPacman, SpaceInvaders at N=8,16,64 + plot
    python -m sb3_ale_vec.bench --game pong --num-envs 16,32 --threads 1,2 --out bench
    python -m sb3_ale_vec.bench --ppo      # SB3 PPO throughput, paired rounds (ppo.py)
    python -m sb3_ale_vec.bench --ray 1,2,4 --num-envs 16   # RayAleVecEnv shards (ray_shards.py)
    python -m sb3_ale_vec.bench --xla      # jitted lax.scan over xla()'s step vs step() vs ale-py's (jax_scan.py)
    python -m sb3_ale_vec.bench --profile --num-envs 8,64 --threads 2   # step times, idle (step_profile.py)
    python -m sb3_ale_vec.bench.loops      # tight, GPU-like and CPU-policy loops, resets swapped (loops.py)
    python -m sb3_ale_vec.bench --learn 200000 --game breakout,pong --with-sb3 --out learn   # learning table (learn.py)

Equal work: every peer of the first table is configured alike (see peers.EQUAL_WORK), so all
emulate the same frames: this engine and ale-py's AtariVectorEnv, given the same seed and actions,
emulate the very same frames (the run checks it), and envpool the same on average. The limit is the
emulator alone, ALEInterface.act() in a loop, in one thread (or process) per thread of the peer.
The second table is SB3's own pipeline against this engine, both with SB3's defaults.

Each peer runs in a child process that builds its env once (peers.py); the peers then take
turns run by run, so a busy machine slows them alike, and the table gives medians. Frames/s come
from the envs' own frame counters; memory per env is the peak resident memory the envs added (worker
processes included) over what the process held after its imports, divided by num_envs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

from sb3_ale_vec.bench.peers import EQUAL_WORK, FRAMESKIP, NEEDS, PEERS

DEFAULT_PEERS = ["sb3_ale_vec", "ale_py", "envpool", "act() this build", "act() ale-py", "sb3_ale_vec sb3", "sb3 subproc"]
FULL_GAMES = "breakout,pong,ms_pacman,space_invaders"
ENV_STEPS_PER_RUN = 3200  # about a second of this engine on one core


class Server:
    """One peer's child process (peers.serve)."""

    old_tree: str | None = None  # --old: the tree whose build "sb3_ale_vec old" runs

    def __init__(self, peer: str, game: str, n: int, threads: int, batch: int = 0,
                 script: list[str] | None = None) -> None:
        """`script`: a file and its first arguments run instead of peers.serve (by path, the peer's
        arguments after them: bench.loops), answering the same lines."""
        self.key = (peer, threads)
        env = None
        if peer == "sb3_ale_vec old":  # the other tree's own peers module and build
            path = os.pathsep.join([os.path.abspath(self.old_tree or "."), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])
            peer, env = "sb3_ale_vec", dict(os.environ, PYTHONPATH=path.rstrip(os.pathsep))
        args = [peer, game, str(n), str(threads)]
        command = [*script, *args] if script else ["-m", "sb3_ale_vec.bench.peers", *args, str(batch)]
        self.proc = subprocess.Popen([sys.executable, *command], env=env, cwd="/" if env else None,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def _line(self, prefix: str) -> str | None:
        for line in self.proc.stdout:
            if line.startswith(prefix):
                return line[len(prefix):]
        print(f"  {self.key[0]} failed: {self.proc.stderr.read().strip().splitlines()[-1:]}", file=sys.stderr)
        return None

    def ready(self) -> bool:
        return self._line("READY") is not None

    def run(self, steps: int, seconds: float) -> dict[str, float] | None:
        if self.proc.poll() is not None:
            return None
        self.proc.stdin.write(f"{steps} {seconds}\n")
        self.proc.stdin.flush()
        line = self._line("RESULT ")
        return json.loads(line) if line else None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("QUIT\n")
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def available(peer: str) -> bool:
    try:
        if peer in NEEDS:
            __import__(NEEDS[peer])
    except ImportError:
        return False
    return True


def measure_group(game: str, n: int, configs: list[tuple[str, int]], repeats: int, steps: int, seconds: float,
                  progress, batch: int = 0) -> dict[tuple[str, int], list[dict[str, float]]]:
    """Starts every config's server, then runs them in turns, `repeats` rounds. `batch` (0: all
    envs) goes to the equal-work vector peers: EnvPool-style asynchronous batches."""
    servers = [Server(peer, game, n, threads, batch if PEERS[peer][0] == "equal" else 0) for peer, threads in configs]
    runs: dict[tuple[str, int], list[dict[str, float]]] = {s.key: [] for s in servers}
    try:
        live = [s for s in servers if s.ready()]
        for r in range(repeats):
            for s in live[r % len(live):] + live[:r % len(live)]:  # a different peer goes first each round
                result = s.run(steps, seconds)
                if result is not None:
                    runs[s.key].append(result)
                progress.update(1)
    finally:
        for s in servers:
            s.close()
    return runs


def _median(runs: list[dict[str, float]], key: str) -> float | None:
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def report_group(game: str, n: int, runs: dict[tuple[str, int], list[dict[str, float]]],
                 limits: dict[tuple[str, int], list[dict[str, float]]], batch: int = 0) -> None:
    """Prints the equal-work table and SB3's table of one (game, num_envs)."""
    def cell(value: float | None, fmt: str, width: int) -> str:
        return f"{value:{fmt}}".rjust(width) if value is not None else "-".rjust(width)

    equal = {k: v for k, v in {**runs, **limits}.items() if PEERS[k[0]][0] == "equal" and v}
    mode = f", asynchronous batches of {batch}" if 0 < batch < n else ""
    print(f"\n{game}, num_envs={n}{mode}, equal work ({EQUAL_WORK}); medians of {max(map(len, equal.values()), default=0)} runs")
    print(f"{'peer':<24} {'threads':>7} {'steps/s':>9} {'frames/s':>10} {'ours/peer':>9} "
          f"{'of act() this build':>19} {'of act() ale-py':>15} {'MiB/env':>8}")
    for (peer, threads), values in sorted(equal.items(), key=lambda kv: (kv[0][1], list(PEERS).index(kv[0][0]))):
        steps, frames = _median(values, "steps_per_s"), _median(values, "frames_per_s")
        ours = _median(runs.get(("sb3_ale_vec", threads), []), "steps_per_s")
        bases = [_median(limits.get((limit, threads), []), "frames_per_s") for limit in ("act() this build", "act() ale-py")]
        limit = peer.startswith("act()")
        mem = None if limit else _median(values, "env_rss_mib")
        print(f"{peer:<24} {threads:>7} {cell(steps, ',.0f', 9)} {cell(frames, ',.0f', 10)} "
              f"{cell(ours / steps if ours and steps and not limit else None, '.2f', 8)}{'x' if not limit else ' '} "
              f"{cell(frames / bases[0] if frames and bases[0] else None, '.3f', 19)} "
              f"{cell(frames / bases[1] if frames and bases[1] else None, '.3f', 15)} "
              f"{cell(mem / n if mem is not None else None, '.2f', 8)}")
    for threads in sorted({t for _, t in equal}):
        a, b = runs.get(("sb3_ale_vec", threads)), runs.get(("ale_py", threads))
        if a and b and len(a) == len(b) and not 0 < batch < n:  # which envs a batch holds depends on timing
            fa, fb = sum(r["frames"] for r in a), sum(r["frames"] for r in b)
            verdict = "the same frames" if fa == fb else "DIFFERENT frames"
            print(f"  {threads} thread(s): sb3_ale_vec and ale_py emulated {verdict}: {fa:,} and {fb:,}")
    sb3 = {k: v for k, v in runs.items() if PEERS[k[0]][0] == "sb3" and v}
    if sb3:
        ours = _median(sb3.get(("sb3_ale_vec sb3", os.cpu_count()), []), "steps_per_s")
        print(f"\n{game}, num_envs={n}, SB3's defaults (episodic life, clipping), all cores")
        print(f"{'peer':<24} {'steps/s':>9} {'ours/peer':>9} {'MiB/env':>8}")
        for (peer, _), values in sb3.items():
            steps, mem = _median(values, "steps_per_s"), _median(values, "env_rss_mib")
            print(f"{peer:<24} {steps:>9,.0f} {cell(ours / steps if ours else None, '.2f', 8)}x "
                  f"{cell(mem / n if mem is not None else None, '.2f', 8)}")


def plot(results: dict[str, Any], games: list[str], path: str) -> None:
    """Steps/s against num_envs per game; the limits (frames/s / frame skip) as dashed lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(2, len(games))
    rows = (len(games) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.5 * rows), squeeze=False)
    for ax, game in zip(axes.flat, games):
        lines: dict[str, dict[int, float]] = {}
        for key, values in results["runs"].items():
            g, n, peer, threads = key.split("|")
            if g != game or PEERS[peer][0] != "equal" or not values:
                continue
            label = f"{peer}, {threads} thread{'s' if threads != '1' else ''}"
            if peer.startswith("act()"):
                ax.axhline(_median(values, "steps_per_s"), linestyle="--", linewidth=1, color="gray" if "ale-py" in peer
                           else "black", alpha=0.5 + 0.25 * (threads != "1"), label=f"limit: {label}")
            else:
                lines.setdefault(label, {})[int(n)] = _median(values, "steps_per_s")
        for label, by_n in sorted(lines.items()):
            ns = sorted(by_n)
            ax.plot(ns, [by_n[k] for k in ns], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("num_envs")
        ax.set_ylabel("agent steps / s (median); limits: frames / s / 4")
        ax.set_title(f"{game}, equal work, {results['cores']} cores")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    for ax in list(axes.flat)[len(games):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default=None, help="comma-separated games (default breakout; --full: four)")
    parser.add_argument("--num-envs", default=None, help="comma-separated, e.g. 8,16,64 (default 8; --full: 8,16,64)")
    parser.add_argument("--threads", default="1,all", help="comma-separated thread counts; all = one per core")
    parser.add_argument("--repeats", type=int, default=None, help="runs per peer (default 3; --full: 5)")
    parser.add_argument("--steps", type=int, default=0, help=f"batched steps per run (default {ENV_STEPS_PER_RUN} / num_envs)")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of each limit run")
    parser.add_argument("--batch-size", type=int, default=0,
                        help="EnvPool-style asynchronous batches of this many envs for the equal-work peers (0: all)")
    parser.add_argument("--peers", default=None, help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--old", default=None, metavar="PATH",
                        help="adds peer 'sb3_ale_vec old': this package built in another tree (git worktree), "
                             "interleaved with this build for a before/after in one run")
    parser.add_argument("--full", action="store_true", help="four games at N=8,16,64, 5 runs each, JSON and plot")
    parser.add_argument("--out", default=None, help="write OUT.json and OUT.png (--full: default 'bench')")
    parser.add_argument("--ppo", type=int, nargs="?", const=4096, default=0, metavar="TIMESTEPS",
                        help="measure SB3 PPO throughput (this engine with resets ahead and inline, make_atari_env + "
                             "SubprocVecEnv, the policy alone) in paired rounds")
    parser.add_argument("--rounds", type=int, default=None, help="--ppo's paired rounds (default 7, or --repeats)")
    parser.add_argument("--device", default="auto", help="torch device of --ppo and --learn (cpu, cuda; default auto)")
    parser.add_argument("--ray", default="", metavar="SHARDS",
                        help="comma-separated shard counts: RayAleVecEnv against one AleNativeVecEnv (ray_shards.py)")
    parser.add_argument("--xla", action="store_true",
                        help="jitted lax.scan over xla()'s step vs a Python loop over step() vs ale-py's xla() (N=8,64)")
    parser.add_argument("--learn", type=int, default=0, metavar="TIMESTEPS",
                        help="train rl-zoo3's Atari PPO for TIMESTEPS per game: ep_rew_mean against steps and time (learn.py)")
    parser.add_argument("--with-sb3", action="store_true", help="--learn: SB3's make_atari_env pipeline beside it")
    parser.add_argument("--seed", type=int, default=0, help="--learn's seed")
    parser.add_argument("--profile", action="store_true",
                        help="per env step times with reset flags, and threads' idle time per batch (step_profile.py)")
    args = parser.parse_args(argv)
    games = (args.game or (FULL_GAMES if args.full else "breakout")).split(",")
    sizes = [int(x) for x in (args.num_envs or ("8,16,64" if args.full else "8")).split(",")]
    repeats = args.repeats or (5 if args.full else 3)
    out = args.out or ("bench" if args.full else None)
    cores = os.cpu_count() or 1
    thread_counts = sorted({cores if t == "all" else int(t) for t in args.threads.split(",")})
    if args.profile:
        from sb3_ale_vec.bench.step_profile import main as main_profile

        return main_profile(["--game", ",".join(games), "--num-envs", ",".join(map(str, sizes)),
                             "--threads", ",".join(map(str, thread_counts)), "--steps", str(args.steps or 1000),
                             "--compare", "--simulate", "16"])
    if args.ray:
        from sb3_ale_vec.bench.ray_shards import main_ray

        return main_ray(games[0], sizes[0], [int(k) for k in args.ray.split(",")],
                        args.steps or ENV_STEPS_PER_RUN // sizes[0], 10, repeats)
    if args.xla:
        from sb3_ale_vec.bench.jax_scan import main_xla

        return main_xla(games[0], [int(x) for x in (args.num_envs or "8,64").split(",")],
                        args.steps or ENV_STEPS_PER_RUN, repeats)
    if args.learn:
        from sb3_ale_vec.bench.learn import main_learn

        return main_learn(games, args.learn, args.with_sb3, args.seed, args.device, out)
    if args.ppo:
        from sb3_ale_vec.bench.ppo import main_ppo

        results = main_ppo(games[0], sizes[0], args.ppo, args.rounds or args.repeats or 7, args.device)
        if out:
            with open(f"{out}.json", "w") as f:
                json.dump(results, f, indent=1)
        return results
    if not 0 <= args.batch_size <= min(sizes):
        parser.error(f"--batch-size must be in [0, {min(sizes)}] (0: all envs; at most the smallest --num-envs)")
    names = args.peers.split(",") if args.peers else list(DEFAULT_PEERS)
    if args.old:
        Server.old_tree = args.old
        names += [] if "sb3_ale_vec old" in names else ["sb3_ale_vec old"]
    for name in names:
        if name not in PEERS:
            parser.error(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
    for name in [p for p in names if not available(p)]:
        names.remove(name)
        hint = "`pip install envpool` (not in the bench extra: it brings ~600 MB of MuJoCo assets)" \
            if name == "envpool" else "`pip install sb3-ale-vec[bench]`"
        print(f"note: {name} is not installed, skipped ({PEERS[name][1]}); {hint}")
    try:
        from tqdm import tqdm
    except ImportError:  # no progress bar, same results
        tqdm = None

    def configs(first_size: bool) -> list[tuple[str, int]]:
        # Limits do not depend on num_envs: measured with the first size only. SB3's table (its
        # pipelines use one process per env) runs on all cores, whatever --threads says.
        return [(p, t) for p in names for t in (thread_counts if PEERS[p][0] == "equal" else [cores])
                if first_size or not p.startswith("act()")]

    total = sum(len(configs(i == 0)) * repeats for _ in games for i in range(len(sizes)))
    progress = tqdm(total=total, desc="measuring", unit="run") if tqdm else _NoBar()
    results: dict[str, Any] = {"cores": cores, "repeats": repeats, "equal_work": EQUAL_WORK, "runs": {}}
    for game in games:
        limits: dict[tuple[str, int], list[dict[str, float]]] = {}
        for i, n in enumerate(sizes):
            steps = args.steps or max(10, ENV_STEPS_PER_RUN // (args.batch_size or n))
            runs = measure_group(game, n, configs(i == 0), repeats, steps, args.seconds, progress, args.batch_size)
            limits.update({k: v for k, v in runs.items() if k[0].startswith("act()")})
            runs = {k: v for k, v in runs.items() if not k[0].startswith("act()")}
            progress.clear()
            report_group(game, n, runs, limits, args.batch_size)
            for (peer, threads), values in {**runs, **(limits if i == 0 else {})}.items():
                results["runs"][f"{game}|{n}|{peer}|{threads}"] = values
    progress.close()
    if out:
        with open(f"{out}.json", "w") as f:
            json.dump(results, f, indent=1)
        plot(results, games, f"{out}.png")
        print(f"\nwrote {out}.json and {out}.png")
    return results


class _NoBar:
    def update(self, _: int) -> None:
        pass

    def clear(self) -> None:
        pass

    def close(self) -> None:
        pass

