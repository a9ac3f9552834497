#include "env/reset_probe.hpp"

#include <cstdint>
#include <stdexcept>

#include "env/ale_state.hpp"

namespace sb3ale {

namespace {

constexpr int kProbeSeed = 20260101;

// `frames` frames of play from the state `ale` is in: legal actions held 1-16 frames each, drawn
// from `seed`, until the game is over (the score then shown, a kept high score among it).
void play(ale::ALEInterface& ale, uint64_t seed, int frames) {
  const ale::ActionVect actions = ale.getLegalActionSet();
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (int f = 0; f < frames && !ale.game_over(false);) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const ale::Action action = actions[(x >> 33) % actions.size()];
    for (int hold = 1 + static_cast<int>(x >> 60); hold > 0 && f < frames; --hold, ++f) ale.act(action);
  }
}

// Whether a reset from `base` keeps nothing of play ("" if so, else why not): resets after plays of
// 500, 3,000 and 10,000 frames, and after short plays with the whole RAM overwritten (ALE keeps the
// RAM across a system reset; most ROMs clear it at start-up, some keep part of it), must equal the
// reset without play. Its outcome must not depend on the environment RNG (ALE draws it twice every
// frame of play, sticky actions or not, so a reset that uses a draw, as Adventure's modes 1-2 do,
// depends on the play before it); with sticky actions it must not draw it at all (the draws after it
// decide which actions stick).
std::string probe_from(const EnvConfig& config, const ale::ALEState& base) {
  auto ale = make_ale(config, 0);  // no frame limit: play as long as the probe asks
  // ALE seeds its environment RNG from the clock unless told: fixed, the sticky draws of the plays
  // below, and so the verdict, are the same in every process and on every machine.
  ale->setInt("random_seed", kProbeSeed);
  ale->loadROM(config.rom_path);
  ale->restoreState(base);
  const std::string rng = rng_of(*ale);
  ale->reset_game();
  if (config.repeat_action_probability > 0 && rng_of(*ale) != rng) {
    return "with sticky actions its reset draws the environment RNG (the mode's set-up acts)";
  }
  const std::string reference = state_of(*ale);
  auto other = make_ale(config, 0);  // another RNG state before the same reset
  other->setInt("random_seed", kProbeSeed + 1);
  other->loadROM(config.rom_path);
  ale->restoreState(base);
  copy_rng(*other, *ale);
  ale->reset_game();
  if (state_of(*ale) != reference) return "its reset depends on the environment RNG";
  const int frames[] = {500, 3000, 10000};
  for (int v = 0; v < 3; ++v) {
    ale->restoreState(base);
    play(*ale, static_cast<uint64_t>(v), frames[v]);
    ale->reset_game();
    if (state_of(*ale) != reference) return "its reset keeps something of play (" + std::to_string(frames[v]) + " frames)";
  }
  for (int v = 0; v < 2; ++v) {
    ale->restoreState(base);
    play(*ale, static_cast<uint64_t>(v + 3), 64);
    for (size_t b = 0; b < 128; ++b) ale->setRAM(b, static_cast<ale::byte_t>(b * 37 + v * 101 + 1));
    ale->reset_game();
    if (state_of(*ale) != reference) return "its reset keeps RAM";
  }
  return "";
}

}  // namespace

std::string probe_reset(const EnvConfig& config) {
  if (!ale::ALEInterface::isSupportedROM(config.rom_path)) {  // its loadROM would end the process
    throw std::invalid_argument("not a ROM that ALE supports (unknown MD5): " + config.rom_path);
  }
  auto ale = make_ale(config, 0);
  ale->loadROM(config.rom_path);
  if (config.mode >= 0) ale->setMode(static_cast<ale::game_mode_t>(config.mode));
  if (config.difficulty >= 0) ale->setDifficulty(static_cast<ale::difficulty_t>(config.difficulty));
  ale->reset_game();
  return probe_from(config, ale->cloneState());
}

}  // namespace sb3ale
