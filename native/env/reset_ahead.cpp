#include "env/reset_ahead.hpp"

#include <map>
#include <optional>
#include <tuple>

#include "env/ale_state.hpp"
#include "env/reset_probe.hpp"

namespace sb3ale {

namespace {

// The first kChecks prepared resets of each ROM (mode, difficulty, sticky setting) in the process
// are also made for real and compared: something only real play shows (a high score kept across
// resets) shows there. Swaps start once they all agreed; one difference refuses the ROM for good.
constexpr int kChecks = 2;

class Verdicts {
 public:
  // Never destroyed: a background thread may still read it while the process exits.
  static Verdicts& get() {
    static Verdicts* all = new Verdicts;
    return *all;
  }
  bool refused(const EnvConfig& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    return entry(c).refused;
  }
  /// Probes `c` from `base` unless a verdict exists (one probe at a time: the others wait for it);
  /// whether a verdict exists after it (not if `cancel` stopped it).
  bool probe(const EnvConfig& c, const ale::ALEState& base, const std::atomic<bool>* cancel) {
    std::lock_guard<std::mutex> probing(probing_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (entry(c).probed || entry(c).refused) return true;
    }
    (void)base;
    if (cancel && cancel->load()) return false;
    const std::optional<std::string> why = probe_reset(c);
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entry(c);
    e.probed = true;
    e.refused = e.refused || !why->empty();
    return true;
  }
  bool check_due(const EnvConfig& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry& e = entry(c);
    return !e.refused && e.passed < kChecks;
  }
  void checked(const EnvConfig& c, bool same) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entry(c);
    e.passed += same ? 1 : 0;
    e.refused = e.refused || !same;
  }
  bool swap_allowed(const EnvConfig& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry& e = entry(c);
    return e.probed && !e.refused && e.passed >= kChecks;
  }

 private:
  struct Entry {
    bool probed = false;
    bool refused = false;
    int passed = 0;
  };
  Entry& entry(const EnvConfig& c) {
    return all_[std::make_tuple(c.rom_path, c.mode, c.difficulty, c.repeat_action_probability > 0)];
  }
  std::mutex mutex_;
  std::mutex probing_;
  std::map<std::tuple<std::string, int, int, bool>, Entry> all_;
};

}  // namespace

ResetAhead::ResetAhead(const EnvConfig& config, int ale_max_frames)
    : config_(config), spare_(make_ale(config, ale_max_frames)) {}

ResetAhead::~ResetAhead() {
  std::unique_lock<std::mutex> lock(mutex_);
  prepared_.wait(lock, [this] { return !running_; });
}

void ResetAhead::arm(ale::ALEInterface& live) {
  ale::ALEState base = live.cloneState();
  const bool refused = Verdicts::get().refused(config_);
  std::lock_guard<std::mutex> lock(mutex_);
  ++generation_;
  ready_ = false;
  pending_ = !refused;
  if (pending_) base_ = std::move(base);
  claimable_.store(pending_, std::memory_order_release);
}

void ResetAhead::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++generation_;
  ready_ = pending_ = false;
  claimable_.store(false, std::memory_order_release);
}

void ResetAhead::set_script(ResetScript script) {
  std::lock_guard<std::mutex> lock(mutex_);
  script_ = std::move(script);
  script_for_ = generation_;
}

void ResetAhead::prepare() {
  std::unique_lock<std::mutex> lock(mutex_);
  // Again if a newer start was armed while this one ran; not before the chain said what follows
  // the reset (it does at the end of its own reset: the engine queues this after that).
  while (pending_ && !running_ && script_for_ == generation_ && !cancel_.load()) {
    running_ = true;
    pending_ = false;
    const uint64_t generation = generation_;
    const ale::ALEState base = base_;
    const ResetScript script = script_;
    lock.unlock();
    bool ok = false;
    ale::ALEState next;
    std::string checked;
    std::vector<ReplayFrame> replay;
    try {
      if (Verdicts::get().probe(config_, base, &cancel_) && !Verdicts::get().refused(config_) && !cancel_.load()) {
        // Loaded by its first prepare, in time no step wants (a quarter of building an env).
        if (!loaded_) spare_->loadROM(config_.rom_path);
        loaded_ = true;
        spare_->restoreState(base);
        spare_->reset_game();
        next = spare_->cloneState();
        if (Verdicts::get().check_due(config_)) checked = state_of(*spare_);
        replay = record(script);
        ok = true;
      }
    } catch (...) {
      // Nothing prepared: the live emulator resets itself, as without this.
    }
    lock.lock();
    running_ = false;
    if (ok && generation == generation_) {
      ready_ = true;
      ready_for_ = generation;
      next_base_ = std::move(next);
      checked_ = std::move(checked);
      replay_ = std::move(replay);
    }
    prepared_.notify_all();
  }
}

