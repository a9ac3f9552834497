#include "env/reset_ahead.hpp"

#include <stdexcept>
#include <utility>

#include "env/ale_state.hpp"

namespace sb3ale {

namespace {

// Jobs an env keeps: one queued or running, one being replayed, and those abandoned that a starved
// thread still holds. With all of them held, the env resets for real until one is free.
constexpr size_t kMaxJobs = 4;

}  // namespace

ResetAhead::ResetAhead(const EnvConfig& config, int ale_max_frames, std::shared_ptr<RuntimeVerdict> verdict)
    : config_(std::make_shared<const EnvConfig>(config)), ale_max_frames_(ale_max_frames), verdict_(std::move(verdict)) {
  // Emulator::set_reset_ahead decides; this only holds it to the table.
  if (!config.reset_ahead) throw std::logic_error("resets ahead for a key the table does not vouch for");
}

ResetAhead::~ResetAhead() { disarm(); }

void ResetAhead::arm(ale::ALEInterface& live) {
  disarm();
  if (verdict_->refused.load(std::memory_order_acquire)) return;
  base_ = live.cloneState();
  armed_ = true;
}

void ResetAhead::disarm() {
  drop_job();
  replaying_.reset();
  armed_ = scripted_ = false;
}

void ResetAhead::set_script(ResetScript script) {
  script_ = std::move(script);
  scripted_ = true;
}

std::shared_ptr<ResetJob> ResetAhead::claim() {
  if (!armed_ || !scripted_ || job_ || wait_) return nullptr;
  job_ = make_job(true);
  return job_;
}

std::shared_ptr<ResetJob> ResetAhead::release() {
  disarm();
  return owed_ ? make_job(false) : nullptr;
}

std::shared_ptr<ResetJob> ResetAhead::free_job() {
  for (const auto& job : jobs_) {
    if (job != job_ && job != replaying_ && job->reusable()) return job;
  }
  if (jobs_.size() >= kMaxJobs) return nullptr;
  jobs_.push_back(std::make_shared<ResetJob>());
  return jobs_.back();
}

std::shared_ptr<ResetJob> ResetAhead::make_job(bool prepare) {
  std::shared_ptr<ResetJob> job = free_job();
  if (!job) return nullptr;
  // Every input copied into the buffers of the job's last run: nothing here frees an output.
  job->status.store(ResetJob::kPending, std::memory_order_relaxed);
  job->config = config_;
  job->ale_max_frames = ale_max_frames_;
  job->prepare = prepare;
  job->phase = ResetJob::kCheck;  // its reset phase clears the replay
  if (prepare) {
    job->base = base_;
    job->script = script_;
    // Room for every frame of the script, made here: the thread that runs the job never grows it.
    job->replay.reserve(script_.actions.size() + 1);
  }
  job->check = std::move(owed_);
  // The spare: a check's emulator, else ours, else the one the job kept when it was abandoned (a job
  // that makes a check replaces its emulator with the check's: ours keeps the one it held).
  if (job->check && job->emu) {
    if (!spare_) spare_ = std::move(job->emu);
    job->emu.reset();  // a third emulator, only after abandoned jobs: the one freed on this path
  } else if (!job->emu) {
    job->emu = std::move(spare_);  // null when none is left: the job makes one
  }
  return job;
}

void ResetAhead::drop_job() {
  if (!job_) return;
  if (job_->reclaim()) {  // nobody started it: the check owed and the spare are ours again
    owed_ = std::move(job_->check);
    if (!spare_) spare_ = std::move(job_->emu);
  }
  job_.reset();
}

ResetAhead::Taken ResetAhead::take(std::unique_ptr<ale::ALEInterface>& live) {
  if (wait_ && armed_ && scripted_ && !job_) job_ = make_job(true);
  if (wait_ && job_) job_->run();  // tests: the prepare runs now, on this thread
  const bool ready = armed_ && job_ && job_->take();
  std::shared_ptr<ResetJob> job = ready ? std::move(job_) : nullptr;
  disarm();  // whatever happens now, this reset happens now
  // A key refused meanwhile (this env's check or another's) resets for real from now on.
  if (!job || verdict_->refused.load(std::memory_order_acquire)) return Taken::kNo;
  if (job->replayed > 1) {  // the live emulator stays as it is until commit()
    replaying_ = std::move(job);
    return Taken::kReplay;
  }
  swap_in(live, *job, live->getFrameNumber());
  return Taken::kDone;
}

void ResetAhead::commit(std::unique_ptr<ale::ALEInterface>& live, int live_frame) {
  const std::shared_ptr<ResetJob> job = std::move(replaying_);
  swap_in(live, *job, live_frame);
}

void ResetAhead::swap_in(std::unique_ptr<ale::ALEInterface>& live, ResetJob& job, int live_frame) {
  // A real reset keeps the live emulator's environment RNG (it draws nothing with sticky actions;
  // without, the table's verdict says its outcome does not depend on it) and its frame counter:
  // carried over. Since its reset began the spare counted as many frames as its episode holds (the
  // reset's own, then the script's): the live counter goes on by as many.
  copy_rng(*live, *job.emu);
  ale::ALEState state = job.emu->environment->getState();
  count_frames_from(state, live_frame);
  job.emu->environment->setState(state);
  std::swap(live, job.emu);
  ++swaps_;
  // The emulator swapped out holds the state the episode ended in: the next job starts from it,
  // and first resets it for real to check this swap, if it is one of those checked.
  if (checks_swap(swaps_, *verdict_)) {
    std::string rng = config_->repeat_action_probability > 0 ? rng_of(*live) : std::string();
    owed_ = OwedCheck(std::move(job.emu), job.state, std::move(rng), verdict_);  // a copy: the job keeps its own
  } else {
    spare_ = std::move(job.emu);
  }
  base_ = job.next;  // into base_'s buffer: the job keeps its own for its next run
  armed_ = true;
}

}  // namespace sb3ale
