// AreaResize's float area pass (kArea, the 210x160 -> 84x84 case) with AVX2: eight source rows per
// 256-bit vector where the portable path puts four in an SSE2 one. Every output is the same float
// mul and add sequence, in the same order, as the portable path and OpenCV, so it is bit-exact.
// No FMA: this file is compiled with -ffp-contract=off, and "fma" is not in the target list.
#include "frames/resize_avx2.hpp"

#include "frames/frame_ops.hpp"

#if SB3ALE_AREA_AVX2
#include <immintrin.h>

#include <algorithm>

namespace sb3ale {

namespace {

constexpr int kRows = 8;

#define SB3ALE_AVX2 SB3ALE_TARGET("avx2")

/// Eight source rows of `width` bytes as floats, interleaved: block[x * 8 + r] = s[r][x].
SB3ALE_AVX2 void interleave8(const uint8_t* const s[kRows], int width, float* block) {
  int x = 0;
  for (; x + 8 <= width; x += 8) {
    __m128i r[kRows];
    for (int k = 0; k < kRows; ++k) r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s[k] + x));
    // Bytes of rows a..h, columns 0-7: pairs (aj bj), then quads (aj bj cj dj), then eights.
    const __m128i ab = _mm_unpacklo_epi8(r[0], r[1]), cd = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i ef = _mm_unpacklo_epi8(r[4], r[5]), gh = _mm_unpacklo_epi8(r[6], r[7]);
    const __m128i abcd_lo = _mm_unpacklo_epi16(ab, cd), abcd_hi = _mm_unpackhi_epi16(ab, cd);
    const __m128i efgh_lo = _mm_unpacklo_epi16(ef, gh), efgh_hi = _mm_unpackhi_epi16(ef, gh);
    const __m128i cols[4] = {_mm_unpacklo_epi32(abcd_lo, efgh_lo), _mm_unpackhi_epi32(abcd_lo, efgh_lo),
                             _mm_unpacklo_epi32(abcd_hi, efgh_hi), _mm_unpackhi_epi32(abcd_hi, efgh_hi)};
    float* out = block + static_cast<std::size_t>(x) * kRows;
    for (const __m128i& c : cols) {  // two columns of eight rows each
      _mm256_storeu_ps(out, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(c)));
      _mm256_storeu_ps(out + 8, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(c, c))));
      out += 16;
    }
  }
  for (; x < width; ++x)
    for (int r = 0; r < kRows; ++r) block[x * kRows + r] = s[r][x];
}

/// Element e of all eight rows: OpenCV's sum of S[idx] * w in table order, one row per lane.
template <int kTaps>
SB3ALE_AVX2 inline __m256 tap_sum(const float* block, const int32_t* idx, const float* w, int taps, int e) {
  if (kTaps) taps = kTaps;
  const int32_t* i = idx + static_cast<std::size_t>(e) * taps;
  const float* v = w + static_cast<std::size_t>(e) * taps;
  __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(block + i[0] * kRows), _mm256_set1_ps(v[0]));
  for (int m = 1; m < taps; ++m)
    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(block + i[m] * kRows), _mm256_set1_ps(v[m])));
  return acc;
}

