// The palette lookups of every captured screen (ALE's getScreenGrayscale, SB3's gray of pooled
// pairs), vectorised where the CPU can permute bytes.
#include <cstddef>
#include <cstdint>

#include "frame_ops.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace sb3ale {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
/// 64 lookups at a time: two 128-entry permutes, picked by each index's top bit.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void palette_lookup_vbmi(
    const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  std::size_t p = 0;
  for (; p + 64 <= n; p += 64) {
    const __m512i idx = _mm512_loadu_si512(indices + p);
    const __m512i low = _mm512_permutex2var_epi8(t0, idx, t1);   // entries 0-127 by the low 7 bits
    const __m512i high = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128-255
    _mm512_storeu_si512(out + p, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), low, high));
  }
  for (; p < n; ++p) out[p] = table[indices[p]];
}

/// Pairs: the diagonal (both frames alike) for 64 pixels at a time; the pixels that changed
/// between the two frames, a few percent, one by one from the full table.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void pair_lookup_vbmi(
    const uint8_t* a, const uint8_t* b, const uint8_t* pairs, const uint8_t* diagonal, uint8_t* out, std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(diagonal), t1 = _mm512_loadu_si512(diagonal + 64);
  const __m512i t2 = _mm512_loadu_si512(diagonal + 128), t3 = _mm512_loadu_si512(diagonal + 192);
  std::size_t p = 0;
  for (; p + 64 <= n; p += 64) {
    const __m512i x = _mm512_loadu_si512(a + p), y = _mm512_loadu_si512(b + p);
    const __m512i low = _mm512_permutex2var_epi8(t0, x, t1), high = _mm512_permutex2var_epi8(t2, x, t3);
    _mm512_storeu_si512(out + p, _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high));
    for (uint64_t changed = _mm512_cmpneq_epi8_mask(x, y); changed != 0; changed &= changed - 1) {
      const std::size_t q = p + static_cast<std::size_t>(__builtin_ctzll(changed));
      out[q] = pairs[a[q] << 8 | b[q]];
    }
  }
  for (; p < n; ++p) out[p] = pairs[a[p] << 8 | b[p]];
}
#endif

bool has_vbmi() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return vbmi;
#else
  return false;
#endif
}

}  // namespace

void palette_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  // AVX-512 VBMI (Intel since Ice Lake, AMD since Zen 4) permutes bytes in one instruction; an AVX2
  // byte-shuffle version measured no faster than this scalar loop.
  if (has_vbmi()) return palette_lookup_vbmi(indices, table, out, n);
#endif
  for (std::size_t p = 0; p < n; ++p) out[p] = table[indices[p]];
}

void pair_lookup(const uint8_t* a, const uint8_t* b, const uint8_t* pairs, uint8_t* out, std::size_t n) {
  uint8_t diagonal[256];  // most pixels are alike in two frames in a row: a 256-byte table for them
  for (int k = 0; k < 256; ++k) diagonal[k] = pairs[k * 257];
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_vbmi()) return pair_lookup_vbmi(a, b, pairs, diagonal, out, n);
#endif
  for (std::size_t p = 0; p < n; ++p) out[p] = a[p] == b[p] ? diagonal[a[p]] : pairs[a[p] << 8 | b[p]];
}

}  // namespace sb3ale
