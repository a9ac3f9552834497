// The palette lookups of every captured screen (ALE's getScreenGrayscale, SB3's gray of pooled
// pairs), vectorised where the CPU can shuffle or permute bytes.
//
// Without AVX-512 VBMI a byte shuffle (SSSE3 pshufb) looks up 16 entries, so a 256-entry table
// takes 16 of them. But ALE's screen bytes are even: the TIA writes its colour registers & 0xfe
// (TIA.cxx), and only PAL colour loss sets the low bit (of 108 ROMs' frames under random play,
// only Air Raid's held odd bytes, on its 250-line screen). So a vector of
// even bytes is looked up in the 128 even entries, 8 shuffles; one of odd bytes in the 128 odd
// ones; a vector of both in both, blended. Every byte value is looked up exactly; only frames that mix parities pay double.
// AArch64's table lookups read 64 entries at once: four cover the table (palette_neon.hpp).
#include <cstddef>
#include <cstdint>

#include "frames/frame_ops.hpp"

#if SB3ALE_X86
#include <immintrin.h>
#endif
#if SB3ALE_NEON
#include "frames/palette_neon.hpp"
#endif

namespace sb3ale {

namespace {

void scalar_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
  for (std::size_t p = 0; p < n; ++p) out[p] = table[indices[p]];
}

void scalar_pairs(const uint8_t* a, const uint8_t* b, const uint8_t* pairs, const uint8_t* diagonal, uint8_t* out,
                  std::size_t n) {
  for (std::size_t p = 0; p < n; ++p) out[p] = a[p] == b[p] ? diagonal[a[p]] : pairs[a[p] << 8 | b[p]];
}

#if SB3ALE_X86
// An empty asm that says it changes v: keeps v in a register of its own (MSVC has no such asm).
#if defined(__GNUC__) || defined(__clang__)
#define SB3ALE_KEEP(v) __asm__("" : "+x"(v))
#else
#define SB3ALE_KEEP(v) (void)0
#endif

/// The even entries of `table` (parity 0) or its odd ones (1), as 8 rows of 16 for the shuffles:
/// row k XORed with row k - 1, so that XORing rows 0..m gives row m (see Shuffle::half).
struct HalfRows {
  alignas(16) uint8_t rows[8][16];
  HalfRows(const uint8_t* table, int parity) {
    const auto entry = [&](int k, int j) { return table[2 * (16 * k + j) + parity]; };
    for (int k = 0; k < 8; ++k)
      for (int j = 0; j < 16; ++j) rows[k][j] = static_cast<uint8_t>(entry(k, j) ^ (k > 0 ? entry(k - 1, j) : 0));
  }
};

// Shuffle<V>::half: entry i = x / 2 of a byte x is in row m = i / 16, column i % 16. Shuffle k
// reads index i - 16k: its top bit (which makes a shuffle give 0) is clear exactly where m >= k, and
// its low nibble is i % 16 for every k. So the XOR of the 8 shuffles is the XOR of rows 0..m.

/// 16 bytes at a time (SSSE3).
struct Shuffle128 {
  using V = __m128i;
  static constexpr std::size_t kWidth = 16;
  V even[8], odd[8];

