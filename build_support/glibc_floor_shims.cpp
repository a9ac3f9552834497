// glibc_floor_shims.cpp - what a portable Linux wheel (SB3_ALE_VEC_PORTABLE=1) defines itself because
// the glibc of its floor (build_support/glibc_floor.py: 2.28) lacks it, and GCC 12's libstdc++ (linked
// in statically there) or its headers call it. Each is hidden: it serves this extension only and never
// interposes on the process's glibc. Compiled into the extension by setup.py in that build only.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <limits>
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
  constexpr long kBillion = 1000000000L;
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) return EINVAL;
  if (abstime->tv_nsec < 0 || abstime->tv_nsec >= kBillion) return EINVAL;
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  timespec now_clock{}, now_real{};
  clock_gettime(clock, &now_clock);
  clock_gettime(CLOCK_REALTIME, &now_real);
  // Seconds and nanoseconds apart, saturated: a far deadline (wait_until(time_point::max())) waits for good.
  const long borrow = abstime->tv_nsec < now_clock.tv_nsec ? 1 : 0;
  time_t left_sec = 0;
  long left_nsec = abstime->tv_nsec - now_clock.tv_nsec + borrow * kBillion;
  if (__builtin_sub_overflow(abstime->tv_sec, now_clock.tv_sec, &left_sec) ||
      __builtin_sub_overflow(left_sec, borrow, &left_sec) || left_sec < 0) {
    left_sec = 0;  // past (an overflow here is a deadline before the clock's start)
    left_nsec = 0;
  }
  const long nsec = now_real.tv_nsec + left_nsec;
  const long carry = nsec >= kBillion ? 1 : 0;
  timespec real{0, nsec - carry * kBillion};
  if (__builtin_add_overflow(now_real.tv_sec, left_sec, &real.tv_sec) ||
      __builtin_add_overflow(real.tv_sec, carry, &real.tv_sec)) {
    real = {std::numeric_limits<time_t>::max(), kBillion - 1};
  }
  return pthread_cond_timedwait(cond, mutex, &real);
}

// glibc 2.36: one of std::random_device's sources in libstdc++. getentropy is glibc 2.25's. Where it
// fails (a seccomp profile refusing getrandom with ENOSYS or EPERM), /dev/urandom, as libbsd's does;
// with neither, abort saying so, as glibc's own arc4random does: it has no way to report an error.
SB3_FLOOR_SHIM uint32_t arc4random(void) {
  uint32_t value = 0;
  if (getentropy(&value, sizeof value) == 0) return value;
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  size_t got = 0;
  while (fd >= 0 && got < sizeof value) {
    const ssize_t n = read(fd, reinterpret_cast<char*>(&value) + got, sizeof value - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  if (fd >= 0) close(fd);
  if (got == sizeof value) return value;
  static const char kMessage[] = "sb3-ale-vec: arc4random cannot get entropy (getrandom and /dev/urandom failed)\n";
  const ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  static_cast<void>(ignored);
  abort();
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
// A negative fd fails with EBADF, as glibc's fstat checks first: newfstatat would take -100 for AT_FDCWD.
SB3_FLOOR_SHIM int fstat64(int fd, struct stat64* out) {
  if (fd < 0) {
    errno = EBADF;
    return -1;
  }
  return static_cast<int>(syscall(SYS_newfstatat, fd, "", out, AT_EMPTY_PATH));
}
SB3_FLOOR_SHIM int fstat(int fd, struct stat* out) {
  if (fd < 0) {
    errno = EBADF;
    return -1;
  }
  return static_cast<int>(syscall(SYS_newfstatat, fd, "", out, AT_EMPTY_PATH));
}
