// A fixed pool of worker threads that runs one task per queued index, and reports finished indices.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sb3ale {

/// Workers pop indices from a queue and run task(index); finished indices queue up in the order
/// they finished, for take(). Any worker may run any index. The task must not throw (the engine
/// records errors per env) and must not run twice at once for the same index (the caller's rule).
class ThreadPool {
 public:
  /// `affinity_offset` >= 0 pins worker t to CPU (affinity_offset + t) mod the CPU count.
  ThreadPool(int num_threads, int affinity_offset, std::function<void(int)> task);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(const std::vector<int>& indices);
  /// Waits at most `timeout` until `count` finished indices are waiting; true when they are.
  bool wait_for(int count, std::chrono::milliseconds timeout);
  void wait(int count);
  /// The first `count` finished indices, in the order they finished (wait for them first).
  std::vector<int> take(int count);
  /// Drops the queued indices that no worker has started (returned), waits for the running ones.
  std::vector<int> cancel();
  int size() const { return static_cast<int>(workers_.size()); }

 private:
  void work();

  const std::function<void(int)> task_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable finished_;
  std::deque<int> queue_;  // submitted, not started
  std::deque<int> done_;   // finished, not yet taken
  int running_ = 0;
  int wanted_ = 0;         // finished indices the caller waits for
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: started once the rest is built
};

}  // namespace sb3ale
