#include "frames/frame_stack.hpp"

#include <algorithm>
#include <cstring>

#if SB3ALE_X86
#include <emmintrin.h>
#endif
#if SB3ALE_NEON
#include <arm_neon.h>
#endif

namespace sb3ale {

namespace {

/// Channels-last stack of four gray frames (VecFrameStack's memory): out[4p + j] = frame j's pixel p.
/// SSE2 or NEON interleave 16 pixels of the four frames per iteration; the tail and other CPUs go
/// byte by byte.
void interleave4(const uint8_t* const* src, size_t pixels, uint8_t* out, bool simd) {
  size_t p = 0;
#if SB3ALE_X86
  for (; simd && p + 16 <= pixels; p += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[0] + p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[1] + p));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[2] + p));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[3] + p));
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    __m128i* o = reinterpret_cast<__m128i*>(out + 4 * p);
    _mm_storeu_si128(o, _mm_unpacklo_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
  }
#elif SB3ALE_NEON
  for (; simd && p + 16 <= pixels; p += 16) {  // ST4 stores four vectors interleaved byte by byte
    const uint8x16x4_t frames = {{vld1q_u8(src[0] + p), vld1q_u8(src[1] + p), vld1q_u8(src[2] + p), vld1q_u8(src[3] + p)}};
    vst4q_u8(out + 4 * p, frames);
  }
#else
  (void)simd;
#endif
  for (; p < pixels; ++p) {
    for (int j = 0; j < 4; ++j) out[4 * p + static_cast<size_t>(j)] = src[j][p];
  }
}

}  // namespace

FrameStack::FrameStack(const EnvConfig& config, Isa isa)
    : stack_(config.stack_num),
      channels_(config.channels()),
      pixels_(static_cast<size_t>(config.img_height) * config.img_width),
      frame_size_(static_cast<size_t>(config.frame_size())),
      // AtariEnv's own observation (obs_type RGB, GRAYSCALE, RAM) is written as it is: its shape is the
      // screen's or the RAM's, not img_height x img_width, whatever the layout (config_obs_shape).
      layout_(config.obs_type == ObsType::kProcessed ? config.layout : Layout::kFrames),
      pad_with_reset_(config.pad_with_reset),
      frames_(static_cast<size_t>(config.obs_size()), 0),
      simd_(usable_isa(isa) != Isa::kScalar) {}

void FrameStack::restart(const uint8_t* frame) {
  if (pad_with_reset_) {
    for (int j = 0; j < stack_; ++j) std::memcpy(frames_.data() + static_cast<size_t>(j) * frame_size_, frame, frame_size_);
  } else {
    std::fill(frames_.begin(), frames_.end(), 0);
    push(frame);
  }
}

void FrameStack::push(const uint8_t* frame) {
  newest_ = (newest_ + 1) % stack_;
  std::memcpy(frames_.data() + static_cast<size_t>(newest_) * frame_size_, frame, frame_size_);
}

void FrameStack::write(uint8_t* out) const {
  auto frame = [&](int j) {  // j = 0 is the oldest frame
    return frames_.data() + static_cast<size_t>((newest_ + 1 + j) % stack_) * frame_size_;
  };
  if (layout_ == Layout::kFrames || (layout_ == Layout::kCHW && channels_ == 1)) {
    for (int j = 0; j < stack_; ++j) std::memcpy(out + j * frame_size_, frame(j), frame_size_);
  } else if (layout_ == Layout::kHWC && channels_ == 1 && stack_ == 4) {
    const uint8_t* const src[4] = {frame(0), frame(1), frame(2), frame(3)};
    interleave4(src, pixels_, out, simd_);
  } else if (layout_ == Layout::kHWC) {
    const size_t step = static_cast<size_t>(stack_) * channels_;
    for (int j = 0; j < stack_; ++j) {
      const uint8_t* src = frame(j);
      for (size_t p = 0; p < pixels_; ++p) {
        for (int c = 0; c < channels_; ++c) out[p * step + j * channels_ + c] = src[p * channels_ + c];
      }
    }
  } else {  // CHW with colour: one plane per channel of each frame
    for (int j = 0; j < stack_; ++j) {
      const uint8_t* src = frame(j);
      for (int c = 0; c < channels_; ++c) {
        uint8_t* plane = out + (static_cast<size_t>(j) * channels_ + c) * pixels_;
        for (size_t p = 0; p < pixels_; ++p) plane[p] = src[p * channels_ + c];
      }
    }
  }
}

}  // namespace sb3ale