/// In place: r[k] lane j becomes r[j] lane k.
SB3ALE_AVX2 inline void transpose8(__m256 r[kRows]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// The n horizontal sums of eight interleaved rows, stored to out[r * n + e]: eight elements at a
/// time, transposed so each row's eight sums store at once.
template <int kTaps>
SB3ALE_AVX2 void filter8(const float* block, const int32_t* idx, const float* w, int taps, int n, float* out) {
  int e = 0;
  for (; e + 8 <= n; e += 8) {
    __m256 s[kRows];
    for (int k = 0; k < kRows; ++k) s[k] = tap_sum<kTaps>(block, idx, w, taps, e + k);
    transpose8(s);
    for (int r = 0; r < kRows; ++r) _mm256_storeu_ps(out + static_cast<std::size_t>(r) * n + e, s[r]);
  }
  for (; e < n; ++e) {
    alignas(32) float lanes[kRows];
    _mm256_store_ps(lanes, tap_sum<kTaps>(block, idx, w, taps, e));
    for (int r = 0; r < kRows; ++r) out[static_cast<std::size_t>(r) * n + e] = lanes[r];
  }
}

/// One destination row: round(sum over k < taps of weight(k) * row(k)[e]), in that order.
template <typename Row, typename Weight>
SB3ALE_AVX2 inline void vertical_row(int n, int taps, Row row, Weight weight, uint8_t* dst) {
  const __m256 round = _mm256_set1_ps(kRoundToInt);
  int e = 0;
  for (; e + 8 <= n; e += 8) {
    __m256 acc = _mm256_mul_ps(_mm256_set1_ps(weight(0)), _mm256_loadu_ps(row(0) + e));
    for (int k = 1; k < taps; ++k)
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(weight(k)), _mm256_loadu_ps(row(k) + e)));
    const __m256i whole = _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(acc, round), round));
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(whole), _mm256_extracti128_si256(whole, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + e), _mm_packus_epi16(words, words));
  }
  for (; e < n; ++e) {
    float acc = weight(0) * row(0)[e];
    for (int k = 1; k < taps; ++k) acc += weight(k) * row(k)[e];
    dst[e] = round_sat_u8(acc);
  }
}

}  // namespace

SB3ALE_AVX2 void area_horizontal_avx2(const uint8_t* src, int src_h, int row, const int32_t* idx, const float* w,
                                      int taps, int n, float* block, float* hsum, const uint8_t* need) {
  for (int y0 = 0; y0 < src_h; y0 += kRows) {
    if (need && std::none_of(need + y0, need + std::min(y0 + kRows, src_h), [](uint8_t f) { return f; })) continue;
    const uint8_t* s[kRows];  // the last block repeats the last row
    for (int r = 0; r < kRows; ++r) s[r] = src + static_cast<std::size_t>(std::min(y0 + r, src_h - 1)) * row;
    interleave8(s, row, block);
    float* out = hsum + static_cast<std::size_t>(y0) * n;
    switch (taps) {
      case 2: filter8<2>(block, idx, w, 2, n, out); break;
      case 3: filter8<3>(block, idx, w, 3, n, out); break;
      case 4: filter8<4>(block, idx, w, 4, n, out); break;
      default: filter8<0>(block, idx, w, taps, n, out);
    }
  }
}

SB3ALE_AVX2 void area_vertical_avx2(const float* hsum, int n, int dst_h, const int32_t* y_begin, const int32_t* y_row,
                                    const float* y_w, uint8_t* dst, const uint8_t* need) {
  // OpenCV's order per element: sum = beta * row, then sum += beta * row; then round_sat_u8, eight
  // at a time (the saturating packs clamp to [0, 255]). A row's taps are read into locals first
  // where they fit: dst's byte stores could alias the tables, which reloads them for every vector.
  constexpr int kMaxTaps = 8;
  for (int dy = 0; dy < dst_h; ++dy, dst += n) {
    if (need && !need[dy]) continue;
    const int begin = y_begin[dy], taps = y_begin[dy + 1] - begin;
    const auto table_row = [&](int k) { return hsum + static_cast<std::size_t>(y_row[begin + k]) * n; };
    if (taps > kMaxTaps) {
      vertical_row(n, taps, table_row, [&](int k) { return y_w[begin + k]; }, dst);
      continue;
    }
    const float* rows[kMaxTaps];
    float weights[kMaxTaps];
    for (int k = 0; k < taps; ++k) rows[k] = table_row(k), weights[k] = y_w[begin + k];
    vertical_row(n, taps, [&](int k) { return rows[k]; }, [&](int k) { return weights[k]; }, dst);
  }
}

}  // namespace sb3ale

#endif  // SB3ALE_AREA_AVX2