std::vector<ReplayFrame> ResetAhead::record(const ResetScript& script) {
  const int start = spare_->getFrameNumber() - spare_->getEpisodeFrameNumber();  // before the reset
  auto frame = [&](int action, ale::reward_t reward, bool screen) {
    ReplayFrame f;
    f.action = action;
    f.reward = reward;
    f.lives = spare_->lives();
    f.game_over = spare_->game_over(false);
    f.truncated = spare_->game_truncated();
    f.frames = spare_->getFrameNumber() - start;
    f.episode_frames = spare_->getEpisodeFrameNumber();
    if (screen) {
      const auto& s = spare_->getScreen();
      f.screen.assign(s.getArray(), s.getArray() + s.arraySize());
    }
    return f;
  };
  std::vector<ReplayFrame> out;
  out.push_back(frame(ale::PLAYER_A_NOOP, 0, !script.screens.empty() && script.screens[0]));
  for (size_t k = 0; k < script.actions.size() && !out.back().game_over && !out.back().truncated; ++k) {
    const ale::reward_t reward = spare_->act(static_cast<ale::Action>(script.actions[k]));
    out.push_back(frame(script.actions[k], reward, k + 1 < script.screens.size() && script.screens[k + 1]));
  }
  return out;
}

ResetAhead::Taken ResetAhead::take(std::unique_ptr<ale::ALEInterface>& live) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wait_) {  // tests: the prepare runs now, on this thread (a busy machine may never run idle ones)
    if (pending_ && !running_) {
      lock.unlock();
      prepare();
      lock.lock();
    }
    prepared_.wait(lock, [this] { return !running_; });
  }
  const bool prepared = ready_ && ready_for_ == generation_;
  ++generation_;  // whatever is armed or running now is void: this reset happens now
  ready_ = pending_ = false;
  claimable_.store(false, std::memory_order_release);
  if (!prepared) return Taken::kNo;
  if (Verdicts::get().check_due(config_)) {
    // Compared at the reset itself (the prepare kept its state_of), before any script frame.
    live->reset_game();
    Verdicts::get().checked(config_, !checked_.empty() && state_of(*live) == checked_);
    rearm(live->cloneState());
    return Taken::kDone;
  }
  if (!Verdicts::get().swap_allowed(config_)) return Taken::kNo;  // refused meanwhile: reset for real
  if (replay_.size() > 1) return Taken::kReplay;  // the live emulator stays as it is until commit()
  carry_over(*live, live->getFrameNumber());
  std::swap(live, spare_);
  ++taken_;
  rearm(std::move(next_base_));
  return Taken::kDone;
}

void ResetAhead::commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame) {
  std::lock_guard<std::mutex> lock(mutex_);
  carry_over(*live, live_frame);
  std::swap(live, spare_);
  ++taken_;
  ++replayed_;
  rearm(std::move(next_base_));
}

void ResetAhead::carry_over(ale::ALEInterface& live, int live_frame) {
  // A real reset keeps the live emulator's frame counter and environment RNG: carry them over
  // (the RNG only matters with sticky actions: without, its draws decide nothing).
  if (config_.repeat_action_probability > 0) copy_rng(live, *spare_);
  // Since its reset began the spare counted as many frames as its episode holds (the reset's own:
  // the mode's set-up, none for most ROMs; then the script's): the live counter goes on by as many.
  ale::ALEState state = spare_->environment->getState();
  const int episode = state.getEpisodeFrameNumber();
  state.incrementFrame(live_frame - state.getFrameNumber());
  state.resetEpisodeFrameNumber();
  state.incrementFrame(episode);
  spare_->environment->setState(state);
}

bool ResetAhead::reclaim() {
  std::lock_guard<std::mutex> lock(mutex_);
  claimable_.store(false, std::memory_order_release);
  return pending_ && !running_;
}

void ResetAhead::rearm(ale::ALEState base) {
  if (Verdicts::get().refused(config_)) return;
  base_ = std::move(base);
  pending_ = true;
  claimable_.store(true, std::memory_order_release);
}

}  // namespace sb3ale
