#include "env/reset_job.hpp"

#include <utility>

#include "env/ale_state.hpp"

namespace sb3ale {

bool ResetJob::run(const std::function<bool()>& yield) {
  if (!cas(kPending, kRunning)) return false;  // reclaimed or abandoned before it started, or run already
  Outcome outcome = kFailed;
  try {
    outcome = compute(yield);
  } catch (...) {
    // Nothing prepared: the live emulator resets itself, as without this.
  }
  int running = kRunning;
  if (outcome == kYielded && status.compare_exchange_strong(running, kPending, std::memory_order_acq_rel)) {
    return true;  // pending again, at its resume point: whichever thread next has time goes on
  }
  running = kRunning;
  if (outcome != kPrepared || !status.compare_exchange_strong(running, kDone, std::memory_order_acq_rel)) {
    status.store(kAbandoned, std::memory_order_release);  // never taken
  }
  return false;
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

ResetJob::Outcome ResetJob::compute(const std::function<bool()>& yield) {
  // Each phase ends with a look at the status (an env that gave up on this job waits for none of it)
  // and, on a pool worker, at its queue: a step queued meanwhile goes first, the job resumes later.
  auto stop = [&](Phase next) {
    phase = next;
    return abandoned() ? kFailed : yield && yield() ? kYielded : kPrepared;
  };
  if (phase == kCheck) {
    if (check) emu = check.make();  // whole, even if abandoned meanwhile: a check is never half made
    if (!prepare) return kFailed;
    if (const Outcome o = stop(kEmulator); o != kPrepared) return o;
  }
  if (phase == kEmulator) {
    if (!emu) {
      emu = make_ale(*config, ale_max_frames);
      emu->loadROM(config->rom_path);  // a quarter of building an env, in time no step wants
    }
    if (const Outcome o = stop(kReset); o != kPrepared) return o;
  }
  if (phase == kReset) {
    emu->restoreState(base);
    emu->reset_game();
    // Copied into the buffers of the job's last run (the temporaries are this thread's own).
    const ale::ALEState fresh = emu->cloneState();
    next = fresh;
    const std::string fresh_state = state_of(*emu);
    state = fresh_state;
    record_start = emu->getFrameNumber() - emu->getEpisodeFrameNumber();  // before the reset
    replayed = 0;
    record(ale::PLAYER_A_NOOP, 0, !script.screens.empty() && script.screens[0]);
    scripted = 0;
    if (const Outcome o = stop(kRecord); o != kPrepared) return o;
  }
  // The script, a frame at a time: the longest wait a yield leaves a queued step is one frame here.
  while (scripted < script.actions.size() && !replay[replayed - 1].game_over && !replay[replayed - 1].truncated) {
    const size_t k = scripted++;
    const ale::reward_t reward = emu->act(static_cast<ale::Action>(script.actions[k]));
    record(script.actions[k], reward, k + 1 < script.screens.size() && script.screens[k + 1]);
    if (const Outcome o = stop(kRecord); o != kPrepared) return o;
  }
  return abandoned() ? kFailed : kPrepared;
}

void ResetJob::record(int action, ale::reward_t reward, bool screen) {
  if (replayed == replay.size()) replay.emplace_back();  // within the capacity the env reserved
  ReplayFrame& f = replay[replayed++];
  f.action = action;
  f.reward = reward;
  f.lives = emu->lives();
  f.game_over = emu->game_over(false);
  f.truncated = emu->game_truncated();
  f.frames = emu->getFrameNumber() - record_start;
  f.episode_frames = emu->getEpisodeFrameNumber();
  if (screen) {
    const auto& s = emu->getScreen();
    f.screen.assign(s.getArray(), s.getArray() + s.arraySize());
  } else {
    f.screen.clear();  // keeps its buffer
  }
}

}  // namespace sb3ale
