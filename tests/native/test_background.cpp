// Background's side that the engine calls: submit never sleeps, whatever the idle threads are doing,
// on a CPU where they get almost no time.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#endif

#include "core/background.hpp"
#include "core/engine.hpp"
#include "alloc_probe.hpp"
#include "check.hpp"
#include "envs.hpp"

namespace {

#if defined(__linux__)
/// The calling thread's voluntary context switches so far: it slept (a futex, a lock) that often.
long voluntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}
#endif

/// Steps every env of `engine` `steps` times, a sleep between batches (a GPU policy's gap: the idle
/// threads' time); the number of games that ended.
int play(sb3ale::Engine& engine, int steps) {
  const int n = engine.num_envs();
  std::string error;
  int ended = 0;
  for (int t = 0; t < steps; ++t) {
    std::vector<int64_t> actions;
    for (int i = 0; i < n; ++i) actions.push_back((t * 7 + i * 3) % 4);
    engine.send(check::ids(n), actions, std::vector<float>(static_cast<size_t>(n), 1.0f), nullptr);
    for (int i : engine.recv(nullptr, error)) ended += engine.result(i).reset;
    CHECK(error.empty());
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  return ended;
}

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

TEST(no_memory_crosses_between_the_idle_threads_and_the_steps) {
  // A block one side allocates and the other frees takes the allocating side's arena lock when it is
  // freed (glibc, above its per-thread caches): an idle thread preempted while it holds its arena's
  // lock would stall a worker's free, and the other way round. So nothing the idle threads allocate
  // is freed on a step's path, nor the other way round, while the envs play (their build and their
  // close aside).
  if (!alloc_probe::available()) {
    std::printf("    skipped: no allocation probe in this build\n");
    return;
  }
  sb3ale::Engine engine(check::configs(4, 200), 2, -1, 0);  // 50 steps a game: many resets ahead
  std::string error;
  engine.send_reset(check::ids(4), check::seeds(4), nullptr);
  engine.recv(nullptr, error);
  play(engine, 200);  // each env's spare made
  alloc_probe::Crossings crossed;
  int ended = 0;
  // Until the idle threads ran many prepares in the window (the pool's worker runs most on an idle
  // machine) or a minute passed (under an emulator, as for AArch64, a game takes seconds).
  constexpr long long kMany = 1000, kSome = 100;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (crossed.idle_allocations < kMany && std::chrono::steady_clock::now() < until) {
    alloc_probe::start();
    ended += play(engine, 100);
    const alloc_probe::Crossings c = alloc_probe::stop();
    crossed.idle_allocations += c.idle_allocations;
    crossed.idle_to_others += c.idle_to_others;
    crossed.others_to_idle += c.others_to_idle;
  }
  std::printf("    %d games ended; idle threads allocated %lld blocks; crossed: %lld to the steps, %lld to them\n",
              ended, static_cast<long long>(crossed.idle_allocations), static_cast<long long>(crossed.idle_to_others),
              static_cast<long long>(crossed.others_to_idle));
  CHECK(crossed.idle_allocations >= kSome);  // they ran: the zeros below are not for want of trying
  CHECK(crossed.idle_to_others == 0);
  CHECK(crossed.others_to_idle == 0);
}

TEST(a_prepare_that_yields_at_every_phase_and_frame_ends_as_one_run_whole) {
  // A pool worker lent a prepare stops it at the next phase or frame once a step is queued (yield);
  // the job is pending again and whoever next has time goes on from there. Yielding at every chance,
  // resumed each time, it prepares exactly what one whole run does: the state, the replay, the frames.
  const sb3ale::EnvConfig config = check::configs(1)[0];
  const auto live = check::live_emulator(config);
  auto job = [&] {
    auto j = check::prepare_from(config, *live);
    for (int k = 0; k < 30; ++k) j->script.actions.push_back(k % 3 == 0 ? ale::PLAYER_A_FIRE : ale::PLAYER_A_NOOP);
    j->script.screens.assign(31, 1);
    j->replay.reserve(31);
    return j;
  };
  const auto whole = job(), pieces = job();
  CHECK(!whole->run());
  CHECK(whole->status.load() == sb3ale::ResetJob::kDone);
  int yields = 0;
  const std::function<bool()> always = [] { return true; };
  while (pieces->run(always)) {
    ++yields;
    CHECK(pieces->status.load() == sb3ale::ResetJob::kPending);
  }
  CHECK(yields == 3 + 30);  // after the check, the emulator and the reset, then after each frame
  CHECK(pieces->take());
  CHECK(pieces->state == whole->state);
  CHECK(pieces->replayed == whole->replayed && whole->replayed == 31);
  for (size_t k = 0; k < whole->replayed; ++k) {
    const sb3ale::ReplayFrame &a = pieces->replay[k], &b = whole->replay[k];
    CHECK(a.screen == b.screen && a.reward == b.reward && a.frames == b.frames && a.lives == b.lives);
  }
}
