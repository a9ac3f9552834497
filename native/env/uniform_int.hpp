// uniform_int.hpp - std::uniform_int_distribution<int> on a std::mt19937, as each standard library
// computes it. The standard fixes mt19937's output but not how a distribution maps it to [a, b], so
// ale-py's no-op count (preprocessed_env.hpp) depends on the library its wheel was built with:
// libstdc++ on Linux, libc++ on macOS, MSVC's STL on Windows. chain_ale.cpp draws as that wheel
// does on the target platform, whichever library this build links. Written from the published
// algorithms; tests/native/test_uniform_int.cpp pins each against the real library.
//
// None of the three distributions keeps state between calls for int on mt19937 (each holds only
// [a, b]): the engine is the whole state, and a copy of it peeks at the next draw.
#pragma once

#include <climits>
#include <cstdint>

namespace sb3ale {

namespace detail {

/// One 32-bit draw: mt19937 yields [0, 2^32 - 1] whatever its result_type (uint_fast32_t is 64-bit
/// on Linux glibc, 32-bit on macOS and Windows).
template <class Engine>
uint32_t draw32(Engine& engine) {
  static_assert(Engine::min() == 0 && Engine::max() == 0xffffffffu, "an engine of 32 random bits, as mt19937");
  return static_cast<uint32_t>(engine());
}

/// Lemire's nearly divisionless reduction of 32-bit draws to [0, s), 0 < s < 2^32 ("Fast Random
/// Integer Generation in an Interval", ACM TOMACS 29 (1), 2019): the high word of draw * s, redrawn
/// while the low word falls below 2^32 mod s.
template <class Engine>
uint32_t lemire_below(Engine& engine, uint32_t s) {
  uint64_t product = uint64_t{draw32(engine)} * s;
  uint32_t low = static_cast<uint32_t>(product);
  if (low < s) {
    const uint32_t threshold = static_cast<uint32_t>(0u - s) % s;
    while (low < threshold) {
      product = uint64_t{draw32(engine)} * s;
      low = static_cast<uint32_t>(product);
    }
  }
  return static_cast<uint32_t>(product >> 32);
}

/// [a, b]'s size mod 2^32: 0 for the full int range.
inline uint32_t range_size(int a, int b) { return static_cast<uint32_t>(b) - static_cast<uint32_t>(a) + 1u; }

inline int offset(int a, uint32_t u) { return static_cast<int>(static_cast<uint32_t>(a) + u); }

}  // namespace detail

/// libstdc++ (GCC 11+, bits/uniform_int_dist.h). mt19937's range is exactly 32 bits for either
/// result_type, so every [a, b] narrower than int takes the downscaling branch's Lemire path in
/// 64-bit products (the two-division fallback and the upscaling branch are for other engines); the
/// full range is one draw, offset by a. [0, 0] takes a draw too. Needs a <= b.
template <class Engine>
int draw_libstdcxx(Engine& engine, int a, int b) {
  const uint32_t s = detail::range_size(a, b);
  if (s == 0) return detail::offset(a, detail::draw32(engine));
  return detail::offset(a, detail::lemire_below(engine, s));
}

/// libc++ (__random/uniform_int_distribution.h; LLVM 14 and a recent main alike): a size of 1 returns a without a draw;
/// otherwise __independent_bits_engine takes the low w bits of a draw, w = ceil(log2(size)), and
/// the draw is retried while that is >= size. Its own rejection (a draw >= y0) never fires on
/// mt19937's 32 bits with w <= 32. The full range is the raw draw, not offset by a.
template <class Engine>
int draw_libcxx(Engine& engine, int a, int b) {
  const uint32_t s = detail::range_size(a, b);
  if (s == 1) return a;
  if (s == 0) return static_cast<int>(detail::draw32(engine));
  int bits = 0;  // ceil(log2(s)): s - 1 needs that many bits
  while (bits < 32 && ((s - 1) >> bits) != 0) ++bits;
  const uint32_t mask = 0xffffffffu >> (32 - bits);
  uint32_t u = 0;
  do {
    u = detail::draw32(engine) & mask;
  } while (u >= s);
  return detail::offset(a, u);
}

/// MSVC's STL (VS 2022 17.5+, microsoft/STL PR #3012): uniform_int_distribution::_Eval runs
/// _Rng_from_urng_v2 (stl/inc/algorithm today, xutility before) on unsigned int. Its _Udiff is the
/// wider of unsigned int and the engine's result_type; mt19937 gives 32 bits a call (_Bits = 32), so
/// below the full range its mask is 2^32 - 1, one draw a try, threshold (mask - s + 1) % s: the
/// same Lemire reduction as libstdc++'s. The full range is _Get_all_bits(): draws of 32 bits
/// shifted in until _Udiff is full (one on Windows, where result_type is 32-bit; two for a 64-bit
/// result_type), its low 32 bits kept, offset by a (the sign flips of _Adjust cancel).
template <class Engine>
int draw_msvc(Engine& engine, int a, int b) {
  const uint32_t s = detail::range_size(a, b);
  if (s != 0) return detail::offset(a, detail::lemire_below(engine, s));
  constexpr int udiff_bits = sizeof(typename Engine::result_type) > sizeof(unsigned) ? 64 : 32;
  uint32_t last = 0;
  for (int bits = 0; bits < udiff_bits; bits += 32) last = detail::draw32(engine);
  return detail::offset(a, last);
}

/// std::uniform_int_distribution<int>(a, b)(engine) as ale-py's wheel for the target platform draws
/// it: chosen by platform, never by the library this build links (Clang with libc++ on Linux,
/// MinGW's libstdc++ on Windows must still draw as ale-py there).
template <class Engine>
int draw_as_ale_py(Engine& engine, int a, int b) {
#if defined(_WIN32)
  return draw_msvc(engine, a, b);
#elif defined(__APPLE__)
  return draw_libcxx(engine, a, b);
#else
  return draw_libstdcxx(engine, a, b);
#endif
}

}  // namespace sb3ale
