// Threads for work no step waits for (the resets computed ahead, env/reset_job.*): they run at the
// scheduler's lowest priority, so they take little of a core that a step, a caller or another program
// wants. Under load such a thread may not run for a long time, so nothing ever waits for one: the
// threads are detached, they end on their own once told to stop (core/exit_registry.*), and they share
// with the engine only one slot per env, each an atomic pointer, and a platform::Wakeup to sleep on:
// the engine's side takes no lock an idle thread may hold, and never sleeps or waits for one to run.
//
// Owns: the threads, the slots, their priority. Called by the engine (submit, from the env's task),
// by the pool's workers with nothing queued (run_one, through core/idle_lending.hpp) and by tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/exit_registry.hpp"
#include "core/platform.hpp"
#include "env/reset_job.hpp"

namespace sb3ale {

/// `num_threads` detached threads that run the submitted jobs, at the lowest priority: Linux's
/// SCHED_BATCH at nice 19, the background QoS class on macOS, idle priority on Windows (see
/// platform::lower_to_idle), and the normal priority elsewhere.
class Background {
 public:
  /// `num_slots`: one per env (an env has one job submitted at a time). `affinity_offset` >= 0 pins
  /// thread t as ThreadPool pins worker t (the same CPUs, no others).
  Background(int num_threads, int num_slots, int affinity_offset);
  ~Background();  // tells the threads to stop after the job each runs: waits for none of them
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Puts `job` in slot `slot` for the next free thread; a job still there, never started, is
  /// replaced (and abandoned). Never waits, never fails.
  void submit(int slot, std::shared_ptr<ResetJob> job);
  /// Runs one submitted job on the calling thread, at its own priority (a ThreadPool worker with
  /// nothing else to do): false when none is waiting (or the threads are held). Once `yield` says so
  /// the job stops at its next phase or frame and waits in its slot again, for whoever has time.
  bool run_one(const std::function<bool()>& yield);
  /// The threads' CPU clocks (platform::thread_cpu_clock: -1 where none), for core/caller_load.hpp.
  const std::vector<std::int64_t>& cpu_clocks() const { return clocks_; }
  /// Whether the threads run at a priority below ordinary threads' (false: the fallback).
  bool idle_priority() const { return shared_->idle_priority.load(); }
  /// No job waiting and none running (for tests: the prepares asked for are all done).
  bool idle() const;
  /// Tests: while held, no thread starts a job (they stay waiting: prepares come late).
  void hold(bool on);

 private:
  using Slot = std::atomic<ResetJob*>;  // a queued job (it holds itself: ResetJob::self), or null
  struct Shared final : exit_registry::Member {  // owned by the engine's Background and by each thread
    Shared(int num_threads, int num_slots)
        : marks(static_cast<size_t>(num_threads)), slots(static_cast<size_t>(num_slots)), wake(num_threads) {}
    ~Shared() override;
    void halt() override;
    bool ended() const override;
    /// Takes the next waiting job (null: none), from the slot after the last one taken.
    std::shared_ptr<ResetJob> take();
    std::vector<std::atomic<std::int64_t>> marks;  // each thread's platform::mark_this_thread() (0: not yet)
    std::vector<Slot> slots;
    std::atomic<int> waiting{0};  // jobs in slots
    std::atomic<int> busy{0};     // jobs being run (idle threads' and lent)
    std::atomic<size_t> cursor{0};
    platform::Wakeup wake;        // a post per job submitted; its count at most one per thread
    std::atomic<bool> stop{false};  // also each running job's `halted`: it stops at its next phase
    std::atomic<bool> held{false};
    std::atomic<bool> idle_priority{true};
  };
  static void work(Shared& shared);
  /// Runs `job` (taken from a slot) and counts it out of `busy`; a job that yielded goes back to its slot.
  static void run(Shared& shared, const std::shared_ptr<ResetJob>& job, const std::function<bool()>& yield = {});
  /// A job that yielded, back in its slot (unless its env queued another meanwhile: then abandoned).
  static void requeue(Shared& shared, const std::shared_ptr<ResetJob>& job);

  std::shared_ptr<Shared> shared_;
  std::vector<std::int64_t> clocks_;
};

}  // namespace sb3ale
