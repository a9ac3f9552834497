"""The resets-ahead verdicts: which ROM, mode, difficulty and sticky setting may have its resets computed
ahead of time (native/env/reset_ahead.*), vetted offline by the probe of native/env/reset_probe.*, and
shipped as sb3_ale_vec/reset_table.csv (read by sb3_ale_vec/reset_table.py). docs/faithfulness.md holds
the tables this prints.

    python tools/reset_verdicts.py --write    # re-derive reset_table.csv (about an hour on one core)
    python tools/reset_verdicts.py            # the markdown table of the ROMs refused (default mode)
    python tools/reset_verdicts.py --roms     # every ROM: screen rows, modes, difficulties, resets ahead
    python tools/reset_verdicts.py --modes    # the markdown table of the other modes and difficulties refused

The printing modes read the table; only --write probes.

Each ROM's default mode and difficulty is vetted thoroughly (THOROUGH: about 122,000 frames of play a
key), every other pair quickly (MODES: about 4,500). The thorough effort on the ~2,000 explicit keys
would take about 7 hours on one core, for keys few runs ask for; and on the default keys the long plays
refused nothing that the first 1,000 frames, the RNG checks and the scrambles did not
(tests/unit/test_reset_table.py checks it), so the quick look is where refusals show. The engine's run-time
re-checks sample the swaps of every key alike.

The header's `ale_version:` and `ale_patches:` lines name the ALE the probe ran (its release and the
digest of build_support/ale_patches.py's changes); sb3_ale_vec/reset_table.py computes no reset ahead
under an engine built from another (warned once), until this tool re-makes the table.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import multiprocessing
import pickle
import resource
import sys
import time

import ale_py
from ale_py import ALEInterface, LoggerMode, roms

from sb3_ale_vec import _engine, _testing, reset_table

ALEInterface.setLoggerMode(LoggerMode.Error)
STICKY = 0.25  # the sticky setting the table's "1" keys were probed with (any > 0 resets alike)

# The probe's effort (reset_probe.hpp's ProbeEffort), per kind of key. Each ROM's default mode and
# difficulty, the keys nearly every run uses, get long and varied play: two random plays to game over
# (up to 100,000 frames each) and a scoring play of 10,000 frames that searches 6 sequences of 48 frames
# at each step, then plays to game over; a reset compared every 1,000 frames of each; 8 RAM scrambles.
THOROUGH = dict(random_plays=2, max_frames=100_000, scoring_plays=1, scoring_frames=10_000, search_width=6,
                search_frames=48, check_every=1_000, scrambles=8)
# Every other mode and difficulty ALE offers (nearly 2,000 keys): the probe's quick look (its defaults),
# what fits the rest of the hour.
MODES = dict(random_plays=1, max_frames=2_000, scoring_plays=1, scoring_frames=500, search_width=4,
             search_frames=48, check_every=500, scrambles=2)


def supported() -> list[str]:
    return [r for r in roms.get_all_rom_ids() if ALEInterface.isSupportedROM(str(roms.get_rom_path(r)))]


def explicit_pairs(rom: str) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """Every (mode, difficulty) the ROM offers, and its default (mode, difficulty -1), perhaps not among them."""
    ale = _reset(rom)
    default = ale.cloneState()
    pairs = [(int(m), int(d)) for m in ale.getAvailableModes() for d in ale.getAvailableDifficulties()]
    chosen = (int(default.getCurrentMode()), int(default.getDifficulty()))
    # The default pair set explicitly is the same game, down to its state after the reset: it gets the
    # default key's (thorough) verdict. (Backgammon's default difficulty, 0, is not one ALE offers.)
    if chosen in pairs:
        assert pickle.dumps(_reset(rom, chosen).cloneState()) == pickle.dumps(default), rom
    return pairs, chosen


def _reset(rom: str, pair: tuple[int, int] | None = None) -> ALEInterface:
    ale = ALEInterface()
    ale.loadROM(str(roms.get_rom_path(rom)))
    if pair is not None:
        ale.setMode(pair[0])
        ale.setDifficulty(pair[1])
    ale.reset_game()
    return ale


def probe(key: tuple[str, int, int, bool]) -> tuple[str, int]:
    rom, mode, difficulty, sticky = key
    effort = THOROUGH if (mode, difficulty) == (-1, -1) else MODES
    return _testing._probe_reset(str(roms.get_rom_path(rom)), mode, difficulty, STICKY if sticky else 0.0, **effort)


def write(processes: int = 1) -> None:
    """Probes every key and writes reset_table.csv, saying in its header how it was vetted."""
    start, games = time.time(), supported()
    keys, copies = [], {}  # copies: explicit default pair -> the default key whose verdict it takes
    for rom in games:
        pairs, default = explicit_pairs(rom)
        for sticky in (False, True):
            keys.append((rom, -1, -1, sticky))
            for mode, difficulty in pairs:
                if (mode, difficulty) == default:
                    copies[(rom, mode, difficulty, sticky)] = (rom, -1, -1, sticky)
                else:
                    keys.append((rom, mode, difficulty, sticky))
    results = {}
    with multiprocessing.Pool(processes) if processes > 1 else _Inline() as pool:
        for i, (key, result) in enumerate(zip(keys, pool.imap(probe, keys, chunksize=4)), 1):
            results[key] = result
            if i % 50 == 0 or i == len(keys):
                print(f"{i}/{len(keys)} keys, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    frames = sum(f for _, f in results.values())
    refused = sum(bool(why) for why, _ in results.values())
    results.update({copy: results[source] for copy, source in copies.items()})
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's processes, reaped by now
    minutes = ((time.time() - start) / 60, (time.process_time() + children.ru_utime + children.ru_stime) / 60)
    with reset_table.TABLE.open("w", newline="") as f:
        f.write(_header(len(games), len(keys), len(copies), frames, refused, minutes, processes))
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["rom", "mode", "difficulty", "sticky", "frames", "verdict"])
        for (rom, mode, difficulty, sticky), (why, n) in sorted(results.items()):
            out.writerow([rom, mode, difficulty, int(sticky), n, why])


def _header(games: int, keys: int, copies: int, frames: int, refused: int, minutes: tuple[float, float],
            processes: int) -> str:
    def effort(e: dict) -> str:
        return ", ".join(f"{k}={v}" for k, v in e.items())

    lines = [
        "Made by tools/reset_verdicts.py --write: the resets-ahead verdict of each ROM, mode, difficulty and "
        "sticky setting.",
        f"ale_version: {_engine.ALE_VERSION}",
        f"ale_patches: {_engine.ALE_PATCHES}",
        "ale_version and ale_patches (our changes to its sources) name the ALE the probe ran (the engine's); under "
        "another, sb3_ale_vec computes no reset ahead.",
        "verdict: empty = computed ahead; else why its resets are made for real. Keys not listed reset for real.",
        "frames: the frames of play the probe emulated for the key (0: refused before any play).",
        f"Vetted {datetime.date.today()} with ale-py {ale_py.__version__}, {processes} process(es), "
        f"{minutes[0]:.0f} minutes ({minutes[1]:.0f} of CPU): {keys} keys of {games} ROMs probed, {frames:,} frames of play, {refused} refused; "
        f"the {copies} explicit default pairs (the ROM's default mode and difficulty set explicitly: the same "
        "game, down to its state after the reset) carry their default key's row.",
        "Every key: the reset after play must equal the reset without play (RAM, screen, the whole saved "
        "state); with sticky actions (probed at 0.25) the reset must not draw the environment RNG; "
        "its outcome must not depend on that RNG.",
        f"Default mode and difficulty (mode -1, difficulty -1), sticky 0 and 1: {effort(THOROUGH)}.",
        f"Every other (mode, difficulty) ALE offers, sticky 0 and 1: {effort(MODES)}.",
        "random_plays: random actions held 1-16 frames to game over or max_frames; scoring_plays: greedy "
        "search (search_width sequences of search_frames frames from each state, the most reward without "
        "losing a life, backing up where all lose one) for scoring_frames frames, then random play to game "
        "over; a reset compared every check_every frames of a play and at its end; scrambles: the whole "
        "RAM overwritten after 64 frames.",
    ]
    return "".join(f"# {line}\n" for line in lines)


class _Inline:
    """multiprocessing.Pool's imap, in this process (the machine is shared: one process by default)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def imap(fn, items, chunksize=1):
        return map(fn, items)


