// The CPU-time clocks of platform.hpp: Linux's per-thread CPU clocks (pthread_getcpuclockid) and the
// process's. Elsewhere none (-1): the engine then lends idle work between batches as it always may.
#include "core/platform.hpp"

#if defined(__linux__)
#include <pthread.h>
#include <time.h>
#endif

namespace sb3ale::platform {

#if defined(__linux__)
namespace {
std::int64_t read_ns(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return -1;  // a thread that ended: its clock is gone (EINVAL)
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

std::int64_t thread_cpu_clock(std::thread& thread) {
  clockid_t clock{};
  if (pthread_getcpuclockid(thread.native_handle(), &clock) != 0) return -1;
  return static_cast<std::int64_t>(clock);  // a negative number on Linux: -1 is never one of them
}

std::int64_t cpu_ns(std::int64_t clock) { return clock == -1 ? -1 : read_ns(static_cast<clockid_t>(clock)); }

std::int64_t process_cpu_ns() { return read_ns(CLOCK_PROCESS_CPUTIME_ID); }
#else
std::int64_t thread_cpu_clock(std::thread&) { return -1; }
std::int64_t cpu_ns(std::int64_t) { return -1; }
std::int64_t process_cpu_ns() { return -1; }
#endif

}  // namespace sb3ale::platform
