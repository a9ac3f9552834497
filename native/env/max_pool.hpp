// ALE's and Gymnasium's max-pool of a skip's last two frames (chain_ale.cpp, chain_gymnasium.cpp):
// in place into the last frame's buffer, which so keeps the max until a frame overwrites it, as both
// references leave their buffers.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "env/emulator.hpp"
#include "frames/frame_ops.hpp"

namespace sb3ale {

/// With gray frames (a pair table: gray_pairs_of gives kMaxOfGray), the skip's second-to-last frame
/// is kept as palette indices and, once the last frame comes, both become the pooled gray in one
/// lookup over pairs. Otherwise each frame is captured (gray or RGB) and pooled as the references do.
class MaxPool {
 public:
  /// `pool`: the chain pools at all (else pooled() is the last frame captured).
  MaxPool(const EnvConfig& config, Emulator& emu, bool pool)
      : emu_(emu), pool_(pool), pairs_(pool && gray_pairs_of(config) == GrayPairs::kMaxOfGray) {
    const size_t size = emu_.screen_pixels() * static_cast<size_t>(config.channels());
    last_.assign(size, 0);
    older_.assign(size, 0);
  }

  /// A reset's frame. The references zero the other buffer, so the pool leaves this one as it is.
  void reset_frame() {
    emu_.capture(last_.data());
    std::fill(older_.begin(), older_.end(), 0);
    older_new_ = false;
  }

  /// The skip's second-to-last frame. Unless the last frame comes too, the pool is max(the last
  /// pool, this frame): the last pool already holds the max with any earlier one.
  void older() {
    if (!pool_) return;  // never read
    if (!pairs_) return emu_.capture(older_.data());
    std::memcpy(older_.data(), emu_.screen(), older_.size());
    older_new_ = true;
  }

  /// The skip's last frame. With pairs, older() came first in the same skip (frameskip > 1).
  void newer() {
    if (!older_new_) return emu_.capture(last_.data());
    emu_.palette().pool_gray(emu_.screen(), older_.data(), last_.data(), last_.size());
    older_new_ = false;
  }

  /// The frame the step (or reset) leaves, pooled in place.
  const uint8_t* pooled() {
    if (older_new_) {  // the skip ended on its last frame, which no one captures
      if (gray_older_.empty()) gray_older_.resize(older_.size());
      palette_lookup(older_.data(), emu_.palette().gray.data(), gray_older_.data(), older_.size());
      max_in_place(last_.data(), gray_older_.data(), last_.size());
      older_new_ = false;
    } else if (pool_ && !pairs_) {
      max_in_place(last_.data(), older_.data(), last_.size());
    }
    return last_.data();
  }

  size_t size() const { return last_.size(); }

 private:
  Emulator& emu_;
  const bool pool_, pairs_;
  std::vector<uint8_t> last_;   // the last frame, then the pool
  std::vector<uint8_t> older_;  // the second-to-last frame: gray or RGB, or palette indices with pairs_
  bool older_new_ = false;      // pairs_: older_ holds a frame not pooled yet
  std::vector<uint8_t> gray_older_;  // pairs_: older_ in gray, when a skip ends on its last frame
};

}  // namespace sb3ale
