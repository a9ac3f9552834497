// An env's next reset_game(), computed ahead of time on a second emulator and swapped in when the
// episode ends, so that the ~70 frames ALE emulates in a reset leave the synchronous step.
//
// Why it is exact (ALE 0.12.1): reset_game() is a system reset, 60 NOOP frames, two soft resets, the
// mode's set-up and the ROM's starting actions. Its outcome depends on the state before it only
// through what a system reset keeps (the RAM, a cartridge's own RAM and registers) and, with sticky
// actions, through the environment RNG where a mode's set-up calls act() (Berzerk, Double Dunk,
// Video Cube). So a spare emulator that restores the state the live one had right after its last
// reset, and resets, reaches the state the live one reaches at the end of its episode, if and only
// if that reset keeps nothing of play. A verdict per ROM, mode, difficulty and sticky setting says
// so, and gates every swap (Verdicts in the .cpp): a probe first (resets after long, varied play and
// after scrambled RAM must equal the reset without play; a reset that draws the environment RNG
// with sticky actions on is refused), then the ROM's first resets in the process made for real too
// and compared. Until both have passed, the env resets for real. What the saved state does not carry
// (the screen, the TIA's buffers, the last actions sticky actions repeat) the spare made itself by
// emulating the reset; the live emulator's frame counter and environment RNG are carried over.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ale/ale_interface.hpp"
#include "config.hpp"

namespace sb3ale {

/// A configured ALE interface, ROM not loaded: every emulator of an env (live and spare) alike.
std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames);

/// The probe's verdict on `config`'s ROM, mode, difficulty and sticky setting, from a fresh emulator
/// (for the docs' table and the tests): "" when its reset keeps nothing of play, else why not.
std::string probe_reset(const EnvConfig& config);

class ResetAhead {
 public:
  /// Loads the spare emulator's ROM (the caller's thread: the env's build task).
  ResetAhead(const EnvConfig& config, int ale_max_frames);
  ~ResetAhead();  // waits for a prepare running on another thread
  ResetAhead(const ResetAhead&) = delete;
  ResetAhead& operator=(const ResetAhead&) = delete;

  /// Live thread, after a reset the live emulator made itself: the next reset starts from here.
  void arm(ale::ALEInterface& live);
  /// Live thread, before the live emulator reloads its ROM (a seeded reset): nothing prepared holds.
  void disarm();
  /// Live thread, in reset_game(): swaps the prepared emulator in and returns true, or returns false
  /// (not prepared yet, or not allowed): the live emulator resets itself, at once. Never waits for a
  /// prepare unless wait_for_prepares() is on. While the verdict's real-reset checks are due, it
  /// resets the live emulator for real, compares, and returns true with nothing swapped.
  bool take(std::unique_ptr<ale::ALEInterface>& live);

  /// Whether a prepare has work and nobody was told yet: true once per arm (the engine queues it).
  bool claim() { return claimable_.exchange(false, std::memory_order_acq_rel); }
  /// Any thread: computes the next reset on the spare while one is armed. Never throws.
  void prepare();
  /// Resets taken from the spare so far (for tests and the benchmark: the path really ran).
  int64_t taken() const { return taken_; }
  /// For tests: take() waits for a queued or running prepare instead of resetting for real (so
  /// that a loaded machine, whose idle threads may never run, still takes the path under test).
  void wait_for_prepares(bool on) { wait_ = on; }

 private:
  const EnvConfig config_;
  std::unique_ptr<ale::ALEInterface> spare_;
  std::mutex mutex_;
  std::condition_variable prepared_;
  ale::ALEState base_;       // where the next reset starts: the live state right after the last one
  ale::ALEState next_base_;  // the prepared reset's own state: where the one after it starts
  uint64_t generation_ = 0;  // every arm, disarm and take: a prepare of an older one is void
  uint64_t ready_for_ = 0;   // the generation whose reset spare_ holds (ready_ true)
  bool pending_ = false;     // base_ not prepared yet
  bool running_ = false;     // a prepare has spare_
  bool ready_ = false;
  bool wait_ = false;
  std::atomic<bool> claimable_{false};
  int64_t taken_ = 0;
};

}  // namespace sb3ale
