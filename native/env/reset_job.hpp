// One prepare of an env's next reset (ResetAhead), run by whichever thread has time: a pool worker
// with nothing queued, or an idle thread (core/background.*). Shared by the env and that thread; no
// lock between them, only the job's atomic status:
//
//   kPending --run()--> kRunning --> kDone --take() by the env--> kTaken
//      |                   |           |
//      +--reclaim()-->  kAbandoned <---+--abandon() by the env, or the process's exit
//
// reclaim() (the env, before any thread started the job) gives the job's inputs back: the check owed
// and the spare emulator go on to the env's next job. Once running, a job first makes the check it
// carries (never abandoned part-way: one reset, and its result goes to the key's verdict), then
// prepares; an abandoned job stops at its next phase.
//
// A job is used again and again (ResetAhead keeps them): its outputs are written over in place, so
// after its first runs no thread allocates or frees what another allocated (a free of another
// thread's block takes that thread's arena lock, which an idle thread preempted may hold).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ale/ale_interface.hpp"
#include "config.hpp"
#include "env/reset_check.hpp"

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

/// The first `size` frames of a job's replay (the vector holds more, kept for the next run).
struct Replay {
  const ReplayFrame* frames = nullptr;
  size_t count = 0;
  size_t size() const { return count; }
  const ReplayFrame& operator[](size_t k) const { return frames[k]; }
};

struct ResetJob {
  enum Status : int { kPending, kRunning, kDone, kAbandoned, kTaken };
  // Inputs, written by the env before the job is queued.
  std::shared_ptr<const EnvConfig> config;
  int ale_max_frames = 0;
  bool prepare = true;     // false: only the check (resets ahead switched off with one owed)
  ale::ALEState base;      // the live state right after its last reset: the next reset starts here
  ResetScript script;      // the chain's, after that reset
  OwedCheck check;         // made first; its emulator is then the spare
  std::unique_ptr<ale::ALEInterface> emu;  // the spare when no check is owed (made here when null)
  // Outputs, read by the env once it owns status kTaken.
  ale::ALEState next;      // the prepared reset's state: where the one after it starts
  std::string state;       // its state_of, for the check of this swap if it is one of those checked
  std::vector<ReplayFrame> replay;  // its first `replayed` frames (the others kept for reuse)
  size_t replayed = 0;
  // Where a run that yielded resumes (kCheck: from the start; the env sets it so for each fill).
  enum Phase : int { kCheck, kEmulator, kReset, kRecord };
  Phase phase = kCheck;
  size_t scripted = 0;   // the script's actions played so far
  int record_start = 0;  // the spare's frame counter before its reset
  std::atomic<int> status{kPending};
  // Background's, while the job is queued or running: `self` keeps it alive for the thread (its env
  // may be gone), `queued` says a thread may still touch it, `halted` is the threads' stop.
  std::shared_ptr<ResetJob> self;
  std::atomic<bool> queued{false};
  const std::atomic<bool>* halted = nullptr;
  int slot = -1;  // its env's slot

  /// Any thread (a second call after it ended, or one after abandon(), does nothing). Never throws.
  /// With `yield` (a pool worker's "a step is queued"), it stops at the next phase or frame once that
  /// says so and returns true: the job is pending again and resumes where it stopped.
  bool run(const std::function<bool()>& yield = {});
  /// The env: the job's outputs are its own now; false if the job is not done.
  bool take() { return cas(kDone, kTaken); }
  /// The env: true if no thread started the job (its inputs are the env's again); else abandon().
  bool reclaim();
  /// The env, or the process's exit: the job will never be taken; a run stops at its next phase.
  void abandon();
  /// Whether its env may fill it again: no thread may touch it (neither queued nor running).
  bool reusable() const { return !queued.load(std::memory_order_acquire); }
  Replay replay_view() const { return {replay.data(), replayed}; }

 private:
  bool cas(int from, int to) { return status.compare_exchange_strong(from, to, std::memory_order_acq_rel); }
  bool abandoned() const {
    return status.load(std::memory_order_acquire) == kAbandoned ||
           (halted != nullptr && halted->load(std::memory_order_acquire));
  }
  enum Outcome { kPrepared, kFailed, kYielded };
  Outcome compute(const std::function<bool()>& yield);
  void record(int action, ale::reward_t reward, bool screen);  // the next replay frame, from emu
};

}  // namespace sb3ale
