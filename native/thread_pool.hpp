// A fixed pool of worker threads that runs one batch of indexed tasks at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sb3ale {

/// Runs task(0..n-1) on its workers; any worker may run any index. One batch at a time:
/// start() a batch, then wait() for it. Tasks must not throw (the engine records errors per env).
class ThreadPool {
 public:
  /// `affinity_offset` >= 0 pins worker t to CPU (affinity_offset + t) mod the CPU count.
  ThreadPool(int num_threads, int affinity_offset);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void start(int n, std::function<void(int)> task);
  void wait();
  /// Waits at most `timeout` for the batch; true when it has finished.
  bool wait_for(std::chrono::milliseconds timeout);
  /// Hands out no more tasks of the batch and waits for those already running.
  void cancel();
  int size() const { return static_cast<int>(workers_.size()); }

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable batch_done_;
  std::function<void(int)> task_;  // written only while no batch runs
  int size_ = 0;                   // tasks in the current batch
  int next_ = 0;                   // next index to hand out
  int remaining_ = 0;              // tasks not yet finished
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace sb3ale
