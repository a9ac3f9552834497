// One ALE emulator: the ROM, its seeding, its palette and the true score of the game it plays.
// Knows no preprocessing chain; every chain drives the game through it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ale/ale_interface.hpp"
#include "config.hpp"
#include "frames/frame_ops.hpp"
#include "env/reset_ahead.hpp"
#include "env/reset_job.hpp"

namespace sb3ale {

/// Sets ALE's process-wide log level to errors only, once: a second write, racing with the
/// emulators' reads of it on worker threads, would be a data race.
void quiet_ale_logs();

/// Refuses, with std::invalid_argument, a ROM ALE does not know: its loadROM would end the process.
/// Every path that loads a ROM from a caller's path checks it here first.
inline void check_supported_rom(const std::string& rom_path) {
  if (!ale::ALEInterface::isSupportedROM(rom_path)) {
    throw std::invalid_argument("not a ROM that ALE supports (unknown MD5): " + rom_path);
  }
}

/// read(ale) on a throwaway emulator with the ROM loaded (a ROM's facts: rows, actions, modes); a
/// ROM ALE does not know is refused first (check_supported_rom).
template <typename Read>
auto with_rom(const std::string& rom_path, Read read) {
  check_supported_rom(rom_path);
  quiet_ale_logs();  // before the constructor: it logs a banner
  ale::ALEInterface ale;
  ale.loadROM(rom_path);
  return read(ale);
}

/// What a palette's table over pairs of indices holds: the gray of two pooled frames' pixels.
enum class GrayPairs : int {
  kNone,          ///< no table
  kGrayOfMaxRgb,  ///< gray(max(rgb[a], rgb[b])), OpenCV's RGB2GRAY: SB3 pools RGB, then converts
  kMaxOfGray,     ///< max(gray[a], gray[b]): ALE and Gymnasium convert, then pool
};

/// The pair table a config's chain pools with (kNone: it pools no gray frames).
GrayPairs gray_pairs_of(const EnvConfig& config);

/// A ROM's colours: what ALE's palette gives for each screen byte (palette index).
struct Palette {
  std::array<std::array<uint8_t, 3>, 256> rgb{};  ///< getScreenRGB's colour of each index
  std::array<uint8_t, 256> gray{};                ///< getScreenGrayscale's gray of each index
  /// The pooled gray of indices a and b at a * 256 + b (GrayPairs): one table lookup both pools and
  /// converts. Empty for GrayPairs::kNone (else 64 KiB).
  std::vector<uint8_t> gray_pair;
  std::array<uint8_t, 256> gray_pair_diagonal{};  ///< gray_pair[k * 257]: pair_lookup's table of equal pixels

  /// out[p] = gray_pair[a[p] * 256 + b[p]] for p < n: two frames' indices pooled to gray in one
  /// lookup, through the table of equal pixels kept beside it.
  void pool_gray(const uint8_t* a, const uint8_t* b, uint8_t* out, std::size_t n) const {
    pair_lookup(a, b, gray_pair.data(), out, n, process_isa(), gray_pair_diagonal.data());
  }
};

/// One Palette per ROM and pair table for the whole engine (the palette depends only on the
/// cartridge's display format), built by the first env that loads the ROM. Safe to use from many threads.
class PaletteCache {
 public:
  std::shared_ptr<const Palette> get(const std::string& rom_path, ale::ALEInterface& ale, GrayPairs pairs);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, GrayPairs>, std::shared_ptr<const Palette>> palettes_;
};

/// The info a reset returns (what SB3's DummyVecEnv stores in reset_infos).
struct ResetInfo {
  bool empty = false;            ///< FireResetEnv returns {}
  int lives = 0;
  int episode_frame_number = 0;
  int frame_number = 0;
  bool has_seeds = false;        ///< AtariEnv.reset(seed=...) adds "seeds"
  std::array<uint32_t, 2> seeds{};
};

/// Emulator-side counters of the game in progress, reset by every reset_game().
struct GameStats {
  double score = 0;        ///< unclipped reward of every frame, reset frames included
  int64_t length = 0;      ///< the chain's unit: gymnasium AtariEnv steps (SB3 Monitor's "l")
  int64_t steps = 0;       ///< agent steps (gymnasium RecordEpisodeStatistics' "l")
};

class Emulator {
 public:
  /// Sets ALE's options; the chain loads the ROM. `ale_max_frames` is ALE's own frame limit (0: none).
  Emulator(const EnvConfig& config, int ale_max_frames, PaletteCache& palettes);

