// The run-time check of the resets computed ahead (reset_ahead.*): which swaps are re-checked, the
// check itself, and each key's verdict. Owns nothing of the env's; used by ResetAhead (which swaps
// are owed a check) and by ResetJob (which makes it, on whatever thread runs the job).
//
// A swap is re-checked against a real reset: the emulator it swapped out holds the state the episode
// ended in, so a real reset of it, compared with what was swapped in, is the check. One difference
// refuses the key for the whole engine. A check owed is an OwedCheck, a value that moves from the env
// to the job that makes it and back to the env if that job never starts: it is made, or counted as
// dropped by its destructor (an env rebuilt after a failure, or closed, with a check still owed, of a key
// not refused already), never lost unseen. Its result goes straight to the key's verdict, from the thread that made it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "ale/ale_interface.hpp"

namespace sb3ale {

/// One key's (ROM, mode, difficulty, sticky) verdict in one engine: the table's "yes" until a check
/// differs. Shared by the engine's envs of the key and by the jobs that check their swaps.
struct RuntimeVerdict {
  explicit RuntimeVerdict(std::string key) : key(std::move(key)) {}
  const std::string key;                  // as the warning names it: "breakout (mode -1, difficulty -1, sticky)"
  std::atomic<bool> refused{false};       // a check differed: the key's envs reset for real from now on
  std::atomic<int64_t> checked{0};        // checks made
  std::atomic<int64_t> mismatches{0};     // checks that differed
  std::atomic<int64_t> dropped{0};        // checks owed and never made (see OwedCheck)
  std::atomic<int64_t> first_swaps{0};    // the key's swaps so far, for the budget (checks_swap)
  std::atomic<bool> reported{false};      // the engine has told its caller of the refusal (once)
};

/// Whether the `swap`-th swap of an env (1-based) is re-checked: each of the key's first
/// kFirstChecks swaps in the engine (shared by its envs: 16 envs checked 4 each made the first
/// episodes' resets cost double), then one in 16 of each env's. Charged per swap, when it happens.
bool checks_swap(int64_t swap, RuntimeVerdict& verdict);

/// A check owed: the emulator a swap took out (the episode's end) and what the swap put in.
class OwedCheck {
 public:
  OwedCheck() = default;
  OwedCheck(std::unique_ptr<ale::ALEInterface> ended, std::string swapped_state, std::string swapped_rng,
            std::shared_ptr<RuntimeVerdict> verdict);
  OwedCheck(OwedCheck&&) noexcept = default;
  OwedCheck& operator=(OwedCheck&& other) noexcept;
  ~OwedCheck() { drop(); }

  explicit operator bool() const { return ended_ != nullptr; }
  /// Makes the check (a real reset of the ended emulator, compared with the swap) and records it in
  /// the verdict; returns the emulator, reset (a spare for the next prepare), or null (and the check
  /// counted as dropped) if the emulator threw. Owes nothing after.
  std::unique_ptr<ale::ALEInterface> make();

  /// Checks owed and dropped in this process, every engine's (tests: 0 unless an env closed owing one).
  static int64_t dropped_in_process();

 private:
  void drop();
  std::unique_ptr<ale::ALEInterface> ended_;
  std::string state_, rng_;  // rng_: with sticky actions only
  std::shared_ptr<RuntimeVerdict> verdict_;
};

}  // namespace sb3ale
