// Which vector instructions the engine's hand-written paths may use: the best the CPU has, or less
// where SB3_ALE_VEC_ISA asks (to measure or test the paths of CPUs without AVX-512 on one with it).
// Every path computes the same bytes; only the speed differs.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(_MSC_VER)
#include <intrin.h>
#endif

// SB3ALE_X86: x86-64 with a compiler whose intrinsics we can give a target per function (GCC,
// Clang) or which allows every intrinsic anywhere (MSVC). Elsewhere no x86 path is compiled.
#if (defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))) || \
    (defined(_MSC_VER) && (defined(_M_X64) || defined(_M_AMD64)))
#define SB3ALE_X86 1
#else
#define SB3ALE_X86 0
#endif
// SB3ALE_NEON: AArch64, where NEON (Advanced SIMD) is part of the baseline; its paths use
// AArch64-only instructions (64-byte table lookups, across-lane min), so 32-bit ARM stays scalar.
// MSVC's arm64 NEON types are unions, not the vector types these paths use: scalar there too; and
// the pair lookup's byte mask assumes little-endian lanes.
#if defined(__aarch64__) && defined(__ARM_NEON) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SB3ALE_NEON 1
#else
#define SB3ALE_NEON 0
#endif

// A function compiled for more than the baseline (GCC, Clang); MSVC compiles intrinsics anywhere.
#if defined(__GNUC__) || defined(__clang__)
#define SB3ALE_TARGET(features) __attribute__((target(features)))
#define SB3ALE_ALWAYS_INLINE __attribute__((always_inline)) inline
#define SB3ALE_NOINLINE __attribute__((noinline))
#else
#define SB3ALE_TARGET(features)
#define SB3ALE_ALWAYS_INLINE __forceinline
#define SB3ALE_NOINLINE __declspec(noinline)
#endif

namespace sb3ale {

/// The index of the lowest set bit of a nonzero mask (the vector paths' byte masks).
inline int lowest_bit(uint32_t mask) {
#if defined(_MSC_VER) && !defined(__clang__)
  unsigned long index;
  _BitScanForward(&index, mask);
  return static_cast<int>(index);
#else
  return __builtin_ctz(mask);
#endif
}
inline int lowest_bit(uint64_t mask) {
#if defined(_MSC_VER) && !defined(__clang__)
  unsigned long index;
  _BitScanForward64(&index, mask);
  return static_cast<int>(index);
#else
  return __builtin_ctzll(mask);
#endif
}

/// Levels; within a family (x86: sse2 to avx512; ARM: neon) each includes the ones below it, and
/// every level includes scalar. isa_has() compares them; never compare two Isa values with <.
enum class Isa {
  kScalar,  ///< plain C++ only (what other CPUs run; the compiler may still vectorise it)
  kSse2,    ///< x86-64's baseline: the resize's interleave and filter, the frame stack's interleave
  kSsse3,   ///< + byte shuffles: palette lookups 16 pixels at a time
  kAvx2,    ///< + 256-bit: palette lookups 32 at a time, the resize's float pass 8 rows at a time
  kAvx512,  ///< + AVX-512 VBMI byte permutes: palette lookups 64 at a time
  kNeon,    ///< AArch64's baseline: palette lookups 16 at a time (64-byte table lookups), the resize's
            ///< interleave and filter, the frame stack's interleave
};

/// The level's name as SB3_ALE_VEC_ISA spells it.
inline const char* isa_name(Isa isa) {
  static const char* const names[] = {"scalar", "sse2", "ssse3", "avx2", "avx512", "neon"};
  return names[static_cast<int>(isa)];
}

/// "scalar", "sse2", "ssse3", "avx2", "avx512" or "neon"; throws std::invalid_argument for anything else.
inline Isa parse_isa(const std::string& name) {
  for (Isa isa : {Isa::kScalar, Isa::kSse2, Isa::kSsse3, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (name == isa_name(isa)) return isa;
  }
  throw std::invalid_argument("SB3_ALE_VEC_ISA must be one of scalar, sse2, ssse3, avx2, avx512, neon (or unset), got '" +
                              name + "'");
}

/// 0 for scalar, 1 for x86's levels, 2 for ARM's.
inline int isa_family(Isa isa) { return isa == Isa::kScalar ? 0 : isa == Isa::kNeon ? 2 : 1; }

/// Whether `isa` includes `level`: scalar always, else a level of the same family no higher.
inline bool isa_has(Isa isa, Isa level) {
  return level == Isa::kScalar || (isa_family(isa) == isa_family(level) && isa >= level);
}

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_AMD64)) && SB3ALE_X86
/// MSVC has no __builtin_cpu_supports: CPUID for the instructions, XGETBV for the OS's saving of
/// the registers they use (YMM for AVX2; opmask and ZMM too for AVX-512).
inline Isa msvc_cpu_isa() {
  int regs[4];  // eax, ebx, ecx, edx
  __cpuid(regs, 0);
  const int max_leaf = regs[0];
  __cpuid(regs, 1);
  const bool ssse3 = (regs[2] >> 9) & 1, osxsave = (regs[2] >> 27) & 1, avx = (regs[2] >> 28) & 1;
  int ebx7 = 0, ecx7 = 0;
  if (max_leaf >= 7) {
    __cpuidex(regs, 7, 0);
    ebx7 = regs[1], ecx7 = regs[2];
  }
  const unsigned long long xcr0 = osxsave ? _xgetbv(0) : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     // XMM and YMM state
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;   // + opmask, ZMM0-15 upper halves, ZMM16-31
  const bool avx2 = avx && os_ymm && ((ebx7 >> 5) & 1);
  const bool avx512 = avx2 && os_zmm && ((ebx7 >> 16) & 1) /* F */ && ((ebx7 >> 30) & 1) /* BW */ &&
                      ((ecx7 >> 1) & 1) /* VBMI */;
  return avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : ssse3 ? Isa::kSsse3 : Isa::kSse2;
}
#endif

/// The best level this CPU runs (checked once).
inline Isa cpu_isa() {
#if SB3ALE_X86 && defined(_MSC_VER) && (defined(_M_X64) || defined(_M_AMD64))
  static const Isa best = msvc_cpu_isa();
  return best;
#elif SB3ALE_X86
  static const Isa best = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx2")
                              ? Isa::kAvx512
                          : __builtin_cpu_supports("avx2")  ? Isa::kAvx2
                          : __builtin_cpu_supports("ssse3") ? Isa::kSsse3
                                                            : Isa::kSse2;
  return best;
#elif SB3ALE_NEON
  return Isa::kNeon;
#else
  return Isa::kScalar;
#endif
}

/// `wanted` where the CPU has it; else the CPU's best (a level of the CPU's family above its best,
/// or of another family: neon on x86, sse2 on ARM).
inline Isa usable_isa(Isa wanted) { return isa_has(cpu_isa(), wanted) ? wanted : cpu_isa(); }

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
