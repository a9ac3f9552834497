// The engine's resets computed ahead of time (ResetAhead, env/reset_ahead.*): the switches, the
// idle-priority threads that prepare them, and the counts that tests and the benchmark read. The
// prepares themselves are queued by Engine::run_env as an env's task ends.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine.hpp"

namespace sb3ale {

void Engine::set_reset_ahead(bool on, bool wait) {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("set_reset_ahead() needs no env in flight: recv() them first");
  if (on && !background_) start_background();
  reset_ahead_ = on;
  wait_for_prepares_ = wait;
  for (size_t e = 0; e < envs_.size(); ++e) {
    if (envs_[e]) apply_reset_ahead(e);  // off abandons what is prepared; nothing waits for it
  }
}

void Engine::hold_prepares(bool on) {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("hold_prepares() needs no env in flight: recv() them first");
  if (!background_) start_background();  // the workers read background_ only while envs are in flight
  background_->hold(on);
}

std::vector<std::string> Engine::take_refused() {
  std::vector<std::string> keys;
  for (const auto& key : keys_) {
    if (key->refused.load(std::memory_order_acquire) && !key->reported.exchange(true)) keys.push_back(key->key);
  }
  return keys;
}

void Engine::start_background() {
  // The pool's workers run the queued prepares whenever they have nothing else to do (a busy loop on
  // few cores leaves them little else); the idle-priority threads, as many as the workers, run the
  // rest in time that no thread of ours (nor any other program) wants: more would only compete.
  background_ = std::make_unique<Background>(std::max(1, pool_.size() - 1), static_cast<int>(configs_.size()), affinity_offset_);
  caller_load_.add_clocks(background_->cpu_clocks());
  lending_.lend(background_.get());
}

void Engine::apply_reset_ahead(size_t e) {
  // Switched off with a check owed: the check still runs, in idle time (nothing waits for it).
  if (auto owed = envs_[e]->set_reset_ahead(reset_ahead_, wait_for_prepares_, verdicts_[e])) {
    background_->submit(static_cast<int>(e), std::move(owed));
  }
}

int64_t Engine::resets_count(Count what) const {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("resets_count() needs no env in flight: recv() them first");
  int64_t total = 0;
  if (what == Count::kChecked || what == Count::kMismatches || what == Count::kDropped) {  // per key
    for (const auto& key : keys_) {
      total += (what == Count::kChecked ? key->checked : what == Count::kDropped ? key->dropped : key->mismatches).load();
    }
    return total;
  }
  for (const auto& env : envs_) {
    if (!env) continue;
    switch (what) {
      case Count::kGames: total += env->game_resets(); break;
      case Count::kTaken: total += env->resets_taken(); break;
      case Count::kReplayed: total += env->resets_replayed(); break;
      case Count::kAbandoned: total += env->replays_abandoned(); break;
      default: break;
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
