#include "env/emulator.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "env/ale_state.hpp"
#include "frames/frame_ops.hpp"

namespace sb3ale {

namespace {

template <typename Values>
std::string join(const Values& values) {
  std::string text;
  for (const auto& v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

std::shared_ptr<const Palette> build_palette(ale::ALEInterface& ale, GrayPairs pairs) {
  auto palette = std::make_shared<Palette>();
  auto& colours = ale.theOSystem->colourPalette();
  for (int i = 0; i < 256; ++i) {
    const uint32_t rgb = colours.getRGB(i);
    palette->rgb[i] = {static_cast<uint8_t>(rgb >> 16), static_cast<uint8_t>(rgb >> 8), static_cast<uint8_t>(rgb)};
  }
  // getScreenGrayscale's own lookup. It reads entry p + 1 (gray sits after each even, on-screen
  // colour), so index 255, never on screen, is left at 0 rather than read past the palette.
  std::array<uint8_t, 255> indices;
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<uint8_t>(i);
  colours.applyPaletteGrayscale(palette->gray.data(), indices.data(), indices.size());
  if (pairs != GrayPairs::kNone) {
    palette->gray_pair.resize(256 * 256);
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        const auto& p = palette->rgb[a];
        const auto& q = palette->rgb[b];
        palette->gray_pair[a * 256 + b] =
            pairs == GrayPairs::kMaxOfGray
                ? std::max(palette->gray[a], palette->gray[b])
                : rgb_to_gray(std::max(p[0], q[0]), std::max(p[1], q[1]), std::max(p[2], q[2]));
      }
      palette->gray_pair_diagonal[a] = palette->gray_pair[a * 257];
    }
  }
  return palette;
}

}  // namespace

void quiet_ale_logs() {
  static std::once_flag once;
  std::call_once(once, [] { ale::Logger::setMode(ale::Logger::Error); });
}

GrayPairs gray_pairs_of(const EnvConfig& config) {
  if (!config.grayscale || config.obs_type != ObsType::kProcessed) return GrayPairs::kNone;
  if (config.preset == Preset::kSB3) return GrayPairs::kGrayOfMaxRgb;
  return config.maxpool && config.frameskip > 1 ? GrayPairs::kMaxOfGray : GrayPairs::kNone;
}

std::shared_ptr<const Palette> PaletteCache::get(const std::string& rom_path, ale::ALEInterface& ale,
                                                 GrayPairs pairs) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& palette = palettes_[{rom_path, pairs}];
  if (!palette) palette = build_palette(ale, pairs);
  return palette;
}

Emulator::Emulator(const EnvConfig& config, int ale_max_frames, PaletteCache& palettes)
    : config_(config), ale_max_frames_(ale_max_frames), palettes_(palettes) {
  quiet_ale_logs();
  ale_ = make_ale(config_, ale_max_frames);
}

std::shared_ptr<ResetJob> Emulator::set_reset_ahead(bool on, bool wait,
                                                    const std::shared_ptr<RuntimeVerdict>& verdict) {
  if (replaying()) leave_replay();
  on = on && config_.reset_ahead;  // a key the table does not vouch for resets for real
  if (on && !ahead_) ahead_ = std::make_unique<ResetAhead>(config_, ale_max_frames_, verdict);
  if (ahead_) ahead_->wait_for_prepares(wait);
  if (on || !ahead_) return nullptr;
  std::shared_ptr<ResetJob> owed = ahead_->release();
  ahead_.reset();
  return owed;
}

