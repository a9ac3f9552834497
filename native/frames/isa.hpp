// Which vector instructions the engine's hand-written paths may use: the best the CPU has, or less
// where SB3_ALE_VEC_ISA asks (to measure or test the paths of CPUs without AVX-512 on one with it).
// Every path computes the same bytes; only the speed differs.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace sb3ale {

/// Levels in increasing order; each includes the ones below it.
enum class Isa {
  kScalar,  ///< plain C++ only (what ARM and other CPUs run; the compiler may still vectorise it)
  kSse2,    ///< x86-64's baseline: the resize's interleave and filter, the frame stack's interleave
  kSsse3,   ///< + byte shuffles: palette lookups 16 pixels at a time
  kAvx2,    ///< + 256-bit: palette lookups 32 at a time, the resize's float pass 8 rows at a time
  kAvx512,  ///< + AVX-512 VBMI byte permutes: palette lookups 64 at a time
};

/// The level's name as SB3_ALE_VEC_ISA spells it.
inline const char* isa_name(Isa isa) {
  static const char* const names[] = {"scalar", "sse2", "ssse3", "avx2", "avx512"};
  return names[static_cast<int>(isa)];
}

/// "scalar", "sse2", "ssse3", "avx2" or "avx512"; throws std::invalid_argument for anything else.
inline Isa parse_isa(const std::string& name) {
  for (Isa isa : {Isa::kScalar, Isa::kSse2, Isa::kSsse3, Isa::kAvx2, Isa::kAvx512}) {
    if (name == isa_name(isa)) return isa;
  }
  throw std::invalid_argument("SB3_ALE_VEC_ISA must be one of scalar, sse2, ssse3, avx2, avx512 (or unset), got '" +
                              name + "'");
}

/// The best level this CPU runs (checked once).
inline Isa cpu_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa best = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx2")
                              ? Isa::kAvx512
                          : __builtin_cpu_supports("avx2")  ? Isa::kAvx2
                          : __builtin_cpu_supports("ssse3") ? Isa::kSsse3
                                                            : Isa::kSse2;
  return best;
#else
  return Isa::kScalar;
#endif
}

/// `wanted`, or the CPU's best where it lacks that level.
inline Isa usable_isa(Isa wanted) { return wanted < cpu_isa() ? wanted : cpu_isa(); }

/// The process's level: SB3_ALE_VEC_ISA (read once, at the first call; a level the CPU lacks gives
/// the CPU's best), else the CPU's best. An unknown name throws std::invalid_argument at every call,
/// so that the engine's constructor (AreaResize's) reports it.
inline Isa process_isa() {
  static const std::string wanted = [] {
    const char* value = std::getenv("SB3_ALE_VEC_ISA");
    return std::string(value ? value : "");
  }();
  static const int level = [] {
    if (wanted.empty()) return static_cast<int>(cpu_isa());
    try {
      return static_cast<int>(usable_isa(parse_isa(wanted)));
    } catch (const std::invalid_argument&) {
      return -1;
    }
  }();
  if (level < 0) parse_isa(wanted);  // throws
  return static_cast<Isa>(level);
}

}  // namespace sb3ale
