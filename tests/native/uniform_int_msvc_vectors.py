"""The pinned draws of MSVC's STL in tests/native/test_uniform_int.cpp, computed without a compiler.

MSVC cannot run here, so its ``uniform_int_distribution<int>`` on ``std::mt19937`` is transcribed
step for step from its published source (microsoft/STL: ``uniform_int_distribution::_Eval`` in
``stl/inc/random``, ``_Rng_from_urng_v2`` in ``stl/inc/algorithm``, VS 2022 17.5 and later), for
Windows' 32-bit ``uint_fast32_t``, over a mt19937 written out from the standard ([rand.eng.mers]).
Neither part shares code with native/env/uniform_int.hpp. Prints the C++ rows of the table:
    python tests/native/uniform_int_msvc_vectors.py
"""

MASK32 = 0xFFFFFFFF


def mt19937(seed: int):
    """std::mt19937(seed): the standard's parameters and seeding, 32-bit words."""
    state = [seed & MASK32]
    for i in range(1, 624):
        state.append((1812433253 * (state[-1] ^ (state[-1] >> 30)) + i) & MASK32)
    index = 624
    while True:
        if index == 624:
            for i in range(624):
                y = (state[i] & 0x80000000) | (state[(i + 1) % 624] & 0x7FFFFFFF)
                state[i] = state[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            index = 0
        y = state[index]
        index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        yield y


def msvc_uniform_int(engine, a: int, b: int) -> int:
    """uniform_int_distribution<int>::_Eval with _Rng_from_urng_v2<unsigned int, mt19937>."""
    udiff_bits = 32  # _Udiff: unsigned int and Windows' 32-bit result_type alike
    bits, bmask = udiff_bits, MASK32  # _Calc_bits: mt19937's max - min is not below 2^32 - 1
    while MASK32 < bmask:
        bmask >>= 1
        bits -= 1

    def get_bits():
        while True:
            value = next(engine)  # minus min(), which is 0
            if value <= bmask:
                return value

    def adjust(u):  # flips the sign bit: signed order to unsigned order and back
        return u ^ 0x80000000

    umin, umax = adjust(a & MASK32), adjust(b & MASK32)
    if (umax - umin) & MASK32 == MASK32:
        ret = get_bits()  # _Get_all_bits(): _Bits == _Udiff_bits, one call
    else:
        index = (umax - umin + 1) & MASK32
        mask, niter = bmask, 1
        while bits < udiff_bits and mask < index - 1:
            mask, niter = ((mask << bits) | bmask) & MASK32, niter + 1

        def random_product():
            value = get_bits()
            for _ in range(niter - 1):
                value = ((value << bits) | get_bits()) & MASK32
            return value * index  # _Uprod is 64-bit for a 32-bit _Udiff

        product = random_product()
        rem = product & MASK32 & mask
        if rem < index:
            threshold = ((mask - index + 1) & MASK32) % index
            while rem < threshold:
                product = random_product()
                rem = product & MASK32 & mask
        generated_bits = bin(mask).count("1") if bits < udiff_bits else udiff_bits
        ret = (product >> generated_bits) & MASK32
    result = adjust((ret + umin) & MASK32)
    return result - (1 << 32) if result & 0x80000000 else result


ROWS = [(seed, a, b) for seed in (0, 42)
        for a, b in ((0, 29), (0, 0), (-(2**31), 2**31 - 1), (-1, 2**31 - 1), (-1000, 999_999_999))]

if __name__ == "__main__":
    for seed, a, b in ROWS:
        engine = mt19937(seed)
        draws = [msvc_uniform_int(engine, a, b) for _ in range(6)]
        print(f"    {{{seed}, {a}, {b}, {{{', '.join(map(str, draws))}}}, {next(engine)}u}},")
