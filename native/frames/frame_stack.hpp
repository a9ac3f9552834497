// The last stack_num processed frames of one env, newest last, written out in the batch's layout.
#pragma once

#include <cstdint>
#include <vector>

#include "config.hpp"
#include "frames/isa.hpp"

namespace sb3ale {

/// A ring of frames (each HWC). VecFrameStack and FrameStackObservation("zero") zero-pad a fresh
/// stack; FrameStackObservation("reset") repeats the first frame.
class FrameStack {
 public:
  /// `isa`: the most its channels-last interleave may use (the tests compare the levels).
  explicit FrameStack(const EnvConfig& config, Isa isa = process_isa());

  /// Starts a new stack holding `frame` (padded with zeros, or with copies of it).
  void restart(const uint8_t* frame);
  void push(const uint8_t* frame);
  /// The stack, oldest frame first, in the configured layout: obs_size() bytes.
  void write(uint8_t* out) const;

 private:
  int stack_, channels_;
  size_t pixels_, frame_size_;
  Layout layout_;
  bool pad_with_reset_;
  std::vector<uint8_t> frames_;
  int newest_ = 0;  // slot of the newest frame
  bool simd_;       // the level allows the SSE2 or NEON interleave
};

}  // namespace sb3ale
