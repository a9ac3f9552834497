// Every vector path of native/frames against the plain C++ one, at every level this CPU runs (x86:
// sse2 to avx512; AArch64: neon; see frames/isa.hpp): the palette lookup on all 256 byte values, the
// pair lookup on all 65,536 pairs, and on real screens of several ROMs the lookups, the INTER_AREA
// resize (whole and row-updated) and the channels-last frame stack.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ale/ale_interface.hpp"
#include "check.hpp"
#include "config.hpp"
#include "env/emulator.hpp"
#include "frames/frame_ops.hpp"
#include "frames/frame_stack.hpp"

using sb3ale::Isa;

namespace {

/// The levels above scalar that this CPU has (the ones a level it lacks would only repeat).
std::vector<Isa> vector_levels() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::kSse2, Isa::kSsse3, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (sb3ale::usable_isa(isa) == isa) levels.push_back(isa);
  }
  static bool said = false;
  if (!said) {
    std::string names;
    for (Isa isa : levels) names += std::string(" ") + sb3ale::isa_name(isa);
    std::printf("     vector levels compared with scalar:%s\n", levels.empty() ? " none (no vector path here)" : names.c_str());
    said = true;
  }
  return levels;
}

std::vector<uint8_t> random_bytes(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& v : out) v = static_cast<uint8_t>(rng() >> 24);
  return out;
}

/// Up to `screens` screens (palette indices, then RGB) of a ROM under random play, one every 8
/// frames: the first and the rest as they change (a ball, a paddle, the score).
struct Screens {
  int height = 0;
  std::vector<std::vector<uint8_t>> indices, rgb;
};

Screens play(const std::string& rom, int screens) {
  sb3ale::quiet_ale_logs();
  ale::ALEInterface ale;
  ale.setInt("random_seed", 0);
  ale.loadROM(rom);
  const ale::ActionVect actions = ale.getLegalActionSet();
  std::mt19937 rng(1);
  Screens out;
  out.height = static_cast<int>(ale.getScreen().height());
  for (int frame = 0; static_cast<int>(out.indices.size()) < screens; ++frame) {
    ale.act(actions[rng() % actions.size()]);
    if (ale.game_over()) ale.reset_game();
    if (frame % 8 != 0) continue;
    const ale::ALEScreen& screen = ale.getScreen();
    out.indices.emplace_back(screen.getArray(), screen.getArray() + screen.arraySize());
    out.rgb.emplace_back();
    ale.getScreenRGB(out.rgb.back());
  }
  return out;
}

/// The ROMs next to the runner's (Breakout's) in ale-py's wheel: the common 210-row screens, and
/// Air Raid's 250 rows, whose bytes are odd too (the lookups' slow path).
std::vector<std::string> roms() {
  const std::string& breakout = check::rom_path();
  const std::string dir = breakout.substr(0, breakout.find_last_of("/\\") + 1);  // Windows' separator too
  std::vector<std::string> out;
  for (const char* name : {"breakout", "pong", "space_invaders", "ms_pacman", "air_raid"}) {
    const std::string path = dir + name + ".bin";
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
      out.push_back(path);
    }
  }
  return out;
}

std::vector<uint8_t> lookup(const std::vector<uint8_t>& indices, const std::vector<uint8_t>& table, Isa isa) {
  std::vector<uint8_t> out(indices.size());
  sb3ale::palette_lookup(indices.data(), table.data(), out.data(), out.size(), isa);
  return out;
}

std::vector<uint8_t> pairs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                           const std::vector<uint8_t>& table, Isa isa) {
  std::vector<uint8_t> out(a.size());
  sb3ale::pair_lookup(a.data(), b.data(), table.data(), out.data(), out.size(), isa);
  return out;
}

}  // namespace

TEST(frames_palette_lookup_of_every_byte_value_equals_scalar) {
  // All 256 values at every offset within a 16-, 32- and 64-byte block (rotations), with every tail
  // length 0-63, plus even values only (the x86 shuffles' fast path).
  const std::vector<uint8_t> table = random_bytes(256, 1);
  for (int shift = 0; shift < 64; ++shift) {
    std::vector<uint8_t> indices(256 + static_cast<std::size_t>(shift)), even(indices.size());
    for (std::size_t p = 0; p < indices.size(); ++p) {
      indices[p] = static_cast<uint8_t>(p + static_cast<std::size_t>(shift) * 37);
      even[p] = static_cast<uint8_t>(indices[p] & 0xfe);
    }
    for (const auto* in : {&indices, &even}) {
      std::vector<uint8_t> truth(in->size());
      for (std::size_t p = 0; p < in->size(); ++p) truth[p] = table[(*in)[p]];
      CHECK(lookup(*in, table, Isa::kScalar) == truth);
      for (Isa isa : vector_levels()) CHECK(lookup(*in, table, isa) == truth);
    }
  }
}

