"""The resets-ahead table shipped with the package (sb3_ale_vec/reset_table.py, reset_table.csv): it covers
every key a run can ask for, it was written with the tool's current efforts, a quick probe re-derives its
rows, and the probe refuses what it must (tools/reset_verdicts.py writes the table; docs/faithfulness.md
shows it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from all_roms import ROMS
from ale_py import roms

from sb3_ale_vec import _testing, reset_table
from sb3_ale_vec.games import rom_path

ROOT = Path(__file__).resolve().parents[2]
STICKY = 0.25


def _tool():
    spec = importlib.util.spec_from_file_location("reset_verdicts", ROOT / "tools" / "reset_verdicts.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _quick(rom: str, mode: int = -1, difficulty: int = -1, sticky: bool = False, **effort) -> str:
    why, frames = _testing._probe_reset(rom_path(rom), mode, difficulty, STICKY if sticky else 0.0, **effort)
    assert frames >= 0
    return why


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_table_covers_every_key_of_every_rom_ale_runs():
    table = reset_table.verdicts()
    for rom in ROMS:
        _, modes, difficulties = _testing._rom_facts(rom_path(rom))
        for sticky in (False, True):
            assert (rom, -1, -1, sticky) in table, (rom, sticky)
            explicit = [k for k in table if k[0] == rom and k[1] >= 0 and k[3] == sticky]
            assert len(explicit) == modes * difficulties, (rom, sticky)


def test_vetted_reads_the_table():
    assert reset_table.vetted("breakout", -1, -1, False) and reset_table.vetted("breakout", 0, 0, True)
    assert not reset_table.vetted("seaquest", -1, -1, False)
    assert not reset_table.vetted("breakout", 99, 0, False)  # a key the table lacks resets for real


def test_the_table_says_how_it_was_vetted_with_the_tools_current_efforts():
    tool = _tool()
    header = "".join(line for line in reset_table.TABLE.read_text().splitlines(True) if line.startswith("#"))
    for effort in (tool.THOROUGH, tool.MODES):
        assert ", ".join(f"{k}={v}" for k, v in effort.items()) in header


RAM = "its reset keeps RAM"  # its start-up leaves bytes of RAM as they were
DRAWS = "with sticky actions its reset draws the environment RNG"  # the mode's set-up acts


@pytest.mark.parametrize("rom, mode, difficulty, off, on", [
    ("seaquest", -1, -1, RAM, RAM),
    ("adventure", 1, 0, "its reset depends on the environment RNG", DRAWS),  # its set-up uses a draw
    ("berzerk", -1, -1, "", DRAWS),
    ("breakout", -1, -1, "", ""),
    ("pong", -1, -1, "", ""),
])
@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.parametrize("sticky", [False, True])
@pytest.mark.deep  # the table re-derived: it changes with ALE, rarely
def test_a_quick_probe_rederives_the_tables_rows(rom, mode, difficulty, off, on, sticky):
    why, expected = _quick(rom, mode, difficulty, sticky), on if sticky else off
    assert why.startswith(expected) and (why == "") == (expected == ""), why
    shipped = reset_table.verdicts()[(rom, mode, difficulty, sticky)]
    assert shipped.startswith(expected) and (shipped == "") == (expected == ""), shipped


def test_unsupported_roms_modes_and_efforts_raise_value_error():
    combat = str(roms.get_rom_path("combat"))  # ale-py ships it; ALE knows no game with its MD5
    with pytest.raises(ValueError, match="not a ROM that ALE supports"):
        _testing._probe_reset(combat)
    with pytest.raises(ValueError, match="mode 99 is not one of the ROM's modes"):
        _testing._probe_reset(rom_path("breakout"), 99)
    with pytest.raises(ValueError, match="search_width and search_frames must be >= 1"):
        _testing._probe_reset(rom_path("breakout"), search_width=0)


@pytest.mark.slow  # over 2.5 s in the quick tier
def test_the_docs_show_the_tables_refusals():
    tool = _tool()
    docs = (ROOT / "docs" / "faithfulness.md").read_text()
    for table in (tool.table(), tool.modes_table(), tool.roms_table()):
        # The lines that differ, so that a failure says which key moved.
        assert table in docs, [line for line in table.splitlines() if line not in docs.splitlines()]


# What the shipped table shows (docs/faithfulness.md): each refusal of a default key shows in the RNG
# checks, the first 1,000 frames of random play or a RAM scramble. That look and no more: no scoring play.
FIRST_LOOK = dict(max_frames=1000, scoring_plays=0)


@pytest.mark.slow  # 208 first looks: about 50 s
@pytest.mark.deep  # every default key probed: a sweep
def test_the_first_look_refuses_every_default_key_the_thorough_probe_refuses_and_for_the_same_reason():
    # The long and scoring plays found no refusal more: a key only they refuse would fail here (then
    # pin it as the case they matter for).
    for (rom, mode, difficulty, sticky), shipped in sorted(reset_table.verdicts().items()):
        if mode == -1:
            why = _quick(rom, mode, difficulty, sticky, **FIRST_LOOK)
            assert why.split(" (")[0] == shipped.split(" (")[0], (rom, sticky, why, shipped)
