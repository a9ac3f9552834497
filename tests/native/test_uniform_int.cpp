// native/env/uniform_int.hpp against the standard libraries: the reimplementation of the library this
// build links (GCC: libstdc++; clang_libcxx.sh: libc++; MSVC's STL where built with MSVC) against its
// std::uniform_int_distribution<int>, draw for draw and engine state for engine state, on many seeds
// and ranges and on mt19937s of 32- and 64-bit result_type (uint_fast32_t is one or the other by
// platform); all three reimplementations against fixed draws, and those against the real library.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "env/uniform_int.hpp"

namespace {

// mt19937's parameters on either width of result_type: the same outputs, and the type each
// library's arithmetic is written in differs. std::mt19937 is one of the two on every platform.
template <class UInt>
using Mt19937Of = std::mersenne_twister_engine<UInt, 32, 624, 397, 31, 0x9908b0df, 11, 0xffffffff, 7, 0x9d2c5680, 15,
                                               0xefc60000, 18, 1812433253>;
using Mt32 = Mt19937Of<uint32_t>;
using Mt64 = Mt19937Of<uint64_t>;

struct Range {
  int a, b;
};

/// Small ranges (ale-py's [0, 29]), single values, sizes at and beside every power of two, the full
/// int range and its neighbours (the most rejections: sizes just above 2^31), and random ones.
std::vector<Range> ranges() {
  std::vector<Range> out = {{0, 29},  {0, 0},       {5, 5},           {-7, 7},      {0, 1},
                            {-1, 0},  {INT_MAX, INT_MAX}, {INT_MIN, INT_MIN}, {INT_MIN, INT_MAX},
                            {INT_MIN, INT_MAX - 1}, {INT_MIN + 1, INT_MAX}, {-1, INT_MAX},
                            {0, INT_MAX}, {INT_MIN, -1}, {INT_MIN, 0}, {-2, INT_MAX}, {INT_MIN, 1}};
  for (int k = 1; k <= 31; ++k) {
    const int64_t p = int64_t{1} << k;
    for (int64_t size : {p - 1, p, p + 1}) {
      if (size < 1 || size - 1 > INT_MAX) continue;
      out.push_back({0, static_cast<int>(size - 1)});
      out.push_back({-static_cast<int>(size / 2), static_cast<int>(size - 1 - size / 2)});
    }
  }
  std::mt19937_64 pick(20240531);
  for (int i = 0; i < 100; ++i) {
    int a = static_cast<int>(static_cast<uint32_t>(pick()));
    int b = static_cast<int>(static_cast<uint32_t>(pick()));
    if (a > b) std::swap(a, b);
    out.push_back({a, b});
  }
  return out;
}

std::vector<uint32_t> seeds() {
  std::vector<uint32_t> out = {5489, 2147483647u, 4294967295u};
  for (uint32_t seed = 0; seed < 100; ++seed) out.push_back(seed);
  return out;
}

/// `ours` against std::uniform_int_distribution<int> on engine type `Engine`: 16 draws a seed and
/// range, then the two engines must be equal (the same number of draws taken). Stops at the first
/// difference, naming it.
template <class Engine, class Ours>
void compare_with_library(const char* library, const char* engine_name, Ours ours, bool full_range_too = true) {
  long draws = 0, compared = 0;
  for (const Range& range : ranges()) {
    if (!full_range_too && range.a == INT_MIN && range.b == INT_MAX) continue;
    ++compared;
    for (uint32_t seed : seeds()) {
      Engine theirs_engine(seed), ours_engine(seed);
      std::uniform_int_distribution<int> theirs(range.a, range.b);
      std::string difference;
      for (int i = 0; i < 16 && difference.empty(); ++i, ++draws) {
        const int expected = theirs(theirs_engine);
        const int got = ours(ours_engine, range.a, range.b);
        if (got != expected) {
          difference = "draw " + std::to_string(i) + ": ours " + std::to_string(got) + ", the library's " +
                       std::to_string(expected);
        }
      }
      if (difference.empty() && !(ours_engine == theirs_engine)) difference = "a different number of draws taken";
      if (!difference.empty()) {
        check::fail(__FILE__, __LINE__, std::string(library) + " on " + engine_name + ", seed " + std::to_string(seed) +
                                            ", [" + std::to_string(range.a) + ", " + std::to_string(range.b) +
                                            "]: " + difference);
        return;
      }
    }
  }
  std::printf("     %s on %s: %ld draws equal (%ld ranges x %zu seeds)\n", library, engine_name, draws, compared,
              seeds().size());
}

template <class Ours>
void compare_on_both_widths(const char* library, Ours ours) {
  compare_with_library<Mt32>(library, "mt19937<uint32_t>", ours);
  compare_with_library<Mt64>(library, "mt19937<uint64_t>", ours);
  compare_with_library<std::mt19937>(library, "std::mt19937", ours);
}

struct Pinned {
  uint32_t seed;
  int a, b;
  int draws[6];
  uint32_t next;  // the engine's next output after them: the draws each took
};

template <class Engine, class Ours>
void check_pinned(const char* library, const std::vector<Pinned>& rows, Ours ours) {
  for (const Pinned& row : rows) {
    Engine engine(row.seed);
    for (int i = 0; i < 6; ++i) {
      const int got = ours(engine, row.a, row.b);
      if (got != row.draws[i]) {
        check::fail(__FILE__, __LINE__, std::string(library) + ", seed " + std::to_string(row.seed) + ", [" +
                                            std::to_string(row.a) + ", " + std::to_string(row.b) + "], draw " +
                                            std::to_string(i) + ": " + std::to_string(got) + ", pinned " +
                                            std::to_string(row.draws[i]));
      }
    }
    CHECK(static_cast<uint32_t>(engine()) == row.next);
  }
}

// From the real libraries: std::uniform_int_distribution<int> on std::mt19937, printed by a program
// built with g++ 12 (libstdc++) and with clang++ 14 -stdlib=libc++ on Linux.
const std::vector<Pinned> kLibstdcxx = {
    {0, 0, 29, {16, 17, 21, 25, 18, 25}, 2340255427u},
    {0, 0, 0, {0, 0, 0, 0, 0, 0}, 2340255427u},
    {0, INT_MIN, INT_MAX, {209652396, 398764591, 924231285, 1478610112, 441365315, 1537364731}, 2340255427u},
    {0, -1, INT_MAX, {1178568021, 1813046879, 909791747, 638950698, 1915067938, 2069450027}, 1171049868u},
    {0, -1000, 999999999, {548813051, 592844209, 715189080, 844265588, 602762973, 857945477}, 2340255427u},
    {42, 0, 29, {11, 23, 28, 5, 21, 23}, 2571218620u},
    {42, 0, 0, {0, 0, 0, 0, 0, 0}, 2571218620u},
    {42, INT_MIN, INT_MAX, {-538846106, 1273642419, 1935803228, -1359637234, 996406378, 1201263687}, 2571218620u},
    {42, -1, INT_MAX, {2041643437, 1571945012, 1285609309, 1281725961, 957418555, 306804146}, 3041148567u},
    {42, -1000, 999999999, {374539488, 796542780, 950714262, 183433971, 731993670, 779690777}, 2571218620u},
};
const std::vector<Pinned> kLibcxx = {
    {0, 0, 29, {12, 15, 21, 0, 3, 27}, 2340255427u},
    {0, 0, 0, {0, 0, 0, 0, 0, 0}, 2357136044u},  // no draw for a single value
    {0, INT_MIN, INT_MAX, {-1937831252, -1748719057, -1223252363, -668873536, -1706118333, -610118917}, 2340255427u},
    {0, -1, INT_MAX, {1819583496, 1650906865, 1879422755, 1277901398, 243580375, 1171049867}, 1646868794u},
    {0, -1000, 999999999, {209651396, 398763591, 924230285, 404867288, 441364315, 463621907}, 2340255427u},
    {42, 0, 29, {6, 19, 28, 14, 10, 7}, 2571218620u},
    {42, 0, 0, {0, 0, 0, 0, 0, 0}, 1608637542u},
    {42, INT_MIN, INT_MAX, {1608637542, -873841229, -211680420, 787846414, -1151077270, -946219961}, 2571218620u},
    {42, -1, INT_MAX, {1608637541, 787846413, 670094949, 1914837112, 669991377, 429389013}, 249467210u},
    {42, -1000, 999999999, {534894718, 199899595, 862060404, 787845414, 996405378, 127520863}, 2571218620u},
};
// MSVC's STL cannot run here: these are computed without a compiler by
// tests/native/uniform_int_msvc_vectors.py, which transcribes uniform_int_distribution::_Eval and
// _Rng_from_urng_v2 from microsoft/STL's source step for step over a mt19937 of its own, for Windows'
// 32-bit result_type. They equal libstdc++'s rows: both reduce by Lemire's method with the same
// threshold, and take one draw for the full range on a 32-bit engine (the libstdc++ build checks
// the two agree on every range below too).
const std::vector<Pinned> kMsvc = {
    {0, 0, 29, {16, 17, 21, 25, 18, 25}, 2340255427u},
    {0, 0, 0, {0, 0, 0, 0, 0, 0}, 2340255427u},
    {0, INT_MIN, INT_MAX, {209652396, 398764591, 924231285, 1478610112, 441365315, 1537364731}, 2340255427u},
    {0, -1, INT_MAX, {1178568021, 1813046879, 909791747, 638950698, 1915067938, 2069450027}, 1171049868u},
    {0, -1000, 999999999, {548813051, 592844209, 715189080, 844265588, 602762973, 857945477}, 2340255427u},
    {42, 0, 29, {11, 23, 28, 5, 21, 23}, 2571218620u},
    {42, 0, 0, {0, 0, 0, 0, 0, 0}, 2571218620u},
    {42, INT_MIN, INT_MAX, {-538846106, 1273642419, 1935803228, -1359637234, 996406378, 1201263687}, 2571218620u},
    {42, -1, INT_MAX, {2041643437, 1571945012, 1285609309, 1281725961, 957418555, 306804146}, 3041148567u},
    {42, -1000, 999999999, {374539488, 796542780, 950714262, 183433971, 731993670, 779690777}, 2571218620u},
};

const auto kOursLibstdcxx = [](auto& engine, int a, int b) { return sb3ale::draw_libstdcxx(engine, a, b); };
const auto kOursLibcxx = [](auto& engine, int a, int b) { return sb3ale::draw_libcxx(engine, a, b); };
const auto kOursMsvc = [](auto& engine, int a, int b) { return sb3ale::draw_msvc(engine, a, b); };

}  // namespace

