"""The loops users run, side by side: what resets prepared ahead do in each, and how fast each is.

    python -m sb3_ale_vec.bench.loops                       # Breakout, the three loops, N=2,16,64, 1-2 threads
    python -m sb3_ale_vec.bench.loops --loops tight,idle:1 --num-envs 8 --threads 2 --old ../old --rounds 5

The loops, each a caller that steps the envs with random actions and between two batches:
- `tight`: does nothing (a benchmark's loop);
- `idle:MS`: sleeps MS milliseconds, its cores idle (a policy's forward pass on a GPU);
- `busy:MS`: multiplies matrices on every core for about MS milliseconds (a policy on the CPU: the
  same work in every peer, calibrated once by this process).
The peers are bench.peers' vector peers (the equal-work ones and "sb3_ale_vec sb3"), "sb3_ale_vec old"
being this engine from another tree's build (--old). Each runs in a child process of its own; they
take turns round by round, and the table gives medians: env steps/s through the whole loop (its gap
included, the same for every peer) and, for this engine, how its resets were made: swapped in
(prepared ahead), of those replayed (the chain's post-reset steps prepared too), and inline (made
when the episode ended, on the step's own path). Ratios: steps/s over ale-py's and over the --old
build's (SB3's front-end does other work per step: its ratio to ale-py's is the issue's "through the SB3
front-end", not equal work).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

SERVE = os.path.abspath(__file__)  # run by path: an --old tree's package has no such module
# Runs SERVE by path without putting its folder first on sys.path (`python -P`, which 3.10 lacks).
RUN_BY_PATH = ["-c", "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"]


def _gap(loop: str):
    """The caller's work between two batches, as a function (None: the tight loop)."""
    kind, _, amount = loop.partition(":")
    if kind == "tight":
        return None
    if kind == "idle":
        seconds = float(amount) / 1000
        return lambda: time.sleep(seconds)
    if kind == "busy":  # amount: matrix products (the parent calibrated them to the milliseconds asked)
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        a = torch.rand(256, 256)
        reps = int(amount)

        def busy() -> None:
            for _ in range(reps):
                torch.mm(a, a)
        return busy
    raise ValueError(f"unknown loop {loop!r}: tight, idle:MS or busy:MS")


def calibrate_busy(ms: float) -> int:
    """How many 256x256 products take `ms` milliseconds on every core here."""
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    a = torch.rand(256, 256)
    for _ in range(50):
        torch.mm(a, a)
    start, reps = time.perf_counter(), 400
    for _ in range(reps):
        torch.mm(a, a)
    return max(1, round(ms / 1000 / ((time.perf_counter() - start) / reps)))


def serve(loop: str, peer: str, game: str, n: int, threads: int) -> None:
    """A child: bench.peers' VectorPeer (of whichever tree is first on the path), its step followed by
    the loop's gap; answers "STEPS SECONDS" lines with "RESULT {json}" (SECONDS unused)."""
    from sb3_ale_vec.bench import peers

    runner = peers.VectorPeer(peer, game, n, threads, n)
    gap, step = _gap(loop), runner.step
    if gap is not None:
        def gapped(actions):
            out = step(actions)
            gap()
            return out
        runner.step = gapped
    vec = getattr(getattr(runner.env, "_native", None), "_vec", None)  # this engine's counts, where it has them

    def counts() -> dict[str, int]:
        if vec is None:
            return {}
        found = {k: getattr(vec, f"_resets_{k}", 0) for k in ("taken", "replayed")}
        if hasattr(vec, "_game_resets"):  # SB3's dones count lives lost too; older builds lack it
            found["games"] = vec._game_resets
        return found

    print("READY", flush=True)
    for line in sys.stdin:
        if line.strip() == "QUIT":
            break
        before, resets = counts(), [0]
        inner = runner.step

        def counting(actions):
            out = inner(actions)
            resets[0] += int(sum(out[2] | out[3])) if len(out) == 5 else int(sum(out[2]))
            return out
        runner.step = counting
        result = runner.run(int(line.split()[0]), 0.0)  # "STEPS SECONDS", as peers.serve reads
        runner.step = inner
        result["resets"] = resets[0]
        result.update({k: v - before[k] for k, v in counts().items()})
        result["resets"] = result.pop("games", result["resets"])
        print("RESULT", json.dumps(result), flush=True)
    runner.close()


