#include "atari_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>

namespace sb3ale {

namespace {

constexpr int kNoop = 0;  // NoopResetEnv / EpisodicLifeEnv: action index 0 is NOOP

template <typename Values>
std::string join(const Values& values) {
  std::string text;
  for (const auto& v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

std::vector<uint32_t> os_entropy() {
  // SeedSequence(None): 128 bits of OS entropy, as AtariEnv.__init__ seeds itself.
  std::random_device device;
  return {device(), device(), device(), device()};
}

}  // namespace

void quiet_ale_logs() {
  static std::once_flag once;
  std::call_once(once, [] { ale::Logger::setMode(ale::Logger::Error); });
}

AtariEnv::AtariEnv(const EnvConfig& config, const AreaResize& resize)
    : config_(config), resize_(resize) {
  quiet_ale_logs();
  ale_.setFloat("repeat_action_probability", config_.repeat_action_probability);
  ale_.setInt("max_num_frames_per_episode", config_.max_num_frames_per_episode);
  apply_seed(os_entropy());
  action_set_ = config_.full_action_space ? ale_.getLegalActionSet() : ale_.getMinimalActionSet();
  screen_h_ = static_cast<int>(ale_.getScreen().height());
  screen_w_ = static_cast<int>(ale_.getScreen().width());
  if (screen_h_ != kScreenHeight || screen_w_ != kScreenWidth) {
    throw std::runtime_error("unexpected screen size " + std::to_string(screen_h_) + "x" +
                             std::to_string(screen_w_));
  }
  const size_t pixels = static_cast<size_t>(screen_h_) * screen_w_;
  pool_[0].assign(pixels, 0);  // MaxAndSkipEnv starts from np.zeros; palette index 0 is black
  pool_[1].assign(pixels, 0);
  raw_.assign(pixels, 0);
  scratch_.assign(pixels * config_.channels(), 0);
  if (config_.preset == Preset::kGymnasium) {
    gym_buffer_[0].assign(pixels * config_.channels(), 0);
    gym_buffer_[1].assign(pixels * config_.channels(), 0);
  }
  frame_.assign(static_cast<size_t>(config_.frame_size()), 0);
  stack_.assign(static_cast<size_t>(config_.obs_size()), 0);
  final_obs_.assign(static_cast<size_t>(config_.obs_size()), 0);
}

void AtariEnv::load_rom() {
  ale_.loadROM(config_.rom_path);
  // AtariEnv.load_game: mode and difficulty apply from the next reset_game().
  if (config_.mode >= 0) {
    const auto modes = ale_.getAvailableModes();
    if (std::find(modes.begin(), modes.end(), static_cast<ale::game_mode_t>(config_.mode)) == modes.end()) {
      throw std::invalid_argument("mode " + std::to_string(config_.mode) + " is not available; modes: " +
                                  join(modes));
    }
    ale_.setMode(static_cast<ale::game_mode_t>(config_.mode));
  }
  if (config_.difficulty >= 0) {
    const auto levels = ale_.getAvailableDifficulties();
    if (std::find(levels.begin(), levels.end(), static_cast<ale::difficulty_t>(config_.difficulty)) == levels.end()) {
      throw std::invalid_argument("difficulty " + std::to_string(config_.difficulty) +
                                  " is not available; difficulties: " + join(levels));
    }
    ale_.setDifficulty(static_cast<ale::difficulty_t>(config_.difficulty));
  }
  // The palette depends on the cartridge's display format: rebuild the lookup tables.
  auto& colours = ale_.theOSystem->colourPalette();
  for (int i = 0; i < 256; ++i) {
    const uint32_t rgb = colours.getRGB(i);
    palette_[i] = {static_cast<uint8_t>(rgb >> 16), static_cast<uint8_t>(rgb >> 8),
                   static_cast<uint8_t>(rgb)};
  }
  // getScreenGrayscale's own lookup. It reads entry p + 1 (gray sits after each even, on-screen
  // colour), so index 255, never on screen, is left at 0 rather than read past the palette.
  std::array<uint8_t, 255> indices;
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<uint8_t>(i);
  colours.applyPaletteGrayscale(ale_gray_.data(), indices.data(), indices.size());
  if (config_.grayscale && config_.preset == Preset::kSB3) {
    // SB3 pools RGB, then converts to gray: one table over pairs of palette indices does both.
    gray_pair_.resize(256 * 256);
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        const auto& p = palette_[a];
        const auto& q = palette_[b];
        gray_pair_[a * 256 + b] = rgb_to_gray(std::max(p[0], q[0]), std::max(p[1], q[1]),
                                              std::max(p[2], q[2]));
      }
    }
  }
}

void AtariEnv::apply_seed(const std::vector<uint32_t>& seed) {
  // AtariEnv.seed_game + load_game: np_seed, ale_seed = SeedSequence(seed).generate_state(2).
  const std::vector<uint32_t> state = seed_sequence_state(seed, 2);
  seeds_ = {state[0], state[1]};
  np_random_ = NumpyGenerator(entropy_words(state[0]));  // gymnasium seeding.np_random(np_seed)
  int32_t ale_seed;  // np.int32(ale_seed): the same 32 bits, read as signed
  std::memcpy(&ale_seed, &state[1], sizeof ale_seed);
  ale_.setInt("random_seed", ale_seed);
  load_rom();
}

AtariEnv::Outcome AtariEnv::frame(int action) {
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
  for (int64_t i = 0; i < repeat; ++i) out.reward += ale_.act(action_set_[action], strength_);
  out.terminated = ale_.game_over(false);
  out.truncated = ale_.game_truncated();
  seeded_now_ = false;
  // Monitor sits innermost: it sees every env step and its unclipped reward.
  episode_return_ += out.reward;
  episode_length_ += 1;
  return out;
}

void AtariEnv::capture(std::vector<uint8_t>& dst) const {
  std::memcpy(dst.data(), ale_.getScreen().getArray(), dst.size());
}

void AtariEnv::noop_reset(const std::vector<uint32_t>* seed) {
  // AtariEnv.reset (+ Monitor.reset, StickyActionEnv.reset), then NoopResetEnv's no-ops.
  auto real_reset = [&] {
    if (seed != nullptr) apply_seed(*seed);
    ale_.reset_game();
    seeded_now_ = seed != nullptr;
    seeded_reset_ = seed != nullptr;
    sticky_action_ = 0;
    episode_return_ = 0;
    episode_length_ = 0;
    capture(raw_);
  };
  real_reset();
  if (config_.noop_max > 0) {
    const int64_t noops = np_random_.integers(1, static_cast<int64_t>(config_.noop_max) + 1);
    for (int64_t i = 0; i < noops; ++i) {
      const Outcome out = frame(kNoop);
      capture(raw_);
      // NoopResetEnv resets with the same kwargs and carries on with the same count.
      if (out.ended()) real_reset();
    }
  }
  obs_is_raw_ = true;
}

AtariEnv::Outcome AtariEnv::max_skip(int action) {
  Outcome total;
  const int skip = config_.frameskip;
  const bool pooled = config_.maxpool && skip > 1;  // frame_skip=1: AtariWrapper adds no MaxAndSkipEnv
  for (int i = 0; i < skip; ++i) {
    const Outcome out = frame(action);
    if (pooled && i == skip - 2) capture(pool_[0]);
    if (pooled && i == skip - 1) capture(pool_[1]);
    total.reward += out.reward;
    total.terminated = out.terminated;
    total.truncated = out.truncated;
    total.game_ended = out.ended();
    if (out.ended()) break;  // the buffer keeps stale frames from earlier steps, as in SB3
  }
  if (!pooled) capture(raw_);
  obs_is_raw_ = !pooled;
  return total;
}

AtariEnv::Outcome AtariEnv::life_step(int action) {
  Outcome out = max_skip(action);
  if (!config_.episodic_life) return out;
  // EpisodicLifeEnv.step: lives 0 is left to the game over (Qbert stays at 0 for a few frames).
  was_real_done_ = out.ended();
  const int lives = ale_.lives();
  if (0 < lives && lives < lives_) out.terminated = true;
  lives_ = lives;
  return out;
}

void AtariEnv::life_reset(const std::vector<uint32_t>* seed) {
  if (!config_.episodic_life) return noop_reset(seed);
  // EpisodicLifeEnv.reset: a real reset only after a real game end, else one NOOP step (seed unused).
  if (was_real_done_) {
    noop_reset(seed);
  } else if (max_skip(kNoop).ended()) {
    noop_reset(seed);
  }
  lives_ = ale_.lives();
}

void AtariEnv::fire_reset(const std::vector<uint32_t>* seed) {
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
  fill_reset_info();
}

void AtariEnv::gym_capture(std::vector<uint8_t>& dst) const {
  // ale.getScreenGrayscale (ALE's gray of each palette index) or ale.getScreenRGB.
  const uint8_t* screen = ale_.getScreen().getArray();
  const size_t pixels = raw_.size();
  if (config_.grayscale) {
    for (size_t p = 0; p < pixels; ++p) dst[p] = ale_gray_[screen[p]];
  } else {
    for (size_t p = 0; p < pixels; ++p) std::memcpy(&dst[3 * p], palette_[screen[p]].data(), 3);
  }
}

AtariEnv::Outcome AtariEnv::gym_skip(int action) {
  // AtariPreprocessing.step: the ending frame is never captured; frame skip-2 goes to obs_buffer[1],
  // frame skip-1 to obs_buffer[0]; a life loss (terminal_on_life_loss) ends the skip at once.
  Outcome total;
  const int skip = config_.frameskip;
  for (int t = 0; t < skip; ++t) {
    const Outcome out = frame(action);
    total.reward += out.reward;
    total.terminated = out.terminated;
    total.truncated = out.truncated;
    total.game_ended = out.ended();
    if (config_.episodic_life) {
      const int lives = ale_.lives();
      total.terminated = total.terminated || lives < lives_;
      lives_ = lives;
    }
    if (total.ended()) break;
    if (t == skip - 2) {
      gym_capture(gym_buffer_[1]);
    } else if (t == skip - 1) {
      gym_capture(gym_buffer_[0]);
    }
  }
  return total;
}

void AtariEnv::gym_reset(const std::vector<uint32_t>* seed) {
  // AtariPreprocessing.reset: AtariEnv.reset and its no-ops (as NoopResetEnv), then the reset
  // frame in obs_buffer[0] and zeros in obs_buffer[1], so that pooling leaves it as it is.
  noop_reset(seed);
  lives_ = ale_.lives();
  gym_capture(gym_buffer_[0]);
  std::fill(gym_buffer_[1].begin(), gym_buffer_[1].end(), 0);
  warp();
  fill_reset_info();
}

void AtariEnv::env_reset(const std::vector<uint32_t>* seed) {
  strength_ = 1.0f;  // resets play discrete NOOP and FIRE
  needs_reset_ = false;
  if (config_.preset == Preset::kGymnasium) {
    gym_reset(seed);
  } else {
    fire_reset(seed);
  }
}

void AtariEnv::fill_reset_info() {
  const bool gym = config_.preset == Preset::kGymnasium;
  reset_info_.empty = !gym && config_.fire_reset;  // FireResetEnv returns {}
  reset_info_.lives = ale_.lives();
  reset_info_.episode_frame_number = ale_.getEpisodeFrameNumber();
  reset_info_.frame_number = ale_.getFrameNumber();
  // SB3 returns a seeded reset_game()'s info only if no frame has run since; AtariPreprocessing
  // merges each no-op's info into AtariEnv.reset's, which keeps its "seeds".
  reset_info_.has_seeds = gym ? seeded_reset_ : seeded_now_;
  reset_info_.seeds = seeds_;
}

void AtariEnv::warp() {
  if (config_.preset == Preset::kGymnasium) {
    // AtariPreprocessing._get_obs: pools in place into obs_buffer[0] (which so keeps the max), resizes.
    if (config_.maxpool && config_.frameskip > 1) {
      std::vector<uint8_t>& a = gym_buffer_[0];
      const std::vector<uint8_t>& b = gym_buffer_[1];
      for (size_t p = 0; p < a.size(); ++p) a[p] = std::max(a[p], b[p]);
    }
    resize_(gym_buffer_[0].data(), frame_.data());
    return;
  }
  // WarpFrame on MaxAndSkipEnv's max of two RGB frames (or on the raw frame): gray, then INTER_AREA.
  const uint8_t* a = obs_is_raw_ ? raw_.data() : pool_[0].data();
  const uint8_t* b = obs_is_raw_ ? raw_.data() : pool_[1].data();
  const size_t pixels = raw_.size();
  uint8_t* dst = scratch_.data();
  if (config_.grayscale) {
    const uint8_t* table = gray_pair_.data();
    for (size_t p = 0; p < pixels; ++p) dst[p] = table[a[p] << 8 | b[p]];
  } else {
    for (size_t p = 0; p < pixels; ++p) {
      const auto& x = palette_[a[p]];
      const auto& y = palette_[b[p]];
      dst[3 * p] = std::max(x[0], y[0]);
      dst[3 * p + 1] = std::max(x[1], y[1]);
      dst[3 * p + 2] = std::max(x[2], y[2]);
    }
  }
  resize_(scratch_.data(), frame_.data());
}

void AtariEnv::restart_stack() {
  // VecFrameStack (and FrameStackObservation's "zero" padding) zero-pads after every reset and
  // every done, life losses included; "reset" padding repeats the reset frame.
  if (config_.pad_with_reset) {
    for (int j = 0; j < config_.stack_num; ++j) {
      std::copy(frame_.begin(), frame_.end(), stack_.begin() + static_cast<size_t>(j) * frame_.size());
    }
  } else {
    std::fill(stack_.begin(), stack_.end(), 0);
    push_frame();
  }
}

void AtariEnv::push_frame() {
  newest_ = (newest_ + 1) % config_.stack_num;
  std::copy(frame_.begin(), frame_.end(), stack_.begin() + static_cast<size_t>(newest_) * frame_.size());
}

void AtariEnv::write_stack(uint8_t* out) const {
  const int stack = config_.stack_num;
  const int channels = config_.channels();
  const size_t pixels = static_cast<size_t>(config_.img_height) * config_.img_width;
  for (int j = 0; j < stack; ++j) {  // j = 0 is the oldest frame
    const uint8_t* src = stack_.data() + static_cast<size_t>((newest_ + 1 + j) % stack) * frame_.size();
    if (config_.layout == Layout::kFrames) {
      std::memcpy(out + j * frame_.size(), src, frame_.size());
    } else if (config_.layout == Layout::kHWC) {
      const size_t step = static_cast<size_t>(stack) * channels;
      for (size_t p = 0; p < pixels; ++p) {
        for (int c = 0; c < channels; ++c) out[p * step + j * channels + c] = src[p * channels + c];
      }
    } else if (channels == 1) {
      std::memcpy(out + j * pixels, src, pixels);
    } else {
      for (int c = 0; c < channels; ++c) {
        uint8_t* plane = out + (static_cast<size_t>(j) * channels + c) * pixels;
        for (size_t p = 0; p < pixels; ++p) plane[p] = src[p * channels + c];
      }
    }
  }
}

void AtariEnv::reset(const std::vector<uint32_t>* seed, uint8_t* obs) {
  env_reset(seed);
  restart_stack();
  write_stack(obs);
}

void AtariEnv::step(int action, float strength, StepResult& result, uint8_t* obs) {
  if (needs_reset_) {
    // Gymnasium NEXT_STEP: the step after a done is a reset; the action is ignored.
    reset(nullptr, obs);
    result = StepResult{};
    result.reset = true;
    result.lives = reset_info_.lives;
    result.episode_frame_number = reset_info_.episode_frame_number;
    result.frame_number = reset_info_.frame_number;
    return;
  }
  strength_ = strength;
  const int lives_before = ale_.lives();
  Outcome out;
  if (config_.preset == Preset::kGymnasium) {
    out = gym_skip(action);
  } else {
    out = life_step(action);
  }
  warp();
  const int lives = ale_.lives();
  // life_loss_info (ALE's vector env): a life loss is reported as terminated; nothing resets.
  const bool life_lost = config_.life_loss_info && 0 < lives && lives < lives_before;
  result.reward = static_cast<float>(
      config_.reward_clipping ? static_cast<double>((out.reward > 0) - (out.reward < 0)) : out.reward);
  result.terminated = out.terminated || life_lost;
  result.truncated = out.truncated && !result.terminated;
  result.reset = false;
  result.time_limit_truncated = out.truncated && !out.terminated;
  result.lives = lives;
  result.episode_frame_number = ale_.getEpisodeFrameNumber();
  result.frame_number = ale_.getFrameNumber();
  result.game_end = out.game_ended;
  result.episode_return = out.game_ended ? episode_return_ : 0.0;
  result.episode_length = out.game_ended ? episode_length_ : 0;
  push_frame();
  if (result.terminated || result.truncated) write_stack(final_obs_.data());  // info["terminal_observation"] / final_obs
  if (out.ended()) {
    if (config_.next_step_autoreset) {
      needs_reset_ = true;
    } else {
      // DummyVecEnv + VecFrameStack: keep the terminal stack, reset now, restart the stack.
      env_reset(nullptr);
      restart_stack();
      result.reset = true;
    }
  }
  write_stack(obs);
}

void AtariEnv::screen_rgb(uint8_t* out) const {
  const uint8_t* screen = ale_.getScreen().getArray();
  for (size_t p = 0; p < raw_.size(); ++p) std::memcpy(out + 3 * p, palette_[screen[p]].data(), 3);
}

}  // namespace sb3ale
