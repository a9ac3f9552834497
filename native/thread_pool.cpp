#include "thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace sb3ale {

ThreadPool::ThreadPool(int num_threads, int affinity_offset, std::function<void(int)> task)
    : task_(std::move(task)) {
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  for (int t = 0; t + 1 < num_threads; ++t) {
    workers_.emplace_back([this] { work(); });
    if (affinity_offset >= 0 && cpus > 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET((affinity_offset + t) % cpus, &set);
      pthread_setaffinity_np(workers_.back().native_handle(), sizeof set, &set);
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::submit(const std::vector<int>& indices) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), indices.begin(), indices.end());
  }
  if (indices.size() == 1) {
    work_ready_.notify_one();
  } else {
    work_ready_.notify_all();
  }
}

bool ThreadPool::wait_for(int count, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  wanted_ = count;
  while (static_cast<int>(done_.size()) < count && !queue_.empty()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    run_next(lock);
  }
  // Only tasks already running are left: the workers', and none can be queued meanwhile.
  return finished_.wait_until(lock, deadline, [&] { return static_cast<int>(done_.size()) >= count; });
}

void ThreadPool::wait(int count) {
  std::unique_lock<std::mutex> lock(mutex_);
  wanted_ = count;
  while (static_cast<int>(done_.size()) < count && !queue_.empty()) run_next(lock);
  finished_.wait(lock, [&] { return static_cast<int>(done_.size()) >= count; });
}

std::vector<int> ThreadPool::take(int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  count = std::min(count, static_cast<int>(done_.size()));
  std::vector<int> taken(done_.begin(), done_.begin() + count);
  done_.erase(done_.begin(), done_.begin() + count);
  return taken;
}

std::vector<int> ThreadPool::cancel() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::vector<int> dropped(queue_.begin(), queue_.end());
  queue_.clear();
  finished_.wait(lock, [this] { return running_ == 0; });
  return dropped;
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    run_next(lock);
  }
}

void ThreadPool::run_next(std::unique_lock<std::mutex>& lock) {
  const int index = queue_.front();
  queue_.pop_front();
  ++running_;
  lock.unlock();
  task_(index);
  lock.lock();
  --running_;
  done_.push_back(index);
  // Wake the caller only when what it waits for is there: one wake-up per batch, not per env.
  if (static_cast<int>(done_.size()) >= wanted_ || running_ == 0) finished_.notify_all();
}

}  // namespace sb3ale
