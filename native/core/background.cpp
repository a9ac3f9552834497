#include "core/background.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <system_error>

#include "core/thread_pool.hpp"

namespace sb3ale {

namespace {

// Lowers the calling thread to idle priority; false where this platform has no such thing.
bool lower_to_idle() {
#if defined(__linux__)
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0;
#elif defined(__APPLE__)
  return pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0) == 0;
#else
  return false;
#endif
}

}  // namespace

Background::Background(int num_threads, int affinity_offset, std::function<void(int)> task) : task_(std::move(task)) {
  const std::vector<int> cpus = allowed_cpus();
  for (int t = 0; t < num_threads; ++t) {
    try {
      threads_.emplace_back([this] {
#if defined(__linux__)
        pthread_setname_np(pthread_self(), "sb3ale-idle");  // as tests and top see it
#endif
        if (!lower_to_idle()) idle_priority_.store(false);
        work();
      });
    } catch (const std::system_error& e) {
      stop_and_join();  // a constructor that throws runs no destructor: join the threads started
      throw std::runtime_error("could not start background thread " + std::to_string(t + 1) + " (" + e.what() +
                               "): the process is out of threads or memory; ask for fewer num_threads");
    }
    pin_thread(threads_.back(), cpus, affinity_offset, t);
  }
}

Background::~Background() { stop_and_join(); }

void Background::stop_and_join() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  ready_.notify_all();
  done_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

void Background::submit(int index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_ || std::find(queue_.begin(), queue_.end(), index) != queue_.end()) return;
    queue_.push_back(index);
  }
  ready_.notify_one();
}

bool Background::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && running_.empty();
}

void Background::drop(int index) {
  std::unique_lock<std::mutex> lock(mutex_);
  queue_.erase(std::remove(queue_.begin(), queue_.end(), index), queue_.end());
  done_.wait(lock, [&] { return std::find(running_.begin(), running_.end(), index) == running_.end(); });
}

void Background::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const int index = queue_.front();
    queue_.pop_front();
    if (std::find(running_.begin(), running_.end(), index) != running_.end()) {
      queue_.push_back(index);  // the same index runs on another thread: after it, not beside it
      done_.wait(lock);
      continue;  // stop_ is checked again first
    }
    running_.push_back(index);
    lock.unlock();
    task_(index);
    lock.lock();
    running_.erase(std::find(running_.begin(), running_.end(), index));
    done_.notify_all();
  }
}

}  // namespace sb3ale
