"""Where a synchronous step's time goes: per env step, its time and whether it reset, and per batch
the time each thread spends idle waiting for the batch's last env.

    python -m sb3_ale_vec.bench.step_profile --game breakout,pong --num-envs 8,64 --threads 2
    python -m sb3_ale_vec.bench --profile --game breakout --num-envs 64 --threads 2

Runs sb3_ale_vec.AtariVectorEnv (the benchmark's equal-work settings, random actions) with the
engine's task timing on (`Engine._profile`). With --compare, batches alternate between the engine's
scheduling and the old plain env-id order (`Engine._resets_first`), in blocks, in one process, so
that a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

import numpy as np


def _vectorizer(env: Any) -> Any:
    return env._native._vec  # AtariVectorEnv -> NativeVectorizer -> _engine.Vectorizer


def profile_run(game: str, n: int, threads: int, steps: int, seed: int = 0, autoreset: str = "next_step",
                orders: tuple[bool, ...] = (True,), block: int = 50) -> dict[bool, dict[str, np.ndarray]]:
    """Steps `steps` batches after a warm-up; returns each scheduling's task records."""
    from sb3_ale_vec import AtariVectorEnv

    env = AtariVectorEnv(game, n, num_threads=threads, autoreset_mode=autoreset.capitalize().replace("_s", "S"))
    engine = _vectorizer(env)
    rng = np.random.default_rng(seed)
    logs: dict[bool, list[dict[str, np.ndarray]]] = {o: [] for o in orders}
    try:
        env.reset(seed=seed)
        n_actions = int(env.single_action_space.n)
        for _ in range(max(20, steps // 10)):  # warm-up: caches, and the envs' episodes spread out
            env.step(rng.integers(0, n_actions, n))
        done = 0
        while done < steps:
            for order in orders:
                if hasattr(engine, "_resets_first"):
                    engine._resets_first = order
                engine._profile(True)
                for _ in range(min(block, steps - done)):
                    env.step(rng.integers(0, n_actions, n))
                logs[order].append(engine._take_profile())
                engine._profile(False)
            done += block
    finally:
        env.close()
    return {o: {k: np.concatenate([part[k] for part in parts]) for k in parts[0]} for o, parts in logs.items()}


def overhead_run(game: str, n: int, threads: int, steps: int, front_end: str = "sb3", seed: int = 0) -> dict[str, Any]:
    """Where a synchronous step's wall time goes, batch by batch, on one clock: Python's own around
    each step() (time.perf_counter_ns) and the engine's task records (same clock). Medians in µs of:
    the front-end and binding before the dispatch, the dispatch to the first task's start (a
    worker's wake-up, or the caller's own start), the tasks' span, the last task's end to the
    caller's wait returning (its wake-up), and from there to step() returning (rows, infos)."""
    import time

    from sb3_ale_vec import AleNativeVecEnv, AtariVectorEnv

    env = AleNativeVecEnv(game, n, seed=seed, num_threads=threads) if front_end == "sb3" else \
        AtariVectorEnv(game, n, num_threads=threads)
    engine = _vectorizer(env)
    rng = np.random.default_rng(seed)
    n_actions = int(env.action_space.n if front_end == "sb3" else env.single_action_space.n)
    actions = rng.integers(0, n_actions, (steps + 50, n))
    calls = np.zeros((steps, 2), np.int64)
    try:
        env.reset() if front_end == "sb3" else env.reset(seed=seed)
        for a in actions[:50]:
            env.step(a)
        engine._profile(True)
        for t in range(steps):
            calls[t, 0] = time.perf_counter_ns()
            env.step(actions[50 + t])
            calls[t, 1] = time.perf_counter_ns()
        rec = engine._take_profile()
        engine._profile(False)
    finally:
        env.close()
    parts: dict[str, list[float]] = {k: [] for k in ("front-end and send", "dispatch to first task", "tasks",
                                                       "last task to caller awake", "caller awake to return",
                                                       "between steps", "step", "work / threads")}
    for b in range(steps):
        m = rec["batch"] == b
        sent, first, last, woke = rec["sent_ns"][m].min(), rec["start_ns"][m].min(), rec["end_ns"][m].max(), rec["woke_ns"][m].max()
        for key, value in (("front-end and send", sent - calls[b, 0]), ("dispatch to first task", first - sent),
                           ("tasks", last - first), ("last task to caller awake", woke - last),
                           ("caller awake to return", calls[b, 1] - woke), ("step", calls[b, 1] - calls[b, 0]),
                           ("work / threads", (rec["end_ns"][m] - rec["start_ns"][m]).sum() / threads)):
            parts[key].append(value / 1e3)
        if b + 1 < steps:
            parts["between steps"].append((calls[b + 1, 0] - calls[b, 1]) / 1e3)
    return {k: {"median_us": float(np.median(v)), "mean_us": float(np.mean(v))} for k, v in parts.items()}


def summarize(rec: dict[str, np.ndarray], threads: int) -> dict[str, Any]:
    """Step times by reset flag, and per batch each thread's idle time behind the batch's last env."""
    dur = (rec["end_ns"] - rec["start_ns"]) / 1e3  # µs
    reset = rec["reset"].astype(bool)
    out: dict[str, Any] = {"steps": int(dur.size), "resets": int(reset.sum()),
                           "step_us_median": float(np.median(dur[~reset])) if (~reset).any() else None,
                           "reset_us_median": float(np.median(dur[reset])) if reset.any() else None}
    # A batch and a fresh batch number per recv/_profile block: renumber blocks apart.
    key = np.unique(np.stack([rec["sent_ns"], rec["batch"]]), axis=1, return_inverse=True)[1].ravel()
    spans, idle, with_reset = [], [], []
    for b in range(key.max() + 1):
        m = key == b
        sent, last = rec["sent_ns"][m].min(), rec["end_ns"][m].max()
        spans.append((last - sent) / 1e3)
        ends = [rec["end_ns"][m & (rec["thread"] == t)] for t in range(threads)]
        idle.append([(last - (e.max() if e.size else sent)) / 1e3 for e in ends])
        with_reset.append(bool(reset[m].any()))
    spans, idle, with_reset = np.array(spans), np.array(idle), np.array(with_reset)
    out["batches"] = int(spans.size)
    out["batch_us_median"] = float(np.median(spans))
    out["batches_with_reset"] = int(with_reset.sum())
    # Idle behind the last env, as a share of all threads' time in the batches.
    out["idle_share"] = float(idle.sum() / (threads * spans.sum()))
    out["idle_us_per_batch_per_thread"] = [float(x) for x in idle.mean(axis=0)]
    for name, sel in (("with_reset", with_reset), ("without_reset", ~with_reset)):
        if sel.any():
            out[f"idle_share_{name}"] = float(idle[sel].sum() / (threads * spans[sel].sum()))
    out["busy_share"] = float(dur.sum() / (threads * spans.sum()))  # the rest: dispatch and wake-up
    out["_dur"], out["_reset"] = dur, reset
    return out


def simulate(rec: dict[str, np.ndarray], threads: int) -> dict[str, float]:
    """Replays the measured batches' task times on `threads` threads that pop one shared queue:
    the share of thread time busy (1 = no thread waits for the last env), per queue order, and
    the bound no order beats (the batch's work / threads, or its longest task); and, as the most a
    reset run ahead of the batch could give, the env-id order with each reset as long as a step."""
    # Every step at the median step's time: on a shared machine a few steps are preempted for
    # milliseconds, which 16 threads would not see all at once; resets as measured.
    reset = rec["reset"].astype(bool)
    step = np.median((rec["end_ns"] - rec["start_ns"])[~reset])
    dur = np.where(reset, rec["end_ns"] - rec["start_ns"], step)
    key = np.unique(np.stack([rec["sent_ns"], rec["batch"]]), axis=1, return_inverse=True)[1].ravel()
    work, spans = 0.0, {"env-id order": 0.0, "resets first": 0.0, "bound": 0.0, "resets ahead": 0.0}
    for b in range(key.max() + 1):
        m = np.flatnonzero(key == b)
        m = m[np.argsort(rec["env"][m], kind="stable")]
        d, r = dur[m], rec["reset"][m].astype(bool)
        work += d.sum()
        for name, order in (("env-id order", d), ("resets first", np.concatenate([d[r], d[~r]])),
                            ("resets ahead", np.where(r, step, d))):
            free = np.zeros(threads)
            for x in order:  # the thread that frees up first takes the next env
                free[free.argmin()] += x
            spans[name] += free.max() * (d.sum() / order.sum())  # same work, to compare shares
        spans["bound"] += max(d.sum() / threads, d.max())
    return {name: float(work / (threads * span)) for name, span in spans.items()}


def histogram(dur: np.ndarray, reset: np.ndarray, width: int = 40) -> str:
    """Step times on a log2 scale of µs, normal steps and steps that reset side by side."""
    lo, hi = math.floor(math.log2(max(dur.min(), 1))), math.ceil(math.log2(dur.max() + 1))
    lines = [f"{'µs':>15} {'steps':>8} {'resets':>7}"]
    counts = [(int(((dur >= 2 ** e) & (dur < 2 ** (e + 1)) & ~reset).sum()),
               int(((dur >= 2 ** e) & (dur < 2 ** (e + 1)) & reset).sum())) for e in range(lo, hi)]
    top = max(max(c) for c in counts) or 1
    for e, (a, b) in zip(range(lo, hi), counts):
        bar = "#" * math.ceil(width * a / top) + "R" * math.ceil(width * b / top)
        lines.append(f"{2 ** e:>7,}-{2 ** (e + 1):<7,} {a:>8} {b:>7} {bar}")
    return "\n".join(lines)


def report(game: str, n: int, threads: int, label: str, s: dict[str, Any]) -> None:
    print(f"\n{game}, num_envs={n}, {threads} thread(s), {label}: {s['steps']} env steps, {s['resets']} reset "
          f"(median {s['reset_us_median'] or 0:.0f} µs vs {s['step_us_median']:.0f} µs a step, "
          f"{(s['reset_us_median'] or 0) / s['step_us_median']:.1f}x); {s['batches']} batches "
          f"(median {s['batch_us_median']:.0f} µs), {s['batches_with_reset']} with a reset")
    print(histogram(s["_dur"], s["_reset"]))
    per = ", ".join(f"t{t} {v:.0f}" for t, v in enumerate(s["idle_us_per_batch_per_thread"]))
    print(f"idle behind the batch's last env: {100 * s['idle_share']:.1f}% of thread time "
          f"(batches with a reset {100 * s.get('idle_share_with_reset', 0):.1f}%, without "
          f"{100 * s.get('idle_share_without_reset', 0):.1f}%); µs per batch: {per}; "
          f"tasks busy {100 * s['busy_share']:.1f}%")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout,pong")
    parser.add_argument("--num-envs", default="8,64")
    parser.add_argument("--threads", default="all", help="comma-separated; all = one per core")
    parser.add_argument("--steps", type=int, default=1000, help="batches per run")
    parser.add_argument("--autoreset", default="next_step", choices=["next_step", "same_step"])
    parser.add_argument("--compare", action="store_true",
                        help="alternate blocks of batches: resets first (the engine's) and plain env-id order")
    parser.add_argument("--simulate", default="", metavar="THREADS",
                        help="comma-separated thread counts to replay the measured batches on (e.g. 16)")
    parser.add_argument("--overhead", default="", metavar="FRONT_END",
                        help="sb3 or ale: where each synchronous step's wall time goes (overhead_run), per "
                             "game, num_envs and threads")
    parser.add_argument("--json", default=None, help="write the summaries to this file")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    orders = (True, False) if args.compare else (True,)
    results: dict[str, Any] = {}
    if args.overhead:
        for game in args.game.split(","):
            for n in [int(x) for x in args.num_envs.split(",")]:
                for threads in sorted({cores if t == "all" else int(t) for t in args.threads.split(",")}):
                    out = results[f"{game}|{n}|{threads}|{args.overhead}"] = overhead_run(
                        game, n, threads, args.steps, args.overhead)
                    print(f"\n{game}, num_envs={n}, {threads} thread(s), {args.overhead} front-end: µs per step, "
                          "median (mean)")
                    for k, v in out.items():
                        print(f"  {k:<28} {v['median_us']:>9.1f} ({v['mean_us']:.1f})")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        return results
    for game in args.game.split(","):
        for n in [int(x) for x in args.num_envs.split(",")]:
            for threads in sorted({cores if t == "all" else int(t) for t in args.threads.split(",")}):
                logs = profile_run(game, n, threads, args.steps, autoreset=args.autoreset, orders=orders)
                for order, rec in logs.items():
                    label = ("resets first" if order else "env-id order") + f", {args.autoreset}"
                    s = summarize(rec, threads)
                    report(game, n, threads, label, s)
                    for t in [int(x) for x in args.simulate.split(",") if x]:
                        s[f"simulated_{t}"] = sim = simulate(rec, t)
                        print(f"replayed on {t} threads, busy share: " + ", ".join(f"{k} {v:.3f}" for k, v in sim.items()))
                    results[f"{game}|{n}|{threads}|{label}"] = {k: v for k, v in s.items() if not k.startswith("_")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
