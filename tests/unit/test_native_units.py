"""The engine's pure parts against the libraries they reproduce: OpenCV's RGB2GRAY and INTER_AREA
resize on random images and sizes, numpy's SeedSequence / PCG64 / integers / random on multi-word
seeds; every vector path (SB3_ALE_VEC_ISA's levels) against the scalar one. Quick: they catch a
numeric regression without an emulator."""

from __future__ import annotations

import os
import subprocess
import sys

import cv2
import numpy as np
import pytest

from sb3_ale_vec import _testing
from sb3_ale_vec.options import seed_words  # a seed as SeedSequence reads it: 32-bit words

# Every level of SB3_ALE_VEC_ISA, by family (x86-64's, AArch64's), each above scalar. A level this
# CPU lacks (above its best, or of the other family) would run its best one again under the level's
# name (usable_isa): that id is skipped, saying so, and the levels it has run for real.
FAMILIES = [["sse2", "ssse3", "avx2", "avx512"], ["neon"]]
ISA_NAMES = ["scalar"] + [isa for family in FAMILIES for isa in family]
CPU_ISA = _testing._cpu_isa()
_LEVELS = ["scalar"] + next((family for family in FAMILIES if CPU_ISA in family), [])
RUNNABLE = _LEVELS[:_LEVELS.index(CPU_ISA) + 1]
ISAS = [pytest.param(isa, marks=pytest.mark.skipif(
    isa not in RUNNABLE, reason=f"{isa}: a CPU feature this machine lacks (its best level is {CPU_ISA})"))
    for isa in ISA_NAMES]


@pytest.mark.parametrize("size", [(84, 84), (64, 48), (105, 80), (42, 40), (210, 160), (250, 200), (100, 170), (7, 3)])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("isa", ISAS)
def test_area_resize_equals_opencv(size, channels, isa):
    # avx2 takes the AVX2 path where the CPU has it. The sources' heights and widths leave partial
    # blocks of its eight rows and eight columns (45x13: also a row narrower than 16).
    rng = np.random.default_rng(size[0] * 1000 + size[1] + channels)
    for src_shape in [(210, 160), (211, 163), (45, 13)]:
        src = rng.integers(0, 256, (*src_shape, channels), dtype=np.uint8)
        ours = _testing._area_resize(src, *size, isa=isa)
        expected = cv2.resize(src, (size[1], size[0]), interpolation=cv2.INTER_AREA).reshape(ours.shape)
        assert np.array_equal(ours, expected), (src_shape, size, channels, int((ours != expected).sum()))


@pytest.mark.parametrize("isa", ISAS)
def test_area_resize_of_atari_like_frames_equals_opencv(isa):
    # Few colours in flat runs, as on a real screen: the regime where rounding ties are common.
    rng = np.random.default_rng(0)
    palette = rng.integers(0, 256, (8, 3), dtype=np.uint8)
    for _ in range(20):
        src = palette[np.repeat(rng.integers(0, 8, (210, 20)), 8, axis=1)]
        for image in (src, src[..., :1]):  # RGB, and one channel as the gray presets resize
            ours = _testing._area_resize(image, 84, 84, isa=isa)
            assert np.array_equal(ours.reshape(84, 84, -1),
                                  cv2.resize(image, (84, 84), interpolation=cv2.INTER_AREA).reshape(84, 84, -1))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("channels", [1, 3])
