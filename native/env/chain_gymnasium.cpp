// Gymnasium's AtariPreprocessing over ale_py's AtariEnv(frameskip=1), step for step: gray from
// ALE's own palette before the max-pool, the ending frame never pooled, terminal_on_life_loss.
#include <algorithm>
#include <cstring>

#include "env/chain.hpp"
#include "env/gym_atari_env.hpp"
#include "env/max_pool.hpp"

namespace sb3ale {

namespace {

class GymnasiumChain : public Chain {
 public:
  GymnasiumChain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes)
      : Chain(config),
        config_(config),
        emu_(emulator),
        env_(config, emulator),
        resize_(resizes.get(emu_.screen_height())),
        pool_(config, emu_, config.maxpool && config.frameskip > 1) {}

  void reset(const std::vector<uint32_t>* seed) override {
    // AtariPreprocessing.reset: AtariEnv.reset and its no-ops (as NoopResetEnv), then the reset
    // frame in obs_buffer[0] and zeros in obs_buffer[1], so that pooling leaves it as it is.
    env_.noop_reset(seed);
    lives_ = emu_.lives();
    pool_.reset_frame();
    warp();
    emu_.set_next_reset_script(env_.noop_reset_script());  // what follows a real reset: the no-ops
  }

  ChainStep step(int action, float strength) override {
    // AtariPreprocessing.step: the ending frame is never captured; frame skip-2 goes to obs_buffer[1],
    // frame skip-1 to obs_buffer[0]; a life loss (terminal_on_life_loss) ends the skip at once.
    env_.set_strength(strength);
    ChainStep total;
    const int skip = config_.frameskip;
    for (int t = 0; t < skip; ++t) {
      const GymAtariEnv::Outcome out = env_.step(action);
      total.reward += out.reward;
      total.terminated = out.terminated;
      total.truncated = out.truncated;
      if (config_.episodic_life) {
        const int lives = emu_.lives();
        total.terminated = total.terminated || lives < lives_;
        lives_ = lives;
      }
      if (total.ended()) break;
      if (t == skip - 2) {
        pool_.older();
      } else if (t == skip - 1) {
        pool_.newer();
      }
    }
    total.game_end = total.ended();  // every reset after an episode is a new game
    warp();
    return total;
  }

  ResetInfo reset_info() const override {
    ResetInfo info = emu_.info();
    // AtariPreprocessing merges each no-op's info into AtariEnv.reset's, which keeps its "seeds".
    info.has_seeds = env_.seeded_reset();
    info.seeds = env_.seeds();
    return info;
  }

 private:
  // AtariPreprocessing._get_obs: pools in place into obs_buffer[0] (which so keeps the max), resizes.
  void warp() { resize_to_frame(resize_, pool_.pooled(), pool_.size()); }

  const EnvConfig& config_;
  Emulator& emu_;
  GymAtariEnv env_;            // before resize_: it loads the ROM, which says the screen's height
  const AreaResize& resize_;
  MaxPool pool_;               // AtariPreprocessing.obs_buffer
  int lives_ = 0;
};

}  // namespace

std::unique_ptr<Chain> make_gymnasium_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes) {
  return std::make_unique<GymnasiumChain>(config, emulator, resizes);
}

}  // namespace sb3ale
