"""The ROMs ale-py ships that ALE runs, and those whose screens are taller than most (210 rows)."""

from __future__ import annotations

from ale_py import ALEInterface, LoggerMode, roms

ALEInterface.setLoggerMode(LoggerMode.Error)

# ale-py ships ROMs that ALE itself refuses (loading one ends the process): neither reference runs them.
ROMS = [r for r in roms.get_all_rom_ids() if ALEInterface.isSupportedROM(str(roms.get_rom_path(r)))]

# The screen rows of the taller ROMs (ALE's per-cartridge display properties): the parameters of the
# taller-screen tests, written out so that collecting them loads no ROM. test_reset_ahead's ROM table
# test reads every ROM's height from ALE, which holds this list to it.
TALL_SCREENS = {"adventure": 250, "air_raid": 250, "carnival": 214, "journey_escape": 230, "keystone_kapers": 250,
                "king_kong": 250, "klax": 250, "laser_gates": 250, "mr_do": 250, "pacman": 250, "pooyan": 220,
                "sir_lancelot": 250, "space_war": 250}
TALL = sorted(TALL_SCREENS)
# One of each height (Air Raid: 250 rows and odd palette indices), for the tests that cross every preset
# and option with them; test_every_rom.py and test_reset_ahead.py run all 13 (and every other ROM).
TALL_SAMPLE = ["air_raid", "carnival", "journey_escape", "pooyan"]


def screen_height(rom: str) -> int:
    """The rows of the ROM's screen, as ALE gives them after loading it (this build's ALE, whose colour
    tables are shared: ale-py's builds them again at every load, half a second each)."""
    from sb3_ale_vec import _engine

    return _engine.screen_height(str(roms.get_rom_path(rom)))