def verdict(rom: str, mode: int = -1, difficulty: int = -1, sticky: float = 0.0) -> str:
    """The shipped table's verdict ("" = computed ahead); None where the table lacks the key."""
    return reset_table.verdicts().get((rom, int(mode), int(difficulty), sticky > 0))


def table() -> str:
    """The ROMs whose reset is not computed ahead, in their default mode and difficulty, and why."""
    rows = ["| ROM | sticky actions off | sticky actions 0.25 |", "|---|---|---|"]
    allowed = 0
    games = supported()
    for rom in games:
        off, on = verdict(rom), verdict(rom, sticky=STICKY)
        if off or on:
            rows.append(f"| {rom} | {off or 'computed ahead'} | {on or 'computed ahead'} |")
        allowed += not off and not on
    rows.append(f"\n{allowed} of the {len(games)} ROMs ALE runs have every reset computed ahead in their "
                "default mode and difficulty, with sticky actions or without; the rest are listed above.")
    return "\n".join(rows)


def roms_table() -> str:
    """Every ROM ALE runs: its screen's rows (ALE's, after loading it), its modes and difficulties, and
    whether its resets are computed ahead (default mode and difficulty); then the ROMs ALE refuses."""
    rows = ["| ROM | screen rows | modes | difficulties | resets ahead (sticky actions off / 0.25) |",
            "|---|---|---|---|---|"]
    for rom in supported():
        screen_rows, modes, difficulties = _testing._rom_facts(str(roms.get_rom_path(rom)))
        ahead = " / ".join("no" if verdict(rom, sticky=p) else "yes" for p in (0.0, STICKY))
        rows.append(f"| {rom} | {screen_rows} | {modes} | {difficulties} | {ahead} |")
    refused = sorted(set(roms.get_all_rom_ids()) - set(supported()))
    rows.append(f"\nale-py also ships {', '.join(refused)}: ALE knows no game with their MD5s (loading one ends "
                "the process, and ale-py registers no environment for them), so every front-end refuses them "
                "with a ValueError naming the ROM before it starts a thread.")
    return "\n".join(rows)


