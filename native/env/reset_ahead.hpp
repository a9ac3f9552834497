// An env's next reset_game(), computed ahead of time on a spare emulator and swapped in when the
// episode ends, so that the ~70 frames ALE emulates in a reset leave the synchronous step.
//
// Why it is exact (ALE 0.12.1): reset_game() is a system reset, 60 NOOP frames, two soft resets, the
// mode's set-up and the ROM's starting actions. Its outcome depends on the state before it only
// through what a system reset keeps (the RAM, a cartridge's own RAM and registers) and the
// environment RNG where a mode's set-up uses it. So a spare emulator that restores the state the live
// one had right after its last reset, and resets, reaches the state the live one reaches at the end
// of its episode, if and only if that reset keeps nothing of play. Which ROMs, modes, difficulties
// and sticky settings qualify is decided offline (tools/reset_verdicts.py, env/reset_probe.*) and
// shipped as a table: EnvConfig::reset_ahead. No probe runs here, so every run decides alike. A
// sample of the swaps is still re-checked, off the step's path (reset_check.*).
//
// Owns: the env's base state, its spare emulator, the prepare in flight (reset_job.*) and the check
// owed. Used by the env's live thread only (Emulator); the jobs are what other threads see, and
// nothing waits for one: the env takes a job if it is done when the episode ends, and otherwise
// resets for real and abandons it (or reclaims it, if no thread has started it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ale/ale_interface.hpp"
#include "config.hpp"
#include "env/reset_check.hpp"
#include "env/reset_job.hpp"

namespace sb3ale {

/// An env's resets ahead. It exists only while they are on for the env (Emulator decides), and
/// computes none for a key its verdict refused.
class ResetAhead {
 public:
  ResetAhead(const EnvConfig& config, int ale_max_frames, std::shared_ptr<RuntimeVerdict> verdict);
  ~ResetAhead();  // abandons the job in progress (waits for nothing); a check still owed is dropped
  ResetAhead(const ResetAhead&) = delete;
  ResetAhead& operator=(const ResetAhead&) = delete;

  /// After a reset the live emulator made itself: the next reset starts from here.
  void arm(ale::ALEInterface& live);
  /// Before the live emulator reloads its ROM (a seeded reset), and at the engine's close: nothing
  /// prepared holds (a prepare in progress stops at its next phase). A check owed still is (it is
  /// of a swap made): it goes with the next prepare.
  void disarm();
  /// After a chain's reset: what it will do after the next real reset (empty: not known).
  void set_script(ResetScript script);
  /// The prepare due after this reset, once (null: none): the engine queues it for idle time.
  std::shared_ptr<ResetJob> claim();
  /// Resets ahead switched off: the prepare in progress abandoned, and the check owed, if any, as a
  /// job of its own (null: none), which the engine queues like a prepare.
  std::shared_ptr<ResetJob> release();

  enum class Taken { kNo, kDone, kReplay };
  /// In reset_game(). kNo (not prepared in time, or not allowed): the live emulator resets itself.
  /// kDone: the prepared reset was swapped in. kReplay: the live emulator is left as it is, and
  /// replay() holds the reset and its script as played on the spare: the caller answers from it, then
  /// commit()s, or resets for real (arm() then drops the replay).
  Taken take(std::unique_ptr<ale::ALEInterface>& live);
  Replay replay() const { return replaying_->replay_view(); }
  /// After a whole replay: swaps the spare in, its frame counter going on from `live_frame` (the live
  /// one's before the reset).
  void commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame);

  /// For tests: whether the next reset is prepared.
  bool prepared() const { return job_ && job_->status.load() == ResetJob::kDone; }
  /// For tests: take() runs the prepare itself, on the live thread, instead of resetting for real
  /// (a loaded machine may never run threads at idle priority), so the path under test is taken.
  void wait_for_prepares(bool on) { wait_ = on; }

 private:
  /// A job to fill (one no thread holds, else a new one; null once kMaxJobs are all held).
  std::shared_ptr<ResetJob> free_job();
  std::shared_ptr<ResetJob> make_job(bool prepare);
  /// job_ given up: its inputs back if no thread started it, else abandoned.
  void drop_job();
  void swap_in(std::unique_ptr<ale::ALEInterface>& live, ResetJob& job, int live_frame);

  const std::shared_ptr<const EnvConfig> config_;
  const int ale_max_frames_;
  const std::shared_ptr<RuntimeVerdict> verdict_;
  std::unique_ptr<ale::ALEInterface> spare_;  // between jobs, when no check is owed
  OwedCheck owed_;           // the last swap's check, until a job makes it
  ale::ALEState base_;
  ResetScript script_;
  bool armed_ = false;       // base_ holds the state after the last reset
  bool scripted_ = false;    // the chain has said what follows it
  std::shared_ptr<ResetJob> job_;        // the prepare of the next reset
  std::shared_ptr<ResetJob> replaying_;  // a taken job whose replay the caller is answering from
  std::vector<std::shared_ptr<ResetJob>> jobs_;  // every job this env filled, filled again once free
  bool wait_ = false;
  int64_t swaps_ = 0;  // swapped in since it exists, for the budget of checks
};

}  // namespace sb3ale
