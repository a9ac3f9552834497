#include "env/reset_job.hpp"

#include <utility>

#include "env/ale_state.hpp"

namespace sb3ale {

void ResetJob::run() {
  if (!cas(kPending, kRunning)) return;  // reclaimed or abandoned before it started, or run already
  bool ok = false;
  try {
    ok = compute();
  } catch (...) {
    // Nothing prepared: the live emulator resets itself, as without this.
  }
  int running = kRunning;
  if (!ok || !status.compare_exchange_strong(running, kDone, std::memory_order_acq_rel)) {
    status.store(kAbandoned, std::memory_order_release);  // never taken; freed by its last owner
  }
}

bool ResetJob::reclaim() {
  if (cas(kPending, kAbandoned)) return true;
  abandon();
  return false;
}

void ResetJob::abandon() {
  int s = status.load(std::memory_order_acquire);
  while ((s == kPending || s == kRunning || s == kDone) &&
         !status.compare_exchange_weak(s, kAbandoned, std::memory_order_acq_rel)) {
  }
}

bool ResetJob::compute() {
  if (check) emu = check.make();  // whole, even if abandoned meanwhile: a check is never half made
  if (!prepare || abandoned()) return false;
  // Each phase ends with a look at the status: an env that gave up on this job waits for none of it.
  if (!emu) {
    emu = make_ale(*config, ale_max_frames);
    emu->loadROM(config->rom_path);  // a quarter of building an env, in time no step wants
    if (abandoned()) return false;
  }
  emu->restoreState(base);
  emu->reset_game();
  // Copied into the buffers of the job's last run (the temporaries are this thread's own).
  const ale::ALEState fresh = emu->cloneState();
  next = fresh;
  const std::string fresh_state = state_of(*emu);
  state = fresh_state;
  if (abandoned()) return false;
  record();
  return !abandoned();
}

void ResetJob::record() {
  const int start = emu->getFrameNumber() - emu->getEpisodeFrameNumber();  // before the reset
  replayed = 0;
  auto frame = [&](int action, ale::reward_t reward, bool screen) -> const ReplayFrame& {
    if (replayed == replay.size()) replay.emplace_back();  // within the capacity the env reserved
    ReplayFrame& f = replay[replayed++];
    f.action = action;
    f.reward = reward;
    f.lives = emu->lives();
    f.game_over = emu->game_over(false);
    f.truncated = emu->game_truncated();
    f.frames = emu->getFrameNumber() - start;
    f.episode_frames = emu->getEpisodeFrameNumber();
    if (screen) {
      const auto& s = emu->getScreen();
      f.screen.assign(s.getArray(), s.getArray() + s.arraySize());
    } else {
      f.screen.clear();  // keeps its buffer
    }
    return f;
  };
  const ReplayFrame* last = &frame(ale::PLAYER_A_NOOP, 0, !script.screens.empty() && script.screens[0]);
  for (size_t k = 0; k < script.actions.size() && !last->game_over && !last->truncated; ++k) {
    if (abandoned()) return;
    const ale::reward_t reward = emu->act(static_cast<ale::Action>(script.actions[k]));
    last = &frame(script.actions[k], reward, k + 1 < script.screens.size() && script.screens[k + 1]);
  }
}

}  // namespace sb3ale
