#include "core/thread_pool.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "core/platform.hpp"

#if defined(_MSC_VER)
#include <intrin.h>
#endif

namespace sb3ale {

namespace {

// Sleeping threads wake on a futex tens of microseconds late, and the scheduler may wake a worker
// on the caller's core. Spinning across the caller's gap between two batches (its Python work)
// avoids both: measured on 2 cores, Breakout N=8, 2 threads, 24.1k or 28.6k frames/s (two runs of
// the same build) became 29.7k either way. A worker spins this long for the next batch:
constexpr auto kWorkerSpin = std::chrono::microseconds(200);
// and the caller, once the queue is empty, this long for the workers' last envs:
constexpr auto kCallerSpin = std::chrono::microseconds(300);
// A worker that did sleep is woken by the caller: where Linux places it, see wake_steering.hpp.

template <typename Ready>
void spin_until(std::chrono::microseconds budget, Ready ready) {
  const auto until = std::chrono::steady_clock::now() + budget;
  while (!ready() && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");  // Apple silicon's (and every ARMv8's) hint of a spin-wait loop
#elif defined(_M_X64) || defined(_M_IX86)
    _mm_pause();  // MSVC's name of x86's pause
#elif defined(_M_ARM64)
    __yield();
#endif
  }
}

thread_local int this_thread_index = 0;  // set once by each worker

}  // namespace

int ThreadPool::current_thread() { return this_thread_index; }

void pin_thread(std::thread& thread, const std::vector<int>& cpus, int affinity_offset, int t) {
  if (affinity_offset < 0) return;
  (void)platform::pin_thread(thread, cpus[static_cast<size_t>(affinity_offset + t) % cpus.size()]);
}

std::vector<int> allowed_cpus() { return platform::allowed_cpus(); }

ThreadPool::ThreadPool(int num_threads, int affinity_offset, std::function<void(int)> task, Idle idle)
    : task_(std::move(task)), idle_(std::move(idle)),
      task_queued_([this] {
        return queued_.load(std::memory_order_relaxed) > 0 || stopping_.load(std::memory_order_relaxed);
      }),
      spin_(num_threads <= static_cast<int>(allowed_cpus().size())),
      steering_(std::max(0, num_threads - 1), spin_ && affinity_offset < 0 && platform::current_cpu() >= 0) {
  const std::vector<int> cpus = allowed_cpus();
  for (int t = 0; t + 1 < num_threads; ++t) {
    try {
      workers_.emplace_back([this, t] {
        this_thread_index = t + 1;
        platform::name_this_thread("sb3ale-worker");
        work();
      });
    } catch (const std::system_error& e) {
      // A constructor that throws runs no destructor: stop and join the workers already started
      // here (joinable threads left behind would terminate the process), then say what happened.
      shutdown();
      throw std::runtime_error("could not start worker thread " + std::to_string(t + 1) + " of " +
                               std::to_string(num_threads - 1) + " (" + e.what() +
                               "): the process is out of threads or memory; ask for fewer num_threads");
    }
    pin_thread(workers_.back(), cpus, affinity_offset, t);
  }
}

ThreadPool::~ThreadPool() { shutdown(); }

std::vector<std::int64_t> ThreadPool::cpu_clocks() {
  std::vector<std::int64_t> clocks;
  for (auto& worker : workers_) clocks.push_back(platform::thread_cpu_clock(worker));
  return clocks;
}

void ThreadPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  stopping_.store(true, std::memory_order_relaxed);  // a lent piece stops at its next phase or frame
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::submit(const std::vector<int>& indices) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Room for every index that may finish before the next take(): a worker never allocates (an
    // exception there would end the process); a bad_alloc here is the caller's.
    done_.reserve(done_.size() + static_cast<size_t>(running_) + queue_.size() + indices.size());
    queue_.insert(queue_.end(), indices.begin(), indices.end());
    queued_.store(static_cast<int>(queue_.size()), std::memory_order_relaxed);
    if (sleepers_ == 0) return;  // every worker works or spins: each finds the queue itself
  }
  // Outside the mutex: a worker that wakes meanwhile takes its task; steer() skips it (not asleep).
  if (steering_.on()) {
    try {
      steering_.steer(workers_, platform::current_cpu());
    } catch (const std::bad_alloc&) {
      // Best effort: the workers wake wherever the scheduler puts them.
    }
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
  caller_spin(lock, count);
  return finished_.wait_until(lock, deadline, [&] { return static_cast<int>(done_.size()) >= count; });
}

void ThreadPool::wait(int count) {
  std::unique_lock<std::mutex> lock(mutex_);
  wanted_ = count;
  while (static_cast<int>(done_.size()) < count && !queue_.empty()) run_next(lock);
  caller_spin(lock, count);
  finished_.wait(lock, [&] { return static_cast<int>(done_.size()) >= count; });
}

std::vector<int> ThreadPool::take(int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  count = std::min(count, static_cast<int>(done_.size()));
  std::vector<int> taken(done_.begin(), done_.begin() + count);
  done_.erase(done_.begin(), done_.begin() + count);
  finished_count_.store(static_cast<int>(done_.size()), std::memory_order_release);
  return taken;
}

std::vector<int> ThreadPool::cancel() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::vector<int> dropped(queue_.begin(), queue_.end());
  queue_.clear();
  queued_.store(0, std::memory_order_relaxed);
  finished_.wait(lock, [this] { return running_ == 0; });
  return dropped;
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stop_) return;
    if (!queue_.empty()) {
      run_next(lock);
      continue;
    }
    // Nothing queued: background work first (a task queued meanwhile waits for one piece of it at
    // most, and the caller steps envs itself while it waits), then the spin, then sleep.
    if (run_idle(lock)) continue;
    if (spin_) {
      lock.unlock();
      spin_until(kWorkerSpin, [this] { return queued_.load(std::memory_order_relaxed) > 0; });
      lock.lock();
      if (!queue_.empty() || run_idle(lock)) continue;  // background work queued during the spin
    }
    steering_.asleep(this_thread_index - 1);
    ++sleepers_;
    work_ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    --sleepers_;
    if (steering_.on()) {  // its CPUs back, outside the mutex (system calls)
      lock.unlock();
      steering_.awake(this_thread_index - 1);
      lock.lock();
    }
  }
}

bool ThreadPool::run_idle(std::unique_lock<std::mutex>& lock) {
  if (!idle_ || stop_ || !queue_.empty()) return false;
  if (running_ == 0 && !lend_between_.load(std::memory_order_relaxed)) return false;  // the caller's time
  lock.unlock();
  const bool ran = idle_(task_queued_);
  lock.lock();
  return ran;
}

void ThreadPool::caller_spin(std::unique_lock<std::mutex>& lock, int count) {
  if (!spin_ || static_cast<int>(done_.size()) >= count) return;
  lock.unlock();
  spin_until(kCallerSpin, [&] { return finished_count_.load(std::memory_order_relaxed) >= count; });
  lock.lock();
}

void ThreadPool::run_next(std::unique_lock<std::mutex>& lock) {
  const int index = queue_.front();
  queue_.pop_front();
  queued_.store(static_cast<int>(queue_.size()), std::memory_order_relaxed);
  ++running_;
  lock.unlock();
  task_(index);
  lock.lock();
  --running_;
  done_.push_back(index);
  finished_count_.store(static_cast<int>(done_.size()), std::memory_order_release);
  // Wake the caller only when what it waits for is there: one wake-up per batch, not per env.
  if (static_cast<int>(done_.size()) >= wanted_ || running_ == 0) finished_.notify_all();
}

}  // namespace sb3ale