TEST(uniform_int_equals_the_library_this_build_links) {
#if defined(_LIBCPP_VERSION)
  compare_on_both_widths("libc++", kOursLibcxx);
#elif defined(__GLIBCXX__) && _GLIBCXX_RELEASE >= 11
  compare_on_both_widths("libstdc++", kOursLibstdcxx);
  // A real library's pin on MSVC's algorithm too: on Windows' 32-bit engine it draws as libstdc++;
  // on a 64-bit result_type only the full range differs (two draws there).
  compare_with_library<Mt32>("MSVC's STL vs libstdc++", "mt19937<uint32_t>", kOursMsvc);
  compare_with_library<Mt64>("MSVC's STL vs libstdc++", "mt19937<uint64_t>", kOursMsvc, false);
#elif defined(_MSVC_STL_VERSION)
  compare_on_both_widths("MSVC's STL", kOursMsvc);
#else
  std::printf("     skipped: this library is none of the three (libstdc++ before GCC 11 divides instead)\n");
#endif
}

TEST(uniform_int_each_library_draws_its_pinned_values) {
  check_pinned<Mt32>("libstdc++ (32-bit)", kLibstdcxx, kOursLibstdcxx);
  check_pinned<Mt64>("libstdc++ (64-bit)", kLibstdcxx, kOursLibstdcxx);
  check_pinned<Mt32>("libc++ (32-bit)", kLibcxx, kOursLibcxx);
  check_pinned<Mt64>("libc++ (64-bit)", kLibcxx, kOursLibcxx);
  check_pinned<Mt32>("MSVC's STL", kMsvc, kOursMsvc);
  Mt64 wide(0);  // a 64-bit result_type fills MSVC's 64-bit _Udiff with two draws, keeping the second
  CHECK(sb3ale::draw_msvc(wide, INT_MIN, INT_MAX) == 398764591);
}

