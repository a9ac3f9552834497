// N emulators stepped on a pool of worker threads, in whole batches or EnvPool-style partial ones.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "env/atari_env.hpp"
#include "config.hpp"
#include "frames/resize_cache.hpp"
#include "core/background.hpp"
#include "core/caller_load.hpp"
#include "core/idle_lending.hpp"
#include "core/task_profile.hpp"
#include "core/thread_pool.hpp"

namespace sb3ale {

using Seed = std::optional<std::vector<uint32_t>>;  ///< a seed's 32-bit words, least significant first

/// The batched engine. Results never depend on the thread count, the batch size or which thread
/// ran which env: each env only touches its own state. One caller drives it at a time: the front
/// doors reach it only through VectorizerHold, the guard that refuses a second caller; Driver asserts it.
///
/// send() / send_reset() start work on some envs; recv() waits for the first min(batch_size, envs in
/// flight) of them to finish and returns their ids in the order they finished. An env is in flight
/// from its send until a recv returns it, and cannot be sent again meanwhile. An env whose task
/// throws is marked failed: the other envs' results stand, steps are refused until a reset
/// rebuilds the failed envs.
class Engine {
 public:
  /// One config per env (they may differ in ROM and resets, not in observation shape).
  /// `num_threads` 0 means one per core, never more than the envs; `batch_size` 0 means all envs.
  Engine(const std::vector<EnvConfig>& configs, int num_threads, int thread_affinity_offset, int batch_size);
  ~Engine();  // waits for the work in flight on the workers; never for the idle threads' prepares

  int num_envs() const { return static_cast<int>(envs_.size()); }
  int num_threads() const { return pool_.size(); }
  int batch_size() const { return batch_size_; }
  /// Envs sent and not yet returned by recv; safe to read from any thread.
  int in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  const EnvConfig& config(int i) const { return configs_.at(static_cast<size_t>(i)); }
  /// Env i, which must not be in flight.
  const AtariEnv& env(int i) const;
  AtariEnv& env(int i) { return const_cast<AtariEnv&>(static_cast<const Engine&>(*this).env(i)); }

  /// Starts resetting envs `ids` (seeds[k] applies to ids[k]; failed envs are rebuilt first); no
  /// ids only drops the steps in flight.
  /// With `rows`, env i writes its observation to rows + i * obs_size (the caller keeps it alive
  /// until recv); without, to the engine's own row, which recv copies out.
  void send_reset(const std::vector<int>& ids, const std::vector<Seed>& seeds, uint8_t* rows);
  /// Starts a step of envs `ids` with action indices actions[k] and paddle strengths[k]. Throws,
  /// before anything runs, on a bad id or action, an env in flight or a failed env.
  void send(const std::vector<int>& ids, const std::vector<int64_t>& actions,
            const std::vector<float>& strengths, uint8_t* rows);
  /// How many envs the next recv returns: min(batch_size, in flight).
  int expected() const { return std::min(batch_size_, in_flight()); }
  /// Waits at most `timeout` for the next recv's envs; true when they are done.
  bool wait_for(std::chrono::milliseconds timeout);
  /// Waits for the next expected() envs and returns their ids in the order they finished; the
  /// observations of those sent without `rows` are copied to gather (row k for the k-th id).
  /// Envs that failed are listed, with what went wrong, in `error` (empty if none). Throws
  /// std::logic_error with nothing in flight, std::runtime_error after cancel() (reset first).
  std::vector<int> recv(uint8_t* gather, std::string& error);
  /// Stops the work in flight early (for Ctrl-C): envs not yet started are left as they were,
  /// those running finish, nothing is returned; recv and steps are refused until the next reset.
  void cancel();
  /// Whether the work in flight was cancelled part-way: only a reset of every env clears it.
  bool interrupted() const { return interrupted_; }

  /// Held for the length of each call that starts, waits for or cancels work, and by a caller
  /// that makes several such calls in a row (the binding's recv: its wait, in slices, and its
  /// results). An assertion, not a guard (VectorizerHold is): another thread's call meanwhile ends
  /// the process with a message. The holder's own calls nest.
  class Driver {
   public:
    explicit Driver(const Engine& engine);
    ~Driver();
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

   private:
    std::atomic<std::thread::id>& owner_;
    bool nested_ = false;
  };