def test_area_resize_update_equals_a_whole_resize(isa, channels):
    # update() resizes again only the rows that changed since the previous frame: frames that differ
    # in no row, one row (each edge), a few bands, and everywhere, at 84x84 (the float pass) and at
    # sizes of the other modes (copy, integer blocks, upscale), which resize whole.
    rng = np.random.default_rng(5)
    for size in [(84, 84), (105, 80), (210, 160), (300, 200), (64, 48)]:
        prev = rng.integers(0, 256, (210, 160, channels), dtype=np.uint8)
        dst = _testing._area_resize(prev, *size, isa=isa)
        for rows in ([], [0], [209], [3, 4, 100], list(range(50, 70)), list(range(210))):
            src = prev.copy()
            for y in rows:
                src[y, rng.integers(0, 160)] ^= rng.integers(1, 256, channels, dtype=np.uint8)
            ours = _testing._area_resize_update(src, prev, dst, isa=isa)
            assert np.array_equal(ours, _testing._area_resize(src, *size, isa=isa)), (size, rows)
            prev, dst = src, ours


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("channels", [1, 3])
def test_area_resize_of_taller_screens_equals_opencv(isa, channels):
    # The 13 ROMs with screens of 214, 220, 230 and 250 rows: to 84x84 and other sizes (half of 250
    # rows: integer blocks; 250 rows from 214: upscaling), whole and row by row (update).
    rng = np.random.default_rng(channels)
    for height in (214, 220, 230, 250):
        for size in [(84, 84), (64, 48), (125, 80), (250, 160)]:
            prev = rng.integers(0, 256, (height, 160, channels), dtype=np.uint8)
            dst = _testing._area_resize(prev, *size, isa=isa)
            expected = cv2.resize(prev, (size[1], size[0]), interpolation=cv2.INTER_AREA).reshape(dst.shape)
            assert np.array_equal(dst, expected), (height, size)
            src = prev.copy()
            src[[0, height // 2, height - 1], rng.integers(0, 160)] ^= np.uint8(1)  # first, middle, last rows
            expected = cv2.resize(src, (size[1], size[0]), interpolation=cv2.INTER_AREA).reshape(dst.shape)
            assert np.array_equal(_testing._area_resize_update(src, prev, dst, isa=isa), expected), (height, size)


def test_rgb_to_gray_equals_opencv_on_every_colour_sample():
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (4096, 1, 3), dtype=np.uint8)
    rgb[:8, 0] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255], [1, 2, 3], [128, 128, 128], [254, 1, 127]]
    assert np.array_equal(_testing._rgb_to_gray(rgb), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).ravel())


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 33600, 100003])
@pytest.mark.parametrize("values", ["even", "any"])
def test_palette_lookup_equals_numpy_indexing(n, values, isa):
    # Lengths around the 16-, 32- and 64-pixel blocks of the vector paths; even indices (as ALE's
    # screens hold, the shuffles' fast path) and any index (odd ones take the exact fallback).
    rng = np.random.default_rng(n)
    table = rng.integers(0, 256, 256, dtype=np.uint8)
    indices = rng.integers(0, 256, n, dtype=np.uint8)
    if values == "even":
        indices &= 0xFE
    assert np.array_equal(_testing._palette_lookup(indices, table, isa), table[indices])


@pytest.mark.parametrize("isa", ISAS)
def test_palette_lookup_of_every_byte_value(isa):
    # Each of the 256 values at each position of a block, in runs with and without odd bytes.
    rng = np.random.default_rng(2)
    table = rng.integers(0, 256, 256, dtype=np.uint8)
    for indices in (np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8)[::-1],
                    np.repeat(np.arange(0, 256, 2, dtype=np.uint8), 3), np.roll(np.arange(256, dtype=np.uint8), 7)):
        indices = np.ascontiguousarray(indices)
        assert np.array_equal(_testing._palette_lookup(indices, table, isa), table[indices])


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 33600, 100003])
@pytest.mark.parametrize("values", ["even", "any"])
def test_pair_lookup_equals_numpy_indexing(n, values, isa):
    # Two frames mostly alike (the fast path) with some pixels changed.
    rng = np.random.default_rng(n + 1)
    pairs = rng.integers(0, 256, 65536, dtype=np.uint8)
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 256, n, dtype=np.uint8)).astype(np.uint8)
    if values == "even":
        a &= 0xFE
        b &= 0xFE
    expected = pairs[a.astype(np.int64) * 256 + b]
    assert np.array_equal(_testing._pair_lookup(a, b, pairs, isa), expected)
    assert np.array_equal(_testing._pair_lookup(a, a, pairs, isa), pairs[a.astype(np.int64) * 257])


@pytest.mark.parametrize("isa", ISAS)
def test_pair_lookup_of_every_pair_of_byte_values(isa):
    rng = np.random.default_rng(3)
    pairs = rng.integers(0, 256, 65536, dtype=np.uint8)
    a, b = (v.astype(np.uint8).ravel() for v in np.meshgrid(np.arange(256), np.arange(256), indexing="ij"))
    for x, y in ((a, b), (b, a), (a, a)):
        assert np.array_equal(_testing._pair_lookup(x, y, pairs, isa), pairs[x.astype(np.int64) * 256 + y])


