// Whether the caller's program leaves a CPU free between batches. The pool's workers lend their time
// to the resets prepared ahead whenever they have nothing queued; between batches that time is the
// caller's too, and where the caller's own threads fill every CPU (a CPU policy's forward pass, one
// torch thread per core) a lent prepare runs beside them and slows them more than it saves. So the
// engine measures each gap (a recv's return to the next send): the process's CPU time in it, less
// our own threads' (the pool's workers and the idle threads), is the caller's; the workers lend
// between batches only while, smoothed over the last gaps, at least kFreeCpus CPU was left over.
// Where the clocks cannot be read (platform.hpp: Linux only), it always says free: lending as before.
//
// Owns nothing: the engine calls it from the thread that drives it (no lock) and reads the clocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/platform.hpp"

namespace sb3ale {

class CallerLoad {
 public:
  /// Lend between batches while the caller leaves at least this much of a CPU.
  static constexpr double kFreeCpus = 0.75;
  /// One gap in this many is measured (2 clock reads per thread of ours): the decision moves slowly.
  static constexpr int kEvery = 4;

  /// `cpus`: the CPUs the process may use; `clocks`: our threads' CPU clocks (platform::thread_cpu_clock).
  CallerLoad(int cpus, std::vector<std::int64_t> clocks) : cpus_(cpus), clocks_(std::move(clocks)) {}
  /// More threads of ours (the idle threads, started later).
  void add_clocks(const std::vector<std::int64_t>& clocks) { clocks_.insert(clocks_.end(), clocks.begin(), clocks.end()); }

  /// recv returned with nothing in flight: a gap begins (measured one time in kEvery).
  void gap_began() {
    measuring_ = ++gaps_ % kEvery == 0;
    if (measuring_) begin_ = sample();
  }

  /// A send with nothing in flight ends the gap: whether a CPU was left free (the last verdict when
  /// this gap was not measured).
  bool gap_ended() {
    if (!measuring_) return free_;
    measuring_ = false;
    const Sample end = sample();
    if (begin_.process < 0 || end.process < 0 || end.ours < 0 || begin_.ours < 0) return free_;
    return add(end.wall - begin_.wall, end.process - begin_.process, end.ours - begin_.ours);
  }

  /// One gap of `wall_ns`, in which the process ran `process_ns` of CPU and our threads `ours_ns` of
  /// it: the smoothed verdict (each gap weighs 1/8, by its length: a long gap counts as it lasts).
  bool add(std::int64_t wall_ns, std::int64_t process_ns, std::int64_t ours_ns) {
    if (wall_ns <= 0) return free_;
    const double caller = static_cast<double>(process_ns > ours_ns ? process_ns - ours_ns : 0);
    wall_ += (static_cast<double>(wall_ns) - wall_) / 8;
    caller_ += (caller - caller_) / 8;
    free_ = cpus_ * wall_ - caller_ >= kFreeCpus * wall_;
    return free_;
  }

  bool free() const { return free_; }

 private:
  struct Sample {
    std::int64_t wall = 0, process = -1, ours = -1;
  };
  Sample sample() const {
    Sample s;
    s.process = platform::process_cpu_ns();
    if (s.process < 0) return s;
    s.ours = 0;
    for (const std::int64_t clock : clocks_) {
      const std::int64_t ns = platform::cpu_ns(clock);
      if (ns < 0) return Sample{};  // a thread of ours gone: no verdict from this gap
      s.ours += ns;
    }
    s.wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch()).count();
    return s;
  }

  const int cpus_;
  std::vector<std::int64_t> clocks_;
  double wall_ = 0, caller_ = 0;  // the gaps' smoothed length and the caller's CPU time in them
  bool free_ = true;
  bool measuring_ = false;
  std::int64_t gaps_ = 0;
  Sample begin_;
};

}  // namespace sb3ale
