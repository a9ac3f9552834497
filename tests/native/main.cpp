// Runs the engine's C++ tests: native_tests ROM_PATH [NAME_FILTER]
#include <chrono>
#include <cstdio>
#include <cstring>

#include "check.hpp"

// Under ThreadSanitizer the frames_ and uniform_int_ tests (one thread, pure functions of their inputs)
// are skipped: they give TSan nothing to see (ASan, the plain build and the AArch64 build under qemu
// run them). uniform_int_ alone took 212 s of CI's TSan run.
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ROM_PATH [NAME_FILTER]\n", argv[0]);
    return 2;
  }
  check::rom_path() = argv[1];
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per test as it ends, also into a log file
  int ran = 0;
  for (const check::Test& test : check::registry()) {
    if (argc > 2 && std::strstr(test.name, argv[2]) == nullptr) continue;
    const bool one_thread =
        std::strncmp(test.name, "frames_", 7) == 0 || std::strncmp(test.name, "uniform_int_", 12) == 0;
    if (kThreadSanitizer && one_thread) {
      std::printf("skip %s (one thread: nothing for ThreadSanitizer to see)\n", test.name);
      continue;
    }
    const int before = check::failures();
    const auto start = std::chrono::steady_clock::now();
    try {
      test.body();
    } catch (const std::exception& e) {
      check::fail(test.name, 0, std::string("unexpected exception: ") + e.what());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The seconds too: where the sanitizer builds' minutes go in CI's log.
    std::printf("%s %s (%.1f s)\n", check::failures() == before ? "ok  " : "FAIL", test.name, seconds);
    ++ran;
  }
  std::printf("%d tests, %d failed checks\n", ran, check::failures());
  return ran == 0 || check::failures() != 0 ? 1 : 0;
}
