// AreaResize's horizontal area pass on four source rows at a time (frame_ops.cpp's, included there
// only): the rows interleaved as floats, then filtered, one row per vector lane. Vector paths: SSE2
// on x86-64, NEON on AArch64; `simd` false (SB3_ALE_VEC_ISA=scalar) runs the plain C++ alone. Every
// path does the same IEEE float operations in the same order, so all give the same bytes: a multiply
// for the first tap, then a multiply-add per further tap (area_madd: fused on AArch64 as OpenCV's
// builds there, in every path; a multiply and an add elsewhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "frames/frame_ops.hpp"
#include "frames/isa.hpp"

#if SB3ALE_X86
#include <emmintrin.h>
#endif
#if SB3ALE_NEON
#include <arm_neon.h>
#endif

namespace sb3ale {
namespace resize_rows {
namespace {  // one includer: internal linkage, so the compiler may inline them as it did in place

constexpr int kRows = 4;  // source rows filtered together, one per lane

#if defined(__GNUC__) || defined(__clang__)
// GCC/Clang vector extension: lane-wise IEEE float ops (SSE2 or NEON). aligned(4) permits unaligned
// loads from scratch, may_alias loads from a float array.
typedef float Rows4 __attribute__((vector_size(kRows * sizeof(float)), aligned(4), may_alias));
inline Rows4 load_rows(const float* p) { return *reinterpret_cast<const Rows4*>(p); }
/// acc + x * w lane by lane, as area_madd.
inline Rows4 madd_rows(Rows4 acc, Rows4 x, float w) {
  if (!kAreaFma) return acc + x * w;
  for (int r = 0; r < kRows; ++r) acc[r] = std::fma(x[r], w, acc[r]);
  return acc;
}
#else
/// The same four lane-wise float ops for MSVC, which has no vector extension.
struct Rows4 {
  float lane[kRows];
  float operator[](int r) const { return lane[r]; }
  Rows4 operator*(float w) const {
    Rows4 out;
    for (int r = 0; r < kRows; ++r) out.lane[r] = lane[r] * w;
    return out;
  }
  Rows4& operator+=(const Rows4& other) {
    for (int r = 0; r < kRows; ++r) lane[r] += other.lane[r];
    return *this;
  }
};
inline Rows4 load_rows(const float* p) {
  Rows4 rows;
  std::memcpy(rows.lane, p, sizeof rows.lane);
  return rows;
}
inline Rows4 madd_rows(Rows4 acc, const Rows4& x, float w) {
  for (int r = 0; r < kRows; ++r) acc.lane[r] = area_madd(acc.lane[r], x.lane[r], w);
  return acc;
}
#endif

/// kRows source rows of `width` bytes, interleaved as floats: block[x * kRows + r] = s[r][x]. This
/// transposition was half of the resize's time as scalar code; SSE2 and NEON do 16 columns at a time.
void interleave_rows(const uint8_t* const s[kRows], int width, float* block, bool simd) {
  int x = 0;
  static_assert(kRows == 4, "the vector paths interleave 4 rows");
#if SB3ALE_X86
  const __m128i zero = _mm_setzero_si128();
  for (; simd && x + 16 <= width; x += 16) {
    const auto load = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s[r] + x)); };
    const __m128i a = load(0), b = load(1), c = load(2), d = load(3);
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    // Each quad: 4 columns x 4 rows of bytes, column-major (a0 b0 c0 d0 a1 b1 ...).
    const __m128i quads[4] = {_mm_unpacklo_epi16(ab_lo, cd_lo), _mm_unpackhi_epi16(ab_lo, cd_lo),
                              _mm_unpacklo_epi16(ab_hi, cd_hi), _mm_unpackhi_epi16(ab_hi, cd_hi)};
    float* out = block + static_cast<std::size_t>(x) * kRows;
    for (const __m128i& q : quads) {
      const __m128i lo = _mm_unpacklo_epi8(q, zero), hi = _mm_unpackhi_epi8(q, zero);
      _mm_storeu_ps(out, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)));
      _mm_storeu_ps(out + 4, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)));
      _mm_storeu_ps(out + 8, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)));
      _mm_storeu_ps(out + 12, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)));
      out += 16;
    }
  }
#elif SB3ALE_NEON
  for (; simd && x + 16 <= width; x += 16) {
    // Each row's 16 bytes widened to four vectors of 4 floats (columns 4i to 4i + 3); ST4 then
    // stores the four rows' vectors i interleaved: a0 b0 c0 d0 a1 b1 c1 d1 ...
    float32x4x4_t cols[4];
    for (int r = 0; r < kRows; ++r) {
      const uint8x16_t bytes = vld1q_u8(s[r] + x);
      const uint16x8_t lo = vmovl_u8(vget_low_u8(bytes)), hi = vmovl_u8(vget_high_u8(bytes));
      cols[0].val[r] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo)));
      cols[1].val[r] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo)));
      cols[2].val[r] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi)));
      cols[3].val[r] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)));
    }
    float* out = block + static_cast<std::size_t>(x) * kRows;
    for (int i = 0; i < 4; ++i) vst4q_f32(out + 16 * i, cols[i]);
  }
