#include "core/exit_registry.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "core/platform.hpp"

namespace sb3ale::exit_registry {

namespace {

// Taken only by ordinary threads (the ones that build and destroy engines, and the exit), never by an
// idle one; consistent across fork(), where the child starts with none.
std::mutex registry_mutex;
std::vector<std::weak_ptr<Member>>* registry = new std::vector<std::weak_ptr<Member>>;  // never destroyed
const int registry_at_fork = platform::at_fork([] { registry_mutex.lock(); }, [] { registry_mutex.unlock(); },
                                              [] {
                                                registry->clear();
                                                registry_mutex.unlock();
                                              });

}  // namespace

void join(const std::shared_ptr<Member>& member) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry->erase(std::remove_if(registry->begin(), registry->end(), [](const auto& w) { return w.expired(); }),
                  registry->end());
  registry->push_back(member);
}

void stop_all() {
  std::vector<std::shared_ptr<Member>> all;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (const auto& w : *registry) {
      if (auto member = w.lock()) all.push_back(std::move(member));
    }
  }
  for (const auto& member : all) member->halt();
  const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
  for (const auto& member : all) {
    while (!member->ended() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace sb3ale::exit_registry
