"""Game names: ROM ids from the installed ale-py wheel, and the names users write for them."""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from ale_py import ALEInterface, roms

# "ALE/Breakout-v5", "BreakoutNoFrameskip-v4", "Breakout-ramDeterministic-v4" -> "Breakout"
_ID_DECORATION = re.compile(r"^ALE/|(-ram)?(NoFrameskip|Deterministic)?(-v\d+)?$")


@lru_cache(maxsize=1)
def _rom_ids_by_key() -> dict[str, str]:
    # ale-py names its gymnasium ids rom_id.title() without "_": tic_tac_toe_3d -> TicTacToe3D.
    return {rom_id.replace("_", "").lower(): rom_id for rom_id in roms.get_all_rom_ids()}


def rom_id(game: str) -> str:
    """Resolve ``"breakout"``, ``"Breakout"``, ``"BreakoutNoFrameskip-v4"`` or ``"ALE/Breakout-v5"``.

    :raises ValueError: for an unknown game, naming the closest ROM ids.
    """
    if not isinstance(game, str):
        raise TypeError(f"game must be a str such as 'breakout', got {type(game).__name__}")
    key = _ID_DECORATION.sub("", game.strip()).replace("_", "").lower()
    ids = _rom_ids_by_key()
    if key in ids:
        return ids[key]
    close = difflib.get_close_matches(key, list(ids), n=5, cutoff=0.5)
    hint = ", ".join(repr(ids[k]) for k in close) or "none"
    raise ValueError(f"Unknown Atari game {game!r}. Closest ROM ids: {hint}. "
                     "All ids: ale_py.roms.get_all_rom_ids().")


def camel_name(rom: str) -> str:
    """``"ms_pacman"`` -> ``"MsPacman"``, as in ale-py's gymnasium ids."""
    return rom.title().replace("_", "")


def rom_path(rom: str) -> str:
    """The ROM file shipped in the installed ale-py wheel (its MD5 checked by ale-py).

    :raises ValueError: for a ROM ALE does not run (checked here, before an engine starts a thread).
    """
    path = roms.get_rom_path(rom)
    if path is None:
        raise ValueError(f"ale-py has no ROM for {rom!r}")
    # ale-py ships a few ROMs (combat, joust, maze_craze, warlords) whose MD5 ALE knows no game for:
    # it registers no gymnasium id for them, and its loadROM would end the process.
    if not ALEInterface.isSupportedROM(str(path)):
        raise ValueError(f"ALE does not run {rom!r}: ale-py ships its ROM, but ALE supports no game with its "
                         "MD5 (ale-py registers no environment for it either)")
    return str(path)