#else
  (void)simd;
#endif
  for (; x < width; ++x)
    for (int r = 0; r < kRows; ++r) block[x * kRows + r] = s[r][x];
}

/// Horizontal area filter of kRows source rows interleaved in `block` (value x of row r at
/// block[x * kRows + r]): lane r is OpenCV's per-row float sum of S[idx] * w in table order, stored
/// to out[r * n + e]. kTaps > 0 fixes the tap count at compile time so the loop unrolls. Four
/// elements are summed at a time and transposed, so that each row's four sums store at once.
template <int kTaps>
void filter_rows(const float* block, const int32_t* idx, const float* w, int taps, int n, float* out, bool simd) {
  if (kTaps) taps = kTaps;
  const auto sum = [&](int e) {
    const int32_t* i = idx + static_cast<std::size_t>(e) * taps;
    const float* v = w + static_cast<std::size_t>(e) * taps;
    Rows4 acc = load_rows(block + i[0] * kRows) * v[0];
    for (int m = 1; m < taps; ++m) acc = madd_rows(acc, load_rows(block + i[m] * kRows), v[m]);
    return acc;
  };
  int e = 0;
#if SB3ALE_X86
  for (; simd && e + 4 <= n; e += 4) {
    const Rows4 s0 = sum(e), s1 = sum(e + 1), s2 = sum(e + 2), s3 = sum(e + 3);
    __m128 c0 = _mm_loadu_ps(reinterpret_cast<const float*>(&s0)), c1 = _mm_loadu_ps(reinterpret_cast<const float*>(&s1));
    __m128 c2 = _mm_loadu_ps(reinterpret_cast<const float*>(&s2)), c3 = _mm_loadu_ps(reinterpret_cast<const float*>(&s3));
    _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // now c_r holds row r's sums of elements e..e+3
    _mm_storeu_ps(out + e, c0);
    _mm_storeu_ps(out + n + e, c1);
    _mm_storeu_ps(out + 2 * n + e, c2);
    _mm_storeu_ps(out + 3 * n + e, c3);
  }
#elif SB3ALE_NEON
  // The sums in NEON registers as the scalar lanes: a multiply, then a fused multiply-add per
  // further tap (kAreaFma holds on every AArch64).
  static_assert(kAreaFma, "OpenCV fuses on AArch64");
  const auto neon_sum = [&](int e) {
    const int32_t* i = idx + static_cast<std::size_t>(e) * taps;
    const float* v = w + static_cast<std::size_t>(e) * taps;
    float32x4_t acc = vmulq_n_f32(vld1q_f32(block + i[0] * kRows), v[0]);
    for (int m = 1; m < taps; ++m) acc = vfmaq_n_f32(acc, vld1q_f32(block + i[m] * kRows), v[m]);
    return acc;
  };
  for (; simd && e + 4 <= n; e += 4) {
    const float32x4_t s0 = neon_sum(e), s1 = neon_sum(e + 1), s2 = neon_sum(e + 2), s3 = neon_sum(e + 3);
    // Transposed: t pairs lanes of two elements, then 64-bit halves make whole rows.
    const float32x4_t t0 = vzip1q_f32(s0, s1), t1 = vzip2q_f32(s0, s1);  // (s0 s1) lanes 0 1, then 2 3
    const float32x4_t t2 = vzip1q_f32(s2, s3), t3 = vzip2q_f32(s2, s3);
    const auto rows = [](float32x4_t p, float32x4_t q, bool high) {
      const float64x2_t a = vreinterpretq_f64_f32(p), b = vreinterpretq_f64_f32(q);
      return vreinterpretq_f32_f64(high ? vzip2q_f64(a, b) : vzip1q_f64(a, b));
    };
    vst1q_f32(out + e, rows(t0, t2, false));  // lane 0 of s0..s3: row 0's sums of elements e..e+3
    vst1q_f32(out + n + e, rows(t0, t2, true));
    vst1q_f32(out + 2 * n + e, rows(t1, t3, false));
    vst1q_f32(out + 3 * n + e, rows(t1, t3, true));
  }
#else
  (void)simd;
#endif
  for (; e < n; ++e) {
    const Rows4 acc = sum(e);
    for (int r = 0; r < kRows; ++r) out[r * n + e] = acc[r];
  }
}

}  // namespace
}  // namespace resize_rows
}  // namespace sb3ale
