// Threads for work no step waits for (the resets computed ahead): they run at the scheduler's lowest
// priority, so they take little of a core that a step, a caller or another program wants. Under load
// such a thread may not run for a long time, so nothing ever waits for one: the threads are detached and
// share with the engine only a queue of jobs that own what they touch (ResetJob), they end on their
// own once told to stop, and the engine's side takes their lock only with try_lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "env/reset_ahead.hpp"

namespace sb3ale {

/// `num_threads` detached threads that run the queued jobs, at the lowest priority: Linux's SCHED_BATCH
/// at nice 19, the background QoS class on macOS, idle priority on Windows (see platform::lower_to_idle),
/// and the normal priority elsewhere.
class Background {
 public:
  /// `affinity_offset` >= 0 pins thread t as ThreadPool pins worker t (the same CPUs, no others).
  Background(int num_threads, int affinity_offset);
  ~Background();  // tells the threads to stop after the job each runs: waits for none of them
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Queues `job` unless that would wait (an idle thread holds the queue): false then, and the
  /// caller abandons the job.
  bool submit(std::shared_ptr<ResetJob> job);
  /// Runs the oldest queued job on the calling thread, at its own priority (a ThreadPool worker with
  /// nothing else to do): false when none is queued or the queue is busy.
  bool run_one();
  /// Whether the threads run at a priority below ordinary threads' (false: the fallback).
  bool idle_priority() const { return shared_->idle_priority.load(); }
  /// Nothing queued and nothing running (for tests: the prepares asked for are all done).
  bool idle() const;
  /// The interpreter's exit: every Background's threads (those of closed envs too) told to stop and
  /// their jobs abandoned, then up to kExitGrace for the threads to be gone. The one wait on them
  /// anywhere, and bounded: a low-priority thread still there when the process ends may be the last
  /// one out, and the last one out tears the address space down at its priority (seconds when
  /// every core is busy); a thread told to stop ends within milliseconds, the job it runs within one
  /// phase of it.
  static void stop_all();
  static constexpr int kExitGraceMs = 300;

 private:
  struct Shared {  // owned by the engine's Background and by each thread, whichever ends last
    explicit Shared(int num_threads) : marks(static_cast<size_t>(num_threads)) {}
    std::vector<std::atomic<std::int64_t>> marks;  // each thread's platform::mark_this_thread() (0: not yet)
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::shared_ptr<ResetJob>> queue;
    std::vector<std::shared_ptr<ResetJob>> running;  // the idle threads', so that stop_all() can abandon them
    std::atomic<int> queued{0};  // queue.size(), read without the lock
    std::atomic<int> lent{0};    // jobs run_one() is running (never behind the lock: see run_one)
    std::atomic<bool> stop{false};
    std::atomic<bool> idle_priority{true};
  };
  static void work(const std::shared_ptr<Shared>& shared);
  /// Tells `shared`'s threads to stop after the job each runs.
  static void halt(Shared& shared);

  std::shared_ptr<Shared> shared_;
};

}  // namespace sb3ale
