// One emulator with SB3's Atari preprocessing, reproduced step for step; knows nothing of threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "ale/ale_interface.hpp"
#include "config.hpp"
#include "frame_ops.hpp"
#include "rng.hpp"

namespace sb3ale {

/// Sets ALE's process-wide log level to errors only, once: a second write, racing with the
/// emulators' reads of it on worker threads, would be a data race.
void quiet_ale_logs();

/// What one agent step reports for one env: gymnasium's terminated/truncated (SB3's done is either), reward, info.
struct StepResult {
  float reward = 0;              ///< summed over the skip, clipped to its sign if configured
  bool terminated = false;       ///< game over, or a life loss with episodic_life / life_loss_info
  bool truncated = false;        ///< ALE's frame limit, and not terminated
  bool reset = false;            ///< the obs is a fresh episode's: auto-reset (same step) or, with
                                 ///< next-step auto-reset, this whole step was a reset (reward 0)
  bool time_limit_truncated = false;  ///< info["TimeLimit.truncated"]: truncated and not terminated
  int lives = 0;                 ///< info of the step's last frame, before any auto-reset
  int episode_frame_number = 0;
  int frame_number = 0;
  bool game_end = false;         ///< the game really ended here: info["episode"] (SB3 Monitor)
  double episode_return = 0;     ///< unclipped score of the whole game, every frame included
  int64_t episode_length = 0;    ///< emulator frames of the whole game
};

/// The info a reset returns (what SB3's DummyVecEnv stores in reset_infos).
struct ResetInfo {
  bool empty = false;            ///< FireResetEnv returns {}
  int lives = 0;
  int episode_frame_number = 0;
  int frame_number = 0;
  bool has_seeds = false;        ///< AtariEnv.reset(seed=...) adds "seeds" (kept when infos merge)
  std::array<uint32_t, 2> seeds{};
};

/// One game behind one of two preprocessing chains, reproduced step for step:
/// - SB3 `AtariWrapper(Monitor(AtariEnv(frameskip=1)))` + `VecFrameStack`: Monitor -> StickyActionEnv
///   -> NoopResetEnv -> MaxAndSkipEnv -> EpisodicLifeEnv -> FireResetEnv -> WarpFrame -> ClipRewardEnv,
///   then frame stacking with same-step auto-reset;
/// - gymnasium `FrameStackObservation(AtariPreprocessing(AtariEnv(frameskip=1)))`.
class AtariEnv {
 public:
  /// Loads the ROM (seeded from OS entropy until the first seeded reset, as AtariEnv does).
  AtariEnv(const EnvConfig& config, const AreaResize& resize);

  /// A VecEnv reset: FireResetEnv.reset(seed=...) down the chain, a zeroed stack, the obs into `obs`.
  /// `seed` holds the seed's 32-bit words (least significant first); nullptr means no seed.
  void reset(const std::vector<uint32_t>* seed, uint8_t* obs);
  /// One agent step with action index `action` (paddle `strength` in [0, 1]). After a done, the
  /// auto-reset (no seed) runs in the same call or, with next_step_autoreset, instead of the next step.
  void step(int action, float strength, StepResult& result, uint8_t* obs);

  /// The full stack at the last done, before the auto-reset (info["terminal_observation"]).
  const std::vector<uint8_t>& final_obs() const { return final_obs_; }
  const ResetInfo& reset_info() const { return reset_info_; }
  /// The current screen as (210, 160, 3) RGB, what AtariEnv.render() returns.
  void screen_rgb(uint8_t* out) const;
  int screen_height() const { return screen_h_; }
  int screen_width() const { return screen_w_; }
  const ale::ActionVect& action_set() const { return action_set_; }

 private:
  struct Outcome {  // what a gymnasium step returns, obs aside
    double reward = 0;
    bool terminated = false;
    bool truncated = false;
    bool game_ended = false;  // the ALE itself ended the game (what Monitor sees)
    bool life_lost = false;   // for life_loss_info: 0 < lives < lives before the step
    bool ended() const { return terminated || truncated; }
  };

  void load_rom();
  void apply_seed(const std::vector<uint32_t>& seed);
  Outcome frame(int action);
  void capture(std::vector<uint8_t>& dst) const;
  void noop_reset(const std::vector<uint32_t>* seed);
  Outcome max_skip(int action);
  Outcome life_step(int action);
  void life_reset(const std::vector<uint32_t>* seed);
  void fire_reset(const std::vector<uint32_t>* seed);
  void warp();
  Outcome gym_skip(int action);
  void gym_reset(const std::vector<uint32_t>* seed);
  void gym_capture(std::vector<uint8_t>& dst) const;
  void env_reset(const std::vector<uint32_t>* seed);
  void fill_reset_info();
  void restart_stack();
  void push_frame();
  void write_stack(uint8_t* out) const;

  EnvConfig config_;
  const AreaResize& resize_;
  ale::ALEInterface ale_;
  ale::ActionVect action_set_;
  NumpyGenerator np_random_;           // AtariEnv.np_random: no-op counts, SB3 sticky actions
  std::array<uint32_t, 2> seeds_{};    // (np_seed, ale_seed) of the last seeding
  bool seeded_now_ = false;            // the last reset_game() came right after a seeding
  int screen_h_ = 0, screen_w_ = 0;
  std::array<std::array<uint8_t, 3>, 256> palette_{};
  std::vector<uint8_t> gray_pair_;     // gray(max(rgb[a], rgb[b])) for palette indices a, b
  std::array<uint8_t, 256> ale_gray_{};  // ALE's own grayscale of each palette index
  float strength_ = 1.0f;              // paddle strength of the current agent step
  bool seeded_reset_ = false;          // the last reset_game() was seeded (gymnasium keeps "seeds")
  bool needs_reset_ = false;           // next-step auto-reset: the episode has ended

  // Preprocessing state, named after the SB3 wrapper that owns it.
  int sticky_action_ = 0;              // StickyActionEnv._sticky_action
  std::vector<uint8_t> pool_[2];       // MaxAndSkipEnv._obs_buffer, as palette indices, never cleared
  std::vector<uint8_t> raw_;           // the last raw frame (NoopResetEnv's obs)
  bool obs_is_raw_ = false;            // the chain's current obs is raw_, not the pooled buffers
  int lives_ = 0;                      // EpisodicLifeEnv.lives
  bool was_real_done_ = true;          // EpisodicLifeEnv.was_real_done
  std::vector<uint8_t> gym_buffer_[2];  // AtariPreprocessing.obs_buffer: gray or RGB values
  double episode_return_ = 0;          // Monitor.rewards, summed
  int64_t episode_length_ = 0;         // Monitor: frames since the last reset_game()
  ResetInfo reset_info_;

  std::vector<uint8_t> scratch_;       // the frame before resizing (gray or RGB, full size)
  std::vector<uint8_t> frame_;         // WarpFrame's output: img_height x img_width x channels
  std::vector<uint8_t> stack_;         // stack_num frames, ring buffer, each frame HWC
  int newest_ = 0;                     // slot of the newest frame in stack_
  std::vector<uint8_t> final_obs_;
};

}  // namespace sb3ale