  SB3ALE_TARGET("ssse3") explicit Shuffle128(const uint8_t* table) {
    const HalfRows e(table, 0), o(table, 1);
    for (int k = 0; k < 8; ++k) {
      even[k] = _mm_load_si128(reinterpret_cast<const V*>(e.rows[k]));
      odd[k] = _mm_load_si128(reinterpret_cast<const V*>(o.rows[k]));
    }
  }
  SB3ALE_TARGET("ssse3") static V load(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const V*>(p)); }
  SB3ALE_TARGET("ssse3") static void store(uint8_t* p, V v) { _mm_storeu_si128(reinterpret_cast<V*>(p), v); }
  /// Bit j set where bytes j of x and y differ.
  SB3ALE_TARGET("ssse3") static uint32_t differ(V x, V y) {
    return ~static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y))) & 0xffffu;
  }
  SB3ALE_TARGET("ssse3") static V half(const V rows[8], V x) {
    const V sixteen = _mm_set1_epi8(16);
    V i = _mm_and_si128(_mm_srli_epi16(x, 1), _mm_set1_epi8(0x7f));
    V r = _mm_shuffle_epi8(rows[0], i);
    for (int k = 1; k < 8; ++k) {
      i = _mm_sub_epi8(i, sixteen);
      SB3ALE_KEEP(i);  // keeps the chain of subtractions: folded, they take 7 constants' registers
      r = _mm_xor_si128(r, _mm_shuffle_epi8(rows[k], i));
    }
    return r;
  }
  /// Bits of the bytes of x that are odd.
  SB3ALE_TARGET("ssse3") static uint32_t odd_bytes(V x) {
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(x, 7)));
  }
  /// table[x] for x with odd bytes: out of line, to leave the registers to the even rows.
  SB3ALE_TARGET("ssse3") SB3ALE_NOINLINE V with_odd(V x) const {
    if (odd_bytes(x) == 0xffffu) return half(odd, x);
    const V is_odd = _mm_cmpgt_epi8(_mm_setzero_si128(), _mm_slli_epi16(x, 7));
    return _mm_or_si128(_mm_and_si128(is_odd, half(odd, x)), _mm_andnot_si128(is_odd, half(even, x)));
  }
  /// The kernels' steps (see shuffle_lookup): table[x] of the kWidth bytes at `in`, to `out`.
  SB3ALE_TARGET("ssse3") void lookup_block(const V even_rows[8], const uint8_t* in, uint8_t* out) const {
    const V x = load(in);
    store(out, odd_bytes(x) == 0 ? half(even_rows, x) : with_odd(x));
  }
  /// lookup_block of a's bytes; returns the bits of the bytes where b's differ.
  SB3ALE_TARGET("ssse3") uint32_t pairs_block(const V even_rows[8], const uint8_t* a, const uint8_t* b,
                                              uint8_t* out) const {
    const V x = load(a);
    store(out, odd_bytes(x) == 0 ? half(even_rows, x) : with_odd(x));
    return differ(x, load(b));
  }
};

/// 32 bytes at a time (AVX2): the rows in both 128-bit lanes, as AVX2's shuffle stays within a lane.
struct Shuffle256 {
  using V = __m256i;
  static constexpr std::size_t kWidth = 32;
  V even[8], odd[8];

  SB3ALE_TARGET("avx2") explicit Shuffle256(const uint8_t* table) {
    const HalfRows e(table, 0), o(table, 1);
    for (int k = 0; k < 8; ++k) {
      even[k] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(e.rows[k])));
      odd[k] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(o.rows[k])));
    }
  }
  SB3ALE_TARGET("avx2") static V load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  SB3ALE_TARGET("avx2") static void store(uint8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
  SB3ALE_TARGET("avx2") static uint32_t differ(V x, V y) {
    return ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)));
  }
  SB3ALE_TARGET("avx2") static V half(const V rows[8], V x) {
    const V sixteen = _mm256_set1_epi8(16);
    V i = _mm256_and_si256(_mm256_srli_epi16(x, 1), _mm256_set1_epi8(0x7f));
    V r = _mm256_shuffle_epi8(rows[0], i);
    for (int k = 1; k < 8; ++k) {
      i = _mm256_sub_epi8(i, sixteen);
      SB3ALE_KEEP(i);
      r = _mm256_xor_si256(r, _mm256_shuffle_epi8(rows[k], i));
    }
    return r;
  }
  SB3ALE_TARGET("avx2") static uint32_t odd_bytes(V x) {
    return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(x, 7)));
  }
  SB3ALE_TARGET("avx2") SB3ALE_NOINLINE V with_odd(V x) const {
    if (odd_bytes(x) == 0xffffffffu) return half(odd, x);
    return _mm256_blendv_epi8(half(even, x), half(odd, x), _mm256_slli_epi16(x, 7));
  }
  SB3ALE_TARGET("avx2") void lookup_block(const V even_rows[8], const uint8_t* in, uint8_t* out) const {
    const V x = load(in);
    store(out, odd_bytes(x) == 0 ? half(even_rows, x) : with_odd(x));
  }
  SB3ALE_TARGET("avx2") uint32_t pairs_block(const V even_rows[8], const uint8_t* a, const uint8_t* b,
                                             uint8_t* out) const {
    const V x = load(a);
    store(out, odd_bytes(x) == 0 ? half(even_rows, x) : with_odd(x));
    return differ(x, load(b));
  }
};

