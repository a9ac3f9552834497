// The AVX2 kernel of AreaResize's float area pass, chosen at run time where the CPU has AVX2
// (process_isa, isa.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "frames/isa.hpp"

#define SB3ALE_AREA_AVX2 SB3ALE_X86

namespace sb3ale {

#if SB3ALE_AREA_AVX2
/// The horizontal pass over all `src_h` rows of `row` bytes, eight rows at a time: hsum[y * n + e] =
/// sum over m of w[e * taps + m] * src[y][idx[e * taps + m]], in float, in tap order. `block` holds
/// 8 * row floats; hsum holds src_h rounded up to a multiple of 8 rows of n floats. need[y]: rows
/// to compute (a block of 8 is computed if one of its rows is needed); null: all.
void area_horizontal_avx2(const uint8_t* src, int src_h, int row, const int32_t* idx, const float* w, int taps,
                          int n, float* block, float* hsum, const uint8_t* need);

/// The vertical pass: dst row dy = round(sum over k in [y_begin[dy], y_begin[dy + 1]) of y_w[k] *
/// hsum row y_row[k]), saturated to uint8, for the rows dy where need[dy] (all if null).
void area_vertical_avx2(const float* hsum, int n, int dst_h, const int32_t* y_begin, const int32_t* y_row,
                        const float* y_w, uint8_t* dst, const uint8_t* need);
#endif

}  // namespace sb3ale