  /// Envs whose last task failed (their results are not valid).
  std::vector<int> failed_envs() const;
  /// Env i's results of its last step, valid once recv returned it.
  const StepResult& result(int i) const { return results_.at(static_cast<size_t>(i)); }
  /// For tests of the error path: env i's next step throws std::runtime_error.
  void inject_fault(int i) {
    if (busy_.at(static_cast<size_t>(i))) throw std::runtime_error("env " + std::to_string(i) + " is in flight");
    inject_fault_[static_cast<size_t>(i)] = 1;
  }
  /// Whether a full batch's envs that will reset go first in the queue (see send); on by default,
  /// off for the benchmark's A/B against the plain env-id order.
  bool resets_first() const { return resets_first_; }
  void set_resets_first(bool on) { resets_first_ = on; }
  /// Whether each env's next reset is computed ahead of time (ResetAhead) by threads at idle
  /// priority: on by default with more than one thread (one thread is one core: nothing idle to
  /// use), off for the A/B. `wait` (tests): an env prepares its next reset itself at its episode's
  /// end instead of resetting for real (deterministic on a busy machine). No env may be in flight.
  bool reset_ahead() const { return reset_ahead_; }
  void set_reset_ahead(bool on, bool wait = false);
  /// For tests: whether the pool's workers lend their time between batches (core/caller_load.hpp).
  bool lends_between() const { return caller_load_.free(); }
  /// For tests: no prepare waiting or running on the idle threads (never waits).
  bool prepares_idle() const { return !background_ || background_->idle(); }
  /// For tests: while on, no thread starts a prepare (they come late: every reset is made for real).
  void hold_prepares(bool on);
  /// For tests: sleeping workers kept off the caller's CPU for a wake-up so far (WakeSteering).
  int64_t wakes_steered() const { return pool_.steered(); }
  /// For tests: the envs whose next reset is prepared; no env may be in flight.
  int prepared() const;
  /// The counts of the resets computed ahead (envs rebuilt after a failure start at 0).
  enum class Count { kGames, kTaken, kReplayed, kChecked, kMismatches, kDropped, kAbandoned };
  /// kGames: every game reset (ALE reset_game(), made or swapped in); kTaken: swapped in; kReplayed:
  /// of those, with their chain's script; kChecked: swaps re-checked against a real reset;
  /// kMismatches: checks that differed (each refuses its key in this engine); kDropped: checks owed
  /// and never made (an env rebuilt owing one); kAbandoned: replays left part-way (a script predicted
  /// wrong; see Emulator::replays_abandoned). kChecked, kMismatches and kDropped are the keys'.
  int64_t resets_count(Count what) const;
  /// The keys refused since the last call (each once in the engine's life), as their warning names
  /// them; safe while envs are in flight (the recv and xla() report them).
  std::vector<std::string> take_refused();
  /// For the benchmark's --profile: starts (clearing the log) or stops timing every task; no env
  /// may be in flight.
  void profile(bool on);
  /// The tasks timed since the last call, batch by batch (see TaskProfile).
  std::vector<TaskRecord> take_profile() { return profile_.take(); }

 private:
  struct Op {  // what env i does when a worker picks it up
    enum Kind { kBuild, kReset, kStep } kind = kBuild;
    int action = 0;
    float strength = 1.0f;
    Seed seed;
    uint8_t* out = nullptr;
  };

  void run_env(int i);
  void apply_reset_ahead(size_t e);  // env e's switches as the engine's
  void start_background();
  void run_op(int i);
  /// Refuses a bad id list (range, repeats, count) and, unless `in_flight_ok`, an env in flight.
  void check_ids(const std::vector<int>& ids, size_t values, bool in_flight_ok = false) const;
  void dispatch(const std::vector<int>& ids, uint8_t* rows);
  void drain();  // waits for every env in flight and forgets their results
  std::string describe_errors(const std::vector<int>& ids) const;

  std::vector<EnvConfig> configs_;
  int batch_size_ = 0;
  int affinity_offset_ = -1;  // the pool's, for the background threads too
  size_t obs_size_ = 0;
  ResizeCache resizes_;  // one per screen height among the envs' ROMs
  PaletteCache palettes_;  // before envs_: they load their ROMs' palettes from it
  std::vector<std::unique_ptr<AtariEnv>> envs_;
  std::vector<Op> ops_;
  std::vector<StepResult> results_;
  std::vector<std::exception_ptr> errors_;  // per env, null when its last task succeeded
  std::vector<char> failed_;                // per env: broken until a reset rebuilds it
  std::vector<char> busy_;                  // per env: sent and not yet returned by recv
  std::vector<char> inject_fault_;
  std::vector<uint8_t> staging_;            // one observation row per env, for sends without rows
  std::atomic<int> in_flight_{0};  // written by the driver, read by anyone (Python's `pending`)
  mutable std::atomic<std::thread::id> driver_{};  // the thread inside a driving call, if any
  TaskProfile profile_;
  bool resets_first_ = true;
  bool reset_ahead_ = false;
  bool wait_for_prepares_ = false;
  bool interrupted_ = false;  // a batch was cancelled part-way: only a reset makes envs agree again
  std::vector<std::shared_ptr<RuntimeVerdict>> verdicts_;  // per env, shared by the envs of one key
  std::vector<std::shared_ptr<RuntimeVerdict>> keys_;      // each of them once
  std::unique_ptr<Background> background_;  // made when resets ahead are first switched on
  IdleLending lending_;  // background_, lent to the pool's workers with nothing queued
  ThreadPool pool_;  // shut down first by ~Engine, whatever the members' order
  CallerLoad caller_load_;  // whether the pool lends its time between batches
};

}  // namespace sb3ale
