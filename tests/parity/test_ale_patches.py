"""Our build patch of ALE's sources (build_support/ale_patches.py): the colour-averaging tables, built
once per palette and shared, give the frames ale-py's own, unpatched ALE gives; a source the patch
was not written for stops the build."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import ale_py
import numpy as np
import pytest
from ale_py import roms

from sb3_ale_vec import _testing

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from build_support import ale_cache, ale_patches, ale_source  # noqa: E402

VERSION = "0.12.1"

# Two NTSC games, and two that ALE detects as PAL (another palette: other tables).
ROMS = ["pong", "breakout", "adventure", "air_raid"]


def ale_py_screens(rom: str, actions: list, colour_averaging: bool) -> np.ndarray:
    """getScreen() after loadROM, then after each action: len(actions) + 1 screens."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setBool("color_averaging", colour_averaging)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path(rom))
    screens = [ale.getScreen()]
    for action in actions:
        ale.act(ale_py.Action(action))
        screens.append(ale.getScreen())
    return np.stack(screens)


@pytest.mark.slow  # over 2.5 s in the quick tier; tests/sanitize.sh's CI tier runs it
@pytest.mark.sanitizers
@pytest.mark.tsan
def test_colour_averaged_frames_equal_ale_py():
    # Each ROM twice, all eight emulators built at once on threads of their own: the tables of a
    # palette are built by one of them and shared with the others, across threads.
    actions = np.random.default_rng(0).integers(0, 6, 200).tolist()  # NOOP, FIRE, UP, RIGHT, LEFT, DOWN
    ours = _testing._colour_averaged_screens([str(roms.get_rom_path(rom)) for rom in ROMS * 2], actions, seed=0)
    for i, rom in enumerate(ROMS):
        assert np.array_equal(ours[i], ours[i + len(ROMS)]), rom
        plain = ale_py_screens(rom, actions, colour_averaging=False)
        expected = ale_py_screens(rom, actions, colour_averaging=True)[1:]
        # A frame blends the screen bytes of this frame and the last. ALE's tables hold the even
        # (colour) bytes only and leave the odd ones uninitialised, which Air Raid's screens hold:
        # there ALE's frames depend on what the memory held (ours read 0s), so only pixels whose
        # two bytes are even are compared.
        defined = (plain[1:] % 2 == 0) & (plain[:-1] % 2 == 0)
        assert defined.mean() > 0.3, rom  # Air Raid: 40%
        assert np.array_equal(ours[i][defined], expected[defined]), (rom, int((ours[i] != expected)[defined].sum()))
        assert not np.array_equal(ours[i], plain[1:]), rom  # averaging was really on


def test_patch_applies_to_the_pinned_sources_and_refuses_others(tmp_path):
    url, _, _ = ale_source.pinned(VERSION)
    if not (ale_cache.cache_root() / "downloads" / url.rsplit("/", 1)[1]).is_file():
        pytest.skip("no downloaded ale-py sdist in the build cache: a file this machine lacks")
    pristine = ale_source.ale_source_dir(VERSION)
    names = sorted({name for name, _, _ in ale_patches.PATCHES})
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(pristine / name, tmp_path / name)
    ale_patches.apply_patches(tmp_path)
    for name in names:  # what the build compiles
        assert (tmp_path / name).read_text() == (ale_patches.patched_source_dir(VERSION) / name).read_text()
    shutil.copy(pristine / ale_patches.PHOSPHOR_CPP, tmp_path / ale_patches.PHOSPHOR_CPP)
    with pytest.raises(ale_patches.AlePatchError, match="phosphor_blend.hpp, found it 0 times"):
        ale_patches.apply_patches(tmp_path)  # the header is patched already: its old text is gone
