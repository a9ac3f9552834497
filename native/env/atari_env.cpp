#include "env/atari_env.hpp"

namespace sb3ale {

namespace {

std::unique_ptr<Chain> make_chain(const EnvConfig& config, Emulator& emulator, ResizeCache& resize) {
  if (config.obs_type != ObsType::kProcessed) return make_raw_chain(config, emulator);
  switch (config.preset) {
    case Preset::kGymnasium:
      return make_gymnasium_chain(config, emulator, resize);
    case Preset::kALE:
      return make_ale_chain(config, emulator, resize);
    case Preset::kSB3:
      break;
  }
  return make_sb3_chain(config, emulator, resize);
}

}  // namespace

AtariEnv::AtariEnv(const EnvConfig& config, ResizeCache& resize, PaletteCache& palettes)
    : config_(config),
      // The ALE preset counts its frame limit itself; the others leave it to ALE (AtariEnv's option).
      emu_(config_, config_.preset == Preset::kALE ? 0 : config_.max_num_frames_per_episode, palettes),
      chain_(make_chain(config_, emu_, resize)),
      stack_(config_),
      final_obs_(static_cast<size_t>(config_.obs_size()), 0) {}

void AtariEnv::reset(const std::vector<uint32_t>* seed, uint8_t* obs) {
  needs_reset_ = false;
  chain_->reset(seed);
  reset_info_ = chain_->reset_info();
  stack_.restart(chain_->frame());
  if (config_.ram_info) emu_.ram(ram_.data());
  stack_.write(obs);
}

void AtariEnv::step(int action, float strength, StepResult& result, uint8_t* obs) {
  if (needs_reset_) {
    // NEXT_STEP auto-reset: the step after a done is a reset; the action is ignored.
    reset(nullptr, obs);
    result = StepResult{};
    result.reset = true;
    result.lives = reset_info_.lives;
    result.episode_frame_number = reset_info_.episode_frame_number;
    result.frame_number = reset_info_.frame_number;
    return;
  }
  const int lives_before = emu_.lives();
  const ChainStep out = chain_->step(action, strength);
  GameStats& game = emu_.stats();
  game.steps += 1;
  const int lives = emu_.lives();
  // life_loss_info (ALE's vector env): a life loss is reported as terminated; nothing resets.
  const bool life_lost = config_.life_loss_info && 0 < lives && lives < lives_before;
  result.reward = static_cast<float>(
      config_.reward_clipping ? static_cast<double>((out.reward > 0) - (out.reward < 0)) : out.reward);
  result.terminated = out.terminated || life_lost;
  // ALE's vector env never reports both; gymnasium's AtariEnv does when the game ends on the limit's frame.
  result.truncated = out.truncated && !(config_.preset == Preset::kALE && result.terminated);
  result.reset = false;
  result.requested_reset = false;
  result.time_limit_truncated = out.truncated && !out.terminated;
  result.lives = lives;
  result.episode_frame_number = emu_.episode_frame_number();
  result.frame_number = emu_.frame_number();
  result.game_end = out.game_end;
  result.episode_return = out.game_end ? game.score : 0.0;
  result.episode_length = out.game_end ? game.length : 0;
  result.episode_steps = out.game_end ? game.steps : 0;
  stack_.push(chain_->frame());
  if (result.terminated || result.truncated) {
    stack_.write(final_obs_.data());  // terminal_observation / final_obs
    if (config_.ram_info) emu_.ram(final_ram_.data());
  }
  if (out.ended()) {
    if (config_.next_step_autoreset) {
      needs_reset_ = true;
    } else {
      // DummyVecEnv + VecFrameStack: keep the terminal stack, reset now, restart the stack.
      reset(nullptr, obs);
      result.reset = true;
      return;
    }
  }
  if (config_.ram_info) emu_.ram(ram_.data());  // the RAM of the frame this obs ends with
  stack_.write(obs);
}

}  // namespace sb3ale
