// The engine's resets computed ahead of time (ResetAhead, env/reset_ahead.*): the switches, the
// idle-priority threads that prepare them, and the counts that tests and the benchmark read. The
// prepares themselves are queued by Engine::run_env as an env's task ends.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "core/engine.hpp"

namespace sb3ale {

void Engine::prepare_env(int i) { envs_[static_cast<size_t>(i)]->prepare_reset(); }

void Engine::set_reset_ahead(bool on, bool wait) {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("set_reset_ahead() needs no env in flight: recv() them first");
  if (on && !background_) start_background();
  reset_ahead_ = on;
  wait_for_prepares_ = wait;
  for (int i = 0; i < num_envs(); ++i) {
    const auto e = static_cast<size_t>(i);
    if (background_) background_->drop(i);  // none runs while the switches change
    if (!envs_[e]) continue;
    apply_reset_ahead(e);
    // What the drop took out of the queue, queued again: switching on twice loses no prepare.
    if (on && !wait && envs_[e]->reclaim_prepare()) background_->submit(i);
  }
}

void Engine::start_background() {
  // As many as the pool's workers: they run only in time that no thread of ours (nor any other
  // program) wants, so more would only compete with each other.
  background_ = std::make_unique<Background>(std::max(1, pool_.size() - 1), affinity_offset_,
                                             [this](int i) { prepare_env(i); });
}

void Engine::apply_reset_ahead(size_t e) {
  envs_[e]->set_reset_ahead(reset_ahead_);
  envs_[e]->wait_for_prepares(wait_for_prepares_);
}

int64_t Engine::resets_taken(bool replayed) const {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("resets_taken() needs no env in flight: recv() them first");
  int64_t total = 0;
  for (const auto& env : envs_) total += !env ? 0 : replayed ? env->resets_replayed() : env->resets_taken();
  return total;
}

int Engine::prepared() const {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("prepared() needs no env in flight: recv() them first");
  return static_cast<int>(std::count_if(envs_.begin(), envs_.end(), [](const auto& env) { return env && env->prepared(); }));
}

}  // namespace sb3ale
