// The engine's resets computed ahead of time (ResetAhead, env/reset_ahead.*): the switches, the
// idle-priority threads that prepare them, and the counts that tests and the benchmark read. The
// prepares themselves are queued by Engine::run_env as an env's task ends.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "core/engine.hpp"

namespace sb3ale {

void Engine::set_reset_ahead(bool on, bool wait) {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("set_reset_ahead() needs no env in flight: recv() them first");
  if (on && !wait && !background_) start_background();
  reset_ahead_ = on;
  wait_for_prepares_ = wait;
  for (size_t e = 0; e < envs_.size(); ++e) {
    if (envs_[e]) apply_reset_ahead(e);  // off abandons what is prepared; nothing waits for it
  }
}

void Engine::start_background() {
  // The pool's workers run the queued prepares whenever they have nothing else to do (a busy loop on
  // few cores leaves them little else); the idle-priority threads, as many as the workers, run the
  // rest in time that no thread of ours (nor any other program) wants: more would only compete.
  background_ = std::make_unique<Background>(std::max(1, pool_.size() - 1), affinity_offset_);
  lender_.store(background_.get(), std::memory_order_release);
}

void Engine::apply_reset_ahead(size_t e) {
  envs_[e]->set_reset_ahead(reset_ahead_, verdicts_[e]);
  envs_[e]->wait_for_prepares(wait_for_prepares_);
}

int64_t Engine::resets_count(Count what) const {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("resets_count() needs no env in flight: recv() them first");
  if (what == Count::kMismatches) return reset_ahead_mismatches();  // per key, not per env
  int64_t total = 0;
  for (const auto& env : envs_) {
    if (!env) continue;
    switch (what) {
      case Count::kGames: total += env->game_resets(); break;
      case Count::kTaken: total += env->resets_taken(); break;
      case Count::kReplayed: total += env->resets_replayed(); break;
      case Count::kChecked: total += env->resets_checked(); break;
      case Count::kAbandoned: total += env->replays_abandoned(); break;
      case Count::kMismatches: break;
    }
  }
  return total;
}

int Engine::prepared() const {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("prepared() needs no env in flight: recv() them first");
  return static_cast<int>(std::count_if(envs_.begin(), envs_.end(), [](const auto& env) { return env && env->prepared(); }));
}

}  // namespace sb3ale