TEST(frames_pair_lookup_of_every_pair_equals_scalar) {
  // a * 256 + b runs through all 65,536 pairs (and swapped, and shuffled, and a == b throughout).
  const std::vector<uint8_t> table = random_bytes(65536, 2);
  std::vector<uint8_t> a(65536), b(65536);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i >> 8), b[i] = static_cast<uint8_t>(i);
  std::vector<std::size_t> order(a.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(3));
  std::vector<uint8_t> sa(a.size()), sb(b.size());
  for (std::size_t i = 0; i < order.size(); ++i) sa[i] = a[order[i]], sb[i] = b[order[i]];
  for (const auto& ab : {std::make_pair(&a, &b), std::make_pair(&b, &a), std::make_pair(&sa, &sb),
                         std::make_pair(&a, &a), std::make_pair(&sb, &sb)}) {
    const std::vector<uint8_t>& x = *ab.first;
    const std::vector<uint8_t>& y = *ab.second;
    std::vector<uint8_t> truth(x.size());
    for (std::size_t p = 0; p < x.size(); ++p) truth[p] = table[static_cast<std::size_t>(x[p]) << 8 | y[p]];
    CHECK(pairs(x, y, table, Isa::kScalar) == truth);
    for (Isa isa : vector_levels()) {
      CHECK(pairs(x, y, table, isa) == truth);
      // Tails: every length 0-80 from an odd start.
      for (std::size_t n = 0; n <= 80; ++n) {
        std::vector<uint8_t> out(n), want(truth.begin() + 5, truth.begin() + 5 + static_cast<std::ptrdiff_t>(n));
        sb3ale::pair_lookup(x.data() + 5, y.data() + 5, table.data(), out.data(), n, isa);
        CHECK(out == want);
      }
    }
  }
}

TEST(frames_paths_equal_scalar_on_real_screens) {
  // Per ROM: the gray and pooled-gray lookups of screens in a row; the resize of RGB and gray
  // screens to 84x84 (the float area pass), 105x80 (2x2 blocks), 61x47 (float, odd sizes), whole and
  // by update() from the previous screen; and 4-frame channels-last stacks of the resized frames.
  const std::vector<uint8_t> table = random_bytes(256, 4), pair_table = random_bytes(65536, 5);
  const std::vector<std::string> paths = roms();
  CHECK(!paths.empty());
  int screens_seen = 0;
  for (const std::string& path : paths) {
    const Screens s = play(path, 24);
    screens_seen += static_cast<int>(s.indices.size());
    const int h = s.height, w = sb3ale::kScreenWidth;
    for (std::size_t k = 1; k < s.indices.size(); ++k) {
      const auto& a = s.indices[k - 1];
      const auto& b = s.indices[k];
      const std::vector<uint8_t> gray = lookup(b, table, Isa::kScalar), pooled = pairs(a, b, pair_table, Isa::kScalar);
      for (Isa isa : vector_levels()) {
        CHECK(lookup(b, table, isa) == gray);
        CHECK(pairs(a, b, pair_table, isa) == pooled);
      }
    }
    for (const auto& size : {std::make_pair(84, 84), std::make_pair(105, 80), std::make_pair(61, 47)}) {
      for (int channels : {1, 3}) {
        const auto frame = [&](std::size_t k) {  // RGB as ALE gives it, or one channel of gray
          return channels == 3 ? s.rgb[k] : lookup(s.indices[k], table, Isa::kScalar);
        };
        const sb3ale::AreaResize scalar(h, w, size.first, size.second, channels, Isa::kScalar);
        std::vector<std::vector<uint8_t>> resized;  // the scalar path's, for the stacks
        for (std::size_t k = 0; k < s.indices.size(); ++k) {
          const std::vector<uint8_t> src = frame(k);
          std::vector<uint8_t> want(static_cast<std::size_t>(size.first) * size.second * channels);
          scalar(src.data(), want.data());
          for (Isa isa : vector_levels()) {
            const sb3ale::AreaResize resize(h, w, size.first, size.second, channels, isa);
            std::vector<uint8_t> got(want.size(), 0);
            resize(src.data(), got.data());
            CHECK(got == want);
            if (k > 0) {  // row by row from the previous screen's resize
              const std::vector<uint8_t> prev_src = frame(k - 1);
              std::vector<uint8_t> updated = resized.back();
              resize.update(src.data(), prev_src.data(), updated.data());
              CHECK(updated == want);
            }
          }
          resized.push_back(want);
        }
        if (channels != 1) continue;
        sb3ale::EnvConfig config;
        config.img_height = size.first;
        config.img_width = size.second;
        config.layout = sb3ale::Layout::kHWC;
        sb3ale::FrameStack want_stack(config, Isa::kScalar);
        std::vector<sb3ale::FrameStack> stacks;
        for (Isa isa : vector_levels()) stacks.emplace_back(config, isa);
        std::vector<uint8_t> want(static_cast<std::size_t>(config.obs_size())), got(want.size());
        for (std::size_t k = 0; k < resized.size(); ++k) {
          const auto step = [&](sb3ale::FrameStack& stack) {
            k == 0 ? stack.restart(resized[k].data()) : stack.push(resized[k].data());
          };
          step(want_stack);
          want_stack.write(want.data());
          for (sb3ale::FrameStack& stack : stacks) {
            step(stack);
            std::fill(got.begin(), got.end(), 0);
            stack.write(got.data());
            CHECK(got == want);
          }
        }
      }
    }
  }
  std::printf("     %zu ROMs, %d screens\n", paths.size(), screens_seen);
}