// The kernels, once for both widths; `always_inline` so each is compiled with its caller's target
// (which GCC's note on passing AVX vectors between functions of other targets does not see). No
// vector crosses a call in them (the blocks take pointers): Clang refuses AVX vectors as arguments
// of a function compiled without AVX, even one always inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
template <typename S>
SB3ALE_ALWAYS_INLINE void shuffle_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
  const S lookup(table);
  typename S::V even[8];  // in locals, which out's stores cannot alias, so they stay in registers
  for (int k = 0; k < 8; ++k) even[k] = lookup.even[k];
  std::size_t p = 0;
  for (; p + S::kWidth <= n; p += S::kWidth) lookup.lookup_block(even, indices + p, out + p);
  scalar_lookup(indices + p, table, out + p, n - p);
}

/// Pairs: the diagonal (both frames alike) a vector at a time; the pixels that changed between the
/// two frames, a few percent, one by one from the full table.
template <typename S>
SB3ALE_ALWAYS_INLINE void shuffle_pairs(const uint8_t* a, const uint8_t* b, const uint8_t* pairs,
                                        const uint8_t* diagonal, uint8_t* out, std::size_t n) {
  const S lookup(diagonal);
  typename S::V even[8];
  for (int k = 0; k < 8; ++k) even[k] = lookup.even[k];
  std::size_t p = 0;
  for (; p + S::kWidth <= n; p += S::kWidth) {
    for (uint32_t changed = lookup.pairs_block(even, a + p, b + p, out + p); changed != 0; changed &= changed - 1) {
      const std::size_t q = p + static_cast<std::size_t>(lowest_bit(changed));
      out[q] = pairs[a[q] << 8 | b[q]];
    }
  }
  scalar_pairs(a + p, b + p, pairs, diagonal, out + p, n - p);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

SB3ALE_TARGET("ssse3") void lookup_ssse3(const uint8_t* indices, const uint8_t* table, uint8_t* out,
                                                   std::size_t n) {
  shuffle_lookup<Shuffle128>(indices, table, out, n);
}
SB3ALE_TARGET("avx2") void lookup_avx2(const uint8_t* indices, const uint8_t* table, uint8_t* out,
                                                 std::size_t n) {
  shuffle_lookup<Shuffle256>(indices, table, out, n);
}
SB3ALE_TARGET("ssse3") void pairs_ssse3(const uint8_t* a, const uint8_t* b, const uint8_t* pairs,
                                                  const uint8_t* diagonal, uint8_t* out, std::size_t n) {
  shuffle_pairs<Shuffle128>(a, b, pairs, diagonal, out, n);
}
SB3ALE_TARGET("avx2") void pairs_avx2(const uint8_t* a, const uint8_t* b, const uint8_t* pairs,
                                                const uint8_t* diagonal, uint8_t* out, std::size_t n) {
  shuffle_pairs<Shuffle256>(a, b, pairs, diagonal, out, n);
}

/// 64 lookups at a time: two 128-entry permutes, picked by each index's top bit.
SB3ALE_TARGET("avx512f,avx512bw,avx512vbmi") void lookup_vbmi(const uint8_t* indices, const uint8_t* table,
                                                                          uint8_t* out, std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  std::size_t p = 0;
  for (; p + 64 <= n; p += 64) {
    const __m512i idx = _mm512_loadu_si512(indices + p);
    const __m512i low = _mm512_permutex2var_epi8(t0, idx, t1);   // entries 0-127 by the low 7 bits
    const __m512i high = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128-255
    _mm512_storeu_si512(out + p, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), low, high));
  }
  scalar_lookup(indices + p, table, out + p, n - p);
}

