// rng.hpp - bit-exact reimplementation of numpy's default random streams:
// SeedSequence -> PCG64 (XSL-RR 128/64) -> Generator.random() / Generator.integers().
// Written from the published algorithms; matches numpy >= 1.17 Generator output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sb3ale {

namespace detail {

// SeedSequence hashing constants (O'Neill's seed_seq_fe design, as used by numpy).
constexpr uint32_t kInitA = 0x43b0d7e5u;
constexpr uint32_t kMultA = 0x931e8875u;
constexpr uint32_t kInitB = 0x8b51f9ddu;
constexpr uint32_t kMultB = 0x58f38dedu;
constexpr uint32_t kMixMultL = 0xca01f9ddu;
constexpr uint32_t kMixMultR = 0x4973f715u;
constexpr unsigned kXShift = 16;     // half the word size
constexpr std::size_t kPoolSize = 4; // numpy's DEFAULT_POOL_SIZE

/// Hash one word; advances the running multiplier `hash_const` (all arithmetic mod 2^32).
inline uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

inline uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  return result ^ (result >> kXShift);
}

/// SeedSequence.mix_entropy: fold all entropy words into a 4-word pool.
inline std::vector<uint32_t> mix_entropy(const std::vector<uint32_t>& entropy) {
  std::vector<uint32_t> pool(kPoolSize);
  uint32_t hash_const = kInitA;
  // Missing entropy words hash as 0, so short inputs still fill the whole pool.
  for (std::size_t i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0u, hash_const);
  for (std::size_t src = 0; src < kPoolSize; ++src)
    for (std::size_t dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  // Words beyond the pool size are mixed into every pool slot.
  for (std::size_t src = kPoolSize; src < entropy.size(); ++src)
    for (std::size_t dst = 0; dst < kPoolSize; ++dst)
      pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
  return pool;
}

__extension__ using u128 = unsigned __int128;  // gcc/clang extension

inline u128 make_u128(uint64_t hi, uint64_t lo) { return (static_cast<u128>(hi) << 64) | lo; }

// PCG_DEFAULT_MULTIPLIER_128
constexpr u128 kPcgMult = (static_cast<u128>(0x2360ed051fc65da4ull) << 64) | 0x4385df649fccf645ull;

}  // namespace detail

/// numpy.random.SeedSequence(entropy).generate_state(n_words, dtype=uint32), where `entropy` is the
/// Python int split into 32-bit words, least significant first (0 -> {0}); no spawn_key, pool_size 4.
inline std::vector<uint32_t> seed_sequence_state(const std::vector<uint32_t>& entropy,
                                                 std::size_t n_words) {
  const std::vector<uint32_t> pool = detail::mix_entropy(entropy);
  std::vector<uint32_t> state(n_words);
  uint32_t hash_const = detail::kInitB;
  for (std::size_t i = 0; i < n_words; ++i) {
    uint32_t v = pool[i % detail::kPoolSize] ^ hash_const;  // cycles over the pool
    hash_const *= detail::kMultB;
    v *= hash_const;
    state[i] = v ^ (v >> detail::kXShift);
  }
  return state;
}

/// Split a non-negative integer given as uint64 into SeedSequence entropy words (helper).
/// Mirrors numpy's _int_to_uint32_array: little-endian words, and 0 becomes {0} (not empty).
inline std::vector<uint32_t> entropy_words(uint64_t value) {
  std::vector<uint32_t> words;
  do {
    words.push_back(static_cast<uint32_t>(value));
    value >>= 32;
  } while (value != 0);
  return words;
}

/// numpy.random.Generator(numpy.random.PCG64(numpy.random.SeedSequence(entropy))) :
/// PCG64 (XSL-RR 128/64) seeded exactly as numpy seeds it from a SeedSequence, plus numpy's
/// 32-bit buffering (next_uint32 hands out the low half of a 64-bit draw, then the high half).
class NumpyGenerator {
 public:
  /// Seeded from entropy words {0}, i.e. SeedSequence(0).
  NumpyGenerator() : NumpyGenerator(std::vector<uint32_t>{0u}) {}

