// The one way into a Vectorizer for both front doors, the Python module and the XLA targets: one
// call inside at a time (from any thread, a signal handler or XLA's own), a close() that comes while
// a call is inside carried out when it leaves, and a closed engine an error, never a freed one.
#pragma once

#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/vectorizer.hpp"

namespace sb3ale {

/// A call refused because another is inside: nothing was consumed or changed, so it may be retried.
struct EngineBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class VectorizerHold {
 public:
  explicit VectorizerHold(std::unique_ptr<Vectorizer> vec) : vec_(std::move(vec)) {}

  /// Runs body(Vectorizer&) as the engine's only caller, in one piece (a send and its recv too),
  /// and returns what it returns. Throws std::runtime_error, at once, when the engine is closed or
  /// when another call is inside: nothing waits here. A close() meanwhile takes effect as the body
  /// returns; the engine is destroyed then, on this thread (its workers joined).
  template <typename Body>
  auto use(Body&& body) -> decltype(body(std::declval<Vectorizer&>())) {
    Vectorizer& vec = enter();
    struct Leave {
      VectorizerHold& hold;
      ~Leave() { hold.leave(); }
    } leave{*this};
    return body(vec);
  }

  /// Closes the engine: returns it for the caller to destroy (which joins its workers: not under a
  /// lock the workers or a waiting call need), or null when it was closed already or a call is
  /// inside (that call destroys it as it leaves). Idempotent.
  std::unique_ptr<Vectorizer> close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    return inside_ ? nullptr : std::move(vec_);
  }
  /// Whether close() was called (the engine may still be finishing a call).
  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closing_;
  }
  /// Whether the engine is gone: closed, and no call inside any more.
  bool destroyed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return vec_ == nullptr;
  }

 private:
  Vectorizer& enter() {
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
    std::unique_ptr<Vectorizer> closed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      inside_ = false;
      if (closing_) closed = std::move(vec_);
    }
  }  // `closed` goes here, outside the lock

  mutable std::mutex mutex_;
  std::unique_ptr<Vectorizer> vec_;
  bool inside_ = false;
  bool closing_ = false;
};

}  // namespace sb3ale