/// Pairs as pairs_avx2, 64 pixels at a time, all 256 diagonal entries in the permutes.
SB3ALE_TARGET("avx512f,avx512bw,avx512vbmi") void pairs_vbmi(const uint8_t* a, const uint8_t* b,
                                                                         const uint8_t* pairs, const uint8_t* diagonal,
                                                                         uint8_t* out, std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(diagonal), t1 = _mm512_loadu_si512(diagonal + 64);
  const __m512i t2 = _mm512_loadu_si512(diagonal + 128), t3 = _mm512_loadu_si512(diagonal + 192);
  std::size_t p = 0;
  for (; p + 64 <= n; p += 64) {
    const __m512i x = _mm512_loadu_si512(a + p), y = _mm512_loadu_si512(b + p);
    const __m512i low = _mm512_permutex2var_epi8(t0, x, t1), high = _mm512_permutex2var_epi8(t2, x, t3);
    _mm512_storeu_si512(out + p, _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high));
    for (uint64_t changed = _mm512_cmpneq_epi8_mask(x, y); changed != 0; changed &= changed - 1) {
      const std::size_t q = p + static_cast<std::size_t>(lowest_bit(changed));
      out[q] = pairs[a[q] << 8 | b[q]];
    }
  }
  scalar_pairs(a + p, b + p, pairs, diagonal, out + p, n - p);
}
#endif

}  // namespace

void palette_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n, Isa isa) {
#if SB3ALE_X86
  switch (usable_isa(isa)) {
    case Isa::kAvx512: return lookup_vbmi(indices, table, out, n);
    case Isa::kAvx2: return lookup_avx2(indices, table, out, n);
    case Isa::kSsse3: return lookup_ssse3(indices, table, out, n);
    default: break;
  }
#elif SB3ALE_NEON
  if (usable_isa(isa) == Isa::kNeon) {
    const std::size_t p = neon::lookup(indices, table, out, n);
    return scalar_lookup(indices + p, table, out + p, n - p);
  }
#else
  (void)isa;
#endif
  scalar_lookup(indices, table, out, n);
}

void pair_lookup(const uint8_t* a, const uint8_t* b, const uint8_t* pairs, uint8_t* out, std::size_t n, Isa isa,
                 const uint8_t* diagonal) {
  uint8_t own[256];  // 256 reads 257 bytes apart: 256 cache lines, so callers keep theirs
  if (diagonal == nullptr) {
    for (int k = 0; k < 256; ++k) own[k] = pairs[k * 257];
    diagonal = own;
  }
#if SB3ALE_X86
  switch (usable_isa(isa)) {
    case Isa::kAvx512: return pairs_vbmi(a, b, pairs, diagonal, out, n);
    case Isa::kAvx2: return pairs_avx2(a, b, pairs, diagonal, out, n);
    case Isa::kSsse3: return pairs_ssse3(a, b, pairs, diagonal, out, n);
    default: break;
  }
#elif SB3ALE_NEON
  if (usable_isa(isa) == Isa::kNeon) {
    const std::size_t p = neon::pairs(a, b, pairs, diagonal, out, n);
    return scalar_pairs(a + p, b + p, pairs, diagonal, out + p, n - p);
  }
#else
  (void)isa;
#endif
  scalar_pairs(a, b, pairs, diagonal, out, n);
}

}  // namespace sb3ale