def _real_frames(rom_id: str, frames: int = 400, every: int = 8) -> np.ndarray:
    """Screens (palette indices) of `rom_id` under random play, one every `every` frames."""
    from ale_py import ALEInterface, LoggerMode, roms

    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path(rom_id))
    actions = ale.getLegalActionSet()
    rng = np.random.default_rng(0)
    screens = []
    for f in range(frames):
        ale.act(actions[rng.integers(len(actions))])
        if ale.game_over():
            ale.reset_game()
        if f % every == 0:
            screens.append(ale.getScreen().copy())
    return np.stack(screens)


@pytest.mark.parametrize("rom_id", ["breakout", "pong", "ms_pacman", "space_invaders", "seaquest", "qbert"])
def test_vector_paths_equal_scalar_on_real_frames(rom_id):
    # ALE's screens hold even bytes only (the TIA writes its colour registers & 0xfe), the case
    # the shuffles look up at speed; pairs of frames in a row as SB3's max-pool sees them.
    screens = _real_frames(rom_id)
    assert not (screens & 1).any()
    rng = np.random.default_rng(4)
    table = rng.integers(0, 256, 256, dtype=np.uint8)
    pairs = rng.integers(0, 256, 65536, dtype=np.uint8)
    for a, b in zip(screens[:-1], screens[1:]):
        a, b = a.ravel(), b.ravel()
        gray = _testing._palette_lookup(a, table, "scalar")
        pooled = _testing._pair_lookup(a, b, pairs, "scalar")
        for isa in RUNNABLE[1:]:
            assert np.array_equal(_testing._palette_lookup(a, table, isa), gray), isa
            assert np.array_equal(_testing._pair_lookup(a, b, pairs, isa), pooled), isa


@pytest.mark.slow  # over 2.5 s in the quick tier; tests/sanitize.sh's CI tier runs it
@pytest.mark.sanitizers
def test_isa_switch_reads_the_environment():
    # SB3_ALE_VEC_ISA caps every path at a level, read once per process; unknown names are refused
    # when the engine is built.
    code = "from sb3_ale_vec import _testing; print(_testing._isa(), _testing._cpu_isa())"
    run = lambda value: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: E731
                                       env={**os.environ, "SB3_ALE_VEC_ISA": value})
    cpu = _testing._cpu_isa()
    for value in ISA_NAMES:  # the levels this CPU lacks too (the other family's): each gives the CPU's best
        out = run(value)
        assert out.returncode == 0, out.stderr
        wanted = value if value in RUNNABLE else cpu
        assert out.stdout.split() == [wanted, cpu]
    assert run("").stdout.split() == [cpu, cpu]
    # The Gymnasium front-end: the same engine without SB3 and torch (this file runs where they are not)
    bad = subprocess.run([sys.executable, "-c", "from sb3_ale_vec import AleVectorEnv; AleVectorEnv('pong', 1)"],
                         capture_output=True, text=True, env={**os.environ, "SB3_ALE_VEC_ISA": "sve2"})
    assert bad.returncode != 0 and "SB3_ALE_VEC_ISA must be one of" in bad.stderr
    assert all(name in bad.stderr for name in ISA_NAMES)


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**63 + 12345, 2**100 + 7, 3 * 2**190 + 5])
def test_seed_sequence_equals_numpy_on_multi_word_seeds(seed):
    for n in (2, 4, 8):
        assert _testing._seed_sequence_state(seed_words(seed), n) == np.random.SeedSequence(seed).generate_state(n).tolist()


@pytest.mark.parametrize("seed", [0, 42, 2**40 + 3, 2**70 + 1])
@pytest.mark.parametrize("low, high", [(1, 31), (0, 2), (2, 5), (-7, 2**33), (5, 6), (0, 2**63 - 1)])
def test_integers_equal_numpy(seed, low, high):
    gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    expected = [int(gen.integers(low, high)) for _ in range(50)]
    assert _testing._numpy_integers(seed_words(seed), low, high, 50) == expected


@pytest.mark.parametrize("seed", [0, 7, 2**65 + 11])
def test_random_equals_numpy(seed):
    gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    assert _testing._numpy_random(seed_words(seed), 100) == [gen.random() for _ in range(100)]
