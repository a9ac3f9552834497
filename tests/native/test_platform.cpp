// The platform layer (native/core/platform.*), on whichever system this runs: each call does what the
// engine relies on, or its documented nothing where the system has no such thing.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <fstream>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#endif

#include "core/background.hpp"
#include "core/exit_registry.hpp"
#include "core/platform.hpp"
#include "check.hpp"

namespace platform = sb3ale::platform;

namespace {

#if defined(__linux__)
constexpr bool kLinux = true;
#else
constexpr bool kLinux = false;
#endif

/// This process's threads named `name` (Linux's /proc; 0 elsewhere).
int count_threads(const std::string& name) {
  int n = 0;
#if defined(__linux__)
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  while (const dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + task->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++n;
  }
  closedir(tasks);
#else
  (void)name;
#endif
  return n;
}

// The systems with a branch of their own in platform.cpp: each of their calls must work there.
#if defined(__linux__) || defined(__APPLE__) || defined(_WIN32)
constexpr bool kKnownSystem = true;
#else
constexpr bool kKnownSystem = false;
#endif
#if defined(__linux__) || defined(_WIN32)
constexpr bool kCanPin = true;
#else
constexpr bool kCanPin = false;  // macOS has no affinity API
#endif

}  // namespace

TEST(allowed_cpus_are_distinct_increasing_and_never_empty) {
  const std::vector<int> cpus = platform::allowed_cpus();
  CHECK(!cpus.empty());
  CHECK(std::is_sorted(cpus.begin(), cpus.end()));
  CHECK(std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end());
  CHECK(cpus.front() >= 0);
  std::printf("     allowed cpus: %zu (hardware_concurrency %u)\n", cpus.size(), std::thread::hardware_concurrency());
}

TEST(a_thread_is_named_lowered_and_pinned) {
  bool lowered = false;
  std::string name;
  std::atomic<bool> release{false};
  std::thread thread([&] {
    platform::name_this_thread("sb3ale-test");
    name = platform::this_thread_name();
    lowered = platform::lower_to_idle();
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // alive while pinned
  });
  const bool pinned = platform::pin_thread(thread, platform::allowed_cpus().back());
  release.store(true);
  thread.join();
  if (kKnownSystem) {
    CHECK(name == "sb3ale-test");
    CHECK(lowered);
  }
  CHECK(pinned == kCanPin);
}

TEST(a_thread_is_kept_off_one_cpu_and_takes_its_cpus_back) {
  const std::vector<int> cpus = platform::this_thread_cpus();
  CHECK((platform::current_cpu() >= 0) == kLinux);
  CHECK(cpus == (kLinux ? platform::allowed_cpus() : std::vector<int>{}));
  std::atomic<int> step{0};
  std::vector<int> kept, back;
  std::thread thread([&] {
    while (step.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kept = platform::this_thread_cpus();
    platform::set_this_thread_cpus(cpus);
    back = platform::this_thread_cpus();
  });
  const int off = cpus.empty() ? 0 : cpus.front();
  CHECK(!platform::keep_off_cpu(thread, cpus, -1));  // not one of them: nothing done
  CHECK(platform::keep_off_cpu(thread, cpus, off) == (kLinux && cpus.size() > 1));
  step.store(1);
  thread.join();
  if (kLinux && cpus.size() > 1) {
    CHECK(std::find(kept.begin(), kept.end(), off) == kept.end());
    CHECK(kept.size() + 1 == cpus.size());
    CHECK(back == cpus);
  }
}

TEST(the_process_id_is_the_same_on_every_thread) {
  const std::int64_t id = platform::process_id();
  std::int64_t on_thread = 0;
  std::thread([&] { on_thread = platform::process_id(); }).join();
  CHECK(id > 0);
  CHECK(on_thread == id);
}

TEST(a_thread_that_ended_is_seen_ended_and_a_running_one_is_not) {
  std::int64_t started = 0, ended = 0;
  std::thread thread([&] {
    started = platform::mark_this_thread();
    ended = platform::mark_ended(started);
  });
  thread.join();
  CHECK(started != 0);
  CHECK(ended != 0);
  CHECK(!platform::thread_ended(platform::mark_this_thread()));  // this thread runs
  // Linux's kernel releases a joined thread's id moments after the join returns.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!platform::thread_ended(ended) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(platform::thread_ended(ended));
}

TEST(the_exit_stops_every_idle_thread_within_its_grace) {
  // Pinned idle threads (affinity 0) of a Background still alive, one job waiting (held, so that no
  // thread starts it): the interpreter exit's stop_all() abandons the job, tells the threads to stop
  // and returns once they are gone, never later than its grace (plus a loaded machine's scheduling).
  // A stop_all() that did nothing would leave both threads waiting for good and the job queued.
  sb3ale::Background background(2, 1, 0);
  auto job = std::make_shared<sb3ale::ResetJob>();
  background.hold(true);
  background.submit(0, job);
  const auto start = std::chrono::steady_clock::now();
  while (count_threads("sb3ale-idle") < 2 && kLinux && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto stopping = std::chrono::steady_clock::now();
  sb3ale::exit_registry::stop_all();
  const auto took = std::chrono::steady_clock::now() - stopping;
  CHECK(job->status.load() == sb3ale::ResetJob::kAbandoned);
  CHECK(took < sb3ale::exit_registry::kExitGrace + std::chrono::milliseconds(200));
  // Told to stop, they end: within the grace on an idle machine, later under a sanitizer on a loaded
  // one (seen: past 300 ms under TSan in CI). Never told, they would wait for work for good.
  const auto told = std::chrono::steady_clock::now();
  while (count_threads("sb3ale-idle") > 0 && std::chrono::steady_clock::now() - told < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(count_threads("sb3ale-idle") == 0);  // 0 where threads cannot be counted (not Linux)
  std::printf("     stop_all took %.1f ms\n", std::chrono::duration<double, std::milli>(took).count());
}
