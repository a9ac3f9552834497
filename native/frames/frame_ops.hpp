// Pure image operations reproducing SB3's WarpFrame preprocessing bit for bit:
// cv2.cvtColor(RGB2GRAY) and cv2.resize(..., interpolation=cv2.INTER_AREA) on uint8 images.
// Exactness needs IEEE float as written: build with -ffp-contract=off (FMA contraction changes
// rounding; checked to break it with -march=native) and without -ffast-math. The one exception is
// explicit: OpenCV's AArch64 builds fuse the area pass's multiply-adds, so the engine does there too
// (area_madd).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "frames/isa.hpp"

namespace sb3ale {

/// cv2.cvtColor(RGB2GRAY) for one uint8 pixel, bit-exact: OpenCV's 15-bit fixed-point BT.601 weights
/// (0.299, 0.587, 0.114 scaled by 2^15), rounded half up.
inline uint8_t rgb_to_gray(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

/// out[p] = table[indices[p]] for p < n: a palette lookup (ALE's getScreenGrayscale), 64 pixels at a
/// time with AVX-512 VBMI, 32 with AVX2, 16 with SSSE3 (at most `isa`, and what the CPU has).
void palette_lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n,
                    Isa isa = process_isa());

/// out[p] = pairs[a[p] * 256 + b[p]] for p < n: a lookup of two frames' palette indices together
/// (the pooled gray of two frames). Vectorised as palette_lookup, through `diagonal` (pairs[k * 257]
/// for k < 256: most pixels are alike in two frames in a row) where the caller keeps it; without
/// it, the 256 entries are read from `pairs` first.
void pair_lookup(const uint8_t* a, const uint8_t* b, const uint8_t* pairs, uint8_t* out, std::size_t n,
                 Isa isa = process_isa(), const uint8_t* diagonal = nullptr);

/// 1.5 * 2^23: adding and removing it rounds a float of magnitude < 2^22 to an integer, half to even.
constexpr float kRoundToInt = 12582912.0f;

/// OpenCV's saturate_cast<uchar>(float) for |v| < 2^22: cvRound (half to even), then clamp. Unlike
/// lrintf it is inline and vectorisable.
inline uint8_t round_sat_u8(float v) {
  const int r = static_cast<int>((v + kRoundToInt) - kRoundToInt);
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

/// Whether OpenCV's INTER_AREA float pass fuses its multiply-adds (one rounding) on this CPU: on
/// AArch64 it does, in both passes (its NEON v_muladd, and compilers contract its scalar loop): the
/// cv2 wheel and ale-py's own OpenCV, measured under qemu, differ from x86-64's in 123 of 472
/// downscales, and equal a fused computation in all (Linux's wheels; other AArch64 systems are
/// assumed alike). x86-64's OpenCV computes this code with SSE, which has no FMA. Other CPUs: not
/// measured, left unfused.
#if defined(__aarch64__) || defined(_M_ARM64)
constexpr bool kAreaFma = true;
#else
constexpr bool kAreaFma = false;
#endif

/// acc + x * w as OpenCV's area pass adds each term after the first: fused where kAreaFma.
inline float area_madd(float acc, float x, float w) { return kAreaFma ? std::fma(x, w, acc) : acc + x * w; }

/// a = max(a, b) element-wise: the max-pool of two frames (numpy.maximum(a, b, out=a)).
inline void max_in_place(uint8_t* a, const uint8_t* b, std::size_t n) {
  for (std::size_t p = 0; p < n; ++p) a[p] = a[p] < b[p] ? b[p] : a[p];
}

/// cv2.resize(src, (dst_w, dst_h), interpolation=cv2.INTER_AREA) on uint8 images with `channels`
/// interleaved channels (HWC, rows contiguous), bit-exact with OpenCV. Like OpenCV it picks:
///  - a copy when the sizes are equal;
///  - integer block averaging when both scale factors are integers (2x2 with 1, 3 or 4 channels
///    rounds half up, everything else half to even);
///  - float area resampling for other downscales (the SB3 210x160 -> 84x84 case);
///  - OpenCV's fixed-point "area" bilinear variant when either axis is upscaled.
/// Tables are built in the constructor. operator() is const and safe to call concurrently on one
/// object from many threads with different src/dst.
class AreaResize {
 public:
  /// Throws std::invalid_argument unless all sizes are positive and 1 <= channels <= 4, or when
  /// SB3_ALE_VEC_ISA names no level (process_isa). `isa`: the most its paths may use (the tests
  /// compare them all).
  AreaResize(int src_h, int src_w, int dst_h, int dst_w, int channels, Isa isa = process_isa());

  /// src: src_h*src_w*channels bytes; dst: dst_h*dst_w*channels bytes; they must not overlap.
  /// Scratch comes from a thread_local buffer that only allocates on a thread's first call (or first
  /// call needing more), never in steady state.
  void operator()(const uint8_t* src, uint8_t* dst) const;
  /// Same, with caller-provided scratch of at least scratch_floats() floats (any alignment); this
  /// overload never allocates.
  void operator()(const uint8_t* src, uint8_t* dst, float* scratch) const;
  /// dst holds this resize of `prev` (an image of src's size); makes it the resize of `src`: the
  /// same bytes as operator()(src, dst), but where the float area pass runs (the 210x160 -> 84x84
  /// case) only the destination rows whose source rows differ between the two are computed again.
  /// Two frames in a row of an Atari game differ in a few rows (a ball, a paddle, the score).
  void update(const uint8_t* src, const uint8_t* prev, uint8_t* dst) const;

  int src_h() const { return src_h_; }
  int src_w() const { return src_w_; }
  int dst_h() const { return dst_h_; }
  int dst_w() const { return dst_w_; }
  int channels() const { return cn_; }
  std::size_t scratch_floats() const;

 private:
  enum class Mode { kCopy, kFastArea, kArea, kLinear };

  void build_area_tables(double scale_x, double scale_y);
  void build_linear_tables(double scale_x, double scale_y, double inv_x, double inv_y);
  void run_fast_area(const uint8_t* src, uint8_t* dst, float* scratch) const;
  /// need_src[y] (source rows) and need_dst[dy] (destination rows): which to compute; null: all.
  void run_area(const uint8_t* src, uint8_t* dst, float* scratch, const uint8_t* need_src = nullptr,
                const uint8_t* need_dst = nullptr) const;
  void run_linear(const uint8_t* src, uint8_t* dst) const;

  int src_h_, src_w_, dst_h_, dst_w_, cn_;
  Mode mode_ = Mode::kCopy;
  int fx_ = 1, fy_ = 1;  // kFastArea: the integer scale factors
  Isa isa_;              // what the CPU has, at most what was asked for

  // kArea horizontal taps as [dst element][tap] (source element index, weight), padded with zero
  // weights so every element has exactly taps_x_ terms, in OpenCV's table order.
  int taps_x_ = 0;
  std::vector<int32_t> x_src_;
  std::vector<float> x_w_;
  // kArea vertical taps: rows y_row_[k] with weights y_w_[k] for k in [y_begin_[dy], y_begin_[dy+1]).
  std::vector<int32_t> y_begin_, y_row_;
  std::vector<float> y_w_;

  // kLinear: per destination element the left source element and 11-bit weights (a0, a1); per
  // destination row the two clamped source rows and weights (b0, b1).
  std::vector<int32_t> lx_src_, ly_row_;
  std::vector<int16_t> lx_w_, ly_w_;
  int lx_max_ = 0;  // first element whose right neighbour would fall outside the row
};

}  // namespace sb3ale
