"""Which key of the resets-ahead table (sb3_ale_vec/reset_table.py) an env is looked up under: the game
the engine actually runs (a mode or difficulty left as None is the ROM's default, as ALE plays it), and
none at all where the table was vetted with another ALE than the engine's."""

from __future__ import annotations

import functools
import importlib.util
import sys
import warnings
from pathlib import Path

import pytest
from ale_py import ALEInterface, LoggerMode

from sb3_ale_vec import AleVectorEnv, _engine, reset_table
from sb3_ale_vec.games import rom_path
from sb3_ale_vec.gymnasium import vector

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # build_support: the patches' digest the engine was built with
from build_support import ale_patches  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_table():
    """Each test reads the table and the engine's version anew (the module caches them per process)."""
    caches = [reset_table.verdicts, reset_table.table_version, reset_table.table_patches, reset_table._holds]
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


@functools.cache  # a ROM load each (0.3-0.4 s); the sticky cases ask the same
def played(rom: str, mode: int, difficulty: int) -> tuple[int, int]:
    """The (mode, difficulty) ALE runs after reset_game() with these set (-1: left as ALE's default),
    asked of ALE itself, as the engine sets them (native/env/emulator.cpp's load)."""
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.loadROM(rom_path(rom))
    if mode >= 0:
        ale.setMode(mode)
    if difficulty >= 0:
        ale.setDifficulty(difficulty)
    ale.reset_game()
    state = ale.cloneState()
    return int(state.getCurrentMode()), int(state.getDifficulty())


@pytest.mark.parametrize("rom, mode, difficulty", [
    ("breakout", 4, -1),  # allowed as (4, 0): looked up as (4, -1), a key the table lacks, it reset for real
    ("breakout", -1, 1),  # allowed as (0, 1)
    ("adventure", 1, -1),  # refused as (1, 0): its reset depends on the environment RNG
    ("backgammon", -1, 3),  # the only difficulty ALE offers it
])
@pytest.mark.parametrize("sticky", [False, True])
def test_a_half_explicit_key_gets_the_verdict_of_the_game_ale_runs(rom, mode, difficulty, sticky):
    full = played(rom, mode, difficulty)
    assert full[0] >= 0 and full[1] >= 0
    assert reset_table.vetted(rom, mode, difficulty, sticky) == (reset_table.verdicts()[(rom, *full, sticky)] == "")




@pytest.mark.parametrize("rom", ["breakout", "seaquest", "backgammon"])  # allowed; refused; 0 not offered
@pytest.mark.parametrize("sticky", [False, True])
def test_the_default_pair_set_in_full_or_in_half_is_the_default_key(rom, sticky):
    mode, difficulty = played(rom, -1, -1)
    assert reset_table.defaults(rom) == (mode, difficulty)
    for key in ((mode, difficulty), (mode, -1), (-1, difficulty)):
        assert reset_table.table_key(rom, *key, sticky) == (rom, -1, -1, sticky)
    assert reset_table.table_key(rom, -1, -1, sticky) == (rom, -1, -1, sticky)


@pytest.mark.parametrize("options", [dict(mode=4), dict(difficulty=1), dict(mode=4, difficulty=0)])
def test_an_env_with_a_half_explicit_mode_or_difficulty_computes_its_resets_ahead(monkeypatch, options):
    batches, build = [], vector.build_batch  # the batch the front-end built (the engine keeps its configs)

    def spy(*args, **kwargs):
        batches.append(build(*args, **kwargs))
        return batches[-1]

    monkeypatch.setattr(vector, "build_batch", spy)
    AleVectorEnv("breakout", 2, **options).close()
    assert [c.reset_ahead for c in batches[0].configs] == [True, True]  # the table allows (4, 0) and (0, 1)


def _vetted_many_keys() -> list[bool]:
    """Keys the table allows and refuses, default, explicit and half explicit."""
    return [reset_table.vetted(*key) for key in list(reset_table.verdicts())[:50]] + [
        reset_table.vetted("breakout", 4, -1, False), reset_table.vetted("breakout", -1, -1, True)]


def _warnings_of(check) -> tuple[list, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # so that only the module's own once-a-process shows
        return [check() for _ in range(3)], caught


def test_under_another_engine_ale_no_key_is_vetted_and_one_warning_says_why(monkeypatch):
    monkeypatch.setattr(_engine, "ALE_VERSION", "0.99.0")
    results, caught = _warnings_of(_vetted_many_keys)
    assert not any(any(r) for r in results)
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    message = str(caught[0].message)
    assert f"ALE {reset_table.table_version()}" in message and "ALE 0.99.0" in message
    assert "tools/reset_verdicts.py" in message


def test_under_other_patches_to_the_same_ale_no_key_is_vetted(monkeypatch):
    # A change to build_support/ale_patches.py may change what ALE's reset keeps: the table's verdicts
    # are of the patched ALE they were vetted on, not of the release alone.
    monkeypatch.setattr(_engine, "ALE_PATCHES", "0" * 12)
    results, caught = _warnings_of(_vetted_many_keys)
    assert not any(any(r) for r in results)
    assert len(caught) == 1 and f"patches {reset_table.table_patches()}" in str(caught[0].message)
    assert f"patches {'0' * 12}" in str(caught[0].message)


@pytest.mark.parametrize("version_line, named", [("# ale_version: 0.11.0\n", "ALE 0.11.0"), ("", "(none named)")])
def test_a_table_vetted_with_another_ale_or_naming_none_vets_no_key(monkeypatch, tmp_path, version_line, named):
    lines = reset_table.TABLE.read_text().splitlines(True)
    table = tmp_path / "reset_table.csv"
    table.write_text("".join(line for line in lines if not reset_table.VERSION_LINE.match(line))
                     .replace("# verdict:", version_line + "# verdict:", 1))
    monkeypatch.setattr(reset_table, "TABLE", table)
    assert reset_table.verdicts()[("breakout", -1, -1, False)] == ""  # the rows read alike
    results, caught = _warnings_of(_vetted_many_keys)
    assert not any(any(r) for r in results)
    assert len(caught) == 1 and named in str(caught[0].message)


def test_the_shipped_table_names_the_engines_ale_in_the_line_the_tool_writes():
    assert reset_table.table_version() == _engine.ALE_VERSION
    assert reset_table.table_patches() == _engine.ALE_PATCHES == ale_patches.patches_digest()
    spec = importlib.util.spec_from_file_location("reset_verdicts", ROOT / "tools" / "reset_verdicts.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    line = f"# ale_version: {_engine.ALE_VERSION}"
    header = tool._header(104, 2182, 206, 1, 0, (1.0, 1.0), 1).splitlines()
    assert [h for h in header if reset_table.VERSION_LINE.match(h)] == [line]  # the one line the reader takes
    assert line + "\n" in reset_table.TABLE.read_text()
    patches = f"# ale_patches: {_engine.ALE_PATCHES}"
    assert [h for h in header if reset_table.PATCHES_LINE.match(h)] == [patches]
    assert patches + "\n" in reset_table.TABLE.read_text()
