#include "env/reset_check.hpp"

#include <utility>

#include "env/ale_state.hpp"

namespace sb3ale {

namespace {

constexpr int64_t kFirstChecks = 8;
std::atomic<int64_t> dropped_total{0};

}  // namespace

bool checks_swap(int64_t swap, RuntimeVerdict& verdict) {
  const bool first = verdict.first_swaps.fetch_add(1, std::memory_order_relaxed) < kFirstChecks;
  return first || swap % 16 == 0;
}

OwedCheck::OwedCheck(std::unique_ptr<ale::ALEInterface> ended, std::string swapped_state, std::string swapped_rng,
                     std::shared_ptr<RuntimeVerdict> verdict)
    : ended_(std::move(ended)), state_(std::move(swapped_state)), rng_(std::move(swapped_rng)),
      verdict_(std::move(verdict)) {}

OwedCheck& OwedCheck::operator=(OwedCheck&& other) noexcept {
  if (this != &other) {
    drop();
    ended_ = std::move(other.ended_);
    state_ = std::move(other.state_);
    rng_ = std::move(other.rng_);
    verdict_ = std::move(other.verdict_);
  }
  return *this;
}

std::unique_ptr<ale::ALEInterface> OwedCheck::make() {
  bool same = false;
  try {
    ended_->reset_game();  // the reset the swap stood in for, made for real from where the episode ended
    same = state_of(*ended_) == state_ && (rng_.empty() || rng_of(*ended_) == rng_);
  } catch (...) {
    drop();  // the emulator failed: nothing is known of this swap
    return nullptr;
  }
  std::unique_ptr<ale::ALEInterface> emu = std::move(ended_);
  verdict_->checked.fetch_add(1, std::memory_order_relaxed);
  if (!same) {
    verdict_->mismatches.fetch_add(1, std::memory_order_relaxed);
    verdict_->refused.store(true, std::memory_order_release);
  }
  return emu;
}

void OwedCheck::drop() {
  if (!ended_) return;
  ended_.reset();
  if (verdict_->refused.load(std::memory_order_acquire)) return;  // moot: the key resets for real already
  verdict_->dropped.fetch_add(1, std::memory_order_relaxed);
  dropped_total.fetch_add(1, std::memory_order_relaxed);
}

int64_t OwedCheck::dropped_in_process() { return dropped_total.load(std::memory_order_relaxed); }

}  // namespace sb3ale
