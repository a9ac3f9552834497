#include "core/background.hpp"

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

// How long an idle thread sleeps with nothing posted before it looks at the slots again. No wake-up
// is missed (platform::Wakeup keeps the count), so nothing depends on it: a bound, not a poll.
constexpr auto kRecheck = std::chrono::seconds(1);

// The job in `slot`, out of it (null: none), with the reference it held to itself.
std::shared_ptr<ResetJob> take_from(std::atomic<ResetJob*>& slot) {
  ResetJob* job = slot.exchange(nullptr, std::memory_order_acq_rel);
  return job != nullptr ? std::move(job->self) : nullptr;
}

// `job`, out of a slot: no thread touches it any more; its env may fill it again.
void let_go(const std::shared_ptr<ResetJob>& job) { job->queued.store(false, std::memory_order_release); }

}  // namespace

Background::Background(int num_threads, int num_slots, int affinity_offset)
    : shared_(std::make_shared<Shared>(num_threads, num_slots)) {
  const std::vector<int> cpus = allowed_cpus();
  clocks_.reserve(static_cast<size_t>(num_threads));  // no allocation while a thread is joinable
  for (int t = 0; t < num_threads; ++t) {
    try {
      std::thread thread([shared = shared_, t] {
        std::atomic<std::int64_t>& mark = shared->marks[static_cast<size_t>(t)];
        mark.store(platform::mark_this_thread());
        platform::name_this_thread("sb3ale-idle");  // as tests and top see it
        if (!platform::lower_to_idle()) shared->idle_priority.store(false);
        work(*shared);
        mark.store(platform::mark_ended(mark.load()));  // the last thing it does (`shared` outlives it)
      });
      pin_thread(thread, cpus, affinity_offset, t);
      clocks_.push_back(platform::thread_cpu_clock(thread));  // before detach: the handle is gone after
      thread.detach();
    } catch (const std::system_error& e) {
      shared_->halt();  // the threads started end on their own
      throw std::runtime_error("could not start background thread " + std::to_string(t + 1) + " (" + e.what() +
                               "): the process is out of threads or memory; ask for fewer num_threads");
    }
  }
  exit_registry::join(shared_);
}

Background::~Background() { shared_->halt(); }

Background::Shared::~Shared() {
  for (auto& slot : slots) {
    if (auto job = take_from(slot)) let_go(job);
  }
}

void Background::Shared::halt() {
  stop.store(true, std::memory_order_release);
  wake.post(static_cast<int>(marks.size()));
  for (auto& slot : slots) {  // the running ones stop at their next phase: `stop` is their `halted`
    if (auto job = take_from(slot)) {
      waiting.fetch_sub(1, std::memory_order_acq_rel);
      job->abandon();
      let_go(job);
    }
  }
}

bool Background::Shared::ended() const {
  for (const auto& mark : marks) {
    const std::int64_t m = mark.load();  // 0: not started yet (it finds `stop` set as it starts)
    if (m != 0 && !platform::thread_ended(m)) return false;
  }
  return true;
}

std::shared_ptr<ResetJob> Background::Shared::take() {
  if (waiting.load(std::memory_order_acquire) == 0 || held.load(std::memory_order_acquire)) return nullptr;
  const size_t n = slots.size(), start = cursor.load(std::memory_order_relaxed);
  for (size_t k = 0; k < n; ++k) {
    const size_t s = (start + k) % n;
    if (slots[s].load(std::memory_order_relaxed) == nullptr) continue;
    // Counted busy before it leaves `waiting`: idle() never sees it in neither.
    busy.fetch_add(1, std::memory_order_acq_rel);
    if (std::shared_ptr<ResetJob> job = take_from(slots[s])) {
      waiting.fetch_sub(1, std::memory_order_acq_rel);
      cursor.store(s + 1, std::memory_order_relaxed);
      return job;
    }
    busy.fetch_sub(1, std::memory_order_acq_rel);  // another thread took it first
  }
  return nullptr;
}

void Background::submit(int slot, std::shared_ptr<ResetJob> job) {
  // No allocation: the slot holds the job, and the job itself (until a thread takes it out).
  ResetJob* raw = job.get();
  raw->queued.store(true, std::memory_order_relaxed);
  raw->halted = &shared_->stop;
  raw->slot = slot;
  raw->self = std::move(job);
  if (ResetJob* old = shared_->slots.at(static_cast<size_t>(slot)).exchange(raw, std::memory_order_acq_rel)) {
    const std::shared_ptr<ResetJob> replaced = std::move(old->self);  // out of the slot: ours alone
    replaced->abandon();  // its env gave up on it already; never started
    let_go(replaced);
  } else {
    shared_->waiting.fetch_add(1, std::memory_order_acq_rel);
  }
  shared_->wake.post();  // never waits: a thread woken and not yet run holds nothing of ours
}

void Background::hold(bool on) {
  shared_->held.store(on, std::memory_order_release);
  if (!on) shared_->wake.post(static_cast<int>(shared_->marks.size()));  // the jobs held back
}

bool Background::run_one(const std::function<bool()>& yield) {
  std::shared_ptr<ResetJob> job = shared_->take();
  if (!job) return false;
  run(*shared_, job, yield);
  return true;
}

void Background::run(Shared& shared, const std::shared_ptr<ResetJob>& job, const std::function<bool()>& yield) {
  if (job->run(yield)) {  // an abandoned job returns at its next phase
    requeue(shared, job);
  } else {
    let_go(job);
  }
  shared.busy.fetch_sub(1, std::memory_order_acq_rel);  // after the requeue: idle() never sees it in neither
}

void Background::requeue(Shared& shared, const std::shared_ptr<ResetJob>& job) {
  job->self = job;  // the slot's reference again
  ResetJob* none = nullptr;
  Slot& slot = shared.slots[static_cast<size_t>(job->slot)];
  if (slot.compare_exchange_strong(none, job.get(), std::memory_order_acq_rel)) {
    shared.waiting.fetch_add(1, std::memory_order_acq_rel);
    shared.wake.post();
    return;
  }
  job->self.reset();
  job->abandon();  // its env gave up on it and queued the next one
  let_go(job);
}

bool Background::idle() const {
  return shared_->waiting.load(std::memory_order_acquire) == 0 && shared_->busy.load(std::memory_order_acquire) == 0;
}

void Background::work(Shared& shared) {
  while (!shared.stop.load(std::memory_order_acquire)) {
    if (std::shared_ptr<ResetJob> job = shared.take()) {
      run(shared, job);
      continue;
    }
    shared.wake.wait_for(kRecheck);
  }
}

}  // namespace sb3ale
