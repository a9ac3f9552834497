// The one way into a Vectorizer for both front doors, the Python module and the XLA targets: one
// call inside at a time (from any thread, a signal handler or XLA's own), a close() that comes while
// a call is inside carried out when it leaves, and a closed engine an error, never a freed one.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/platform.hpp"
#include "core/vectorizer.hpp"

namespace sb3ale {

/// A call refused because another is inside: nothing was consumed or changed, so it may be retried.
struct EngineBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class VectorizerHold {
 public:
  explicit VectorizerHold(std::unique_ptr<Vectorizer> vec) : vec_(std::move(vec)), pid_(platform::process_id()) {}
  ~VectorizerHold() {
    if (forked()) (void)vec_.release();  // its threads are the parent's: nothing of it may run here
  }

  /// Runs body(Vectorizer&) as the engine's only caller, in one piece (a send and its recv too),
  /// and returns what it returns. Throws std::runtime_error, at once, when the engine is closed, when
  /// another call is inside (EngineBusy) or in a process forked from the one that built it: nothing
  /// waits here. A close() meanwhile takes effect as the body returns; the engine is destroyed then,
  /// on this thread (its workers joined).
  template <typename Body>
  auto use(Body&& body) -> decltype(body(std::declval<Vectorizer&>())) {
    Vectorizer& vec = enter();
    struct Leave {
      VectorizerHold& hold;
      ~Leave() { hold.leave(); }
    } leave{*this};
    return body(vec);
  }

  /// Closes the engine and destroys it here (joining its workers: call it without locks the workers
  /// or a waiting call need), unless a call is inside (that call destroys it as it leaves) or it was
  /// closed already. Idempotent. In a forked child the engine is left as it is: its threads do not
  /// exist there, so there is nothing to join, and nothing of it is touched.
  void close() {
    if (forked()) return;
    std::unique_ptr<Vectorizer> vec;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
      if (inside_) return;
      vec = std::move(vec_);
    }
    destroy(std::move(vec));
  }
  /// Whether close() was called (the engine may still be finishing a call). In a forked child, false:
  /// every call there raises the fork error instead (enter()).
  bool closed() const {
    if (forked()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return closing_;
  }
  /// Whether no thread of the engine can write anything any more: its destruction has finished (not
  /// merely begun on another thread), or this is a forked child, where its threads do not exist.
  bool destroyed() const {
    if (forked()) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    return gone_;
  }
  /// Whether this process is a fork of the one that built the engine (checked before any lock: one
  /// may have been held by a thread that does not exist here).
  bool forked() const { return platform::process_id() != pid_; }

 private:
  Vectorizer& enter() {
    if (forked()) {
      throw std::runtime_error("this env was built in another process, before os.fork(): its threads do not "
                               "exist here, so it cannot run in this process (close() it, and build a new env "
                               "here, or use the 'spawn' or 'forkserver' start method)");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) throw std::runtime_error("the engine is closed");
    if (inside_) {
      throw EngineBusy("another call is using this engine right now (another thread, an XLA call, or "
                               "a signal handler run during a wait): one call at a time");
    }
    inside_ = true;
    return *vec_;
  }
  void leave() {
    std::unique_ptr<Vectorizer> vec;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      inside_ = false;
      if (closing_) vec = std::move(vec_);
    }
    destroy(std::move(vec));
  }
  /// Destroys `vec` (if it holds the engine) outside the lock; gone_ once that has finished, so that
  /// a second close() meanwhile does not free what the workers still write into.
  void destroy(std::unique_ptr<Vectorizer> vec) {
    if (!vec) return;
    vec.reset();
    std::lock_guard<std::mutex> lock(mutex_);
    gone_ = true;
  }

  mutable std::mutex mutex_;
  std::unique_ptr<Vectorizer> vec_;
  const std::int64_t pid_;  // never differs on Windows, which has no fork
  bool inside_ = false;
  bool closing_ = false;
  bool gone_ = false;
};

}  // namespace sb3ale
