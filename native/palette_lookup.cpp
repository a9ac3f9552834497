// The palette lookup of every captured screen (ALE's getScreenGrayscale), vectorised where the CPU
// can permute bytes.
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
#endif

}  // namespace

void palette_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  // AVX-512 VBMI (Intel since Ice Lake, AMD since Zen 4) permutes bytes in one instruction; an AVX2
  // byte-shuffle version measured no faster than this scalar loop.
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  if (vbmi) return palette_lookup_vbmi(indices, table, out, n);
#endif
  for (std::size_t p = 0; p < n; ++p) out[p] = table[indices[p]];
}

}  // namespace sb3ale
