#include "frames/frame_ops.hpp"
#include "frames/resize_avx2.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "frames/resize_rows.hpp"

namespace sb3ale {
namespace {

constexpr int kMaxSize = 65535;  // keeps fast-area column sums exact in float and indices in int
constexpr int kCoefOne = 1 << 11;  // OpenCV's INTER_RESIZE_COEF_SCALE (8-bit bilinear weights)
using resize_rows::kRows;          // source rows filtered together, one per SIMD lane (resize_rows.hpp)
constexpr int kMaxRows = 8;        // ... and with AVX2 (resize_avx2.cpp): scratch is sized for it

/// OpenCV's saturate_cast<short>(float).
inline int16_t round_sat_i16(float v) {
  return static_cast<int16_t>(std::clamp<long>(std::lrint(v), INT16_MIN, INT16_MAX));
}

struct AreaTap { int dst, src; float w; };

/// OpenCV's computeResizeAreaTab: for each destination cell [d*scale, (d+1)*scale) the covered source
/// pixels weighted by coverage / cell width, computed in double and stored as float; slivers of at
/// most 1e-3 pixel are dropped.
std::vector<AreaTap> area_taps(int ssize, int dsize, double scale) {
  std::vector<AreaTap> tab;
  for (int d = 0; d < dsize; ++d) {
    const double f1 = d * scale, f2 = f1 + scale, cell = std::min(scale, ssize - f1);
    const int s2 = std::min(static_cast<int>(std::floor(f2)), ssize - 1);
    const int s1 = std::min(static_cast<int>(std::ceil(f1)), s2);
    if (s1 - f1 > 1e-3) tab.push_back({d, s1 - 1, static_cast<float>((s1 - f1) / cell)});
    for (int s = s1; s < s2; ++s) tab.push_back({d, s, static_cast<float>(1.0 / cell)});
    if (f2 - s2 > 1e-3) tab.push_back({d, s2, static_cast<float>(std::min({f2 - s2, 1.0, cell}) / cell)});
  }
  return tab;
}

}  // namespace

AreaResize::AreaResize(int src_h, int src_w, int dst_h, int dst_w, int channels, Isa isa)
    : src_h_(src_h), src_w_(src_w), dst_h_(dst_h), dst_w_(dst_w), cn_(channels), isa_(usable_isa(isa)) {
  const auto ok = [](int v) { return v >= 1 && v <= kMaxSize; };
  if (!ok(src_h) || !ok(src_w) || !ok(dst_h) || !ok(dst_w) || channels < 1 || channels > 4)
    throw std::invalid_argument("AreaResize: sizes must be in [1, 65535] and channels in [1, 4], got " +
                                std::to_string(src_h) + "x" + std::to_string(src_w) + " -> " +
                                std::to_string(dst_h) + "x" + std::to_string(dst_w) + " x" +
                                std::to_string(channels));
  if (src_h == dst_h && src_w == dst_w) return;  // kCopy, as cv::resize
  // Same double arithmetic as cv::resize: inverse scale first, then its reciprocal.
  const double inv_x = static_cast<double>(dst_w) / src_w, inv_y = static_cast<double>(dst_h) / src_h;
  const double scale_x = 1.0 / inv_x, scale_y = 1.0 / inv_y;
  if (scale_x < 1.0 || scale_y < 1.0) {
    mode_ = Mode::kLinear;
    build_linear_tables(scale_x, scale_y, inv_x, inv_y);
    return;
  }
  fx_ = static_cast<int>(std::lrint(scale_x));
  fy_ = static_cast<int>(std::lrint(scale_y));
  const bool integral = std::abs(scale_x - fx_) < DBL_EPSILON && std::abs(scale_y - fy_) < DBL_EPSILON;
  mode_ = integral ? Mode::kFastArea : Mode::kArea;
  if (!integral) build_area_tables(scale_x, scale_y);
}

void AreaResize::build_area_tables(double scale_x, double scale_y) {
  const std::vector<AreaTap> xt = area_taps(src_w_, dst_w_, scale_x);
  std::vector<int> first(dst_w_ + 1, 0);  // taps of destination column d: xt[first[d], first[d+1])
  for (const AreaTap& t : xt) first[t.dst + 1]++;
  for (int d = 0; d < dst_w_; ++d) {
    first[d + 1] += first[d];
    taps_x_ = std::max(taps_x_, first[d + 1] - first[d]);
  }
  x_src_.resize(static_cast<std::size_t>(dst_w_) * cn_ * taps_x_);
  x_w_.resize(x_src_.size());
  for (int d = 0; d < dst_w_; ++d) {
    for (int m = 0; m < taps_x_; ++m) {
      // Padding repeats the last tap with weight 0: adding +0.0f leaves the float sum unchanged.
      const bool real = first[d] + m < first[d + 1];
      const AreaTap& t = xt[real ? first[d] + m : first[d + 1] - 1];
      for (int c = 0; c < cn_; ++c) {
        x_src_[(d * cn_ + c) * taps_x_ + m] = t.src * cn_ + c;
        x_w_[(d * cn_ + c) * taps_x_ + m] = real ? t.w : 0.0f;
      }
    }
  }
  y_begin_.assign(dst_h_ + 1, 0);
  for (const AreaTap& t : area_taps(src_h_, dst_h_, scale_y)) {
    y_begin_[t.dst + 1]++;
    y_row_.push_back(t.src);
    y_w_.push_back(t.w);
  }
  for (int d = 0; d < dst_h_; ++d) y_begin_[d + 1] += y_begin_[d];
}

void AreaResize::build_linear_tables(double scale_x, double scale_y, double inv_x, double inv_y) {
  // OpenCV's INTER_AREA fallback when upscaling: bilinear whose fraction is the overlap of the
  // destination pixel with the next source pixel, quantised to 11 bits.
  const auto frac = [](int d, int s, double inv) {
    const float f = static_cast<float>((d + 1) - (s + 1) * inv);
    return f <= 0 ? 0.0f : f - std::floor(f);
  };
  lx_max_ = dst_w_;
  for (int dx = 0; dx < dst_w_; ++dx) {
    int sx = static_cast<int>(std::floor(dx * scale_x));
    float f = frac(dx, sx, inv_x);
    if (sx + 1 >= src_w_) {
      lx_max_ = std::min(lx_max_, dx);
      if (sx >= src_w_ - 1) f = 0.0f, sx = src_w_ - 1;
    }
    for (int c = 0; c < cn_; ++c) {
      lx_src_.push_back(sx * cn_ + c);
      lx_w_.push_back(round_sat_i16((1.0f - f) * kCoefOne));
      lx_w_.push_back(round_sat_i16(f * kCoefOne));
    }
  }
  lx_max_ *= cn_;
  for (int dy = 0; dy < dst_h_; ++dy) {
    const int sy = static_cast<int>(std::floor(dy * scale_y));
    const float f = frac(dy, sy, inv_y);  // unlike x, OpenCV keeps the fraction at the bottom edge
    ly_row_.push_back(std::clamp(sy, 0, src_h_ - 1));
    ly_row_.push_back(std::clamp(sy + 1, 0, src_h_ - 1));
    ly_w_.push_back(round_sat_i16((1.0f - f) * kCoefOne));
    ly_w_.push_back(round_sat_i16(f * kCoefOne));
  }
}

std::size_t AreaResize::scratch_floats() const {
  const std::size_t n = static_cast<std::size_t>(dst_w_) * cn_, row = static_cast<std::size_t>(src_w_) * cn_;
  if (mode_ == Mode::kFastArea) return row + n;
  if (mode_ != Mode::kArea) return 0;
  const std::size_t padded_h = (src_h_ + kMaxRows - 1) / kMaxRows * kMaxRows;
  return (padded_h + 1) * n + kMaxRows * row;
}

void AreaResize::operator()(const uint8_t* src, uint8_t* dst) const {
  thread_local std::vector<float> scratch;  // grows on a thread's first (or first larger) call only
  if (scratch.size() < scratch_floats()) scratch.resize(scratch_floats());
  (*this)(src, dst, scratch.data());
}

void AreaResize::operator()(const uint8_t* src, uint8_t* dst, float* scratch) const {
  switch (mode_) {
    case Mode::kCopy: std::memcpy(dst, src, static_cast<std::size_t>(src_h_) * src_w_ * cn_); return;
    case Mode::kFastArea: return run_fast_area(src, dst, scratch);
    case Mode::kArea: return run_area(src, dst, scratch);
    case Mode::kLinear: return run_linear(src, dst);
  }
}

void AreaResize::update(const uint8_t* src, const uint8_t* prev, uint8_t* dst) const {
  if (mode_ != Mode::kArea) return (*this)(src, dst);
  thread_local std::vector<float> scratch;
  thread_local std::vector<uint8_t> need;  // source rows that changed, then those needed; then destination rows
  if (scratch.size() < scratch_floats()) scratch.resize(scratch_floats());
  need.assign(static_cast<std::size_t>(src_h_) + dst_h_, 0);
  uint8_t* need_src = need.data();
  uint8_t* need_dst = need_src + src_h_;
  const std::size_t row = static_cast<std::size_t>(src_w_) * cn_;
  bool any = false;
  for (int dy = 0; dy < dst_h_; ++dy) {
    for (int k = y_begin_[dy]; k < y_begin_[dy + 1] && !need_dst[dy]; ++k) {
      const std::size_t y = static_cast<std::size_t>(y_row_[k]);
      need_dst[dy] = std::memcmp(src + y * row, prev + y * row, row) != 0;
    }
    any = any || need_dst[dy];
  }
  if (!any) return;
  for (int dy = 0; dy < dst_h_; ++dy) {
    if (!need_dst[dy]) continue;
    for (int k = y_begin_[dy]; k < y_begin_[dy + 1]; ++k) need_src[y_row_[k]] = 1;  // every tap of the row
  }
  run_area(src, dst, scratch.data(), need_src, need_dst);
}

void AreaResize::run_fast_area(const uint8_t* src, uint8_t* dst, float* scratch) const {
  // Integer block sums: down the fy_ rows (exact in float, < 2^24), then across fx_ pixels. Each
  // total ends up as float(int sum), as OpenCV's `sum * scale`.
  const int n = dst_w_ * cn_, row = src_w_ * cn_;
  float* colsum = scratch;
  float* sum = scratch + row;
  const float scale = 1.0f / static_cast<float>(fx_ * fy_);
  // OpenCV's 2x2 kernel for 1, 3 and 4 channels rounds half up in integers; every other case goes
  // through float and rounds half to even.
  const bool half_up = fx_ == 2 && fy_ == 2 && cn_ != 2;
  for (int dy = 0; dy < dst_h_; ++dy, dst += n) {
    const uint8_t* s = src + static_cast<std::size_t>(dy) * fy_ * row;
    for (int x = 0; x < row; ++x) colsum[x] = s[x];
    for (int j = 1; j < fy_; ++j)
      for (int x = 0; x < row; ++x) colsum[x] += s[static_cast<std::size_t>(j) * row + x];
    if (cn_ == 1 && fx_ == 2) {  // the common case, in a form the compiler vectorises
      for (int e = 0; e < n; ++e) sum[e] = colsum[2 * e] + colsum[2 * e + 1];
    } else {
      for (int e = 0, x = 0; e < n; e += cn_, x += fx_ * cn_)
        for (int c = 0; c < cn_; ++c) {
          int total = 0;
          for (int i = 0; i < fx_; ++i) total += static_cast<int>(colsum[x + i * cn_ + c]);
          sum[e + c] = static_cast<float>(total);
        }
    }
    if (half_up)
      for (int e = 0; e < n; ++e) dst[e] = static_cast<uint8_t>((static_cast<int>(sum[e]) + 2) >> 2);
    else
      for (int e = 0; e < n; ++e) dst[e] = round_sat_u8(sum[e] * scale);
  }
}

void AreaResize::run_area(const uint8_t* src, uint8_t* dst, float* scratch, const uint8_t* need_src,
                          const uint8_t* need_dst) const {
  const int n = dst_w_ * cn_, row = src_w_ * cn_;
  const std::size_t padded_h = (src_h_ + kMaxRows - 1) / kMaxRows * kMaxRows;
  float* hsum = scratch;            // padded_h x n horizontal sums, one row per source row
  float* sum = hsum + padded_h * n;  // n vertical sums
  float* block = sum + n;           // kRows (or kMaxRows) source rows as float, interleaved
#if SB3ALE_AREA_AVX2
  if (isa_has(isa_, Isa::kAvx2)) {  // the same float operations, eight rows or elements at a time (1.3-1.5x faster)
    area_horizontal_avx2(src, src_h_, row, x_src_.data(), x_w_.data(), taps_x_, n, block, hsum, need_src);
    area_vertical_avx2(hsum, n, dst_h_, y_begin_.data(), y_row_.data(), y_w_.data(), dst, need_dst);
    return;
  }
#endif
  // Horizontal pass over every source row, kRows at a time (the last block repeats the last row).
  const bool simd = isa_ != Isa::kScalar;  // SSE2 or NEON, whichever this CPU's family has
  for (int y0 = 0; y0 < src_h_; y0 += kRows) {
    if (need_src && std::none_of(need_src + y0, need_src + std::min(y0 + kRows, src_h_), [](uint8_t f) { return f; }))
      continue;
    const uint8_t* s[kRows];
    for (int r = 0; r < kRows; ++r) s[r] = src + static_cast<std::size_t>(std::min(y0 + r, src_h_ - 1)) * row;
    resize_rows::interleave_rows(s, row, block, simd);
    float* out = hsum + static_cast<std::size_t>(y0) * n;
    switch (taps_x_) {
      case 2: resize_rows::filter_rows<2>(block, x_src_.data(), x_w_.data(), 2, n, out, simd); break;
      case 3: resize_rows::filter_rows<3>(block, x_src_.data(), x_w_.data(), 3, n, out, simd); break;
      case 4: resize_rows::filter_rows<4>(block, x_src_.data(), x_w_.data(), 4, n, out, simd); break;
      default: resize_rows::filter_rows<0>(block, x_src_.data(), x_w_.data(), taps_x_, n, out, simd);
    }
  }
  // Vertical pass as OpenCV: sum = beta * row, then sum += beta * row (area_madd), in float; round
  // at the end.
  for (int dy = 0; dy < dst_h_; ++dy, dst += n) {
    if (need_dst && !need_dst[dy]) continue;
    for (int k = y_begin_[dy]; k < y_begin_[dy + 1]; ++k) {
      const float beta = y_w_[k];
      const float* h = hsum + static_cast<std::size_t>(y_row_[k]) * n;
      if (k == y_begin_[dy])
        for (int e = 0; e < n; ++e) sum[e] = beta * h[e];
      else
        for (int e = 0; e < n; ++e) sum[e] = area_madd(sum[e], h[e], beta);
    }
    for (int e = 0; e < n; ++e) dst[e] = round_sat_u8(sum[e]);
  }
}

void AreaResize::run_linear(const uint8_t* src, uint8_t* dst) const {
  // OpenCV's fixed-point bilinear: 11-bit horizontal weights into ints, then its vertical formula
  // that drops 4 + 16 bits before rounding off the last 2.
  const int n = dst_w_ * cn_;
  const std::size_t row = static_cast<std::size_t>(src_w_) * cn_;
  for (int dy = 0; dy < dst_h_; ++dy) {
    const uint8_t* s0 = src + ly_row_[2 * dy] * row;
    const uint8_t* s1 = src + ly_row_[2 * dy + 1] * row;
    const int b0 = ly_w_[2 * dy], b1 = ly_w_[2 * dy + 1];
    for (int e = 0; e < n; ++e) {
      const int x = lx_src_[e];
      int h0 = s0[x] * kCoefOne, h1 = s1[x] * kCoefOne;  // past lx_max_: the edge pixel alone
      if (e < lx_max_) {
        const int a0 = lx_w_[2 * e], a1 = lx_w_[2 * e + 1];
        h0 = s0[x] * a0 + s0[x + cn_] * a1;
        h1 = s1[x] * a0 + s1[x + cn_] * a1;
      }
      *dst++ = static_cast<uint8_t>((((b0 * (h0 >> 4)) >> 16) + ((b1 * (h1 >> 4)) >> 16) + 2) >> 2);
    }
  }
}

}  // namespace sb3ale
