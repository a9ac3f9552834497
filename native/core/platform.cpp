#include "core/platform.hpp"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <pthread/qos.h>
#endif
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sb3ale::platform {

namespace {

#if defined(_WIN32)
// SetThreadDescription and GetThreadDescription: Windows 10 1607 and later (and Wine) have them, and
// MinGW-w64's headers may not declare them: looked up at run time, nullptr where missing.
using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
using GetDescription = HRESULT(WINAPI*)(HANDLE, PWSTR*);

template <typename Fn>
Fn kernel32(const char* name) {
  const HMODULE module = GetModuleHandleW(L"kernel32.dll");
  const FARPROC proc = module != nullptr ? GetProcAddress(module, name) : nullptr;
  // Through void (*)(), which GCC's -Wcast-function-type allows: `proc` has Fn's type.
  return reinterpret_cast<Fn>(reinterpret_cast<void (*)()>(proc));
}

// The Win32 handle behind a std::thread, nullptr where this C++ library's is unknown.
HANDLE handle_of(std::thread& thread) {
#if defined(__WINPTHREADS_VERSION)  // libstdc++ on winpthreads (MinGW-w64's "posix" thread model)
  return static_cast<HANDLE>(pthread_gethandle(thread.native_handle()));
#elif defined(_MSC_VER) || defined(_LIBCPP_VERSION)  // their std::thread holds the handle itself
  return static_cast<HANDLE>(thread.native_handle());
#else
  (void)thread;
  return nullptr;
#endif
}
#endif

#if !defined(__linux__)
constexpr std::int64_t kRunning = 1, kEnded = -1;  // the marks where the thread tells (see the header)
#endif

}  // namespace

// Linux: SCHED_BATCH at nice 19: it never preempts a thread that wakes, and takes 15/1024 of a core
// against an ordinary thread. Not SCHED_IDLE: a thread at it may wait seconds for a busy core even to
// exit, and the process's exit waits for every thread (4-9 s, four busy processes on 2 cores; 0.1-0.3 s
// at nice 19). Neither can be undone without privilege: it is set once per thread. macOS: the
// background QoS class (efficiency cores on Apple silicon, throttled I/O). Windows: idle priority,
// which Windows' scheduler still runs, briefly boosted, when it has waited seconds for a core.
bool lower_to_idle() {
#if defined(__linux__)
  sched_param param{};
  param.sched_priority = 0;
  const bool batch = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) == 0;
  return setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19) == 0 && batch;
#elif defined(__APPLE__)
  return pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0) == 0;
#elif defined(_WIN32)
  return SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_IDLE) != 0;
#else
  return false;
#endif
}

void name_this_thread(const char* name) {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), name);
#elif defined(__APPLE__)
  pthread_setname_np(name);  // macOS names only the calling thread
#elif defined(_WIN32)
  if (const auto set = kernel32<SetDescription>("SetThreadDescription")) {
    const std::wstring wide(name, name + std::strlen(name));  // the engine's names are ASCII
    set(GetCurrentThread(), wide.c_str());
  }
#else
  (void)name;
#endif
}

std::string this_thread_name() {
#if defined(__linux__) || defined(__APPLE__)
  char name[64] = {};
  return pthread_getname_np(pthread_self(), name, sizeof name) == 0 ? std::string(name) : std::string();
#elif defined(_WIN32)
  std::string name;
  PWSTR wide = nullptr;
  const auto get = kernel32<GetDescription>("GetThreadDescription");
  if (get != nullptr && SUCCEEDED(get(GetCurrentThread(), &wide)) && wide != nullptr) {
    for (const wchar_t* c = wide; *c != 0; ++c) name += *c < 128 ? static_cast<char>(*c) : '?';
    LocalFree(wide);
  }
  return name;
#else
  return {};
#endif
}

#if defined(__linux__)
namespace {
cpu_set_t cpu_set_of(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  return set;
}
}  // namespace
#endif

int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

std::vector<int> this_thread_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
#endif
  return cpus;
}

bool this_thread_has_cpus(const std::vector<int>& cpus) {
#if defined(__linux__)
  cpu_set_t now;
  CPU_ZERO(&now);
  const cpu_set_t want = cpu_set_of(cpus);
  return sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &want);
#else
  (void)cpus;
  return false;
#endif
}

std::vector<int> thread_cpus(std::thread& thread) {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(thread.native_handle(), sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
#else
  (void)thread;
#endif
  return cpus;
}

bool set_this_thread_cpus(const std::vector<int>& cpus) {
#if defined(__linux__)
  const cpu_set_t set = cpu_set_of(cpus);
  return !cpus.empty() && sched_setaffinity(0, sizeof set, &set) == 0;
#else
  (void)cpus;
  return false;
#endif
}

bool keep_off_cpu(std::thread& thread, const std::vector<int>& cpus, int cpu) {
#if defined(__linux__)
  if (cpus.size() < 2 || std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) return false;
  cpu_set_t set = cpu_set_of(cpus);
  CPU_CLR(cpu, &set);
  return pthread_setaffinity_np(thread.native_handle(), sizeof set, &set) == 0;
#else
  (void)thread;
  (void)cpus;
  (void)cpu;
  return false;
#endif
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus = this_thread_cpus();
#if defined(_WIN32)
  // The CPUs of the process's processor group; both masks 0 when its threads span several groups.
  DWORD_PTR process = 0, system = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) != 0) {
    for (int c = 0; c < static_cast<int>(8 * sizeof process); ++c) {
      if ((process >> c) & 1) cpus.push_back(c);
    }
  }
#endif
  if (cpus.empty()) {  // no mask to read: every CPU the machine has
    const int n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    for (int c = 0; c < n; ++c) cpus.push_back(c);
  }
  return cpus;
}

bool pin_thread(std::thread& thread, int cpu) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(thread.native_handle(), sizeof set, &set) == 0;
#elif defined(_WIN32)
  const HANDLE handle = handle_of(thread);
  if (handle == nullptr || cpu < 0 || cpu >= static_cast<int>(8 * sizeof(DWORD_PTR))) return false;
  return SetThreadAffinityMask(handle, DWORD_PTR{1} << cpu) != 0;
#else
  (void)thread;
  (void)cpu;
  return false;
#endif
}

std::int64_t process_id() {
#if defined(_WIN32)
  return static_cast<std::int64_t>(GetCurrentProcessId());
#else
  return static_cast<std::int64_t>(getpid());
#endif
}

int at_fork(void (*prepare)(), void (*parent)(), void (*child)()) {
#if defined(_WIN32)
  (void)prepare;
  (void)parent;
  (void)child;
  return 0;
#else
  return pthread_atfork(prepare, parent, child);
#endif
}

std::int64_t mark_this_thread() {
#if defined(__linux__)
  return static_cast<std::int64_t>(syscall(SYS_gettid));
#else
  return kRunning;
#endif
}

std::int64_t mark_ended(std::int64_t mark) {
#if defined(__linux__)
  return mark;  // the kernel tells
#else
  (void)mark;
  return kEnded;
#endif
}

bool thread_ended(std::int64_t mark) {
#if defined(__linux__)
  // Gone once the kernel has released it, which comes after it let go of the address space (exit_mm,
  // then exit_notify).
  return syscall(SYS_tgkill, getpid(), static_cast<long>(mark), 0) == -1 && errno == ESRCH;
#else
  return mark == kEnded;
#endif
}

}  // namespace sb3ale::platform
