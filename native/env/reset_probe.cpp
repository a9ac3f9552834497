#include "env/reset_probe.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "env/ale_state.hpp"

namespace sb3ale {

namespace {

// A state the scoring play passed through. A type of this file's own, not std::pair<ale::ALEState, ...>:
// the templates instantiated on it stay private (an instantiation on ALE's types alone is exported).
struct Visited {
  ale::ALEState state;
  int64_t frames;
};

constexpr int kProbeSeed = 20260101;
constexpr size_t kRam = 128;
constexpr int kScrambleFrames = 64;  // a scramble's play before the overwrite: a game under way
// A scoring play ranks a tried sequence by its reward, less these for a life lost or the game ended:
// more than any reward, so it keeps its lives and plays on into later levels.
constexpr double kLifeLost = 1e7;
constexpr double kGameOver = 1e9;
constexpr size_t kPath = 8;  // the steps a scoring play can back up: 8 x search_frames

// splitmix64: each play's own stream of actions, fixed, so that every run of the tool agrees.
class Draws {
 public:
  explicit Draws(uint64_t seed) : x_(seed) {}
  uint64_t next() {
    uint64_t z = (x_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t x_;
};

std::string hex(size_t address) {
  char out[8];
  std::snprintf(out, sizeof out, "0x%02zX", address);
  return out;
}

// Which part of state_of's bytes differs: the RAM (its first addresses), else the rest of the saved
// state (CPU, TIA, RIOT timer, a cartridge's own RAM and registers, the frames counted), else the screen.
std::string what_differs(const std::string& got, const std::string& want, size_t screen_size) {
  if (got.size() != want.size()) return "the saved state";
  const size_t ram_at = want.size() - screen_size - kRam;
  std::string ram;
  int named = 0;
  for (size_t i = 0; i < kRam; ++i) {
    if (got[ram_at + i] == want[ram_at + i] || ++named > 4) continue;
    ram += (ram.empty() ? "RAM " : ", ") + hex(0x80 + i);
  }
  if (named > 4) ram += " and " + std::to_string(named - 4) + " more";
  if (!ram.empty()) return ram;
  if (got.compare(0, ram_at, want, 0, ram_at) != 0) return "the saved state";
  return "the screen";
}

// The plays, each from `base` (the state right after the first reset), each compared with the reset
// without play; the first difference ends the probe.
class Probe {
 public:
  Probe(const EnvConfig& config, const ProbeEffort& effort, const ale::ALEState& base)
      : config_(config), effort_(effort), base_(base), ale_(make_ale(config, 0)) {
    // ALE seeds its environment RNG from the clock unless told: fixed, the sticky draws of the plays,
    // and so the verdict, are the same in every process and on every machine.
    ale_->setInt("random_seed", kProbeSeed);
    ale_->loadROM(config.rom_path);
    actions_ = ale_->getLegalActionSet();
    screen_size_ = ale_->getScreen().arraySize();
  }

  ProbeResult run() {
    // Real play first, so that a reset that keeps something of it is refused for that, not for the
    // artificial RAM of a scramble.
    std::string why = rng_checks();
    for (int v = 0; why.empty() && v < effort_.random_plays; ++v) why = random_play(v);
    for (int v = 0; why.empty() && v < effort_.scoring_plays; ++v) why = scoring_play(v);
    for (int v = 0; why.empty() && v < effort_.scrambles; ++v) why = scramble(v);
    return {why, frames_};
  }

 private:
  // With sticky actions a reset must not draw the environment RNG (the draws after it decide which
  // actions stick); with or without, its outcome must not depend on that RNG (ALE draws it twice every
  // frame of play, so a reset that uses a draw, as Adventure's modes 1-2 do, depends on the play).
  std::string rng_checks() {
    ale_->restoreState(base_);
    const std::string rng = rng_of(*ale_);
    ale_->reset_game();
    if (config_.repeat_action_probability > 0 && rng_of(*ale_) != rng) {
      return "with sticky actions its reset draws the environment RNG (the mode's set-up acts)";
    }
    reference_ = state_of(*ale_);
    auto other = make_ale(config_, 0);  // another RNG state before the same reset
    other->setInt("random_seed", kProbeSeed + 1);
    other->loadROM(config_.rom_path);
    ale_->restoreState(base_);
    copy_rng(*other, *ale_);
    ale_->reset_game();
    const std::string got = state_of(*ale_);
    if (got != reference_) {
      return "its reset depends on the environment RNG (" + what_differs(got, reference_, screen_size_) + ")";
    }
    return "";
  }

  // ALE keeps the RAM across a system reset; most ROMs clear it at start-up, some keep part of it.
  std::string scramble(int v) {
    ale_->restoreState(base_);
    Draws draws(0x5C3A + static_cast<uint64_t>(v));
    play_random(draws, kScrambleFrames);
    for (size_t b = 0; b < kRam; ++b) ale_->setRAM(b, static_cast<ale::byte_t>(draws.next() >> 56));
    ale_->reset_game();
    const std::string got = state_of(*ale_);
    if (got == reference_) return "";
    return "its reset keeps RAM (overwritten after " + std::to_string(kScrambleFrames) +
           " frames of play: " + what_differs(got, reference_, screen_size_) + ")";
  }

  std::string random_play(int v) {
    ale_->restoreState(base_);
    Draws draws(0xA11CE + static_cast<uint64_t>(v));
    return to_game_over(draws, "random play " + std::to_string(v + 1), 0);
  }

  // Greedy search for score: from each state it reaches, `search_width` random sequences of
  // `search_frames` frames, keeping the one with the most reward that loses no life; where all lose
  // one, it backs up a few steps (deeper each time it misses again, at most once per four steps) and
  // searches again. Random play gets little score and dies early; this reaches later levels, bonuses
  // and high scores. Then it plays at random until the game is over (its score shown, a kept high
  // score among it).
  std::string scoring_play(int v) {
    const std::string label = "scoring play " + std::to_string(v + 1);
    ale_->restoreState(base_);
    Draws draws(0x5C0E + static_cast<uint64_t>(v));
    std::vector<Visited> path;  // the last steps' states, frames played then
    int64_t played = 0, checked = 0, reached = 0;
    int backups = effort_.scoring_frames / effort_.search_frames / 4, misses = 0;
    while (played < effort_.scoring_frames && !ale_->game_over(false)) {
      const ale::ALEState from = ale_->cloneState();
      const Step step = best_step(draws, from);
      if (step.lost && backups > 0 && !path.empty()) {
        --backups;
        path.resize(path.size() - std::min(path.size() - 1, static_cast<size_t>(misses++)));
        ale_->restoreState(path.back().state);
        played = path.back().frames;
        path.pop_back();
        continue;
      }
      path.push_back(Visited{from, played});
      if (path.size() > kPath) path.erase(path.begin());
      ale_->restoreState(step.state);
      played += step.frames;
      if (played > reached) {
        reached = played;
        misses = 0;
      }
      if (played - checked >= effort_.check_every) {
        checked = played;
        if (std::string why = check(label, played); !why.empty()) return why;
      }
    }
    return to_game_over(draws, label, played);
  }

  struct Step {
    ale::ALEState state;
    int frames = 0;
    bool lost = false;  // a life, or the game
  };

  // The best of `search_width` random sequences from `from`: the most reward, no life lost if it can.
  Step best_step(Draws& draws, const ale::ALEState& from) {
    Step best;
    double best_value = 0;
    for (int w = 0; w < effort_.search_width; ++w) {
      if (w > 0) ale_->restoreState(from);
      const int lives = ale_->lives();
      const auto [reward, frames] = play_random(draws, effort_.search_frames);
      const bool over = ale_->game_over(false);
      const double value = reward - (over ? kGameOver : kLifeLost * (lives - ale_->lives()));
      if (w == 0 || value > best_value) {
        best = {ale_->cloneState(), frames, over || ale_->lives() < lives};
        best_value = value;
      }
    }
    return best;
  }

  // Random play from the current state until the game is over or max_frames more, a reset compared
  // every check_every frames and at the end. `played`: the frames the play had already.
  std::string to_game_over(Draws& draws, const std::string& label, int64_t played) {
    const int64_t end = played + effort_.max_frames;
    int64_t checked = played;
    while (played < end && !ale_->game_over(false)) {
      played += play_random(draws, 16, end - played).second;
      if (played - checked >= effort_.check_every) {
        checked = played;
        if (std::string why = check(label, played); !why.empty()) return why;
      }
    }
    return played == checked ? "" : check(label, played);
  }

  // Random actions, each held 1-16 frames, for `frames` frames (at most `limit`) or until the game is
  // over: the reward and the frames played.
  std::pair<double, int> play_random(Draws& draws, int frames, int64_t limit = INT64_MAX) {
    const int64_t n = std::min<int64_t>(frames, limit);
    double reward = 0;
    int f = 0;
    while (f < n && !ale_->game_over(false)) {
      const uint64_t x = draws.next();
      const ale::Action action = actions_[(x >> 8) % actions_.size()];
      for (int hold = 1 + static_cast<int>(x >> 60); hold > 0 && f < n; --hold, ++f) reward += ale_->act(action);
    }
    frames_ += f;
    return {reward, f};
  }

  // A reset from the current state, compared with the reset without play; the play goes on after.
  std::string check(const std::string& label, int64_t played) {
    const ale::ALEState here = ale_->cloneState();
    ale_->reset_game();
    const std::string got = state_of(*ale_);
    ale_->restoreState(here);
    if (got == reference_) return "";
    return "its reset keeps something of play (" + label + ", reset after " + std::to_string(played) +
           " frames: " + what_differs(got, reference_, screen_size_) + ")";
  }

  const EnvConfig& config_;
  const ProbeEffort& effort_;
  const ale::ALEState& base_;
  std::unique_ptr<ale::ALEInterface> ale_;
  ale::ActionVect actions_;
  size_t screen_size_ = 0;
  std::string reference_;  // state_of the reset without play
  int64_t frames_ = 0;
};

void check_effort(const ProbeEffort& e) {
  if (e.random_plays < 0 || e.max_frames < 0 || e.scoring_plays < 0 || e.scoring_frames < 0 || e.scrambles < 0) {
    throw std::invalid_argument("random_plays, max_frames, scoring_plays, scoring_frames and scrambles must be >= 0");
  }
  if (e.check_every < 1 || e.search_width < 1 || e.search_frames < 1) {
    throw std::invalid_argument("check_every, search_width and search_frames must be >= 1");
  }
}

}  // namespace

ProbeResult probe_reset(const EnvConfig& config, const ProbeEffort& effort) {
  check_effort(effort);
  if (!ale::ALEInterface::isSupportedROM(config.rom_path)) {  // its loadROM would end the process
    throw std::invalid_argument("not a ROM that ALE supports (unknown MD5): " + config.rom_path);
  }
  auto ale = make_ale(config, 0);
  ale->loadROM(config.rom_path);
  const ale::ModeVect modes = ale->getAvailableModes();
  const ale::DifficultyVect levels = ale->getAvailableDifficulties();
  if (config.mode >= 0 && std::find(modes.begin(), modes.end(), config.mode) == modes.end()) {
    throw std::invalid_argument("mode " + std::to_string(config.mode) + " is not one of the ROM's modes");
  }
  if (config.difficulty >= 0 && std::find(levels.begin(), levels.end(), config.difficulty) == levels.end()) {
    throw std::invalid_argument("difficulty " + std::to_string(config.difficulty) + " is not one of the ROM's");
  }
  if (config.mode >= 0) ale->setMode(static_cast<ale::game_mode_t>(config.mode));
  if (config.difficulty >= 0) ale->setDifficulty(static_cast<ale::difficulty_t>(config.difficulty));
  ale->reset_game();
  const ale::ALEState base = ale->cloneState();
  return Probe(config, effort, base).run();
}

}  // namespace sb3ale
