// ThreadPool: every index runs once, on the caller too; waits, time-outs, cancel, a thread that cannot
// start. Background: jobs at idle priority, and no wait for them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#include <pthread.h>  // defines __GLIBC__ where glibc's pthread_setattr_default_np is there
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#endif

#include "core/background.hpp"
#include "core/platform.hpp"
#include "core/thread_pool.hpp"
#include "core/wake_steering.hpp"
#include "env/ale_state.hpp"
#include "check.hpp"
#include "envs.hpp"

using sb3ale::Background;
using sb3ale::ThreadPool;

namespace {

/// Linux: the scheduling policy and nice value of this process's threads named `name`, as the
/// kernel has them now (elsewhere: none).
std::vector<std::pair<int, int>> priorities_of(const std::string& name) {
  std::vector<std::pair<int, int>> found;
#if defined(__linux__)
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return found;
  while (const dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + task->d_name + "/comm");
    std::string line;
    if (!std::getline(comm, line) || line != name) continue;
    const int tid = std::atoi(task->d_name);
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
    found.emplace_back(sched_getscheduler(tid), errno == 0 ? nice : -100);
  }
  closedir(tasks);
#else
  (void)name;
#endif
  return found;
}

}  // namespace

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

TEST(shutdown_stops_a_lent_piece_at_its_next_check) {
  // A worker lent a long piece of idle work (a prepare's ROM load and reset: milliseconds, more under
  // load) is told to stop by its predicate once shutdown() begins: close() waits for one phase, not all.
  std::atomic<bool> started{false};
  const auto piece = std::chrono::seconds(5);
  ThreadPool pool(2, -1, [](int) {}, [&](const std::function<bool()>& stop) {
    started.store(true);
    const auto until = std::chrono::steady_clock::now() + piece;
    while (!stop() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  });
  while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto begun = std::chrono::steady_clock::now();
  pool.shutdown();
  CHECK(std::chrono::steady_clock::now() - begun < piece / 2);  // not the piece's whole length
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

TEST(idle_work_runs_on_workers_between_tasks_never_on_the_caller) {
  std::atomic<int> pieces{0}, on_caller{0};
  std::atomic<int> left{50};  // pieces of background work to do
  std::vector<std::atomic<int>> runs(64);
  ThreadPool pool(
      3, -1, [&](int i) { runs[static_cast<size_t>(i)].fetch_add(1); },
      [&](const std::function<bool()>&) {
        if (ThreadPool::current_thread() == 0) on_caller.fetch_add(1);
        if (left.fetch_sub(1) <= 0) return false;
        pieces.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        return true;
      });
  std::vector<int> all(runs.size());
  std::iota(all.begin(), all.end(), 0);
  for (int round = 0; round < 20; ++round) {
    pool.submit(all);
    pool.wait(static_cast<int>(all.size()));
    CHECK(pool.take(static_cast<int>(all.size())).size() == all.size());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pieces.load() < 50 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(pieces.load() == 50);  // the workers did it all, between batches and after them
  CHECK(on_caller.load() == 0);
  CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r.load() == 20; }));
}

TEST(a_worker_woken_after_a_gap_runs_on_every_cpu_it_had) {
  // The caller keeps a sleeping worker off its own CPU for the wake-up (thread_pool.cpp): the worker
  // must have all its CPUs back before it runs a task, and keep them after.
  const std::vector<int> cpus = sb3ale::platform::this_thread_cpus();
  std::vector<std::vector<int>> seen;  // a worker's CPUs, at each of its tasks (one worker: no race)
  ThreadPool pool(2, -1, [&](int) {
    if (ThreadPool::current_thread() != 0) seen.push_back(sb3ale::platform::this_thread_cpus());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // so that the worker takes some too
  });
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the worker's spin: it sleeps
    pool.submit({0, 1, 2, 3});
    pool.wait(4);
    pool.take(4);
  }
  // Where there are CPUs to read (Linux) the worker must have run tasks (Wine's wake-ups are slow).
  CHECK(!seen.empty() || cpus.empty());
  CHECK(std::all_of(seen.begin(), seen.end(), [&](const std::vector<int>& s) { return s == cpus; }));
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

// Only glibc can make every new thread fail to start (a default stack no machine maps): elsewhere
// (macOS, Windows, musl) this test is left out.
#if defined(__GLIBC__)
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
#endif

TEST(background_jobs_run_at_idle_priority_and_nobody_waits_for_them) {
  const sb3ale::EnvConfig config = check::configs(1)[0];
  const auto live = check::live_emulator(config);
  auto job = [&] { return check::prepare_from(config, *live); };
  const auto done = job(), dropped = job(), replaced = job();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // idle time may be scarce
  std::chrono::steady_clock::time_point closing;
  {
    Background background(1, 2, -1);
    CHECK(background.idle_priority());
    background.submit(0, done);  // never waits, never refuses
    while (done->status.load() != sb3ale::ResetJob::kDone && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(done->take());
    // The thread that ran it lowered itself before it took any job: SCHED_BATCH at nice 19 on Linux.
#if defined(__linux__)
    CHECK(priorities_of("sb3ale-idle") == (std::vector<std::pair<int, int>>{{SCHED_BATCH, 19}}));
#endif
    background.hold(true);
    background.submit(1, replaced);
    background.submit(1, dropped);  // its env gave up on the one before: replaced, abandoned
    CHECK(replaced->status.load() == sb3ale::ResetJob::kAbandoned);
    CHECK(!background.idle());
    CHECK(dropped->reclaim());  // as an env's reset that comes first does: nobody started it
    // Only the close (the scope's end) is timed: it tells the thread to stop and returns, whatever the
    // thread is doing (the reset below is the emulator's own time, seconds under qemu on a busy machine).
    closing = std::chrono::steady_clock::now();
  }
  const auto closed = std::chrono::steady_clock::now();
  CHECK(!dropped->take());  // never taken once reclaimed, whatever the thread did with it
  // The job reset from `base` exactly as the live emulator resets itself.
  live->reset_game();
  CHECK(done->state == sb3ale::state_of(*live));
  CHECK(closed - closing < std::chrono::seconds(1));
}

TEST(a_steered_worker_moved_before_it_wakes_keeps_the_move) {
  // WakeSteering alone, step by step: the caller steers a sleeping worker off one CPU, someone else
  // (taskset, a scheduler) moves it, then it wakes: the move stands. And one not moved gets its CPUs
  // back. Where there is no mask to steer (not Linux, or one CPU) nothing is steered.
  const std::vector<int> cpus = sb3ale::platform::this_thread_cpus();
  const bool can = cpus.size() >= 2;
  for (const bool moved : {true, false}) {
    sb3ale::WakeSteering steering(1, true);
    std::atomic<bool> woken{false};
    std::vector<int> after;
    std::vector<std::thread> threads;
    steering.asleep(0);
    threads.emplace_back([&] {
      while (!woken.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      steering.awake(0);
      after = sb3ale::platform::this_thread_cpus();
    });
    if (can) steering.steer(threads, cpus[0]);  // the caller keeps it off cpus[0]
    CHECK(steering.steered() == (can ? 1 : 0));
    std::vector<int> expected = cpus;
    if (can && moved) {  // someone else moves it off cpus[1] instead
      CHECK(sb3ale::platform::keep_off_cpu(threads[0], cpus, cpus[1]));
      expected.erase(std::find(expected.begin(), expected.end(), cpus[1]));
    }
    woken.store(true);
    threads[0].join();
    CHECK(after == expected);
  }
}
