#include "core/background.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/thread_pool.hpp"

namespace sb3ale {

namespace {

// Lowers the calling thread to the lowest priority that still dies promptly; false where this platform
// has no such thing. On Linux SCHED_BATCH at nice 19: it never preempts a thread that wakes, and takes
// 15/1024 of a core against an ordinary thread. Not SCHED_IDLE: a thread at it may wait seconds for a
// busy core even to exit, and the process's exit waits for every thread (4-9 s, four busy processes on
// 2 cores; 0.1-0.3 s at nice 19). Neither can be undone without privilege: it is set once per thread.
bool lower_to_idle() {
#if defined(__linux__)
  sched_param param{};
  param.sched_priority = 0;
  const bool batch = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) == 0;
  return setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19) == 0 && batch;
#elif defined(__APPLE__)
  return pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0) == 0;
#else
  return false;
#endif
}

// How long an idle thread sleeps before it looks at `stop` again: a stop set between its look and its
// sleep (the engine sets it without the lock) is seen this late at most.
constexpr auto kRecheck = std::chrono::milliseconds(100);

// Every Background alive in this process, for stop_all(). Taken only by ordinary threads (the ones
// that build and destroy engines), never by an idle one; consistent across fork(), where the child
// starts with none (the parent's threads do not exist there).
std::mutex registry_mutex;
std::vector<std::weak_ptr<void>>* registry = new std::vector<std::weak_ptr<void>>;  // never destroyed
const int registry_at_fork = pthread_atfork([] { registry_mutex.lock(); }, [] { registry_mutex.unlock(); },
                                            [] {
                                              registry->clear();
                                              registry_mutex.unlock();
                                            });

// Whether the thread `tid` of this process still exists: it is gone once the kernel has released it,
// which comes after it let go of the address space (exit_mm, then exit_notify).
bool thread_exists(long tid) {
#if defined(__linux__)
  return !(syscall(SYS_tgkill, getpid(), tid, 0) == -1 && errno == ESRCH);
#else
  (void)tid;
  return false;
#endif
}

}  // namespace

Background::Background(int num_threads, int affinity_offset) : shared_(std::make_shared<Shared>(num_threads)) {
  const std::vector<int> cpus = allowed_cpus();
  for (int t = 0; t < num_threads; ++t) {
    try {
      std::thread thread([shared = shared_, t] {
#if defined(__linux__)
        shared->tids[static_cast<size_t>(t)].store(static_cast<long>(syscall(SYS_gettid)));
        pthread_setname_np(pthread_self(), "sb3ale-idle");  // as tests and top see it
#endif
        if (!lower_to_idle()) shared->idle_priority.store(false);
        work(shared);
      });
      pin_thread(thread, cpus, affinity_offset, t);
      thread.detach();
    } catch (const std::system_error& e) {
      shared_->stop.store(true);  // the threads started end on their own
      throw std::runtime_error("could not start background thread " + std::to_string(t + 1) + " (" + e.what() +
                               "): the process is out of threads or memory; ask for fewer num_threads");
    }
  }
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry->erase(std::remove_if(registry->begin(), registry->end(), [](const auto& w) { return w.expired(); }),
                  registry->end());
  registry->push_back(shared_);
}

Background::~Background() { halt(*shared_); }

void Background::halt(Shared& shared) {
  shared.stop.store(true, std::memory_order_release);
  shared.ready.notify_all();  // the jobs queued are dropped by the last thread out, with the queue
}

void Background::stop_all() {
  std::vector<std::shared_ptr<Shared>> all;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (const auto& w : *registry) {
      if (auto shared = std::static_pointer_cast<Shared>(w.lock())) all.push_back(std::move(shared));
    }
  }
  for (const auto& shared : all) {
    halt(*shared);
    // The jobs running stop at their next phase. try_lock: an idle thread may hold the queue.
    std::unique_lock<std::mutex> lock(shared->mutex, std::try_to_lock);
    if (!lock.owns_lock()) continue;
    for (const auto& job : shared->running) job->abandon();
    for (const auto& job : shared->queue) job->abandon();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kExitGraceMs);
  for (const auto& shared : all) {
    for (const auto& tid : shared->tids) {
      const long id = tid.load();
      while (id > 0 && thread_exists(id) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }
}

bool Background::submit(std::shared_ptr<ResetJob> job) {
  std::unique_lock<std::mutex> lock(shared_->mutex, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  shared_->queue.push_back(std::move(job));
  shared_->queued.store(static_cast<int>(shared_->queue.size()), std::memory_order_relaxed);
  lock.unlock();
  shared_->ready.notify_one();
  return true;
}

bool Background::run_one() {
  if (shared_->queued.load(std::memory_order_relaxed) == 0) return false;  // the common case, lock-free
  std::shared_ptr<ResetJob> job;
  {
    // try_lock, as the engine's every use: an idle thread that holds the queue may not run again for
    // long under load, and a worker must never wait for it.
    std::unique_lock<std::mutex> lock(shared_->mutex, std::try_to_lock);
    if (!lock.owns_lock() || shared_->queue.empty()) return false;
    job = std::move(shared_->queue.front());
    shared_->queue.pop_front();
    shared_->queued.store(static_cast<int>(shared_->queue.size()), std::memory_order_relaxed);
    shared_->lent.fetch_add(1, std::memory_order_relaxed);
  }
  job->run();  // abandoned (its env reset first, or closed): returns at its next phase
  shared_->lent.fetch_sub(1, std::memory_order_release);
  return true;
}

bool Background::idle() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->queue.empty() && shared_->running.empty() && shared_->lent.load(std::memory_order_acquire) == 0;
}

void Background::work(const std::shared_ptr<Shared>& shared) {
  for (;;) {
    std::shared_ptr<ResetJob> job;
    {
      std::unique_lock<std::mutex> lock(shared->mutex);
      shared->ready.wait_for(lock, kRecheck, [&] { return shared->stop.load() || !shared->queue.empty(); });
      if (shared->stop.load()) return;
      if (shared->queue.empty()) continue;
      job = std::move(shared->queue.front());
      shared->queue.pop_front();
      shared->queued.store(static_cast<int>(shared->queue.size()), std::memory_order_relaxed);
      shared->running.push_back(job);
    }
    job->run();  // an abandoned job returns at its next phase
    std::lock_guard<std::mutex> lock(shared->mutex);
    auto& running = shared->running;
    running.erase(std::find(running.begin(), running.end(), job));
  }
}

}  // namespace sb3ale
