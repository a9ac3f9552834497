// An env's next reset_game(), computed ahead of time on a second emulator and swapped in when the
// episode ends, so that the ~70 frames ALE emulates in a reset leave the synchronous step.
//
// Why it is exact (ALE 0.12.1): reset_game() is a system reset, 60 NOOP frames, two soft resets and
// the ROM's starting actions. It counts no frame but its mode's select presses, draws nothing from
// the environment RNG, and draws
// the system RNG (saved in the emulator's state) once. Its outcome depends on the state before it
// only through what the system reset keeps: the RAM, for the few ROMs whose start-up code does not
// clear it, which a probe finds, and the few that keep something only after real play (a high
// score), which a ROM's first resets in the process, made for real too and compared, find. So a spare emulator that restores the state the live one
// had right after its last reset, and resets, reaches the state the live one reaches when it resets
// at the end of its episode; what the state does not carry (the screen, the TIA's buffers, the last
// actions sticky actions repeat) the spare made itself by emulating the reset. After the swap the
// live emulator's frame counter and environment RNG are carried over, as a real reset keeps them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "ale/ale_interface.hpp"
#include "config.hpp"

namespace sb3ale {

/// A configured ALE interface, ROM not loaded: every emulator of an env (live and spare) alike.
std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames);

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
  /// Live thread, in reset_game(): swaps the prepared emulator in and returns true (waiting for a
  /// prepare already running), or returns false: the live emulator resets itself. A ROM's first
  /// takes in the process reset the live emulator for real and compare (true, nothing swapped).
  bool take(std::unique_ptr<ale::ALEInterface>& live);

  /// Whether a prepare has work and nobody was told yet: true once per arm (the engine queues it).
  bool claim() { return status_.load(std::memory_order_acquire) == kArmed && !claimed_.exchange(true); }
  /// Resets taken from the spare so far (for tests and the benchmark: the path really ran).
  int64_t taken() const { return taken_; }
  /// Any thread, one at a time per env: computes the next reset on the spare, if armed. Never throws.
  void prepare();

 private:
  enum Status { kIdle, kArmed, kPreparing, kReady };
  /// Waits out a prepare in progress and leaves the status kIdle: the caller owns base_ and spare_.
  void settle();

  const EnvConfig config_;
  std::unique_ptr<ale::ALEInterface> spare_;
  ale::ALEState base_;  // the live emulator's state right after its last reset (system RNG included)
  std::atomic<int> status_{kIdle};
  std::atomic<bool> claimed_{false};
  int64_t taken_ = 0;
  bool probed_ = false;
  bool exact_ = true;   // this ROM's reset keeps nothing of the state before it (the probe's verdict)
};

}  // namespace sb3ale
