// N emulators stepped in batches on a pool of worker threads; errors are reported per env.
#pragma once

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
class Engine {
 public:
  /// `num_threads` 0 means one per core, never more than `num_envs`.
  Engine(const EnvConfig& config, int num_envs, int num_threads, int thread_affinity_offset);

  int num_envs() const { return static_cast<int>(envs_.size()); }
  int num_threads() const { return pool_.size(); }
  const EnvConfig& config() const { return config_; }
  const AtariEnv& env(int i) const { return *envs_.at(static_cast<size_t>(i)); }

  /// Resets every env (seeds[i] applies to env i) and writes the observations to `obs`.
  void reset(const std::vector<Seed>& seeds, uint8_t* obs);
  /// Starts stepping env i with action index actions[i]; observations go to `obs` (kept alive by
  /// the caller until recv()). Throws std::out_of_range, before anything runs, on a bad action.
  void send(const std::vector<int64_t>& actions, uint8_t* obs);
  /// Waits for the step started by send(). If envs failed, throws (the first failure's type:
  /// invalid_argument, out_of_range or runtime_error) with a message naming each failed env.
  void recv();
  bool pending() const { return pending_; }
  /// The per-env results of the last step, valid after recv().
  const std::vector<StepResult>& results() const { return results_; }

 private:
  void start(int n, std::function<void(int)> task);  // task(i) for every env, errors recorded
  void run(int n, std::function<void(int)> task);    // start, wait, raise
  void raise_errors();

  EnvConfig config_;
  AreaResize resize_;
  std::vector<std::unique_ptr<AtariEnv>> envs_;
  std::vector<StepResult> results_;
  std::vector<std::exception_ptr> errors_;  // per env, null when its last task succeeded
  std::vector<int64_t> actions_;
  bool pending_ = false;
  ThreadPool pool_;  // last: destroyed first, so no worker outlives the state its tasks touch
};

}  // namespace sb3ale
