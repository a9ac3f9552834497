// The palette lookups with AArch64 NEON (palette_lookup.cpp's, included there only). A TBL/TBX
// looks up 16 bytes in a 64-byte table, so four of them cover all 256 entries: no split by parity
// as the 16-entry x86 shuffles need. TBX leaves a byte whose index is out of its table's range as
// it was, so the second to fourth lookups, with 64, 128 and 192 subtracted from the indices
// (wrapping), fill in exactly the bytes of their quarter.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "frames/isa.hpp"

namespace sb3ale {
namespace neon {

/// A 256-entry table in 16 registers.
struct Table {
  uint8x16x4_t quarter[4];
  explicit Table(const uint8_t* table) {
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 4; ++j) quarter[k].val[j] = vld1q_u8(table + 64 * k + 16 * j);
  }
  uint8x16_t operator()(uint8x16_t x) const {
    const uint8x16_t step = vdupq_n_u8(64);
    uint8x16_t r = vqtbl4q_u8(quarter[0], x);
    x = vsubq_u8(x, step);
    r = vqtbx4q_u8(r, quarter[1], x);
    x = vsubq_u8(x, step);
    r = vqtbx4q_u8(r, quarter[2], x);
    x = vsubq_u8(x, step);
    return vqtbx4q_u8(r, quarter[3], x);
  }
};

/// out[p] = table[indices[p]], 16 at a time; returns how many pixels it did (the rest: scalar).
inline std::size_t lookup(const uint8_t* indices, const uint8_t* table, uint8_t* out, std::size_t n) {
  const Table lookup(table);
  std::size_t p = 0;
  for (; p + 16 <= n; p += 16) vst1q_u8(out + p, lookup(vld1q_u8(indices + p)));
  return p;
}

/// out[p] = pairs[a[p] << 8 | b[p]] as pair_lookup's x86 paths: the 256-entry diagonal (a[p] ==
/// b[p], most pixels) 16 at a time, the pixels that changed one by one from the full table.
/// Returns how many pixels it did (the rest: scalar).
inline std::size_t pairs(const uint8_t* a, const uint8_t* b, const uint8_t* pairs, const uint8_t* diagonal,
                         uint8_t* out, std::size_t n) {
  const Table lookup(diagonal);
  std::size_t p = 0;
  for (; p + 16 <= n; p += 16) {
    const uint8x16_t x = vld1q_u8(a + p), y = vld1q_u8(b + p);
    vst1q_u8(out + p, lookup(x));
    const uint8x16_t same = vceqq_u8(x, y);
    if (vminvq_u8(same) == 0xff) continue;
    // NEON has no byte movemask: narrowing each 16-bit lane by 4 bits keeps a nibble per byte, so
    // byte j that differs sets bits 4j to 4j + 3 of a 64-bit mask; one bit of each is kept.
    const uint8x8_t nibbles = vshrn_n_u16(vreinterpretq_u16_u8(vmvnq_u8(same)), 4);
    uint64_t changed = vget_lane_u64(vreinterpret_u64_u8(nibbles), 0) & 0x1111111111111111ull;
    for (; changed != 0; changed &= changed - 1) {
      const std::size_t q = p + static_cast<std::size_t>(lowest_bit(changed) >> 2);
      out[q] = pairs[a[q] << 8 | b[q]];
    }
  }
  return p;
}

}  // namespace neon
}  // namespace sb3ale
