// Wake placement for ThreadPool's sleeping workers (Linux). A worker that slept (the caller's gap
// outlasted its spin) is woken by the caller, and Linux then often places it on the caller's own CPU
// (wake-affine; it stops looking for an idle CPU when the machine looks busy, and spinning threads
// look busy), where it waits behind the caller, which steps the whole batch itself: Breakout N=2 on 2
// vCPUs, 2 threads, 1 ms between batches took 0.66-0.77 ms a batch, against 0.29 ms in a tight loop
// (perf sched: the worker woken on the caller's CPU, waiting 0.6-0.9 ms). So before a wake-up the
// caller allows each sleeping worker every CPU it has but the caller's (one syscall per worker, only
// after a gap), and the worker takes them back as it wakes: 0.41-0.42 ms a batch. (Short timed sleeps
// instead also found the batch on the worker's own CPU, but slowed a CPU policy's gap by a fifth.)
//
// Nobody else's choice is undone: the caller narrows what the worker has at that moment (read then,
// not remembered), and the worker restores it only if its CPUs are still the ones the caller set; if
// anyone (taskset, a cpuset, Ray, a scheduler, another engine) changed them meanwhile, theirs stand. A
// restore that fails is retried from the same CPUs at the next wake-up, never from the narrowed ones.
// The one change it cannot see: a move to exactly the narrowed CPUs between the caller's steer and the
// worker's wake (a window of one wake-up, longer on a loaded machine) reads as its own, and is undone
// once; Linux keeps no count of affinity changes to tell them apart.
//
// Owns each worker's masks, each behind a lock of its own that only the caller and that worker take:
// the system calls run outside ThreadPool's mutex. steer() by the caller before a wake-up, asleep()
// (ThreadPool's mutex held) and awake() (not held) by the worker itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sb3ale {

class WakeSteering {
 public:
  /// `on`: Linux, workers not pinned, no more threads than CPUs (ThreadPool decides).
  WakeSteering(int num_workers, bool on) : on_(on), workers_(static_cast<size_t>(num_workers)) {}
  bool on() const { return on_; }
  /// Worker w is about to sleep.
  void asleep(int w) {
    Worker& worker = workers_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(worker.mutex);
    worker.asleep = true;
  }
  /// The caller, before waking `threads` (the workers): each asleep and not yet steered kept off `cpu`.
  void steer(std::vector<std::thread>& threads, int cpu);
  /// Worker w (the calling thread) woke: its CPUs back, unless someone else has changed them. Allocates
  /// nothing (a worker's bad_alloc would end the process).
  void awake(int w);
  /// Workers steered so far (for tests: steering happens).
  int64_t steered() const { return steered_.load(std::memory_order_relaxed); }

 private:
  struct Worker {
    std::mutex mutex;              // the caller's steer() and the worker's own asleep() and awake()
    bool asleep = false;
    bool steered = false;          // kept off the caller's CPU since it fell asleep
    bool restore_failed = false;   // its last restore failed: `before` still holds its CPUs
    std::vector<int> before;       // its CPUs when the caller steered it
    std::vector<int> narrowed;     // what the caller set
  };
  const bool on_;
  std::vector<Worker> workers_;
  std::atomic<int64_t> steered_{0};
};

}  // namespace sb3ale
