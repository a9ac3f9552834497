// The hand-off of idle work from the pool to the background: a ThreadPool worker with nothing queued
// runs one submitted prepare (core/background.*) at its own priority, in time it has, before it spins
// or sleeps. Owns nothing: the engine lends its Background once it exists and stops lending before it
// goes; ThreadPool calls it (its `idle`) from its workers.
#pragma once

#include <atomic>
#include <functional>

#include "core/background.hpp"

namespace sb3ale {

class IdleLending {
 public:
  /// A worker with nothing queued: runs one prepare, if any is waiting, until `task_queued` says a
  /// step waits (the prepare goes on later, where it stopped); false when none ran.
  bool operator()(const std::function<bool()>& task_queued) const {
    Background* background = lent_.load(std::memory_order_acquire);
    return background != nullptr && background->run_one(task_queued);
  }
  /// The engine: `background` (null: none) from now on. Before it destroys what it lent, the engine
  /// joins the workers (ThreadPool::shutdown): a worker may be inside run_one() of it.
  void lend(Background* background) { lent_.store(background, std::memory_order_release); }

 private:
  std::atomic<Background*> lent_{nullptr};
};

}  // namespace sb3ale
