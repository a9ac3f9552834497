// What the engine tells its caller about ids it refuses and envs that failed: the checks every
// entry point runs on its env ids, and the failed envs' errors gathered into one message.
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine.hpp"

namespace sb3ale {

const AtariEnv& Engine::env(int i) const {
  if (i < 0 || i >= num_envs()) throw std::out_of_range("env id " + std::to_string(i) + " is out of range");
  if (busy_[static_cast<size_t>(i)]) throw std::runtime_error("env " + std::to_string(i) + " is in flight: recv() it first");
  if (!envs_[static_cast<size_t>(i)]) throw std::runtime_error("env " + std::to_string(i) + " failed: reset() rebuilds it");
  return *envs_[static_cast<size_t>(i)];
}

void Engine::check_ids(const std::vector<int>& ids, size_t values, bool in_flight_ok) const {
  if (ids.empty()) throw std::invalid_argument("no env ids given");
  if (values != ids.size()) {
    throw std::invalid_argument(std::to_string(values) + " values for " + std::to_string(ids.size()) + " env ids");
  }
  std::vector<char> seen(envs_.size(), 0);
  for (int i : ids) {
    if (i < 0 || i >= num_envs()) {
      throw std::out_of_range("env id " + std::to_string(i) + " is out of range [0, " + std::to_string(num_envs()) + ")");
    }
    if (seen[static_cast<size_t>(i)]++) throw std::invalid_argument("env id " + std::to_string(i) + " is given twice");
    if (busy_[static_cast<size_t>(i)] && !in_flight_ok) {
      throw std::invalid_argument("env " + std::to_string(i) + " is still in flight: recv() returns it first");
    }
  }
}

std::vector<int> Engine::failed_envs() const {
  std::vector<int> ids;
  for (size_t i = 0; i < failed_.size(); ++i) {
    if (failed_[i]) ids.push_back(static_cast<int>(i));
  }
  return ids;
}

std::string Engine::describe_errors(const std::vector<int>& ids) const {
  std::string message;
  for (int i : ids) {
    const std::exception_ptr& e = errors_[static_cast<size_t>(i)];
    if (!e) continue;
    std::string what = "unknown error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
    message += (message.empty() ? "env " : "; env ") + std::to_string(i) + ": " + what;
  }
  return message;
}

}  // namespace sb3ale
