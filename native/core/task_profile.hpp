// Optional per-task timing for the benchmark's --profile: which thread ran each env's task, when,
// and whether it reset. Off by default; when off the step path pays one predictable branch. Times
// are the steady clock's (CLOCK_MONOTONIC on Linux, Python's time.perf_counter_ns()), so that the
// benchmark can put a batch's tasks beside the Python step around them.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace sb3ale {

struct TaskRecord {
  int64_t batch = 0;     ///< the recv that returned it, counted from the profile's start
  int32_t env = 0;
  int32_t thread = 0;    ///< 0: the caller; t >= 1: worker t
  bool reset = false;    ///< the task ran a game reset (requested, or an auto-reset)
  int64_t start_ns = 0;  ///< steady clock
  int64_t end_ns = 0;
  int64_t sent_ns = 0;   ///< when its send was dispatched
  int64_t woke_ns = 0;   ///< when the caller's wait for its batch returned
};

/// One slot per env, written only by the task of that env (so no lock), collected by the caller
/// at recv, after the pool's mutex ordered the writes before it.
class TaskProfile {
 public:
  bool on() const { return on_; }
  void start(int num_envs) {
    on_ = true;
    slots_.assign(static_cast<size_t>(num_envs), TaskRecord{});
    log_.clear();
    batch_ = 0;
  }
  void stop() { on_ = false; }
  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  TaskRecord& slot(int env) { return slots_[static_cast<size_t>(env)]; }
  /// Caller: the envs of one recv are done (its wait returned at `woke_ns`); files their records
  /// under one batch number.
  void collect(const std::vector<int>& ids, int64_t woke_ns) {
    for (int i : ids) {
      TaskRecord r = slots_[static_cast<size_t>(i)];
      r.batch = batch_;
      r.env = i;
      r.woke_ns = woke_ns;
      log_.push_back(r);
    }
    ++batch_;
  }
  std::vector<TaskRecord> take() {
    std::vector<TaskRecord> out;
    out.swap(log_);
    return out;
  }

 private:
  bool on_ = false;
  std::vector<TaskRecord> slots_;
  std::vector<TaskRecord> log_;
  int64_t batch_ = 0;
};

}  // namespace sb3ale
