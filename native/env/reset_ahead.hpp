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
// shipped as a table: EnvConfig::reset_ahead. No probe runs here, so every run decides alike.
// A sample of the swaps is still re-checked, off the step's path: the emulator swapped out holds the state
// the episode ended in, so a real reset of it, compared with what was swapped in, is the check; one
// difference refuses the key for the whole engine (RuntimeVerdict) and is counted.
//
// Nothing waits for a prepare. A prepare is a ResetJob, shared by the env and the thread that runs it
// (a pool worker with nothing queued, or an idle thread): the env takes it if it is done when the episode ends and abandons it otherwise (the job stops at
// its next phase and frees itself); no lock is shared between them, only the job's atomic status.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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

/// A key's verdict as this engine's run-time checks left it (the table's "yes" until one differs).
struct RuntimeVerdict {
  std::atomic<bool> refused{false};
  std::atomic<int64_t> mismatches{0};  // swaps that a real reset did not reproduce
  std::atomic<int64_t> first_checks{0};  // prepares that asked for a check among the key's first ones
};

/// One prepare: the inputs the env gave it, the outputs it leaves, and who has it (status).
struct ResetJob {
  enum Status : int { kPending, kRunning, kDone, kAbandoned, kTaken };
  std::shared_ptr<const EnvConfig> config;
  int ale_max_frames = 0;
  ale::ALEState base;      // the live state right after its last reset: the next reset starts here
  ResetScript script;      // the chain's, after that reset
  std::unique_ptr<ale::ALEInterface> emu;  // the spare (made here, ROM loaded, when null)
  bool check = false;      // emu holds the end of an episode whose reset was swapped: reset, compare
  std::string check_state, check_rng;     // what was swapped in (rng: with sticky actions only)
  bool keep_state = false;  // this reset will be checked: keep its state_of
  // Outputs, read by the env once it owns status kTaken.
  ale::ALEState next;       // the prepared reset's state: where the one after it starts
  std::string state;        // its state_of, when keep_state
  std::vector<ReplayFrame> replay;
  int check_result = 0;     // 1: the checked swap equals the real reset; -1: it does not; 0: none
  std::atomic<int> status{kPending};

  /// Any thread, once (a second call, or one after abandon(), does nothing). Never throws.
  void run();
  /// The env: the job's outputs are its own now; false if the job is not done.
  bool take() { return cas(kDone, kTaken); }
  /// The env: the job will never be taken; a run stops at its next phase.
  void abandon();

 private:
  bool cas(int from, int to) { return status.compare_exchange_strong(from, to, std::memory_order_acq_rel); }
  bool abandoned() const { return status.load(std::memory_order_acquire) == kAbandoned; }
  bool compute();  // false: abandoned part-way
  void record();
};

/// An env's resets ahead; used by its live thread only (the jobs are what other threads see).
class ResetAhead {
 public:
  ResetAhead(const EnvConfig& config, int ale_max_frames, std::shared_ptr<RuntimeVerdict> verdict);
  ~ResetAhead();  // abandons the job in progress: waits for nothing
  ResetAhead(const ResetAhead&) = delete;
  ResetAhead& operator=(const ResetAhead&) = delete;

  /// After a reset the live emulator made itself: the next reset starts from here.
  void arm(ale::ALEInterface& live);
  /// Before the live emulator reloads its ROM (a seeded reset), or resets ahead are switched off:
  /// nothing prepared holds.
  void disarm();
  /// After a chain's reset: what it will do after the next real reset (empty: not known).
  void set_script(ResetScript script);
  /// The prepare due after this reset, once (null: none): the engine queues it on an idle thread.
  std::shared_ptr<ResetJob> claim();
  /// The engine's close: the prepare in progress stops at its next phase (a later take() finds
  /// nothing prepared).
  void abandon() {
    if (job_) job_->abandon();
  }

  enum class Taken { kNo, kDone, kReplay };
  /// In reset_game(). kNo (not prepared in time, or not allowed): the live emulator resets itself.
  /// kDone: the prepared reset was swapped in. kReplay: the live emulator is left as it is, and
  /// replay() holds the reset and its script as played on the spare: the caller answers from it, then
  /// commit()s, or resets for real (arm() then drops the replay).
  Taken take(std::unique_ptr<ale::ALEInterface>& live);
  const std::vector<ReplayFrame>& replay() const { return replaying_->replay; }
  /// After a whole replay: swaps the spare in, its frame counter going on from `live_frame` (the live
  /// one's before the reset).
  void commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame);

  /// For tests: whether the next reset is prepared.
  bool prepared() const { return job_ && job_->status.load() == ResetJob::kDone; }
  /// Resets swapped in so far; of those, the ones whose chain's script was replayed; swaps re-checked.
  int64_t taken() const { return taken_; }
  int64_t replayed() const { return replayed_; }
  int64_t checked() const { return checked_; }
  /// For tests: take() runs the prepare itself, on the live thread, instead of resetting for real
  /// (a loaded machine may never run threads at idle priority), so the path under test is taken.
  void wait_for_prepares(bool on) { wait_ = on; }

 private:
  std::shared_ptr<ResetJob> make_job();
  void swap_in(std::unique_ptr<ale::ALEInterface>& live, ResetJob& job, int live_frame);

  const std::shared_ptr<const EnvConfig> config_;
  const int ale_max_frames_;
  const std::shared_ptr<RuntimeVerdict> verdict_;
  std::unique_ptr<ale::ALEInterface> spare_;  // between jobs: the emulator the last swap took out
  ale::ALEState base_;
  ResetScript script_;
  bool armed_ = false;       // base_ holds the state after the last reset
  bool scripted_ = false;    // the chain has said what follows it
  std::shared_ptr<ResetJob> job_;        // the prepare of the next reset
  std::shared_ptr<ResetJob> replaying_;  // a taken job whose replay the caller is answering from
  bool check_ = false;       // spare_ holds the end of the last episode, its swap to be re-checked
  std::string check_state_, check_rng_;
  bool wait_ = false;
  int64_t taken_ = 0;
  int64_t replayed_ = 0;
  int64_t checked_ = 0;
};

}  // namespace sb3ale
