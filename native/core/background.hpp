// Threads for work no step waits for (the resets computed ahead): they run at the scheduler's idle
// priority, so they only take a core that no step, no caller and no other program wants.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sb3ale {

/// `num_threads` threads that run task(index) for queued indices, at idle priority: Linux's
/// SCHED_IDLE (a thread at it is preempted at once by any ordinary thread that wakes on its core,
/// so a batch never waits behind it), the background QoS class on macOS, and the normal priority
/// elsewhere. Nothing waits for a task but drop(). The task must not throw.
class Background {
 public:
  /// `affinity_offset` >= 0 pins thread t as ThreadPool pins worker t (the same CPUs, no others).
  Background(int num_threads, int affinity_offset, std::function<void(int)> task);
  ~Background();  // drops what is queued and joins (waiting for the tasks running)
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  /// Queues task(index), once: an index already queued is not queued again (a running one is).
  void submit(int index);
  /// Drops `index` from the queue and waits until no thread runs task(index).
  void drop(int index);
  /// Whether the threads run at a priority below ordinary threads' (false: the fallback).
  bool idle_priority() const { return idle_priority_.load(); }
  /// Nothing queued and nothing running (for tests: the prepares asked for are all done).
  bool idle();

 private:
  void work();
  void stop_and_join();

  const std::function<void(int)> task_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable done_;
  std::deque<int> queue_;
  std::vector<int> running_;
  bool stop_ = false;
  std::atomic<bool> idle_priority_{true};
  std::vector<std::thread> threads_;  // last: started once the rest is built
};

}  // namespace sb3ale
