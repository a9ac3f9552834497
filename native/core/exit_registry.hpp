// The process's exit and the detached threads at idle priority (background.*). Owns the list of
// every thread group alive in the process; called by Background (join, as it starts its threads) and
// by the interpreter's exit hooks (stop_all: Python's atexit, and multiprocessing's finalizers, which
// the children that end with os._exit still run; see sb3_ale_vec/_native.py).
//
// Why a wait here at all: a low-priority thread still there when the process ends may be the last one
// out, and the last one out tears the address space down at its priority (seconds when every core is
// busy). A thread told to stop ends within milliseconds, the job it runs within one phase of it; so
// stop_all() tells every group to stop, then waits a bounded time for their threads to be gone. The
// one wait on them anywhere.
#pragma once

#include <chrono>
#include <memory>

namespace sb3ale {

namespace exit_registry {

/// A group of detached threads that can be told to stop and asked whether they are gone.
class Member {
 public:
  virtual ~Member() = default;
  /// Tells the threads to stop after what each runs, and abandons their jobs. Never blocks.
  virtual void halt() = 0;
  /// Whether every thread of the group has ended.
  virtual bool ended() const = 0;
};

/// Adds `member` for as long as it lives (held weakly). A forked child starts with none: the parent's
/// threads do not exist there.
void join(const std::shared_ptr<Member>& member);

constexpr auto kExitGrace = std::chrono::milliseconds(300);

/// Every member halted, then up to kExitGrace for them to have ended.
void stop_all();

}  // namespace exit_registry

}  // namespace sb3ale
