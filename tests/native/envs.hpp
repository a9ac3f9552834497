// What the engine's and the vectorizer's tests build their envs from: Breakout (the runner's ROM).
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/engine.hpp"
#include "check.hpp"

namespace check {

/// n Breakout envs, truncated after max_frames (200: 50 steps, so that envs reset inside a run).
inline std::vector<sb3ale::EnvConfig> configs(int n, int max_frames = 108000) {
  sb3ale::EnvConfig c;
  c.rom_path = rom_path();
  c.max_num_frames_per_episode = max_frames;
  c.reset_ahead = true;  // Breakout's resets are vetted for computing ahead (sb3_ale_vec/reset_table.csv)
  return std::vector<sb3ale::EnvConfig>(static_cast<size_t>(n), c);
}

inline std::vector<int> ids(int n) {
  std::vector<int> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

/// Env k's seed is k.
inline std::vector<sb3ale::Seed> seeds(int n) {
  std::vector<sb3ale::Seed> out;
  for (int i = 0; i < n; ++i) out.emplace_back(std::vector<uint32_t>{static_cast<uint32_t>(i)});
  return out;
}

}  // namespace check