  explicit NumpyGenerator(const std::vector<uint32_t>& entropy) {
    // PCG64.__init__: generate_state(4, uint64) == 8 uint32 words viewed little-endian as uint64;
    // words 0/1 are (hi, lo) of the initial state, words 2/3 (hi, lo) of the stream selector.
    const std::vector<uint32_t> s = seed_sequence_state(entropy, 8);
    uint64_t w[4];
    for (std::size_t k = 0; k < 4; ++k) w[k] = s[2 * k] | (static_cast<uint64_t>(s[2 * k + 1]) << 32);
    // pcg_setseq_128_srandom_r
    inc_ = (detail::make_u128(w[2], w[3]) << 1) | 1u;
    state_ = 0;
    step();
    state_ += detail::make_u128(w[0], w[1]);
    step();
  }

  /// PCG64 output: advance first, then XSL-RR on the new state (numpy's pcg64_random_r).
  uint64_t next_uint64() {
    step();
    const uint64_t x = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
    const unsigned rot = static_cast<unsigned>(state_ >> 122);
    return (x >> rot) | (x << ((64u - rot) & 63u));  // masked: no shift by 64 when rot == 0
  }

  /// numpy's pcg64_next32: low half of a fresh 64-bit draw, the high half kept for the next call.
  /// The buffer lives in the bit generator, so it persists across random()/integers() calls.
  uint32_t next_uint32() {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = next_uint64();
    has_uint32_ = true;
    uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next);
  }

  /// Generator.random(): (next_uint64() >> 11) * 2^-53. Does not touch the 32-bit buffer.
  double random() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

  /// Generator.integers(low, high) with the defaults (dtype int64, endpoint=False), size=None:
  /// numpy's random_bounded_uint64_fill with use_masked=false. Precondition low < high.
  int64_t integers(int64_t low, int64_t high) {
    // Inclusive range width computed in uint64 (wraps correctly for any low < high).
    const uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1u;
    uint64_t val;
    if (rng == 0) {
      val = 0;  // single value: numpy consumes no draw
    } else if (rng <= 0xffffffffull) {
      // Range fits in 32 bits: numpy uses the buffered 32-bit stream.
      val = rng == 0xffffffffull ? next_uint32() : bounded_lemire_uint32(static_cast<uint32_t>(rng));
    } else {
      val = bounded_lemire_uint64(rng);  // rng <= 2^64-2 here, so numpy's full-range case can't occur
    }
    // numpy returns (int64)(off + val); do the wrap by hand (pre-C++20 the cast is impl-defined).
    const uint64_t sum = static_cast<uint64_t>(low) + val;
    return sum <= static_cast<uint64_t>(INT64_MAX)
               ? static_cast<int64_t>(sum)
               : -static_cast<int64_t>(~sum) - 1;
  }

 private:
  void step() { state_ = state_ * detail::kPcgMult + inc_; }

  // Lemire's nearly-divisionless method; the threshold (2^w mod rng_excl) is only computed when
  // the cheap test `leftover < rng_excl` says a rejection is possible, exactly like numpy.
  uint32_t bounded_lemire_uint32(uint32_t rng) {
    const uint32_t rng_excl = rng + 1u;
    uint64_t m = static_cast<uint64_t>(next_uint32()) * rng_excl;
    uint32_t leftover = static_cast<uint32_t>(m);
    if (leftover < rng_excl) {
      const uint32_t threshold = (UINT32_MAX - rng) % rng_excl;
      while (leftover < threshold) {
        m = static_cast<uint64_t>(next_uint32()) * rng_excl;
        leftover = static_cast<uint32_t>(m);
      }
    }
    return static_cast<uint32_t>(m >> 32);
  }

  uint64_t bounded_lemire_uint64(uint64_t rng) {
    const uint64_t rng_excl = rng + 1u;
    detail::u128 m = static_cast<detail::u128>(next_uint64()) * rng_excl;
    uint64_t leftover = static_cast<uint64_t>(m);
    if (leftover < rng_excl) {
      const uint64_t threshold = (UINT64_MAX - rng) % rng_excl;
      while (leftover < threshold) {
        m = static_cast<detail::u128>(next_uint64()) * rng_excl;
        leftover = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  detail::u128 state_ = 0;
  detail::u128 inc_ = 0;
  bool has_uint32_ = false;  // numpy's bitgen has_uint32 / uinteger pair
  uint32_t uinteger_ = 0;
};

}  // namespace sb3ale