def measure(game: str, n: int, threads: int, loop: str, peers: list[str], rounds: int, steps: int,
            old: str | None) -> dict[str, list[dict]]:
    from sb3_ale_vec.bench.main import Server  # its children answer as peers.serve's do

    Server.old_tree = old
    children = [Server(p, game, n, threads, script=[*RUN_BY_PATH, SERVE, "serve", loop]) for p in peers]
    runs: dict[str, list[dict]] = {p: [] for p in peers}
    try:
        live = [c for c in children if c.ready()]
        if not live:
            raise SystemExit(f"no peer of {peers} started (each one's error is above)")
        for r in range(rounds):
            for c in live[r % len(live):] + live[:r % len(live)]:  # a different peer first each round
                result = c.run(steps, 0.0)
                if result is not None:
                    runs[c.key[0]].append(result)
    finally:
        for c in children:
            c.close()
    return runs


def report(game: str, n: int, threads: int, loop: str, runs: dict[str, list[dict]]) -> None:
    def med(peer: str, key: str) -> float | None:
        values = [r[key] for r in runs.get(peer, []) if key in r]
        return statistics.median(values) if values else None

    def ratio(peer: str, base: str) -> str:
        a, b = med(peer, "steps_per_s"), med(base, "steps_per_s")
        return f"{a / b:.3f}" if a and b and peer != base else ""

    print(f"\n{game}, N={n}, {threads} thread(s), loop {loop}; medians of {max(map(len, runs.values()), default=0)} rounds",
          flush=True)
    print(f"{'peer':<22} {'steps/s':>9} {'/ale_py':>8} {'/old':>7} {'resets':>7} {'swapped':>8} {'replayed':>8} {'inline':>7}")
    for peer, values in runs.items():
        sps = med(peer, "steps_per_s")
        if sps is None:
            print(f"{peer:<22} {'failed':>9}")
            continue
        resets = sum(r["resets"] for r in values)  # game resets (this engine's count where it has one)
        counts = ""
        if values and "taken" in values[0]:
            taken, replayed = sum(r["taken"] for r in values), sum(r["replayed"] for r in values)
            counts = f" {taken:>8} {replayed:>8} {resets - taken:>7}"
        print(f"{peer:<22} {sps:>9,.0f} {ratio(peer, 'ale_py'):>8} {ratio(peer, 'sb3_ale_vec old'):>7} {resets:>7}{counts}",
              flush=True)


def main(argv: list[str] | None = None) -> None:
    if argv is None and sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="breakout")
    p.add_argument("--loops", default="tight,idle:1,busy:1", help="tight, idle:MS, busy:MS, comma-separated")
    p.add_argument("--num-envs", default="2,16,64")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--peers", default="sb3_ale_vec,sb3_ale_vec inline,ale_py,sb3_ale_vec sb3",
                   help="bench.peers' vector peers, comma-separated; with --old, 'sb3_ale_vec old' joins")
    p.add_argument("--old", help="another tree with its build in place: its engine is the peer 'sb3_ale_vec old'")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--frames", type=int, default=40_000, help="about this many env steps x N per run")
    args = p.parse_args(argv)
    peers = args.peers.split(",") + (["sb3_ale_vec old"] if args.old else [])
    for loop in args.loops.split(","):
        kind, _, ms = loop.partition(":")
        run_loop = f"busy:{calibrate_busy(float(ms))}" if kind == "busy" else loop
        for n in map(int, args.num_envs.split(",")):
            for threads in map(int, args.threads.split(",")):
                steps = max(50, args.frames // n)
                runs = measure(args.game, n, threads, run_loop, peers, args.rounds, steps, args.old)
                report(args.game, n, threads, loop, runs)


if __name__ == "__main__":
    main()
