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
#include <vector>

#include "ale/ale_interface.hpp"
#include "config.hpp"
#include "env/ale_state.hpp"

namespace sb3ale {

/// What a chain does right after its next real reset, where that is known one reset ahead (no
/// sticky actions, no random draw between two resets but the no-op count): ALE actions at full
/// strength, and after which frames it reads the screen ([0]: right after reset_game()).
struct ResetScript {
  std::vector<int> actions;   // ale::Action ids (a vector of ale::Action would export its template)
  std::vector<char> screens;  // actions.size() + 1 entries
};

/// One frame of a prepared script as the live emulator would show it (frame 0: the reset itself).
struct ReplayFrame {
  int action = ale::PLAYER_A_NOOP;  // an ale::Action id
  ale::reward_t reward = 0;
  int lives = 0;
  bool game_over = false;
  bool truncated = false;
  int frames = 0;          // frames counted since the reset began (the reset's own included)
  int episode_frames = 0;
  std::vector<uint8_t> screen;  // empty unless the script reads it
};

class ResetAhead {
 public:
  /// The spare emulator loads its ROM at its first prepare.
  ResetAhead(const EnvConfig& config, int ale_max_frames);
  ~ResetAhead();  // waits for a prepare running on another thread
  ResetAhead(const ResetAhead&) = delete;
  ResetAhead& operator=(const ResetAhead&) = delete;

  /// Live thread, after a reset the live emulator made itself: the next reset starts from here.
  void arm(ale::ALEInterface& live);
  /// Live thread, before the live emulator reloads its ROM (a seeded reset): nothing prepared holds.
  void disarm();
  /// Live thread, after a chain's reset: what it will do after the next real reset (empty: not known).
  /// A prepare waits for it, so that it plays the script of this very episode.
  void set_script(ResetScript script);
  enum class Taken { kNo, kDone, kReplay };
  /// Live thread, in reset_game(). kNo (not prepared yet, or not allowed): the live emulator resets
  /// itself, at once; never waits for a prepare unless wait_for_prepares() is on. kDone: reset,
  /// either swapped in or (while the verdict's real-reset checks are due) made for real and compared.
  /// kReplay: the live emulator is left as it is, and replay() holds the reset and its script as
  /// played on the spare: the caller answers from it, then commit()s, or resets for real.
  Taken take(std::unique_ptr<ale::ALEInterface>& live);
  const std::vector<ReplayFrame>& replay() const { return replay_; }
  /// After a replay of `played` script frames: swaps the spare in, its frame counter going on from
  /// `live_frame` (the live one's before the reset), and arms the next prepare.
  void commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame);

  /// Whether a prepare has work and nobody was told yet: true once per arm (the engine queues it).
  bool claim() { return claimable_.exchange(false, std::memory_order_acq_rel); }
  /// After the engine dropped a queued prepare: whether the armed one has still to run (claimed
  /// again: the engine queues it again).
  bool reclaim();
  /// For tests: whether the next reset is prepared (the spare holds it).
  bool prepared() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ready_ && ready_for_ == generation_;
  }
  /// Any thread: computes the next reset on the spare while one is armed. Never throws.
  void prepare();
  /// Any thread: a prepare running now stops early (its probe's play included) and none starts again.
  void cancel() { cancel_.store(true); }
  /// Resets taken from the spare so far (for tests and the benchmark: the path really ran).
  int64_t taken() const { return taken_; }
  /// Of those, the ones whose chain's script was replayed (the no-ops and FIRE computed ahead too).
  int64_t replayed() const { return replayed_; }
  /// For tests: take() runs the prepare itself, on the live thread, instead of resetting for real
  /// (a loaded machine may never run threads at idle priority), so the path under test is taken.
  void wait_for_prepares(bool on) { wait_ = on; }

 private:
  const EnvConfig config_;
  std::unique_ptr<ale::ALEInterface> spare_;
  std::mutex mutex_;
  std::condition_variable prepared_;
  /// The script played on the spare after its reset, frame by frame (to a game's end at most).
  std::vector<ReplayFrame> record(const ResetScript& script);
  /// The carried-over frame counter and RNG (see take) onto the spare's state.
  void carry_over(ale::ALEInterface& live, int live_frame);
  void rearm(ale::ALEState base);  // the next prepare from `base` (lock held; same generation)

  ale::ALEState base_;       // where the next reset starts: the live state right after the last one
  ale::ALEState next_base_;  // the prepared reset's own state: where the one after it starts
  std::string checked_;      // the prepared reset's state_of, while real-reset checks are due
  ResetScript script_;       // the chain's, for the reset after generation script_for_
  uint64_t script_for_ = 0;  // a prepare waits for its generation's script (an empty one included)
  std::vector<ReplayFrame> replay_;
  uint64_t generation_ = 0;  // every arm, disarm and take: a prepare of an older one is void
  uint64_t ready_for_ = 0;   // the generation whose reset spare_ holds (ready_ true)
  bool pending_ = false;     // base_ not prepared yet
  bool running_ = false;     // a prepare has spare_
  bool ready_ = false;
  bool wait_ = false;
  bool loaded_ = false;  // spare_'s ROM (its prepares' thread only, one at a time)
  std::atomic<bool> claimable_{false};
  std::atomic<bool> cancel_{false};
  int64_t taken_ = 0;
  int64_t replayed_ = 0;
};

}  // namespace sb3ale
