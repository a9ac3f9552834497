// One env: an emulator, its preset's preprocessing chain, a frame stack and the auto-reset.
// Knows nothing of threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "env/chain.hpp"
#include "config.hpp"
#include "env/emulator.hpp"
#include "frames/frame_ops.hpp"
#include "frames/frame_stack.hpp"
#include "frames/resize_cache.hpp"

namespace sb3ale {

/// What one agent step reports for one env: gymnasium's terminated/truncated (SB3's done is either), reward, info.
struct StepResult {
  float reward = 0;              ///< summed over the skip, clipped to its sign if configured
  bool terminated = false;       ///< the chain's end of episode, or a life loss with life_loss_info
  bool truncated = false;        ///< the chain's time limit (ale preset: and not terminated, as ALE's
                                 ///< vector env; the others report both, as gymnasium's AtariEnv)
  bool reset = false;            ///< the obs is a fresh episode's: auto-reset (same step) or, with
                                 ///< next-step auto-reset, this whole step was a reset (reward 0),
                                 ///< or the result of a requested reset
  bool requested_reset = false;  ///< the result of send_reset, not of a step (a batched reset's late rows)
  bool time_limit_truncated = false;  ///< info["TimeLimit.truncated"]: the chain's truncation, not its termination
  int lives = 0;                 ///< info of the step's last frame, before any auto-reset
  int episode_frame_number = 0;
  int frame_number = 0;
  bool game_end = false;         ///< the game ended here: its true score and length are final
  double episode_return = 0;     ///< unclipped score of the whole game, every frame included
  int64_t episode_length = 0;    ///< gymnasium AtariEnv steps of the whole game (SB3 Monitor's "l")
  int64_t episode_steps = 0;     ///< agent steps of the whole game (RecordEpisodeStatistics' "l")
};

class AtariEnv {
 public:
  /// Loads the ROM (seeded from OS entropy until the first seeded reset, as the references do) and
  /// takes the resize of its screen's height from `resizes`.
  AtariEnv(const EnvConfig& config, ResizeCache& resizes, PaletteCache& palettes);

  /// The preset's reset (seeded when `seed` holds the seed's 32-bit words, least significant
  /// first), a fresh stack, the obs into `obs`.
  void reset(const std::vector<uint32_t>* seed, uint8_t* obs);
  /// One agent step with action index `action` (paddle `strength` in [0, 1]). After the chain's
  /// end of episode, the auto-reset (no seed) runs in the same call or, with next_step_autoreset,
  /// instead of the next step. The full stack at every done goes to final_obs() first.
  void step(int action, float strength, StepResult& result, uint8_t* obs);

  /// Next-step auto-reset: the episode has ended, so the next step is a reset (~25x a step's work).
  bool resets_next() const { return needs_reset_; }
  const std::vector<uint8_t>& final_obs() const { return final_obs_; }
  /// With ram_info: the RAM at the frame of the obs last returned, and at the last done (final_obs()'s).
  const uint8_t* ram() const { return ram_.data(); }
  const uint8_t* final_ram() const { return final_ram_.data(); }
  /// The current stack (what the env's last result returned) into `obs`, and ALE's info now.
  ResetInfo observe(uint8_t* obs) const {
    stack_.write(obs);
    return emu_.info();
  }
  const ResetInfo& reset_info() const { return reset_info_; }
  /// The current screen as (screen_height(), 160, 3) RGB, what AtariEnv.render() returns.
  void screen_rgb(uint8_t* out) { emu_.screen_rgb(out); }
  int screen_height() const { return emu_.screen_height(); }  ///< the ROM's rows
  const ale::ActionVect& action_set() const { return emu_.action_set(); }
  /// Resets computed ahead of time (ResetAhead): on or off, and the prepare due after a reset (once).
  std::shared_ptr<ResetJob> set_reset_ahead(bool on, bool wait, const std::shared_ptr<RuntimeVerdict>& verdict) {
    return emu_.set_reset_ahead(on, wait, verdict);
  }
  std::shared_ptr<ResetJob> claim_prepare() { return emu_.claim_prepare(); }
  void abandon_prepare() { emu_.abandon_prepare(); }
  bool prepared() const { return emu_.prepared(); }
  int64_t game_resets() const { return emu_.game_resets(); }
  int64_t resets_taken() const { return emu_.resets_taken(); }
  int64_t replays_abandoned() const { return emu_.replays_abandoned(); }
  int64_t resets_replayed() const { return emu_.resets_replayed(); }

 private:
  EnvConfig config_;
  Emulator emu_;
  std::unique_ptr<Chain> chain_;
  FrameStack stack_;
  std::vector<uint8_t> final_obs_;
  std::array<uint8_t, kRamSize> ram_{};        // ram_info: written only when on
  std::array<uint8_t, kRamSize> final_ram_{};
  ResetInfo reset_info_;
  bool needs_reset_ = false;  // next-step auto-reset: the episode has ended
};

}  // namespace sb3ale