def modes_table() -> str:
    """The explicit modes and difficulties refused: a row per ROM and reason, which pairs without and with
    sticky actions."""
    offered: dict[str, set[tuple[int, int]]] = {}
    refused: dict[tuple[str, str], tuple[set, set]] = {}
    for (rom, mode, difficulty, sticky), why in reset_table.verdicts().items():
        if mode < 0:
            continue
        offered.setdefault(rom, set()).add((mode, difficulty))
        if why:
            refused.setdefault((rom, _category(why)), (set(), set()))[sticky].add((mode, difficulty))
    rows = ["| ROM | why | sticky actions off | sticky actions 0.25 |", "|---|---|---|---|"]
    for (rom, why), (off, on) in sorted(refused.items()):
        rows.append(f"| {rom} | {why} | {_pairs(off, offered[rom])} | {_pairs(on, offered[rom])} |")
    n, keys = sum(len(off) + len(on) for off, on in refused.values()), 2 * sum(map(len, offered.values()))
    rows.append(f"\n{n} of the {keys} explicit keys (every mode and difficulty ALE offers, sticky actions off "
                "and 0.25) are refused; the rest are computed ahead.")
    return "\n".join(rows)


def _category(why: str) -> str:
    """A verdict's reason without the play and bytes that showed it (its text before the parenthesis)."""
    return why.split(" (")[0]


def _pairs(refused: set[tuple[int, int]], offered: set[tuple[int, int]]) -> str:
    """Which of the ROM's (mode, difficulty) pairs `refused` holds, in words."""
    if not refused:
        return "none"
    if refused == offered:
        return "every mode and difficulty"
    modes, levels = sorted({m for m, _ in offered}), sorted({d for _, d in offered})
    whole = [m for m in modes if all((m, d) in refused for d in levels)]
    if refused != {(m, d) for m in whole for d in levels}:
        return ", ".join(f"mode {m} difficulty {d}" for m, d in sorted(refused))
    every = " (every difficulty)" if len(levels) > 1 else ""
    if len(whole) > 2 * (len(modes) - len(whole)):
        return f"every mode but {', '.join(str(m) for m in modes if m not in whole)}{every}"
    return f"mode{'s' if len(whole) > 1 else ''} {', '.join(map(str, whole))}{every}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="probe every key and write reset_table.csv")
    parser.add_argument("--processes", type=int, default=1, help="with --write: probes at once (default 1)")
    parser.add_argument("--modes", action="store_true", help="the explicit modes and difficulties refused")
    parser.add_argument("--roms", action="store_true", help="every ROM: screen rows, modes, difficulties, resets ahead")
    args = parser.parse_args()
    if args.write:
        write(args.processes)
    elif args.modes:
        print(modes_table())
    else:
        print(roms_table() if args.roms else table())
