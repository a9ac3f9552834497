// A minimal test runner for the engine's C++ tests (no framework to install): TEST registers a
// function, CHECK records a failure with its file and line and goes on, main runs every test or
// those whose name contains argv[2], and exits 1 if any check failed.
#pragma once

#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace check {

struct Test {
  const char* name;
  std::function<void()> body;
};

inline std::vector<Test>& registry() {
  static std::vector<Test> tests;
  return tests;
}
inline int& failures() {
  static int count = 0;
  return count;
}
inline std::string& rom_path() {  // argv[1]: a ROM of ale-py's wheel, for the engine's tests
  static std::string path;
  return path;
}

struct Register {
  Register(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }
};

inline void fail(const char* file, int line, const std::string& what) {
  ++failures();
  std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what.c_str());
}

}  // namespace check

#define CHECK_CAT2(a, b) a##b
#define CHECK_CAT(a, b) CHECK_CAT2(a, b)
#define TEST(name)                                                           \
  static void name();                                                        \
  static const check::Register CHECK_CAT(register_, name)(#name, name);     \
  static void name()
#define CHECK(cond)                                               \
  do {                                                            \
    if (!(cond)) check::fail(__FILE__, __LINE__, #cond);          \
  } while (0)
// Checks that `statement` throws `type` (or a subclass).
#define CHECK_THROWS(type, statement)                                                     \
  do {                                                                                    \
    bool thrown_ = false;                                                                 \
    try {                                                                                 \
      statement;                                                                          \
    } catch (const type&) {                                                               \
      thrown_ = true;                                                                     \
    } catch (...) {                                                                       \
    }                                                                                     \
    if (!thrown_) check::fail(__FILE__, __LINE__, #statement " did not throw " #type);    \
  } while (0)