  /// Sets ALE's random_seed and (re)loads the ROM, applying mode and difficulty (AtariEnv.load_game).
  /// Throws std::invalid_argument for a mode or difficulty the game does not have.
  void load(int32_t ale_seed);
  /// ALE reset_game() (or the one computed ahead, see ResetAhead); the game's counters start again.
  /// A reset computed ahead with the chain's script is replayed: the frames after it are answered
  /// from what the spare played while the chain does what the script said, and the spare is swapped
  /// in after them; anything else (another action, an unrecorded screen) first makes the live
  /// emulator reset and play them for real, which gives the same frames.
  void reset_game();
  /// After a chain's reset: what it does after a real reset, for the next reset computed ahead.
  void set_next_reset_script(ResetScript script) {
    if (ahead_) ahead_->set_script(std::move(script));
  }
  /// The one place that decides whether this env computes its resets ahead (ResetAhead exists only
  /// then): the engine's switch `on`, and the config's table entry. Their key's run-time verdict is
  /// shared by the engine's envs of the same key. Switched off, a check still owed comes back as a
  /// job for the engine to queue (null: none).
  std::shared_ptr<ResetJob> set_reset_ahead(bool on, bool wait, const std::shared_ptr<RuntimeVerdict>& verdict);
  /// ResetAhead::claim: the prepare due after this reset, once (null when off or none).
  std::shared_ptr<ResetJob> claim_prepare() { return ahead_ ? ahead_->claim() : nullptr; }
  void abandon_prepare() {
    if (ahead_) ahead_->disarm();
  }
  bool prepared() const { return ahead_ && ahead_->prepared(); }
  /// Every reset_game() so far, made here or swapped in (what the counts below are of).
  int64_t game_resets() const { return game_resets_; }
  /// Of those, the ones swapped in (computed ahead); of those, the ones whose chain's script was replayed.
  int64_t resets_taken() const { return resets_taken_; }
  int64_t resets_replayed() const { return resets_replayed_; }
  /// Replays left before their last frame (the live emulator then reset and replayed them for real):
  /// each is a script the chain predicted wrong, so none in a run where predictions hold.
  int64_t replays_abandoned() const { return replays_abandoned_; }
  /// One emulator frame with action index `action` of the action set; adds to the score.
  ale::reward_t act(int action, float strength = 1.0f) { return act_ale(action_set_[static_cast<size_t>(action)], strength); }
  /// One frame of an ALE action id (NOOP, FIRE), whatever the action set.
  ale::reward_t act_id(ale::Action action) { return act_ale(action, 1.0f); }

  bool game_over() const { return replaying() ? replayed().game_over : ale_->game_over(false); }
  bool game_truncated() const { return replaying() ? replayed().truncated : ale_->game_truncated(); }
  int lives() const { return replaying() ? replayed().lives : ale_->lives(); }
  int frame_number() const { return replaying() ? live_frame_ + replayed().frames : ale_->getFrameNumber(); }
  int episode_frame_number() const { return replaying() ? replayed().episode_frames : ale_->getEpisodeFrameNumber(); }
  const ale::ActionVect& action_set() const { return action_set_; }
  bool has_action(ale::Action action) const;
  /// ALE's info now (lives and frame numbers), what every reset returns at least.
  ResetInfo info() const;

  /// The screen as palette indices (screen_height() x kScreenWidth), and ways to read it.
  /// Reads that end a replay (its frame not recorded) swap an emulator in: not const.
  const uint8_t* screen();
  /// The ROM's screen rows (210 for most, up to 250), known once load() has run.
  int screen_height() const { return screen_height_; }
  size_t screen_pixels() const { return static_cast<size_t>(screen_height_) * kScreenWidth; }
  const Palette& palette() const { return *palette_; }
  void screen_gray(uint8_t* out);  ///< ALE's getScreenGrayscale
  void screen_rgb(uint8_t* out);   ///< ALE's getScreenRGB, (screen_height(), 160, 3)
  void ram(uint8_t* out);          ///< ALE's getRAM, kRamSize bytes
  /// getScreenGrayscale or getScreenRGB, as the config asks (what gymnasium's and ALE's chains pool).
  void capture(uint8_t* out) { config_.grayscale ? screen_gray(out) : screen_rgb(out); }

  GameStats& stats() { return stats_; }

 private:
  const EnvConfig config_;
  const int ale_max_frames_;
  PaletteCache& palettes_;
  ale::reward_t act_ale(ale::Action action, float strength);
  bool replaying() const { return replay_at_ >= 0; }
  const ReplayFrame& replayed() const { return ahead_->replay()[static_cast<size_t>(replay_at_)]; }
  /// Ends a replay: the spare swapped in if every recorded frame was played, else the live emulator
  /// resets and plays the frames played so far for real.
  void leave_replay();
  void reset_for_real();  // ALE's own reset_game(), the next one armed

  // Swapped with the spare by a reset computed ahead, also at a replay's end that a read causes.
  std::unique_ptr<ale::ALEInterface> ale_;
  std::unique_ptr<ResetAhead> ahead_;       // resets ahead, while on (live thread only)
  int replay_at_ = -1;              // the replayed frame the chain sees, -1: none
  int live_frame_ = 0;                      // the live frame counter when the replayed reset began
  int64_t replays_abandoned_ = 0;
  int64_t game_resets_ = 0;
  int64_t resets_taken_ = 0;
  int64_t resets_replayed_ = 0;
  ale::ActionVect action_set_;
  std::shared_ptr<const Palette> palette_;
  int screen_height_ = 0;  // set by the first load()
  GameStats stats_;
};

}  // namespace sb3ale
