#include "thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

namespace sb3ale {

ThreadPool::ThreadPool(int num_threads, int affinity_offset) {
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  for (int t = 0; t < num_threads; ++t) {
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
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::start(int n, std::function<void(int)> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = std::move(task);
    size_ = n;
    next_ = 0;
    remaining_ = n;
  }
  work_ready_.notify_all();
}

void ThreadPool::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  batch_done_.wait(lock, [this] { return remaining_ == 0; });
}

bool ThreadPool::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return batch_done_.wait_for(lock, timeout, [this] { return remaining_ == 0; });
}

void ThreadPool::cancel() {
  std::unique_lock<std::mutex> lock(mutex_);
  remaining_ -= size_ - next_;
  next_ = size_;
  batch_done_.wait(lock, [this] { return remaining_ == 0; });
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stop_ || next_ < size_; });
    if (stop_) return;
    const int index = next_++;
    lock.unlock();
    task_(index);  // safe unlocked: task_ changes only once every task of the batch has finished
    lock.lock();
    if (--remaining_ == 0) batch_done_.notify_all();
  }
}

}  // namespace sb3ale
