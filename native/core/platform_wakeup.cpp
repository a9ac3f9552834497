// platform::Wakeup, one branch per system (see platform.hpp). Its count is an atomic here on every
// system; the system's object only puts a thread to sleep and wakes it, and its post never blocks.
#include "core/platform.hpp"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#elif defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <dispatch/dispatch.h>
#endif

#include <climits>
#include <cstdint>

namespace sb3ale::platform {

#if defined(__linux__)
static_assert(sizeof(std::atomic<int>) == sizeof(int) && std::atomic<int>::is_always_lock_free,
              "the futex word is the atomic's int");
#endif

Wakeup::Wakeup(int max) : max_(max < 1 ? 1 : max) {
#if defined(_WIN32)
  handle_ = CreateSemaphoreW(nullptr, 0, LONG_MAX, nullptr);  // null: wait_for polls (see below)
#elif defined(__APPLE__)
  handle_ = dispatch_semaphore_create(0);
#endif
}

Wakeup::~Wakeup() {
#if defined(_WIN32)
  if (handle_ != nullptr) CloseHandle(static_cast<HANDLE>(handle_));
#elif defined(__APPLE__)
  if (handle_ != nullptr) dispatch_release(static_cast<dispatch_semaphore_t>(handle_));
#endif
}

bool Wakeup::try_take() {
  int c = count_.load();
  while (c > 0) {
    if (count_.compare_exchange_weak(c, c - 1)) return true;
  }
  return false;
}

void Wakeup::post(int n) {
  int c = count_.load(), added = 0;
  do {  // never above max_: wake-ups no thread will take would only wake threads for nothing later
    added = n < max_ - c ? n : max_ - c;
    if (added <= 0) return;
  } while (!count_.compare_exchange_weak(c, c + added));
  // A sleeper counted after this read found the count changed (its sleep returns at once): none missed.
  const int sleepers = sleepers_.load();
  if (sleepers == 0) return;
  const int wake = added < sleepers ? added : sleepers;
#if defined(__linux__)
  // FUTEX_WAKE marks the sleepers runnable and returns: it never waits for them to run.
  syscall(SYS_futex, reinterpret_cast<int*>(&count_), FUTEX_WAKE_PRIVATE, wake, nullptr, nullptr, 0);
#elif defined(_WIN32)
  if (handle_ != nullptr) ReleaseSemaphore(static_cast<HANDLE>(handle_), wake, nullptr);
#elif defined(__APPLE__)
  for (int k = 0; k < wake; ++k) dispatch_semaphore_signal(static_cast<dispatch_semaphore_t>(handle_));
#else
  (void)wake;  // elsewhere wait_for polls
#endif
}

bool Wakeup::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (try_take()) return true;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    sleepers_.fetch_add(1);
#if defined(__linux__)
    // Sleeps only while the count is still 0: a post between the look above and here returns at once.
    timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    syscall(SYS_futex, reinterpret_cast<int*>(&count_), FUTEX_WAIT_PRIVATE, 0, &wait, nullptr, 0);
#elif defined(_WIN32)
    // A signal left over from a post whose count another thread took wakes this once for nothing.
    if (handle_ != nullptr) {
      WaitForSingleObject(static_cast<HANDLE>(handle_), static_cast<DWORD>(ns / 1000000 + 1));
    } else {
      Sleep(1);
    }
#elif defined(__APPLE__)
    dispatch_semaphore_wait(static_cast<dispatch_semaphore_t>(handle_), dispatch_time(DISPATCH_TIME_NOW, ns));
#else
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
#endif
    sleepers_.fetch_sub(1);
  }
}

}  // namespace sb3ale::platform
