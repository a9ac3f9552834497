"""Which resets the engine may compute ahead of time: a table shipped with the package, never a probe
run on the user's path, so that the same seeds give the same run on every machine and in every run.

A reset computed ahead (native/env/reset_ahead.*) is swapped in at an episode's end instead of ALE
emulating the reset then. It is exact only where ALE's reset keeps nothing of the play before it;
``tools/reset_verdicts.py`` vets each ROM, mode, difficulty and sticky setting offline, after long
and varied play, and writes ``reset_table.csv`` beside this file (its header says how: the plays, the
frames, the date, the ALE). A key the table lacks, or one it refuses, resets for real; so does every
key where the engine's ALE (its release and our patches to it) is not the one the table was vetted with
(warned once). At run time the
engine still re-checks a sample of its swaps against a real reset, in idle time, and refuses a key
(with a warning) on any difference.
"""

from __future__ import annotations

import csv
import re
import warnings
from functools import lru_cache
from pathlib import Path

from sb3_ale_vec import _engine
from sb3_ale_vec.games import rom_path

TABLE = Path(__file__).with_name("reset_table.csv")
# The header lines naming the ALE the verdicts were vetted with: its release and the digest of our changes
# to its sources (build_support/ale_patches.py), as tools/reset_verdicts.py writes them.
VERSION_LINE = re.compile(r"^#\s*ale_version:\s*(\S+)\s*$")
PATCHES_LINE = re.compile(r"^#\s*ale_patches:\s*(\S+)\s*$")


@lru_cache(maxsize=1)
def verdicts() -> dict[tuple[str, int, int, bool], str]:
    """(ROM id, mode, difficulty, sticky) -> "" (computed ahead) or why not; mode/difficulty -1: the default."""
    with TABLE.open(newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["rom"], int(r["mode"]), int(r["difficulty"]), r["sticky"] == "1"): r["verdict"] for r in rows}


def _header_value(line_re: re.Pattern) -> str | None:
    with TABLE.open() as f:
        for line in f:
            if not line.startswith("#"):
                return None
            match = line_re.match(line)
            if match:
                return match.group(1)
    return None


@lru_cache(maxsize=1)
def table_version() -> str | None:
    """The ALE version the table was vetted with (its header's ``# ale_version: X`` line); None if it names none."""
    return _header_value(VERSION_LINE)


@lru_cache(maxsize=1)
def table_patches() -> str | None:
    """The digest of our ALE patches the table was vetted with (``# ale_patches: X``); None if it names none."""
    return _header_value(PATCHES_LINE)


@lru_cache(maxsize=1)
def _holds() -> bool:
    """Whether the table's verdicts hold for the engine's ALE. A verdict is about ALE's reset code and the
    game's start-up under it: another ALE may reset otherwise, so nothing is computed ahead (warned once)."""
    made = (table_version(), table_patches())
    running = (_engine.ALE_VERSION, _engine.ALE_PATCHES)
    if made == running:
        return True

    def name(version: str | None, patches: str | None) -> str:
        return f"ALE {version or '(none named)'} with our patches {patches or '(none named)'}"

    warnings.warn(f"sb3_ale_vec's resets-ahead table ({TABLE.name}) was vetted with {name(*made)}, but the engine "
                  f"was built from {name(*running)}: resets ahead are off (every env resets for real) until the "
                  "table is re-made with `python tools/reset_verdicts.py --write`.", RuntimeWarning, stacklevel=2)
    return False


@lru_cache(maxsize=None)
def defaults(rom: str) -> tuple[int, int]:
    """The (mode, difficulty) ALE plays a ROM in when none is set (the engine's ALE, the ROM loaded once a
    process and ROM)."""
    return tuple(_engine.default_mode(rom_path(rom)))


def table_key(rom: str, mode: int, difficulty: int, sticky: bool) -> tuple[str, int, int, bool]:
    """The table's key for the game the engine runs with these settings (mode, difficulty -1: left to ALE).
    ALE fills a half left out with the ROM's default, so the key does too: (breakout, 4, -1) is the game
    (4, 0) is. The default pair is the default key (-1, -1), the same game down to its state after the
    reset (tools/reset_verdicts.py checks it), and the one vetted thoroughly."""
    mode, difficulty, sticky = int(mode), int(difficulty), bool(sticky)
    if mode < 0 and difficulty < 0:
        return rom, -1, -1, sticky  # no ROM load on the common path
    default = defaults(rom)
    pair = (default[0] if mode < 0 else mode, default[1] if difficulty < 0 else difficulty)
    return (rom, -1, -1, sticky) if pair == default else (rom, *pair, sticky)


def vetted(rom: str, mode: int, difficulty: int, sticky: bool) -> bool:
    """Whether the table lets this key's resets be computed ahead (mode, difficulty -1: the ROM's default)."""
    return _holds() and verdicts().get(table_key(rom, mode, difficulty, sticky)) == ""
