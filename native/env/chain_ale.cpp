// ale_py's own vector env (ale::vector::PreprocessedEnv, ALE 0.12), step for step: FIRE then
// std::mt19937 no-ops at reset (drawn as ale-py's wheel draws them on this platform: uniform_int.hpp),
// frames counted against the episode limit, episodic life as a full reset, gray or RGB from ALE's
// palette before the in-place max-pool.
#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "env/chain.hpp"
#include "env/max_pool.hpp"
#include "env/uniform_int.hpp"

namespace sb3ale {

namespace {

class AleChain : public Chain {
 public:
  AleChain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes)
      : Chain(config),
        config_(config),
        emu_(loaded(emulator)),
        resize_(resizes.get(emu_.screen_height())),
        pool_(config, emu_, config.maxpool),
        rng_(std::random_device{}()),
        noop_hi_(config.noop_max > 0 ? config.noop_max - 1 : 0) {
    fire_ = config_.fire_reset && emu_.has_action(ale::PLAYER_A_FIRE);
  }

  static Emulator& loaded(Emulator& emulator) {
    // Unseeded, as ALE's own (random_seed -1 there means the clock; here OS entropy).
    emulator.load(static_cast<int32_t>(std::random_device{}() >> 1));
    return emulator;
  }

  void reset(const std::vector<uint32_t>* seed) override {
    if (seed != nullptr) {  // ALE's seeds are C ints (checked in Python first)
      if (seed->size() != 1 || seed->front() > 0x7fffffffu) throw std::invalid_argument("ALE's seeds are in [0, 2^31 - 1]");
      const auto value = static_cast<int32_t>(seed->front());
      rng_.seed(static_cast<std::mt19937::result_type>(value));
      emu_.load(value);
    }
    emu_.reset_game();
    if (fire_) emu_.act_id(ale::PLAYER_A_FIRE);
    // The no-op count is drawn from 0..noop_max-1, less the FIRE frame.
    int noops = draw_as_ale_py(rng_, 0, noop_hi_) - static_cast<int>(fire_);
    for (; noops > 0; --noops) {
      emu_.act_id(ale::PLAYER_A_NOOP);
      if (emu_.game_over()) emu_.reset_game();
    }
    pool_.reset_frame();
    warp();
    elapsed_ = 0;
    lives_ = emu_.lives();
    emu_.set_next_reset_script(next_reset_script());
  }

  ChainStep step(int action, float strength) override {
    ChainStep out;
    ale::reward_t reward = 0;  // ALE sums rewards as ints
    bool life_lost = false;
    for (int skip = config_.frameskip; skip > 0; --skip) {
      reward += emu_.act(action, strength);
      emu_.stats().length += 1;
      out.terminated = emu_.game_over();
      ++elapsed_;
      life_lost = emu_.lives() < lives_ && emu_.lives() > 0;
      if (out.terminated || elapsed_ >= config_.max_num_frames_per_episode || (config_.episodic_life && life_lost)) {
        break;
      }
      if (skip == 2) pool_.older();  // the last two frames of the skip
      if (skip == 1) pool_.newer();
    }
    warp();
    lives_ = emu_.lives();
    out.reward = reward;
    out.terminated = out.terminated || (config_.episodic_life && life_lost);
    out.truncated = elapsed_ >= config_.max_num_frames_per_episode && !out.terminated;
    out.game_end = out.ended();  // every episode end is a reset_game()
    return out;
  }

  ResetInfo reset_info() const override { return emu_.info(); }

 private:
  // What follows a real reset: FIRE, then the no-ops of the next draw, the screen read after them.
  // With sticky actions ALE's frames depend on its RNG: no script.
  ResetScript next_reset_script() const {
    ResetScript script;
    if (config_.repeat_action_probability > 0) return script;
    std::mt19937 rng = rng_;  // the next draw, not taken: the engine is the distribution's only state
    const int noops = draw_as_ale_py(rng, 0, noop_hi_) - static_cast<int>(fire_);
    script.screens.push_back(!fire_ && noops <= 0);
    if (fire_) {
      script.actions.push_back(ale::PLAYER_A_FIRE);
      script.screens.push_back(noops <= 0);
    }
    for (int i = 0; i < noops; ++i) {
      script.actions.push_back(ale::PLAYER_A_NOOP);
      script.screens.push_back(i == noops - 1);
    }
    return script;
  }

  void warp() { resize_to_frame(resize_, pool_.pooled(), pool_.size()); }

  const EnvConfig& config_;
  Emulator& emu_;
  const AreaResize& resize_;
  MaxPool pool_;  // in place, as ALE's own: its frame keeps the max until a frame overwrites it
  std::mt19937 rng_;
  int noop_hi_;  // the no-op count's largest draw, noop_max - 1
  bool fire_ = false;
  int elapsed_ = 0;  // frames since the reset, against max_num_frames_per_episode
  int lives_ = 0;
};

}  // namespace

std::unique_ptr<Chain> make_ale_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes) {
  return std::make_unique<AleChain>(config, emulator, resizes);
}

}  // namespace sb3ale
