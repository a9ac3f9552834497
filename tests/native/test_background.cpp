// Background's side that the engine calls: submit never sleeps, whatever the idle threads are doing,
// on a CPU where they get almost no time.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#endif

#include "core/background.hpp"
#include "check.hpp"

namespace {

#if defined(__linux__)
/// The calling thread's voluntary context switches so far: it slept (a futex, a lock) that often.
long voluntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}
#endif

}  // namespace

TEST(submit_never_sleeps_behind_idle_threads_starved_on_its_cpu) {
#if defined(__linux__)
  // This thread, two idle threads and a spinner at normal priority share one CPU (threads inherit
  // the mask of the thread that starts them): a woken idle thread may wait long before it runs. The
  // bursts of submits to different slots must never block on it: no submit sleeps (a voluntary
  // context switch), whatever the scheduler does; preemption is involuntary and not counted.
  cpu_set_t before;
  CHECK(sched_getaffinity(0, sizeof(before), &before) == 0);
  const int cpu = sched_getcpu();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
  constexpr int kSlots = 16;
  long slept = 0;
  std::chrono::nanoseconds longest{0};
  {
    sb3ale::Background background(2, kSlots, -1);
    std::atomic<bool> stop{false};
    std::thread spinner([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < until) {
      for (int s = 0; s < kSlots; ++s) {
        auto job = std::make_shared<sb3ale::ResetJob>();
        job->prepare = false;  // no check, no prepare: the job ends as it starts
        const long switches = voluntary_switches();
        const auto start = std::chrono::steady_clock::now();
        background.submit(s, std::move(job));
        const auto took = std::chrono::steady_clock::now() - start;
        slept += voluntary_switches() - switches;
        if (took > longest) longest = took;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // the idle threads' chance to wake
    }
    stop.store(true);
    spinner.join();
  }
  CHECK(sched_setaffinity(0, sizeof(before), &before) == 0);
  std::printf("    submits slept %ld times; the longest took %.3f ms\n", slept, longest.count() / 1e6);
  CHECK(slept == 0);
#endif
}