// The pinned rows against the real library this build links: what the other libraries' builds trust.
TEST(uniform_int_pinned_draws_are_this_librarys) {
  const auto library = [](auto& engine, int a, int b) { return std::uniform_int_distribution<int>(a, b)(engine); };
#if defined(_LIBCPP_VERSION)
  check_pinned<std::mt19937>("libc++ itself", kLibcxx, library);
#elif defined(__GLIBCXX__) && _GLIBCXX_RELEASE >= 11
  check_pinned<std::mt19937>("libstdc++ itself", kLibstdcxx, library);
#elif defined(_MSVC_STL_VERSION)
  check_pinned<std::mt19937>("MSVC's STL itself", kMsvc, library);
#else
  std::printf("     skipped: this library is none of the three (libstdc++ before GCC 11 divides instead)\n");
#endif
}

// ale-py's wheel draws with its platform's library: held to that library's pinned draws, and to the
// library itself where this build links it (a reimplementation is never its own reference).
TEST(uniform_int_ale_py_draws_as_its_wheel_for_this_platform) {
  const auto ale_py = [](auto& engine, int a, int b) { return sb3ale::draw_as_ale_py(engine, a, b); };
#if defined(_WIN32)
  const std::vector<Pinned>& pinned = kMsvc;
#if defined(_MSVC_STL_VERSION)
  constexpr bool kLinksIt = true;
#else
  constexpr bool kLinksIt = false;  // MinGW's libstdc++
#endif
#elif defined(__APPLE__)
  const std::vector<Pinned>& pinned = kLibcxx;
#if defined(_LIBCPP_VERSION)
  constexpr bool kLinksIt = true;
#else
  constexpr bool kLinksIt = false;
#endif
#else
  const std::vector<Pinned>& pinned = kLibstdcxx;
#if defined(__GLIBCXX__) && _GLIBCXX_RELEASE >= 11
  constexpr bool kLinksIt = true;
#else
  constexpr bool kLinksIt = false;  // clang_libcxx.sh's build, or libstdc++ before GCC 11
#endif
#endif
  check_pinned<std::mt19937>("draw_as_ale_py", pinned, ale_py);
  if (kLinksIt) compare_with_library<std::mt19937>("draw_as_ale_py vs this platform's library", "std::mt19937", ale_py);
}
