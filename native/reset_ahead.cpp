#include "reset_ahead.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>

#include "ale/emucore/Deserializer.hxx"
#include "ale/emucore/Serializer.hxx"

namespace sb3ale {

namespace {

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// What a reset left: the saved state (frame counters included), the RAM and the screen.
std::string state_of(ale::ALEInterface& ale) {
  ale::ALEState state = ale.cloneState();
  const auto& ram = ale.getRAM();
  const auto& screen = ale.getScreen();
  return state.serialize() + std::string(reinterpret_cast<const char*>(ram.array()), ram.size()) +
         std::string(reinterpret_cast<const char*>(screen.getArray()), screen.arraySize());
}

// What a reset from `base` leads to after 64 frames of play (actions picked by `variant`) and the
// RAM overwritten with a `variant` pattern.
std::string reset_outcome(ale::ALEInterface& ale, const ale::ALEState& base, int variant) {
  ale.restoreState(base);
  const ale::ActionVect actions = ale.getLegalActionSet();
  for (size_t f = 0; f < 64; ++f) ale.act(actions[(f * (2 * variant + 1) + variant) % actions.size()]);
  for (size_t b = 0; b < 128; ++b) ale.setRAM(b, static_cast<ale::byte_t>(b * 37 + variant * 101 + 1));
  ale.reset_game();
  return state_of(ale);
}

// The first kChecks resets of each ROM in the process are also made for real and compared.
constexpr int kChecks = 2;

// Per ROM, mode and difficulty, for the whole process: whether its reset is exact (absent: not
// probed yet) and how many of its resets were checked against a real one.
class Verdicts {
 public:
  static Verdicts& get() {
    static Verdicts all;
    return all;
  }
  std::optional<bool> exact(const EnvConfig& config) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = exact_.find(key(config));
    return found == exact_.end() ? std::nullopt : std::optional<bool>(found->second);
  }
  /// The first verdict stands (a refusal overrules any).
  bool set(const EnvConfig& config, bool exact) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, fresh] = exact_.emplace(key(config), exact);
    if (!exact) it->second = false;
    return it->second;
  }
  bool check_this_one(const EnvConfig& config) {
    std::lock_guard<std::mutex> lock(mutex_);
    int& count = checked_[key(config)];
    return count < kChecks && ++count > 0;
  }

 private:
  using Key = std::tuple<std::string, int, int>;
  static Key key(const EnvConfig& c) { return std::make_tuple(c.rom_path, c.mode, c.difficulty); }
  std::mutex mutex_;
  std::map<Key, bool> exact_;
  std::map<Key, int> checked_;
};

// Whether this ROM (mode, difficulty) resets to the same state whatever the state before: two resets
// from different RAM contents and play must agree. ALE's RAM survives a system reset; most ROMs
// clear it at start-up, some keep part of it. Once per process; a failed check (take) overrules it.
bool reset_is_exact(const EnvConfig& config, ale::ALEInterface& spare, const ale::ALEState& base) {
  if (const auto known = Verdicts::get().exact(config)) return *known;
  return Verdicts::get().set(config, reset_outcome(spare, base, 0) == reset_outcome(spare, base, 1));
}

}  // namespace

std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames) {
  auto ale = std::make_unique<ale::ALEInterface>();
  ale->setFloat("repeat_action_probability", config.repeat_action_probability);
  ale->setInt("max_num_frames_per_episode", ale_max_frames);
  return ale;
}

ResetAhead::ResetAhead(const EnvConfig& config, int ale_max_frames)
    : config_(config), spare_(make_ale(config, ale_max_frames)) {
  // Loaded now, on the thread that builds the env, not by the first prepare: a batch's first
  // resets would otherwise queue one ROM load each behind the workers' next batches.
  spare_->loadROM(config_.rom_path);
}

ResetAhead::~ResetAhead() { settle(); }

void ResetAhead::settle() {
  for (;;) {
    int s = status_.load(std::memory_order_acquire);
    if (s == kPreparing) {
      pause();
    } else if (status_.compare_exchange_weak(s, kIdle, std::memory_order_acq_rel)) {
      return;
    }
  }
}

void ResetAhead::arm(ale::ALEInterface& live) {
  settle();
  if (!exact_) return;
  base_ = live.cloneState();
  claimed_.store(false, std::memory_order_relaxed);
  status_.store(kArmed, std::memory_order_release);
}

void ResetAhead::disarm() { settle(); }

void ResetAhead::prepare() {
  int armed = kArmed;
  if (!status_.compare_exchange_strong(armed, kPreparing, std::memory_order_acq_rel)) return;
  try {
    if (!probed_) {
      exact_ = reset_is_exact(config_, *spare_, base_);
      probed_ = true;
    }
    if (!exact_) {
      status_.store(kIdle, std::memory_order_release);
      return;
    }
    spare_->restoreState(base_);
    spare_->reset_game();
    base_ = spare_->cloneState();  // the state after this reset: where the one after it starts
    status_.store(kReady, std::memory_order_release);
  } catch (...) {
    // Nothing prepared: the live emulator resets itself, as without this.
    exact_ = false;
    probed_ = true;
    status_.store(kIdle, std::memory_order_release);
  }
}

bool ResetAhead::take(std::unique_ptr<ale::ALEInterface>& live) {
  for (;;) {
    int s = status_.load(std::memory_order_acquire);
    if (s == kReady) break;
    if (s == kPreparing) {
      pause();  // the spare is part-way through this very reset: less to wait for than to redo
    } else if (status_.compare_exchange_weak(s, kIdle, std::memory_order_acq_rel)) {
      return false;
    }
  }
  // A real reset keeps the live emulator's frame counter and environment RNG: carry them over
  // (the RNG only matters with sticky actions: without, its draws decide nothing).
  if (config_.repeat_action_probability > 0) {
    ale::stella::Serializer rng;
    live->environment->getEnvironmentRNG().saveState(rng);
    ale::stella::Deserializer in(rng.get_str());
    spare_->environment->getEnvironmentRNG().loadState(in);
  }
  // The reset counted `counted` frames of its own (the select presses of a ROM's mode, none for
  // most): the live counter goes on from the live frame by as many, the episode's holds them.
  ale::ALEState state = spare_->environment->getState();
  const int counted = state.getEpisodeFrameNumber();
  state.incrementFrame(live->getFrameNumber() - state.getFrameNumber());
  state.resetEpisodeFrameNumber();
  state.incrementFrame(counted);
  spare_->environment->setState(state);
  if (!Verdicts::get().exact(config_).value_or(true) || Verdicts::get().check_this_one(config_)) {
    // A ROM's first resets in the process are also made for real and compared: one that keeps,
    // say, a high score across resets only shows it after real play, which the probe cannot
    // make. One difference and the ROM resets for real from then on, in every env.
    live->reset_game();
    if (!Verdicts::get().exact(config_).value_or(true) || state_of(*live) != state_of(*spare_)) {
      Verdicts::get().set(config_, false);
      exact_ = false;
    }
    status_.store(kIdle, std::memory_order_release);
    arm(*live);
    return true;
  }
  std::swap(live, spare_);
  ++taken_;
  claimed_.store(false, std::memory_order_relaxed);
  status_.store(kArmed, std::memory_order_release);
  return true;
}

}  // namespace sb3ale
