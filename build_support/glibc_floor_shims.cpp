// glibc_floor_shims.cpp - what a portable Linux wheel (SB3_ALE_VEC_PORTABLE=1) defines itself because
// the glibc of its floor (build_support/glibc_floor.py: 2.28) lacks it, and GCC 12's libstdc++ (linked
// in statically there) or its headers call it. Each is hidden: it serves this extension only and never
// interposes on the process's glibc. Compiled into the extension by setup.py in that build only.
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "glibc_floor_shims.cpp: stat() below assumes struct stat is the kernel's (x86-64, AArch64)"
#endif

#define SB3_FLOOR_SHIM extern "C" __attribute__((visibility("hidden")))

// glibc 2.32's flag that the process has one thread, which libstdc++'s reference counts read to skip
// atomics. Never set here: every count stays atomic, correct whatever the process does.
extern "C" {
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}

// glibc 2.30: what std::condition_variable's waits on std::chrono::steady_clock call. Before it,
// libstdc++ waited on the realtime clock: the same here, the deadline moved onto that clock.
SB3_FLOOR_SHIM int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                          const struct timespec* abstime) {
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) return EINVAL;
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  timespec now_clock{}, now_real{};
  clock_gettime(clock, &now_clock);
  clock_gettime(CLOCK_REALTIME, &now_real);
  const int64_t left = (abstime->tv_sec - now_clock.tv_sec) * 1000000000LL + (abstime->tv_nsec - now_clock.tv_nsec);
  const int64_t deadline = now_real.tv_sec * 1000000000LL + now_real.tv_nsec + (left > 0 ? left : 0);
  const timespec real{static_cast<time_t>(deadline / 1000000000LL), static_cast<long>(deadline % 1000000000LL)};
  return pthread_cond_timedwait(cond, mutex, &real);
}

// glibc 2.36: one of std::random_device's sources in libstdc++. getentropy is glibc 2.25's.
SB3_FLOOR_SHIM uint32_t arc4random(void) {
  uint32_t value = 0;
  while (getentropy(&value, sizeof value) != 0) {
  }
  return value;
}

// glibc 2.33: stat, lstat and fstat as functions (before, inline wrappers of __xstat and friends in
// glibc's headers). ALE's file checks call them. On x86-64 and AArch64 glibc's struct stat is the
// kernel's, so the system call fills it directly.
SB3_FLOOR_SHIM int stat(const char* path, struct stat* out) {
  return static_cast<int>(syscall(SYS_newfstatat, AT_FDCWD, path, out, 0));
}
SB3_FLOOR_SHIM int lstat(const char* path, struct stat* out) {
  return static_cast<int>(syscall(SYS_newfstatat, AT_FDCWD, path, out, AT_SYMLINK_NOFOLLOW));
}
SB3_FLOOR_SHIM int fstat64(int fd, struct stat64* out) {
  return static_cast<int>(syscall(SYS_newfstatat, fd, "", out, AT_EMPTY_PATH));
}
SB3_FLOOR_SHIM int fstat(int fd, struct stat* out) {
  return static_cast<int>(syscall(SYS_newfstatat, fd, "", out, AT_EMPTY_PATH));
}
