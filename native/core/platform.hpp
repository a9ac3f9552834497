// Every call the engine makes to the operating system (threads' priority, affinity and names, the
// process's id, fork), one branch per system in platform.cpp: Linux (what the engine was built and
// measured on), macOS, Windows. The rest of the engine makes no OS call and includes no OS header.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace sb3ale::platform {

/// Lowers the calling thread, for good, to the lowest priority at which it still ends promptly once
/// told to; false where the system refused or has none. Linux: SCHED_BATCH at nice 19; macOS: the
/// background QoS class; Windows: THREAD_PRIORITY_IDLE.
bool lower_to_idle();

/// Names the calling thread as debuggers, top and the tests see it (at most 15 characters: Linux's
/// limit). Best effort: nothing happens where the system cannot.
void name_this_thread(const char* name);

/// The calling thread's name, "" where it cannot be read (for the tests).
std::string this_thread_name();

/// The CPUs this process may run on (its affinity mask: what Ray, Kubernetes or Slurm gave it), in
/// increasing order; never empty. Where there is no mask to read (macOS, or a Windows process spread
/// over processor groups): 0 .. hardware_concurrency() - 1.
std::vector<int> allowed_cpus();

/// Pins `thread` to the CPU `cpu` (one of allowed_cpus()); false where it was not pinned. macOS has
/// no way to pin a thread (its affinity tags are hints, and ignored on Apple silicon): always false.
bool pin_thread(std::thread& thread, int cpu);

/// Linux only (elsewhere -1, {} and false), for ThreadPool's wake-ups (see wake_steering.cpp): the CPU
/// the calling thread runs on now; the calling thread's allowed CPUs, and setting them; `thread`'s
/// allowed CPUs; and allowing `thread` every CPU of `cpus` but `cpu` (false, and nothing done, unless
/// `cpu` is one of several).
int current_cpu();
std::vector<int> this_thread_cpus();
bool this_thread_has_cpus(const std::vector<int>& cpus);  // exactly `cpus`, read without allocating
std::vector<int> thread_cpus(std::thread& thread);
bool set_this_thread_cpus(const std::vector<int>& cpus);
bool keep_off_cpu(std::thread& thread, const std::vector<int>& cpus, int cpu);

/// Linux only (elsewhere -1), for the engine's measure of what the caller's program leaves free
/// (core/caller_load.hpp): a clock of `thread`'s CPU time (read it while the thread exists); that
/// clock's nanoseconds, or -1 where it cannot be read; and the whole process's CPU nanoseconds.
/// Implemented in platform_cpu.cpp.
std::int64_t thread_cpu_clock(std::thread& thread);
std::int64_t cpu_ns(std::int64_t clock);
std::int64_t process_cpu_ns();

/// This process's id: a forked child's differs from its parent's. Windows has no fork.
std::int64_t process_id();

/// pthread_atfork where the system forks (Linux, macOS), nothing on Windows; returns its result (0:
/// registered or nothing to register), so that a namespace-scope constant can register at load.
int at_fork(void (*prepare)(), void (*parent)(), void (*child)());

/// How another thread tells that a (detached) thread has ended. A thread stores mark_this_thread()
/// as it starts and mark_ended() of it as the last thing it does; thread_ended() of the value stored
/// says whether it has ended. On Linux the mark is the kernel's thread id, which the kernel releases
/// only after the thread let go of the address space: exact. Elsewhere no call is sound for a
/// detached thread (pthread_kill on one that ended is undefined, a Windows thread id is reused), so
/// the thread's own last store is the sign: it has nothing of ours left to run, only the C library's
/// and the system's thread exit.
std::int64_t mark_this_thread();
std::int64_t mark_ended(std::int64_t mark);
bool thread_ended(std::int64_t mark);

/// A count of wake-ups, at most `max`, for threads that sleep until there may be work (the idle
/// threads). post() never blocks and never waits for a woken thread to run: a futex word on Linux, a
/// kernel semaphore on Windows, a dispatch semaphore on macOS (a condition variable's notify can, in
/// glibc: it waits for the waiters it woke before to have run). Implemented in platform_wakeup.cpp.
class Wakeup {
 public:
  explicit Wakeup(int max);
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;
  /// Adds `n` wake-ups (the count stays at most `max`), waking as many sleepers.
  void post(int n = 1);
  /// Takes one wake-up, sleeping until there is one: true; false once `timeout` passed with none.
  bool wait_for(std::chrono::milliseconds timeout);

 private:
  bool try_take();
  const int max_;
  std::atomic<int> count_{0};     // wake-ups posted and not taken (Linux: the futex word)
  std::atomic<int> sleepers_{0};  // threads inside wait_for's sleep: post() skips the system call without
  void* handle_ = nullptr;        // Windows: the semaphore; macOS: the dispatch semaphore
};

}  // namespace sb3ale::platform
