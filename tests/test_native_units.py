"""The engine's pure parts against the libraries they reproduce: OpenCV's RGB2GRAY and INTER_AREA
resize on random images and sizes, numpy's SeedSequence / PCG64 / integers / random on multi-word
seeds. Quick: they catch a numeric regression without an emulator."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from sb3_ale_vec import _testing
from sb3_ale_vec.options import seed_words  # a seed as SeedSequence reads it: 32-bit words


@pytest.mark.parametrize("size", [(84, 84), (64, 48), (105, 80), (42, 40), (210, 160), (250, 200), (100, 170), (7, 3)])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("simd", [True, False], ids=["simd", "portable"])
def test_area_resize_equals_opencv(size, channels, simd):
    # simd=True takes the AVX2 path where the CPU has it. The sources' heights and widths leave
    # partial blocks of its eight rows and eight columns (45x13: also a row narrower than 16).
    rng = np.random.default_rng(size[0] * 1000 + size[1] + channels)
    for src_shape in [(210, 160), (211, 163), (45, 13)]:
        src = rng.integers(0, 256, (*src_shape, channels), dtype=np.uint8)
        ours = _testing._area_resize(src, *size, simd=simd)
        expected = cv2.resize(src, (size[1], size[0]), interpolation=cv2.INTER_AREA).reshape(ours.shape)
        assert np.array_equal(ours, expected), (src_shape, size, channels, int((ours != expected).sum()))


@pytest.mark.parametrize("simd", [True, False], ids=["simd", "portable"])
def test_area_resize_of_atari_like_frames_equals_opencv(simd):
    # Few colours in flat runs, as on a real screen: the regime where rounding ties are common.
    rng = np.random.default_rng(0)
    palette = rng.integers(0, 256, (8, 3), dtype=np.uint8)
    for _ in range(20):
        src = palette[np.repeat(rng.integers(0, 8, (210, 20)), 8, axis=1)]
        for image in (src, src[..., :1]):  # RGB, and one channel as the gray presets resize
            ours = _testing._area_resize(image, 84, 84, simd=simd)
            assert np.array_equal(ours.reshape(84, 84, -1),
                                  cv2.resize(image, (84, 84), interpolation=cv2.INTER_AREA).reshape(84, 84, -1))


def test_rgb_to_gray_equals_opencv_on_every_colour_sample():
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (4096, 1, 3), dtype=np.uint8)
    rgb[:8, 0] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255], [1, 2, 3], [128, 128, 128], [254, 1, 127]]
    assert np.array_equal(_testing._rgb_to_gray(rgb), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).ravel())


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 33600, 100003])
def test_palette_lookup_equals_numpy_indexing(n):
    # Every index value (odd ones too, which ALE's screens never hold) and lengths around the
    # 64-pixel blocks of the vectorised path.
    rng = np.random.default_rng(n)
    table = rng.integers(0, 256, 256, dtype=np.uint8)
    indices = rng.integers(0, 256, n, dtype=np.uint8)
    assert np.array_equal(_testing._palette_lookup(indices, table), table[indices])


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 33600, 100003])
def test_pair_lookup_equals_numpy_indexing(n):
    # Two frames mostly alike (the fast path) with some pixels changed, every index value possible.
    rng = np.random.default_rng(n + 1)
    pairs = rng.integers(0, 256, 65536, dtype=np.uint8)
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 256, n, dtype=np.uint8)).astype(np.uint8)
    expected = pairs[a.astype(np.int64) * 256 + b]
    assert np.array_equal(_testing._pair_lookup(a, b, pairs), expected)
    assert np.array_equal(_testing._pair_lookup(a, a, pairs), pairs[a.astype(np.int64) * 257])


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
