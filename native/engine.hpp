// N emulators stepped in batches on a pool of worker threads; errors are reported per env.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "atari_env.hpp"
#include "config.hpp"
#include "frame_ops.hpp"
#include "thread_pool.hpp"

namespace sb3ale {

using Seed = std::optional<std::vector<uint32_t>>;  ///< a seed's 32-bit words, least significant first

/// The batched engine. Results never depend on the thread count or on which thread ran which env:
/// each env only touches its own state. Not thread-safe itself: one caller drives it.
///
/// Work is started by send() or send_reset() and finished by recv(); wait_for() lets a caller
/// wait in slices (to handle signals) before recv(). An env whose task throws is marked failed:
/// the other envs' results stand, steps are refused until a reset rebuilds the failed envs.
class Engine {
 public:
  /// `num_threads` 0 means one per core, never more than `num_envs`.
  Engine(const EnvConfig& config, int num_envs, int num_threads, int thread_affinity_offset);

  int num_envs() const { return static_cast<int>(envs_.size()); }
  int num_threads() const { return pool_.size(); }
  const EnvConfig& config() const { return config_; }
  const AtariEnv& env(int i) const { return *envs_.at(static_cast<size_t>(i)); }

  /// Starts resetting every env (seeds[i] applies to env i; failed envs are rebuilt first);
  /// the observations go to `obs`, which the caller keeps alive until recv().
  void send_reset(const std::vector<Seed>& seeds, uint8_t* obs);
  /// Starts stepping env i with action index actions[i]; observations go to `obs` (kept alive by
  /// the caller until recv()). Throws, before anything runs, on a bad action or a failed env.
  void send(const std::vector<int64_t>& actions, uint8_t* obs);
  /// Waits at most `timeout` for the work in flight; true when it is done (or none is pending).
  bool wait_for(std::chrono::milliseconds timeout);
  /// Waits for the work in flight. If envs failed, throws (the first failure's type:
  /// invalid_argument, out_of_range or runtime_error) with a message naming each failed env.
  void recv();
  /// Stops the work in flight early (for Ctrl-C): envs not yet started are left as they were,
  /// those running finish; steps are refused until the next reset.
  void cancel();

  bool pending() const { return pending_; }
  /// Envs whose last task failed (their rows of the last results are not valid).
  std::vector<int> failed_envs() const;
  /// The per-env results of the last step, valid after recv().
  const std::vector<StepResult>& results() const { return results_; }
  /// For tests of the error path: env i's next step throws std::runtime_error.
  void inject_fault(int i) { inject_fault_.at(static_cast<size_t>(i)) = 1; }

 private:
  void start(int n, std::function<void(int)> task);  // task(i) for every env, errors recorded
  void run(int n, std::function<void(int)> task);    // start, wait, raise
  void raise_errors();

  EnvConfig config_;
  AreaResize resize_;
  std::vector<std::unique_ptr<AtariEnv>> envs_;
  std::vector<StepResult> results_;
  std::vector<std::exception_ptr> errors_;  // per env, null when its last task succeeded
  std::vector<char> failed_;                // per env: broken until a reset rebuilds it
  std::vector<char> inject_fault_;
  std::vector<int64_t> actions_;
  std::vector<Seed> seeds_;
  bool pending_ = false;
  bool interrupted_ = false;  // a batch was cancelled part-way: only a reset makes envs agree again
  ThreadPool pool_;  // last: destroyed first, so no worker outlives the state its tasks touch
};

}  // namespace sb3ale
