#include "frame_stack.hpp"

#include <algorithm>
#include <cstring>

namespace sb3ale {

FrameStack::FrameStack(const EnvConfig& config)
    : stack_(config.stack_num),
      channels_(config.channels()),
      pixels_(static_cast<size_t>(config.img_height) * config.img_width),
      frame_size_(static_cast<size_t>(config.frame_size())),
      layout_(config.layout),
      pad_with_reset_(config.pad_with_reset),
      frames_(static_cast<size_t>(config.obs_size()), 0) {}

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
  for (int j = 0; j < stack_; ++j) {  // j = 0 is the oldest frame
    const uint8_t* src = frames_.data() + static_cast<size_t>((newest_ + 1 + j) % stack_) * frame_size_;
    if (layout_ == Layout::kFrames || (layout_ == Layout::kCHW && channels_ == 1)) {
      std::memcpy(out + j * frame_size_, src, frame_size_);
    } else if (layout_ == Layout::kHWC) {
      const size_t step = static_cast<size_t>(stack_) * channels_;
      for (size_t p = 0; p < pixels_; ++p) {
        for (int c = 0; c < channels_; ++c) out[p * step + j * channels_ + c] = src[p * channels_ + c];
      }
    } else {  // CHW with colour: one plane per channel of each frame
      for (int c = 0; c < channels_; ++c) {
        uint8_t* plane = out + (static_cast<size_t>(j) * channels_ + c) * pixels_;
        for (size_t p = 0; p < pixels_; ++p) plane[p] = src[p * channels_ + c];
      }
    }
  }
}

}  // namespace sb3ale
