#include "reset_ahead.hpp"

#include <map>
#include <mutex>
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

// What a reset from `base` leads to after 64 frames of play (actions picked by `variant`) and the
// RAM overwritten with a `variant` pattern: the whole saved state, the RAM and the screen.
std::string reset_outcome(ale::ALEInterface& ale, const ale::ALEState& base, int variant) {
  ale.restoreState(base);
  const ale::ActionVect actions = ale.getLegalActionSet();
  for (size_t f = 0; f < 64; ++f) ale.act(actions[(f * (2 * variant + 1) + variant) % actions.size()]);
  for (size_t b = 0; b < 128; ++b) ale.setRAM(b, static_cast<ale::byte_t>(b * 37 + variant * 101 + 1));
  ale.reset_game();
  ale::ALEState state = ale.cloneState();
  const auto& ram = ale.getRAM();
  const auto& screen = ale.getScreen();
  return state.serialize() + std::string(reinterpret_cast<const char*>(ram.array()), ram.size()) +
         std::string(reinterpret_cast<const char*>(screen.getArray()), screen.arraySize());
}

// Whether this ROM (mode, difficulty) resets to the same state whatever the state before: two resets
// from different RAM contents and play must agree. ALE's RAM survives a system reset; most ROMs
// clear it at start-up, a few (measured: 7 of ALE's 104 games) keep some of it. Once per process.
bool reset_is_exact(const EnvConfig& config, ale::ALEInterface& spare, const ale::ALEState& base) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, int>, bool> verdicts;
  const auto key = std::make_tuple(config.rom_path, config.mode, config.difficulty);
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = verdicts.find(key);
    if (found != verdicts.end()) return found->second;
  }
  const bool exact = reset_outcome(spare, base, 0) == reset_outcome(spare, base, 1);
  std::lock_guard<std::mutex> lock(mutex);
  verdicts.emplace(key, exact);
  return exact;
}

}  // namespace

std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames) {
  auto ale = std::make_unique<ale::ALEInterface>();
  ale->setFloat("repeat_action_probability", config.repeat_action_probability);
  ale->setInt("max_num_frames_per_episode", ale_max_frames);
  return ale;
}

ResetAhead::ResetAhead(const EnvConfig& config, int ale_max_frames)
    : config_(config), ale_max_frames_(ale_max_frames), spare_(make_ale(config, ale_max_frames)) {
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
  const int frame = live->getFrameNumber();
  std::swap(live, spare_);
  // The reset counted `counted` frames of its own (the select presses of a ROM's mode, none for
  // most): the live counter goes on from `frame` by as many, the episode's counter holds them.
  ale::ALEState state = live->environment->getState();
  const int counted = state.getEpisodeFrameNumber();
  state.incrementFrame(frame - state.getFrameNumber());
  state.resetEpisodeFrameNumber();
  state.incrementFrame(counted);
  live->environment->setState(state);
  ++taken_;
  claimed_.store(false, std::memory_order_relaxed);
  status_.store(kArmed, std::memory_order_release);
  return true;
}

}  // namespace sb3ale
