// What the engine's and the vectorizer's tests build their envs from: Breakout (the runner's ROM).
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "core/engine.hpp"
#include "env/ale_state.hpp"
#include "env/reset_job.hpp"
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

/// An emulator of `config`'s ROM right after its first reset.
inline std::unique_ptr<ale::ALEInterface> live_emulator(const sb3ale::EnvConfig& config) {
  auto live = sb3ale::make_ale(config, 0);
  live->loadROM(config.rom_path);
  live->reset_game();
  return live;
}

/// A prepare of the reset after `live`'s state, as an env queues one (no script).
inline std::shared_ptr<sb3ale::ResetJob> prepare_from(const sb3ale::EnvConfig& config, ale::ALEInterface& live) {
  auto job = std::make_shared<sb3ale::ResetJob>();
  job->config = std::make_shared<const sb3ale::EnvConfig>(config);
  job->base = live.cloneState();
  return job;
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