void Emulator::load(int32_t ale_seed) {
  replay_at_ = -1;  // the console is rebuilt: nothing of a replay matters
  if (ahead_) ahead_->disarm();  // a new console: what was prepared from the old one is void
  ale_->setInt("random_seed", ale_seed);
  ale_->loadROM(config_.rom_path);
  // AtariEnv.load_game: mode and difficulty apply from the next reset_game().
  if (config_.mode >= 0) {
    const auto modes = ale_->getAvailableModes();
    if (std::find(modes.begin(), modes.end(), static_cast<ale::game_mode_t>(config_.mode)) == modes.end()) {
      throw std::invalid_argument("mode " + std::to_string(config_.mode) + " is not available; modes: " + join(modes));
    }
    ale_->setMode(static_cast<ale::game_mode_t>(config_.mode));
  }
  if (config_.difficulty >= 0) {
    const auto levels = ale_->getAvailableDifficulties();
    if (std::find(levels.begin(), levels.end(), static_cast<ale::difficulty_t>(config_.difficulty)) == levels.end()) {
      throw std::invalid_argument("difficulty " + std::to_string(config_.difficulty) +
                                  " is not available; difficulties: " + join(levels));
    }
    ale_->setDifficulty(static_cast<ale::difficulty_t>(config_.difficulty));
  }
  if (!palette_) {
    action_set_ = config_.full_action_space ? ale_->getLegalActionSet() : ale_->getMinimalActionSet();
    palette_ = palettes_.get(config_.rom_path, *ale_, gray_pairs_of(config_));
    // The screen's height is the ROM's (ALE's per-cartridge display properties), fixed once loaded.
    const auto& screen = ale_->getScreen();
    if (screen.width() != kScreenWidth || screen.height() < 1) {
      throw std::invalid_argument(config_.rom_path + ": a " + std::to_string(screen.height()) + "x" +
                                  std::to_string(screen.width()) + " screen; this engine runs " +
                                  std::to_string(kScreenWidth) + "-pixel-wide ones");
    }
    screen_height_ = static_cast<int>(screen.height());
  }
}

void Emulator::reset_game() {
  if (replaying()) leave_replay();
  ++game_resets_;
  switch (ahead_ ? ahead_->take(ale_) : ResetAhead::Taken::kNo) {
    case ResetAhead::Taken::kNo:
      reset_for_real();
      break;
    case ResetAhead::Taken::kDone:
      ++resets_taken_;
      break;
    case ResetAhead::Taken::kReplay:
      live_frame_ = ale_->getFrameNumber();
      replay_at_ = 0;
      break;
  }
  stats_ = GameStats{};
}

ale::reward_t Emulator::act_ale(ale::Action action, float strength) {
  ale::reward_t reward = 0;
  const auto next = static_cast<size_t>(replay_at_ + 1);
  if (replaying() && next < ahead_->replay().size() && ahead_->replay()[next].action == static_cast<int>(action) &&
      strength == 1.0f) {
    ++replay_at_;  // the script's next frame: what the spare played
    reward = replayed().reward;
  } else {
    if (replaying()) leave_replay();
    reward = ale_->act(action, strength);
  }
  stats_.score += reward;
  return reward;
}

void Emulator::leave_replay() {
  const Replay frames = ahead_->replay();
  const int played = replay_at_;
  replay_at_ = -1;
  if (static_cast<size_t>(played) + 1 == frames.size()) {
    ahead_->commit(ale_, live_frame_);
    ++resets_taken_;
    ++resets_replayed_;
    return;
  }
  ++replays_abandoned_;  // the chain did not do what its script said: a wrong prediction, or a read
  std::vector<int> actions;  // taken first: once armed, the recording belongs to the next prepare
  for (int k = 1; k <= played; ++k) actions.push_back(frames[static_cast<size_t>(k)].action);
  reset_for_real();
  for (const int action : actions) ale_->act(static_cast<ale::Action>(action));
}

void Emulator::reset_for_real() {
  ale_->reset_game();
  if (ahead_) ahead_->arm(*ale_);  // the next reset is computed ahead from here
}

const uint8_t* Emulator::screen() {
  if (replaying()) {
    if (!replayed().screen.empty()) return replayed().screen.data();
    leave_replay();
  }
  return ale_->getScreen().getArray();
}

bool Emulator::has_action(ale::Action action) const {
  return std::find(action_set_.begin(), action_set_.end(), action) != action_set_.end();
}

ResetInfo Emulator::info() const {
  ResetInfo info;
  info.lives = lives();
  info.episode_frame_number = episode_frame_number();
  info.frame_number = frame_number();
  return info;
}

void Emulator::screen_gray(uint8_t* out) {
  palette_lookup(screen(), palette_->gray.data(), out, screen_pixels());
}

void Emulator::screen_rgb(uint8_t* out) {
  const uint8_t* s = screen();
  for (size_t p = 0, n = screen_pixels(); p < n; ++p) {
    std::memcpy(out + 3 * p, palette_->rgb[s[p]].data(), 3);
  }
}

void Emulator::ram(uint8_t* out) {
  // A replay records no RAM: leaving it swaps in the spare (every recorded frame played, as after a
  // chain's reset) or plays the frames for real, so the live emulator holds this frame's RAM.
  if (replaying()) leave_replay();
  std::memcpy(out, ale_->getRAM().array(), static_cast<size_t>(kRamSize));
}

}  // namespace sb3ale
