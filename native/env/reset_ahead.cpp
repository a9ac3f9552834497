#include "env/reset_ahead.hpp"

#include <utility>

namespace sb3ale {

namespace {

// The swaps re-checked against a real reset: the first kFirstChecks of each key in an engine (shared by
// its envs: 16 envs checked 4 each made the first episodes' resets cost double), then one in 16 of
// each env's. Each check is one more reset emulated, in time no step waits for.
constexpr int64_t kFirstChecks = 8;
bool checks_swap(int64_t n, RuntimeVerdict& verdict) {
  return n % 16 == 0 || verdict.first_checks.fetch_add(1, std::memory_order_relaxed) < kFirstChecks;
}

}  // namespace

void ResetJob::run() {
  if (!cas(kPending, kRunning)) return;  // abandoned before it started, or run already
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

void ResetJob::abandon() {
  int s = status.load(std::memory_order_acquire);
  while ((s == kPending || s == kRunning || s == kDone) &&
         !status.compare_exchange_weak(s, kAbandoned, std::memory_order_acq_rel)) {
  }
}

bool ResetJob::compute() {
  // Each phase ends with a look at the status: an env that gave up on this job waits for none of it.
  if (check && emu) {
    emu->reset_game();  // the reset the swap stood in for, made for real from where the episode ended
    const bool same = state_of(*emu) == check_state && (check_rng.empty() || rng_of(*emu) == check_rng);
    check_result = same ? 1 : -1;
    if (abandoned()) return false;
  }
  if (!emu) {
    emu = make_ale(*config, ale_max_frames);
    emu->loadROM(config->rom_path);  // a quarter of building an env, in time no step wants
    if (abandoned()) return false;
  }
  emu->restoreState(base);
  emu->reset_game();
  next = emu->cloneState();
  if (keep_state) state = state_of(*emu);
  if (abandoned()) return false;
  record();
  return !abandoned();
}

void ResetJob::record() {
  const int start = emu->getFrameNumber() - emu->getEpisodeFrameNumber();  // before the reset
  auto frame = [&](int action, ale::reward_t reward, bool screen) {
    ReplayFrame f;
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
    }
    return f;
  };
  replay.push_back(frame(ale::PLAYER_A_NOOP, 0, !script.screens.empty() && script.screens[0]));
  for (size_t k = 0; k < script.actions.size() && !replay.back().game_over && !replay.back().truncated; ++k) {
    if (abandoned()) return;
    const ale::reward_t reward = emu->act(static_cast<ale::Action>(script.actions[k]));
    replay.push_back(frame(script.actions[k], reward, k + 1 < script.screens.size() && script.screens[k + 1]));
  }
}

ResetAhead::ResetAhead(const EnvConfig& config, int ale_max_frames, std::shared_ptr<RuntimeVerdict> verdict)
    : config_(std::make_shared<const EnvConfig>(config)), ale_max_frames_(ale_max_frames), verdict_(std::move(verdict)) {}

ResetAhead::~ResetAhead() { disarm(); }

void ResetAhead::arm(ale::ALEInterface& live) {
  disarm();
  if (!config_->reset_ahead || verdict_->refused.load(std::memory_order_relaxed)) return;
  base_ = live.cloneState();
  armed_ = true;
}

void ResetAhead::disarm() {
  if (job_) job_->abandon();
  job_.reset();
  replaying_.reset();
  armed_ = scripted_ = false;
}

void ResetAhead::set_script(ResetScript script) {
  script_ = std::move(script);
  scripted_ = true;
}

std::shared_ptr<ResetJob> ResetAhead::claim() {
  if (!armed_ || !scripted_ || job_ || wait_) return nullptr;
  job_ = make_job();
  return job_;
}

std::shared_ptr<ResetJob> ResetAhead::make_job() {
  auto job = std::make_shared<ResetJob>();
  job->config = config_;
  job->ale_max_frames = ale_max_frames_;
  job->base = base_;
  job->script = script_;
  job->emu = std::move(spare_);  // null after an abandoned job: the job makes a fresh one
  job->check = check_ && job->emu != nullptr;
  job->check_state = std::move(check_state_);
  job->check_rng = std::move(check_rng_);
  check_ = false;
  job->keep_state = checks_swap(taken_ + 1, *verdict_);
  return job;
}

ResetAhead::Taken ResetAhead::take(std::unique_ptr<ale::ALEInterface>& live) {
  if (wait_ && armed_ && scripted_ && !job_) job_ = make_job();
  if (wait_ && job_) job_->run();  // tests: the prepare runs now, on this thread
  std::shared_ptr<ResetJob> job = std::move(job_);
  const bool armed = armed_;
  disarm();  // whatever happens now, this reset happens now
  if (!armed || !job || !job->take()) {
    if (job) job->abandon();
    return Taken::kNo;
  }
  if (job->check_result != 0) ++checked_;
  if (job->check_result < 0) {  // an earlier swap differed from the real reset: this key resets for real
    verdict_->mismatches.fetch_add(1, std::memory_order_relaxed);
    verdict_->refused.store(true, std::memory_order_relaxed);
  }
  if (verdict_->refused.load(std::memory_order_relaxed)) return Taken::kNo;
  if (job->replay.size() > 1) {  // the live emulator stays as it is until commit()
    replaying_ = std::move(job);
    return Taken::kReplay;
  }
  swap_in(live, *job, live->getFrameNumber());
  return Taken::kDone;
}

void ResetAhead::commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame) {
  const std::shared_ptr<ResetJob> job = std::move(replaying_);
  swap_in(live, *job, live_frame);
  ++replayed_;
}

void ResetAhead::swap_in(std::unique_ptr<ale::ALEInterface>& live, ResetJob& job, int live_frame) {
  // A real reset keeps the live emulator's environment RNG (it draws nothing with sticky actions;
  // without, the table's verdict says its outcome does not depend on it) and its frame counter:
  // carried over. Since its reset began the spare counted as many frames as its episode holds (the
  // reset's own, then the script's): the live counter goes on by as many.
  copy_rng(*live, *job.emu);
  ale::ALEState state = job.emu->environment->getState();
  const int episode = state.getEpisodeFrameNumber();
  state.incrementFrame(live_frame - state.getFrameNumber());
  state.resetEpisodeFrameNumber();
  state.incrementFrame(episode);
  job.emu->environment->setState(state);
  std::swap(live, job.emu);
  ++taken_;
  // The emulator swapped out holds the state the episode ended in: the next job starts from it, and
  // first resets it for real to check this swap, if it is one of those checked.
  spare_ = std::move(job.emu);
  check_ = job.keep_state;  // this swap is one of those checked
  if (check_) {
    check_state_ = std::move(job.state);
    check_rng_ = config_->repeat_action_probability > 0 ? rng_of(*live) : std::string();
  }
  base_ = std::move(job.next);
  armed_ = true;
}

}  // namespace sb3ale
