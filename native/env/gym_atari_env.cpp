#include "env/gym_atari_env.hpp"

#include <cstring>
#include <random>

namespace sb3ale {

namespace {

constexpr int kNoop = 0;  // NoopResetEnv: action index 0 is NOOP

std::vector<uint32_t> os_entropy() {
  // SeedSequence(None): 128 bits of OS entropy, as AtariEnv.__init__ seeds itself.
  std::random_device device;
  return {device(), device(), device(), device()};
}

}  // namespace

GymAtariEnv::GymAtariEnv(const EnvConfig& config, Emulator& emulator) : config_(config), emu_(emulator) {
  seed(os_entropy());
}

void GymAtariEnv::seed(const std::vector<uint32_t>& seed) {
  // AtariEnv.seed_game + load_game: np_seed, ale_seed = SeedSequence(seed).generate_state(2).
  const std::vector<uint32_t> state = seed_sequence_state(seed, 2);
  seeds_ = {state[0], state[1]};
  np_random_ = NumpyGenerator(entropy_words(state[0]));  // gymnasium seeding.np_random(np_seed)
  int32_t ale_seed;  // np.int32(ale_seed): the same 32 bits, read as signed
  std::memcpy(&ale_seed, &state[1], sizeof ale_seed);
  emu_.load(ale_seed);
}

GymAtariEnv::Outcome GymAtariEnv::step(int action) {
  if (config_.action_repeat_probability > 0) {
    // StickyActionEnv: keep the previous action with probability p, drawn every env step.
    if (np_random_.random() >= config_.action_repeat_probability) sticky_action_ = action;
    action = sticky_action_;
  }
  // AtariEnv.step: its own frame skip (stochastic when given as a range), game over checked after.
  int64_t repeat = config_.env_frameskip;
  if (config_.env_frameskip_max > config_.env_frameskip) {
    repeat = np_random_.integers(config_.env_frameskip, config_.env_frameskip_max);
  }
  Outcome out;
  for (int64_t i = 0; i < repeat; ++i) out.reward += emu_.act(action, strength_);
  out.terminated = emu_.game_over();
  out.truncated = emu_.game_truncated();
  seeded_now_ = false;
  emu_.stats().length += 1;  // Monitor sits innermost: it counts AtariEnv steps
  return out;
}

void GymAtariEnv::reset_game(const std::vector<uint32_t>* seed) {
  // AtariEnv.reset (+ Monitor.reset, StickyActionEnv.reset).
  if (seed != nullptr) this->seed(*seed);
  emu_.reset_game();
  seeded_now_ = seed != nullptr;
  seeded_reset_ = seed != nullptr;
  sticky_action_ = 0;
}

void GymAtariEnv::noop_reset(const std::vector<uint32_t>* seed) {
  strength_ = 1.0f;
  reset_game(seed);
  if (config_.noop_max <= 0) return;
  const int64_t noops = np_random_.integers(1, static_cast<int64_t>(config_.noop_max) + 1);
  for (int64_t i = 0; i < noops; ++i) {
    if (step(kNoop).ended()) reset_game(seed);  // NoopResetEnv resets with the same kwargs
  }
}

ResetScript GymAtariEnv::noop_reset_script() const {
  ResetScript script;
  if (config_.repeat_action_probability > 0 || config_.action_repeat_probability > 0 ||
      config_.env_frameskip_max > config_.env_frameskip) {
    return script;
  }
  NumpyGenerator draw = np_random_;  // the next draw, not taken
  const int64_t noops = config_.noop_max > 0 ? draw.integers(1, static_cast<int64_t>(config_.noop_max) + 1) : 0;
  const int64_t frames = noops * config_.env_frameskip;
  script.screens.push_back(frames == 0);
  for (int64_t f = 0; f < frames; ++f) {
    script.actions.push_back(static_cast<int>(emu_.action_set()[kNoop]));
    script.screens.push_back(f == frames - 1);
  }
  return script;
}

}  // namespace sb3ale
