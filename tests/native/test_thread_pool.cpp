// ThreadPool: every index runs once, on the caller too; waits, time-outs, cancel, a thread that cannot
// start. Background: tasks at idle priority, queued once, dropped, never beside themselves.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/background.hpp"
#include "core/thread_pool.hpp"
#include "check.hpp"

using sb3ale::Background;
using sb3ale::ThreadPool;

TEST(every_index_runs_once_on_any_thread_count) {
  for (int threads : {1, 2, 4}) {
    std::vector<std::atomic<int>> runs(1000);
    ThreadPool pool(threads, -1, [&](int i) { runs[static_cast<size_t>(i)].fetch_add(1); });
    CHECK(pool.size() == threads);
    std::vector<int> all(runs.size());
    std::iota(all.begin(), all.end(), 0);
    for (int round = 0; round < 3; ++round) {
      pool.submit(all);
      pool.wait(static_cast<int>(all.size()));
      std::vector<int> taken = pool.take(static_cast<int>(all.size()));
      std::sort(taken.begin(), taken.end());
      CHECK(taken == all);
    }
    CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r.load() == 3; }));
  }
}

TEST(one_thread_means_the_caller_runs_every_task_in_order) {
  std::vector<int> order, threads;
  ThreadPool pool(1, -1, [&](int i) {
    order.push_back(i);
    threads.push_back(ThreadPool::current_thread());
  });
  pool.submit({3, 1, 2});
  pool.wait(3);
  CHECK(order == (std::vector<int>{3, 1, 2}));
  CHECK(pool.take(3) == (std::vector<int>{3, 1, 2}));  // finished order
  CHECK(std::all_of(threads.begin(), threads.end(), [](int t) { return t == 0; }));
}

TEST(take_returns_what_finished_and_no_more) {
  ThreadPool pool(2, -1, [](int) {});
  pool.submit({0, 1, 2, 3});
  pool.wait(4);
  CHECK(pool.take(2).size() == 2);
  CHECK(pool.take(5).size() == 2);
  CHECK(pool.take(1).empty());
}

TEST(wait_for_times_out_on_a_running_task_then_succeeds) {
  std::atomic<bool> started{false}, release{false};
  ThreadPool pool(2, -1, [&](int) {
    started.store(true);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  pool.submit({0});
  while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // on the worker
  CHECK(!pool.wait_for(1, std::chrono::milliseconds(20)));
  CHECK(pool.take(1).empty());
  release.store(true);
  CHECK(pool.wait_for(1, std::chrono::milliseconds(10000)));
  CHECK(pool.take(1) == std::vector<int>{0});
}

TEST(cancel_drops_queued_tasks_and_waits_for_running_ones) {
  std::atomic<int> started{0}, finished{0};
  std::atomic<bool> release{false};
  ThreadPool pool(3, -1, [&](int) {
    started.fetch_add(1);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    finished.fetch_add(1);
  });
  std::vector<int> all(20);
  std::iota(all.begin(), all.end(), 0);
  pool.submit(all);  // two workers take one task each and block; the caller is not waiting
  while (started.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release.store(true);
  });
  const std::vector<int> dropped = pool.cancel();
  opener.join();
  CHECK(dropped.size() == 18);
  CHECK(finished.load() == 2);  // cancel() returned only after the running tasks finished
  std::vector<int> done = pool.take(20);
  CHECK(done.size() == 2);
  std::set<int> every(dropped.begin(), dropped.end());
  every.insert(done.begin(), done.end());
  CHECK(every.size() == 20);
}

TEST(a_thread_that_cannot_start_is_an_exception_not_a_crash) {
  // Every new thread asks for a 128 TiB stack, all of user space: no machine maps it, so pthread_create fails.
  pthread_attr_t huge, before;
  pthread_getattr_default_np(&before);
  pthread_attr_init(&huge);
  pthread_attr_setstacksize(&huge, size_t{1} << 47);
  pthread_setattr_default_np(&huge);
  bool threw = false;
  try {
    ThreadPool pool(4, -1, [](int) {});
  } catch (const std::runtime_error& e) {
    threw = std::string(e.what()).find("could not start worker thread") != std::string::npos;
  }
  pthread_setattr_default_np(&before);
  pthread_attr_destroy(&huge);
  pthread_attr_destroy(&before);
  CHECK(threw);
  ThreadPool pool(3, -1, [](int) {});  // and the process goes on starting threads afterwards
  pool.submit({0, 1, 2});
  pool.wait(3);
  CHECK(pool.take(3).size() == 3);
}

TEST(background_tasks_run_at_idle_priority_once_each_and_can_be_dropped) {
  std::atomic<int> runs{0}, beside{0}, inside{0}, idle{0};
  std::atomic<bool> started{false}, release{false};
  {
    Background background(2, -1, [&](int i) {
      int policy = 0;
      sched_param param{};
      if (pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_IDLE) idle.fetch_add(1);
      if (inside.fetch_add(1) > 0 && i == 0) beside.fetch_add(1);
      if (i == 0) {
        started.store(true);
        while (!release.load()) std::this_thread::yield();
      }
      inside.fetch_sub(1);
      runs.fetch_add(1);
    });
    CHECK(background.idle_priority());
    background.submit(0);  // held inside until released
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    CHECK(started.load());
    background.submit(0);  // queued again while it runs: it runs after, never beside itself
    background.submit(1);
    background.submit(1);  // queued once
    background.drop(1);    // dropped before it ran (the second thread may have started it: then waited)
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      release.store(true);
    });
    background.drop(0);  // waits for the running one and drops the queued one
    releaser.join();
    const int after_drop = runs.load();
    CHECK(after_drop >= 1 && after_drop <= 2);  // 0 once; 1 at most once, if it started before drop
    background.submit(2);
    while (runs.load() < after_drop + 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    CHECK(runs.load() == after_drop + 1);
  }  // joined here
  CHECK(beside.load() == 0 && idle.load() == runs.load());
}
