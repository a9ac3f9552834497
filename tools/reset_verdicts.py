"""The resets-ahead verdict of every ROM ale-py ships, in its default mode and difficulty, without and
with sticky actions: whether its next reset may be computed ahead of time, and if not, why not
(native/env/reset_ahead.cpp's probe, run on a fresh emulator). docs/faithfulness.md holds the tables this
prints; tests/test_reset_ahead.py re-derives them.

    python tools/reset_verdicts.py            # the markdown table of the ROMs refused
    python tools/reset_verdicts.py --roms     # every ROM: screen rows, modes, difficulties, resets ahead
    python tools/reset_verdicts.py --modes    # every mode and difficulty: the refused ones
"""

from __future__ import annotations

import argparse
from functools import lru_cache

from ale_py import ALEInterface, LoggerMode, roms

from sb3_ale_vec import _testing

STICKY = 0.25


def supported() -> list[str]:
    ALEInterface.setLoggerMode(LoggerMode.Error)
    return [r for r in roms.get_all_rom_ids() if ALEInterface.isSupportedROM(str(roms.get_rom_path(r)))]


def verdict(rom: str, mode: int = -1, difficulty: int = -1, sticky: float = 0.0) -> str:
    return _probe(rom, mode, difficulty, sticky)  # one cache key however the arguments were spelled


@lru_cache(maxsize=None)
def _probe(rom: str, mode: int, difficulty: int, sticky: float) -> str:
    return _testing._probe_reset(str(roms.get_rom_path(rom)), mode, difficulty, sticky)


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


def refused_modes() -> list[tuple[str, int, int, str]]:
    ale, out = ALEInterface(), []
    for rom in supported():
        ale.loadROM(str(roms.get_rom_path(rom)))
        for mode in ale.getAvailableModes():
            for difficulty in ale.getAvailableDifficulties():
                why = verdict(rom, int(mode), int(difficulty), STICKY)
                if why:
                    out.append((rom, int(mode), int(difficulty), why))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", action="store_true", help="every mode and difficulty (sticky 0.25): the refused ones")
    parser.add_argument("--roms", action="store_true", help="every ROM: screen rows, modes, difficulties, resets ahead")
    args = parser.parse_args()
    if args.modes:
        for row in refused_modes():
            print(*row, sep="\t")
    else:
        print(roms_table() if args.roms else table())
