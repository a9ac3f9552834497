// A preprocessing chain: how one preset turns emulator frames into agent steps and frames.
// One class per preset (chain_sb3.cpp, chain_gymnasium.cpp, chain_ale.cpp), or AtariEnv's own
// observations with none (chain_raw.cpp), chosen once per env.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "config.hpp"
#include "env/emulator.hpp"
#include "frames/frame_ops.hpp"
#include "frames/resize_cache.hpp"

namespace sb3ale {

/// What one agent step of a chain gives, before the env's own reward clipping and autoreset.
struct ChainStep {
  double reward = 0;        ///< unclipped, summed over the step
  bool terminated = false;  ///< the chain's end of episode: game over, or a life loss with episodic life
  bool truncated = false;   ///< the chain's time limit
  bool game_end = false;    ///< the emulator's game ends with this step: its true score is final
  bool ended() const { return terminated || truncated; }
};

class Chain {
 public:
  virtual ~Chain() = default;
  /// The reset sequence of the preset (seeded when `seed` holds the seed's 32-bit words); leaves
  /// the reset's processed frame in frame().
  virtual void reset(const std::vector<uint32_t>* seed) = 0;
  /// One agent step with action index `action` and paddle `strength`; leaves its frame in frame().
  virtual ChainStep step(int action, float strength) = 0;
  virtual ResetInfo reset_info() const = 0;
  /// The processed frame: img_height x img_width x channels.
  const uint8_t* frame() const { return frame_.data(); }

 protected:
  explicit Chain(const EnvConfig& config) : frame_(static_cast<size_t>(config.frame_size()), 0) {}

  /// frame_ = resize(src), `size` bytes: only the rows whose source rows differ from the last call's
  /// src are resized again (AreaResize::update). Two frames in a row differ in a few rows.
  void resize_to_frame(const AreaResize& resize, const uint8_t* src, size_t size) {
    if (last_src_.size() != size) last_src_.assign(size, 0);  // at first zeros, whose resize frame_ holds
    resize.update(src, last_src_.data(), frame_.data());
    std::memcpy(last_src_.data(), src, size);
  }

  std::vector<uint8_t> frame_;

 private:
  std::vector<uint8_t> last_src_;  // what frame_ is the resize of, once resize_to_frame has run
};

/// Each chain loads the ROM, then takes the resize of its screen's height from `resizes`.
std::unique_ptr<Chain> make_sb3_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes);
std::unique_ptr<Chain> make_gymnasium_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes);
std::unique_ptr<Chain> make_ale_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes);
/// AtariEnv alone, for config.obs_type other than kProcessed (chain_raw.cpp).
std::unique_ptr<Chain> make_raw_chain(const EnvConfig& config, Emulator& emulator);

}  // namespace sb3ale
