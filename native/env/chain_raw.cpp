// ale_py's AtariEnv alone, as gym.make("ALE/<Game>-v5", obs_type=...) and make_vec_env's "-ram" ids
// give it: its own frame skip (fixed or drawn per step) and sticky actions, no preprocessing; the
// observation is what AtariEnv._get_obs returns (getScreenRGB, getScreenGrayscale or getRAM).
#include <stdexcept>
#include <string>

#include "env/chain.hpp"
#include "env/gym_atari_env.hpp"

namespace sb3ale {

namespace {

class RawChain : public Chain {
 public:
  RawChain(const EnvConfig& config, Emulator& emulator)
      : Chain(config), config_(config), emu_(emulator), env_(config, emulator) {
    const bool screens = config.obs_type == ObsType::kRGB || config.obs_type == ObsType::kGrayscale;
    if (screens && emu_.screen_height() != config.screen_height) {  // the observation's size came from it
      throw std::invalid_argument(config.rom_path + " has " + std::to_string(emu_.screen_height()) +
                                  " screen rows, its config says " + std::to_string(config.screen_height));
    }
  }

  void reset(const std::vector<uint32_t>* seed) override {
    env_.noop_reset(seed);  // noop_max is 0 here: AtariEnv.reset alone
    observe();
    emu_.set_next_reset_script(env_.noop_reset_script());  // the reset's own screen, nothing after it
  }

  ChainStep step(int action, float strength) override {
    env_.set_strength(strength);
    const GymAtariEnv::Outcome out = env_.step(action);
    ChainStep total;
    total.reward = out.reward;
    total.terminated = out.terminated;
    total.truncated = out.truncated;
    total.game_end = out.ended();  // no wrapper above AtariEnv: its episode is the game
    observe();
    return total;
  }

  ResetInfo reset_info() const override {
    ResetInfo info = emu_.info();
    info.has_seeds = env_.seeded_reset();  // AtariEnv.reset(seed=...) adds "seeds"
    info.seeds = env_.seeds();
    return info;
  }

 private:
  void observe() {
    switch (config_.obs_type) {
      case ObsType::kRGB:
        return emu_.screen_rgb(frame_.data());
      case ObsType::kGrayscale:
        return emu_.screen_gray(frame_.data());
      case ObsType::kRAM:
      case ObsType::kProcessed:
        break;
    }
    emu_.ram(frame_.data());
  }

  const EnvConfig& config_;
  Emulator& emu_;
  GymAtariEnv env_;
};

}  // namespace

std::unique_ptr<Chain> make_raw_chain(const EnvConfig& config, Emulator& emulator) {
  return std::make_unique<RawChain>(config, emulator);
}

}  // namespace sb3ale
