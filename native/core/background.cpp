#include "core/background.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/platform.hpp"
#include "core/thread_pool.hpp"

namespace sb3ale {

namespace {

// How long an idle thread sleeps before it looks at `stop` again: a stop set between its look and its
// sleep (the engine sets it without the lock) is seen this late at most.
constexpr auto kRecheck = std::chrono::milliseconds(100);

// Every Background alive in this process, for stop_all(). Taken only by ordinary threads (the ones
// that build and destroy engines), never by an idle one; consistent across fork(), where the child
// starts with none (the parent's threads do not exist there).
std::mutex registry_mutex;
std::vector<std::weak_ptr<void>>* registry = new std::vector<std::weak_ptr<void>>;  // never destroyed
const int registry_at_fork = platform::at_fork([] { registry_mutex.lock(); }, [] { registry_mutex.unlock(); },
                                              [] {
                                                registry->clear();
                                                registry_mutex.unlock();
                                              });

}  // namespace

Background::Background(int num_threads, int affinity_offset) : shared_(std::make_shared<Shared>(num_threads)) {
  const std::vector<int> cpus = allowed_cpus();
  for (int t = 0; t < num_threads; ++t) {
    try {
      std::thread thread([shared = shared_, t] {
        std::atomic<std::int64_t>& mark = shared->marks[static_cast<size_t>(t)];
        mark.store(platform::mark_this_thread());
        platform::name_this_thread("sb3ale-idle");  // as tests and top see it
        if (!platform::lower_to_idle()) shared->idle_priority.store(false);
        work(shared);
        mark.store(platform::mark_ended(mark.load()));  // the last thing it does (`shared` outlives it)
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
    for (const auto& mark : shared->marks) {
      const auto running = [&mark] {  // 0: not started yet (it finds `stop` set as it starts)
        const std::int64_t m = mark.load();
        return m != 0 && !platform::thread_ended(m);
      };
      while (running() && std::chrono::steady_clock::now() < deadline) {
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
