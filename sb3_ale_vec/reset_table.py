"""Which resets the engine may compute ahead of time: a table shipped with the package, never a probe
run on the user's path, so that the same seeds give the same run on every machine and in every run.

A reset computed ahead (native/env/reset_ahead.*) is swapped in at an episode's end instead of ALE
emulating the reset then. It is exact only where ALE's reset keeps nothing of the play before it;
``tools/reset_verdicts.py`` vets each ROM, mode, difficulty and sticky setting offline, after long
and varied play, and writes ``reset_table.csv`` beside this file (its header says how: the plays, the
frames, the date). A key the table lacks, or one it refuses, resets for real. At run time the engine
still re-checks a sample of its swaps against a real reset, in idle time, and refuses a key (with a
warning) on any difference.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("reset_table.csv")


@lru_cache(maxsize=1)
def verdicts() -> dict[tuple[str, int, int, bool], str]:
    """(ROM id, mode, difficulty, sticky) -> "" (computed ahead) or why not; mode/difficulty -1: the default."""
    with TABLE.open(newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["rom"], int(r["mode"]), int(r["difficulty"]), r["sticky"] == "1"): r["verdict"] for r in rows}


def vetted(rom: str, mode: int, difficulty: int, sticky: bool) -> bool:
    """Whether the table lets this key's resets be computed ahead (mode, difficulty -1: the ROM's default)."""
    return verdicts().get((rom, int(mode), int(difficulty), bool(sticky))) == ""
