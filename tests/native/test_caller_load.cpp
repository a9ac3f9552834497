// CallerLoad: the pool's workers lend their time between batches only where the caller's program
// leaves a CPU free. Its verdict from the CPU time of the gaps; the pool obeying it; an engine whose
// caller fills its CPUs between batches (as a CPU policy's forward pass does) and one that sleeps.
#include <atomic>
#include <chrono>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/caller_load.hpp"
#include "core/engine.hpp"
#include "core/platform.hpp"
#include "core/thread_pool.hpp"
#include "check.hpp"
#include "envs.hpp"

using sb3ale::CallerLoad;
using sb3ale::ThreadPool;

TEST(the_verdict_is_whether_the_caller_left_a_cpu_free_in_the_last_gaps) {
  constexpr std::int64_t ms = 1000000;
  CallerLoad load(2, {});
  CHECK(load.free());  // nothing measured yet: lend, as always
  for (int gap = 0; gap < 30; ++gap) load.add(ms, 2 * ms, 0);  // a torch thread on each CPU
  CHECK(!load.free());
  for (int gap = 0; gap < 30; ++gap) load.add(ms, ms / 5, 0);  // a GPU policy: the caller mostly waits
  CHECK(load.free());
  for (int gap = 0; gap < 30; ++gap) load.add(ms, ms, 0);  // one busy thread of two CPUs: one left
  CHECK(load.free());
  for (int gap = 0; gap < 30; ++gap) load.add(ms, 2 * ms, 3 * ms / 2);  // most of it ours: not the caller's
  CHECK(load.free());
  for (int gap = 0; gap < 30; ++gap) load.add(ms, 3 * ms / 2, 0);  // half a CPU left: too little
  CHECK(!load.free());
  load.add(ms, 0, 0);  // one idle gap among busy ones does not turn it: smoothed
  CHECK(!load.free());
  load.add(100 * ms, 0, 0);  // but a long one counts as long as it lasts
  CHECK(load.free());
}

TEST(no_worker_takes_up_idle_work_between_batches_unless_lending_is_on) {
  for (const bool lend : {false, true}) {
    // `between`: set by the caller from each batch's take() to the next submit, when no task runs.
    std::atomic<bool> between_batches{false};
    std::atomic<int> between{0}, behind{0};
    ThreadPool pool(
        3, -1,
        [&](int i) { std::this_thread::sleep_for(std::chrono::microseconds(i == 0 ? 2000 : 20)); },  // one slow env
        [&](const std::function<bool()>&) {
          (between_batches.load() ? between : behind).fetch_add(1);
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          return true;  // always more to do
        });
    pool.lend_between(lend);
    std::vector<int> all(16);
    std::iota(all.begin(), all.end(), 0);
    for (int round = 0; round < 20; ++round) {
      between_batches.store(false);
      pool.submit(all);
      pool.wait(static_cast<int>(all.size()));
      CHECK(pool.take(static_cast<int>(all.size())).size() == all.size());
      between_batches.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the caller's program between batches
    }
    pool.shutdown();
    std::printf("    lend_between(%d): %d pieces behind batches, %d begun between them\n", lend, behind.load(),
                between.load());
    CHECK(behind.load() >= 20);  // behind each batch's slow env, either way
    if (lend) {
      CHECK(between.load() >= 20);  // 2 ms between batches, 2 workers
    } else {
      // At most the piece each worker was starting as its batch's last env ended (a fast piece loops,
      // but it asks the pool again before each one).
      CHECK(between.load() <= 2 * 20);
    }
  }
}

#if defined(__linux__)
TEST(an_engine_lends_between_batches_only_while_its_caller_leaves_a_cpu_free) {
  // On one CPU (the process's mask for this test), a caller whose threads fill it, and one that sleeps
  // between batches: the engine's workers stop lending between batches, then lend again.
  const std::vector<int> cpus = sb3ale::platform::this_thread_cpus();
  sb3ale::platform::set_this_thread_cpus({cpus.front()});
  {
    sb3ale::Engine engine(check::configs(4, 200), 2, -1, 0);
    engine.set_reset_ahead(true);
    std::string error;
    engine.send_reset(check::ids(4), check::seeds(4), nullptr);
    engine.recv(nullptr, error);
    auto play = [&](const std::function<void()>& between) {
      for (int t = 0; t < 60; ++t) {
        engine.send(check::ids(4), std::vector<int64_t>(4, t % 4), std::vector<float>(4, 1.0f), nullptr);
        engine.recv(nullptr, error);
        between();
      }
    };
    // A CPU policy on every core: here 8 threads of the caller's spin throughout, so that its process
    // holds most of that CPU even beside other programs (the engine sees only its own process's time).
    std::atomic<bool> spin{true};
    std::vector<std::thread> policy;
    for (int k = 0; k < 8; ++k) {
      policy.emplace_back([&spin] {
        while (spin.load(std::memory_order_relaxed)) {
        }
      });
    }
    bool after_busy = true;
    for (int round = 0; round < 10 && after_busy; ++round) {
      play([] {});
      after_busy = engine.lends_between();
    }
    spin.store(false);
    for (auto& thread : policy) thread.join();
    for (int round = 0; round < 10 && !engine.lends_between(); ++round) {
      play([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });  // a GPU policy's wait
    }
    std::printf("    lends between batches: %d after a busy caller, %d after a sleeping one\n", after_busy,
                engine.lends_between());
    CHECK(!after_busy);
    CHECK(engine.lends_between());
    CHECK(error.empty());
  }
  sb3ale::platform::set_this_thread_cpus(cpus);
}
#endif
