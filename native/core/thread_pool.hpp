// A fixed pool of threads that runs one task per queued index, and reports finished indices. The
// caller is one of its threads: it steps envs while it waits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/wake_steering.hpp"

namespace sb3ale {

/// The CPUs this process may run on (its affinity mask: what Ray, Kubernetes or Slurm gave it),
/// in increasing order; never empty. hardware_concurrency() counts the machine's, which is wrong
/// in a container or a shard that holds a few of a node's cores; it is the fallback where no mask
/// can be read (macOS: see platform::allowed_cpus).
std::vector<int> allowed_cpus();

/// `affinity_offset` >= 0 pins the t-th thread of a pool to the ((affinity_offset + t) mod n)-th of
/// `cpus` (allowed_cpus()); < 0 leaves it as it is. Best effort: macOS cannot pin (platform::pin_thread).
void pin_thread(std::thread& thread, const std::vector<int>& cpus, int affinity_offset, int t);

/// `num_threads` threads pop indices from a queue and run task(index): num_threads - 1 workers,
/// and the caller inside wait() and wait_for(). So one thread means no worker, no wake-up and no
/// context switch: the caller steps every env itself; and with one thread per core, the caller's
/// Python work and the workers never compete for a core. Work sent and not waited for runs on the
/// workers alone. Threads spin briefly before they sleep (see thread_pool.cpp). Finished indices
/// queue up in the order they finished, for take(). The task must not throw (the engine records
/// errors per env) and must not run twice at once for the same index (the caller's rule).
/// `idle` (optional) is background work no one waits for (the resets prepared ahead): a worker with
/// no task queued calls it, in the time it would otherwise spin or sleep (behind a batch's last env,
/// or, unless lend_between(false), while the caller is between batches), until it returns false
/// (nothing left to do). It is given a predicate, true once a task is queued or shutdown() began:
/// work that can stop then (ResetJob) lets the task go first, and a shutdown waits for one phase of
/// it at most.
/// The caller's thread never does: its time between batches is its own program's.
class ThreadPool {
 public:
  /// `affinity_offset` >= 0 pins worker t to the ((affinity_offset + t) mod n)-th of the n CPUs
  /// in the process's affinity mask (the caller's own thread is left as it is). Throws
  /// std::runtime_error, with no thread left running, when a worker cannot be started.
  using Idle = std::function<bool(const std::function<bool()>& task_queued)>;
  ThreadPool(int num_threads, int affinity_offset, std::function<void(int)> task, Idle idle = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(const std::vector<int>& indices);
  /// Runs queued tasks, then waits, at most `timeout` in all (past it by at most one task), until
  /// `count` finished indices are waiting; true when they are.
  bool wait_for(int count, std::chrono::milliseconds timeout);
  void wait(int count);
  /// The first `count` finished indices, in the order they finished (wait for them first).
  std::vector<int> take(int count);
  /// Drops the queued indices that no thread has started (returned), waits for the running ones.
  std::vector<int> cancel();
  /// Drops the queued indices, lets the running tasks finish and joins the workers (the destructor
  /// does it too): after it no worker runs anything, task or idle work.
  void shutdown();
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  /// Sleeping workers kept off the caller's CPU for a wake-up so far (WakeSteering; for tests).
  int64_t steered() const { return steering_.steered(); }
  /// Whether a worker may take up idle work between batches (no task queued or running), as well as
  /// behind a batch's last env; on by default (core/caller_load.hpp decides).
  void lend_between(bool on) { lend_between_.store(on, std::memory_order_relaxed); }
  /// The workers' CPU clocks (platform::thread_cpu_clock: -1 where none).
  std::vector<std::int64_t> cpu_clocks();
  /// Which of a pool's threads runs this: worker t (1-based), or 0 for any other thread (the caller).
  static int current_thread();

 private:
  void work();
  /// Pops and runs the next queued index; `lock` is held on entry and exit, released meanwhile.
  void run_next(std::unique_lock<std::mutex>& lock);
  /// Spins briefly (lock released) for `count` finished indices before the caller sleeps.
  void caller_spin(std::unique_lock<std::mutex>& lock, int count);

  /// Runs one piece of `idle_` (lock released meanwhile), unless a task is queued: whether it ran one.
  bool run_idle(std::unique_lock<std::mutex>& lock);

  const std::function<void(int)> task_;
  const Idle idle_;
  const std::function<bool()> task_queued_;  // idle_'s predicate
  const bool spin_;  // spin briefly before sleeping: only with no more threads than allowed CPUs
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable finished_;
  std::deque<int> queue_;  // submitted, not started
  std::atomic<int> queued_{0};          // queue_.size() and done_.size(), for spinning threads
  std::atomic<int> finished_count_{0};
  std::atomic<bool> lend_between_{true};
  std::atomic<bool> stopping_{false};  // shutdown(): idle_'s predicate says stop too
  std::vector<int> done_;  // finished, not yet taken; its room made by submit: a worker's push never allocates
  int running_ = 0;
  int wanted_ = 0;         // finished indices the caller waits for
  bool stop_ = false;
  int sleepers_ = 0;       // workers asleep on work_ready_: the others find a queued task themselves
  WakeSteering steering_;  // under mutex_
  std::vector<std::thread> workers_;  // last: started once the rest is built
};

}  // namespace sb3ale
