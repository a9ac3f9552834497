// SB3's AtariWrapper chain, step for step: Monitor -> [StickyActionEnv] -> NoopResetEnv ->
// MaxAndSkipEnv -> EpisodicLifeEnv -> [FireResetEnv] -> WarpFrame (-> ClipRewardEnv, in AtariEnv).
#include <algorithm>
#include <cstring>

#include "env/chain.hpp"
#include "env/gym_atari_env.hpp"

namespace sb3ale {

namespace {

constexpr int kNoop = 0;  // EpisodicLifeEnv's NOOP step, FireResetEnv's FIRE (1) and action 2

class Sb3Chain : public Chain {
 public:
  Sb3Chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes)
      : Chain(config),
        config_(config),
        emu_(emulator),
        env_(config, emulator),
        resize_(resizes.get(emu_.screen_height())) {
    const size_t pixels = emu_.screen_pixels();  // the ROM's, loaded by env_
    pool_[0].assign(pixels, 0);  // MaxAndSkipEnv starts from np.zeros; palette index 0 is black
    pool_[1].assign(pixels, 0);
    raw_.assign(pixels, 0);
    scratch_[0].assign(pixels * config_.channels(), 0);
    scratch_[1].assign(pixels * config_.channels(), 0);
  }

  void reset(const std::vector<uint32_t>* seed) override {
    env_.set_strength(1.0f);
    life_reset(seed);
    if (config_.fire_reset) {
      // FireResetEnv: FIRE, then action 2, each followed by a reset if it ended (life loss included).
      if (life_step(1).ended()) life_reset(seed);
      const bool ended = life_step(2).ended();
      warp();  // step 2's obs is returned even when a reset follows it
      if (ended) life_reset(seed);
    } else {
      warp();
    }
    emu_.set_next_reset_script(next_reset_script());
  }

  ChainStep step(int action, float strength) override {
    env_.set_strength(strength);
    const ChainStep out = life_step(action);
    warp();
    return out;
  }

  ResetInfo reset_info() const override {
    ResetInfo info;
    info.empty = config_.fire_reset;  // FireResetEnv returns {}
    info.lives = emu_.lives();
    info.episode_frame_number = emu_.episode_frame_number();
    info.frame_number = emu_.frame_number();
    // SB3 returns a seeded reset_game()'s info only if no frame has run since.
    info.has_seeds = env_.seeded_now();
    info.seeds = env_.seeds();
    return info;
  }

 private:
  // What follows a real reset: NoopResetEnv's no-ops (its obs: the last frame), then FireResetEnv's
  // FIRE and action 2 through MaxAndSkipEnv (the frames it pools, or its last).
  ResetScript next_reset_script() const {
    ResetScript script = env_.noop_reset_script();
    if (script.screens.empty()) return script;  // not known one reset ahead
    const ale::ActionVect& set = emu_.action_set();
    const int frames = config_.env_frameskip, skip = config_.frameskip;
    const bool pooled = config_.maxpool && skip > 1;
    for (const int action : {1, 2}) {
      if (!config_.fire_reset) break;
      for (int i = 0; i < skip; ++i) {
        for (int f = 0; f < frames; ++f) {
          script.actions.push_back(static_cast<int>(set[static_cast<size_t>(action)]));
          script.screens.push_back(f == frames - 1 && (pooled ? i >= skip - 2 : i == skip - 1));
        }
      }
    }
    return script;
  }

  void capture(std::vector<uint8_t>& dst) const { std::memcpy(dst.data(), emu_.screen(), dst.size()); }

  void noop_reset(const std::vector<uint32_t>* seed) {
    env_.noop_reset(seed);
    capture(raw_);  // NoopResetEnv's obs: the last raw frame
    obs_is_raw_ = true;
  }

  ChainStep max_skip(int action) {
    ChainStep total;
    const int skip = config_.frameskip;
    const bool pooled = config_.maxpool && skip > 1;  // frame_skip=1: AtariWrapper adds no MaxAndSkipEnv
    for (int i = 0; i < skip; ++i) {
      const GymAtariEnv::Outcome out = env_.step(action);
      if (pooled && i == skip - 2) capture(pool_[0]);
      if (pooled && i == skip - 1) capture(pool_[1]);
      total.reward += out.reward;
      total.terminated = out.terminated;
      total.truncated = out.truncated;
      total.game_end = out.ended();
      if (out.ended()) break;  // the buffer keeps stale frames from earlier steps, as in SB3
    }
    if (!pooled) capture(raw_);
    obs_is_raw_ = !pooled;
    return total;
  }

  ChainStep life_step(int action) {
    ChainStep out = max_skip(action);
    if (!config_.episodic_life) return out;
    // EpisodicLifeEnv.step: lives 0 is left to the game over (Qbert stays at 0 for a few frames).
    was_real_done_ = out.ended();
    const int lives = emu_.lives();
    if (0 < lives && lives < lives_) out.terminated = true;
    lives_ = lives;
    return out;
  }

  void life_reset(const std::vector<uint32_t>* seed) {
    if (!config_.episodic_life) return noop_reset(seed);
    // EpisodicLifeEnv.reset: a real reset only after a real game end, else one NOOP step (seed unused).
    if (was_real_done_) {
      noop_reset(seed);
    } else if (max_skip(kNoop).ended()) {
      noop_reset(seed);
    }
    lives_ = emu_.lives();
  }

  void warp() {
    // WarpFrame on MaxAndSkipEnv's max of two RGB frames (or on the raw frame): gray, then INTER_AREA.
    const uint8_t* a = obs_is_raw_ ? raw_.data() : pool_[0].data();
    const uint8_t* b = obs_is_raw_ ? raw_.data() : pool_[1].data();
    const size_t pixels = raw_.size();
    newest_ ^= 1;
    uint8_t* dst = scratch_[newest_].data();
    const Palette& palette = emu_.palette();
    if (config_.grayscale) {
      palette.pool_gray(a, b, dst, pixels);
    } else {
      for (size_t p = 0; p < pixels; ++p) {
        const auto& x = palette.rgb[a[p]];
        const auto& y = palette.rgb[b[p]];
        dst[3 * p] = std::max(x[0], y[0]);
        dst[3 * p + 1] = std::max(x[1], y[1]);
        dst[3 * p + 2] = std::max(x[2], y[2]);
      }
    }
    // frame_ holds the resize of the last warp's frame, the other scratch_ (at first both are
    // zeros, whose resize is zeros): only the rows that changed since are resized again.
    resize_.update(dst, scratch_[newest_ ^ 1].data(), frame_.data());
  }

  const EnvConfig& config_;
  Emulator& emu_;
  GymAtariEnv env_;            // before resize_: it loads the ROM, which says the screen's height
  const AreaResize& resize_;
  std::vector<uint8_t> pool_[2];  // MaxAndSkipEnv._obs_buffer, as palette indices, never cleared
  std::vector<uint8_t> raw_;      // the last raw frame (NoopResetEnv's obs)
  bool obs_is_raw_ = false;       // the chain's current obs is raw_, not the pooled buffers
  int lives_ = 0;                 // EpisodicLifeEnv.lives
  bool was_real_done_ = true;     // EpisodicLifeEnv.was_real_done
  std::vector<uint8_t> scratch_[2];  // the frame before resizing (gray or RGB, full size): this warp's, the last's
  int newest_ = 0;                   // the last warp's scratch_, whose resize frame_ holds
};

}  // namespace

std::unique_ptr<Chain> make_sb3_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resizes) {
  return std::make_unique<Sb3Chain>(config, emulator, resizes);
}

}  // namespace sb3ale
