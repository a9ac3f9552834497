// ale_py's gymnasium AtariEnv, as the SB3 and Gymnasium chains see it from above: its seeding,
// its numpy RNG, its own frame skip and sticky actions, and the no-op reset on top of it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "config.hpp"
#include "env/emulator.hpp"
#include "env/rng.hpp"

namespace sb3ale {

class GymAtariEnv {
 public:
  /// Seeds itself from OS entropy (loading the ROM), as AtariEnv.__init__ does.
  GymAtariEnv(const EnvConfig& config, Emulator& emulator);

  /// What AtariEnv.step returns, obs aside.
  struct Outcome {
    double reward = 0;
    bool terminated = false;
    bool truncated = false;
    bool ended() const { return terminated || truncated; }
  };
  /// AtariEnv.step (under SB3's StickyActionEnv when configured), one Monitor step.
  Outcome step(int action);
  /// AtariEnv.reset(seed=...) then NoopResetEnv's no-ops (a reset inside them carries on with the
  /// same count); noop_max 0 means none.
  void noop_reset(const std::vector<uint32_t>* seed);
  /// What the next noop_reset() will play after its reset_game(), its screen read after the last
  /// no-op (each step() is env_frameskip frames of action 0), where known now: nothing else draws
  /// from np_random_ (no SB3 sticky actions, no random frame skip) and ALE plays deterministically
  /// (no sticky actions). Empty (no screens either) where not.
  ResetScript noop_reset_script() const;
  /// Paddle strength of the current agent step (resets play discrete NOOP and FIRE at full strength).
  void set_strength(float strength) { strength_ = strength; }

  std::array<uint32_t, 2> seeds() const { return seeds_; }
  bool seeded_now() const { return seeded_now_; }      ///< the last reset_game() came right after a seeding, no frame since
  bool seeded_reset() const { return seeded_reset_; }  ///< the last reset_game() was seeded

 private:
  void seed(const std::vector<uint32_t>& seed);
  void reset_game(const std::vector<uint32_t>* seed);

  const EnvConfig& config_;
  Emulator& emu_;
  NumpyGenerator np_random_;         // AtariEnv.np_random: no-op counts, frame skips, SB3 sticky actions
  std::array<uint32_t, 2> seeds_{};  // (np_seed, ale_seed) of the last seeding
  bool seeded_now_ = false;
  bool seeded_reset_ = false;
  int sticky_action_ = 0;            // StickyActionEnv._sticky_action
  float strength_ = 1.0f;
};

}  // namespace sb3ale
