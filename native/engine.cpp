#include "engine.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

namespace sb3ale {

namespace {

int thread_count(int requested, int num_envs) {
  if (requested < 0) throw std::invalid_argument("num_threads must be >= 0 (0 = one per core)");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::max(1, std::min(requested == 0 ? cores : requested, num_envs));
}

}  // namespace

Engine::Engine(const EnvConfig& config, int num_envs, int num_threads, int thread_affinity_offset)
    : config_(config),
      resize_(kScreenHeight, kScreenWidth, config.img_height, config.img_width, config.channels()),
      pool_(thread_count(num_threads, std::max(num_envs, 1)), thread_affinity_offset) {
  if (num_envs < 1) throw std::invalid_argument("num_envs must be >= 1");
  quiet_ale_logs();  // before any ALEInterface exists: its constructor logs a banner
  // ALE's loadROM() exits the process on a ROM it does not know: check once, up front.
  if (!ale::ALEInterface::isSupportedROM(config_.rom_path)) {
    throw std::invalid_argument("not a ROM that ALE supports (unknown MD5): " + config_.rom_path);
  }
  const auto n = static_cast<size_t>(num_envs);
  envs_.resize(n);
  results_.resize(n);
  errors_.resize(n);
  failed_.assign(n, 0);
  inject_fault_.assign(n, 0);
  // Loading a ROM takes a while: do it on the workers.
  run(num_envs, [this](int i) { envs_[i] = std::make_unique<AtariEnv>(config_, resize_); });
}

void Engine::send_reset(const std::vector<Seed>& seeds, uint8_t* obs) {
  if (pending_) recv();
  if (seeds.size() != envs_.size()) throw std::invalid_argument("reset needs one seed (or None) per env");
  seeds_ = seeds;
  interrupted_ = false;
  const size_t size = static_cast<size_t>(config_.obs_size());
  pending_ = true;
  start(num_envs(), [this, obs, size](int i) {
    if (failed_[i]) envs_[i] = std::make_unique<AtariEnv>(config_, resize_);  // a fresh emulator
    const Seed& seed = seeds_[static_cast<size_t>(i)];
    envs_[i]->reset(seed ? &*seed : nullptr, obs + i * size);
  });
}

void Engine::send(const std::vector<int64_t>& actions, uint8_t* obs) {
  if (pending_) throw std::logic_error("send() called twice without recv()");
  if (actions.size() != envs_.size()) throw std::invalid_argument("send needs one action per env");
  if (interrupted_) throw std::runtime_error("the last step or reset was interrupted part-way: reset() first");
  for (size_t i = 0; i < envs_.size(); ++i) {
    if (failed_[i]) {
      throw std::runtime_error("env " + std::to_string(i) + " failed in an earlier step: reset() rebuilds it");
    }
    const auto n = static_cast<int64_t>(envs_[i]->action_set().size());
    if (actions[i] < 0 || actions[i] >= n) {
      throw std::out_of_range("env " + std::to_string(i) + ": action " + std::to_string(actions[i]) +
                              " is out of range [0, " + std::to_string(n) + ")");
    }
  }
  actions_ = actions;
  const size_t size = static_cast<size_t>(config_.obs_size());
  pending_ = true;
  start(num_envs(), [this, obs, size](int i) {
    if (inject_fault_[i]) {
      inject_fault_[i] = 0;
      throw std::runtime_error("injected fault");
    }
    envs_[i]->step(static_cast<int>(actions_[i]), results_[i], obs + i * size);
  });
}

bool Engine::wait_for(std::chrono::milliseconds timeout) {
  return !pending_ || pool_.wait_for(timeout);
}

void Engine::recv() {
  if (!pending_) throw std::logic_error("recv() called without a pending send()");
  pool_.wait();
  pending_ = false;
  for (size_t i = 0; i < errors_.size(); ++i) failed_[i] = errors_[i] != nullptr;
  raise_errors();
}

void Engine::cancel() {
  if (!pending_) return;
  pool_.cancel();
  pending_ = false;
  interrupted_ = true;
}

std::vector<int> Engine::failed_envs() const {
  std::vector<int> ids;
  for (size_t i = 0; i < failed_.size(); ++i) {
    if (failed_[i]) ids.push_back(static_cast<int>(i));
  }
  return ids;
}

void Engine::start(int n, std::function<void(int)> task) {
  // A failing env still completes its slot, so the caller gets an exception, never a hang.
  pool_.start(n, [this, task = std::move(task)](int i) {
    errors_[i] = nullptr;
    try {
      task(i);
    } catch (...) {
      errors_[i] = std::current_exception();
    }
  });
}

void Engine::run(int n, std::function<void(int)> task) {
  start(n, std::move(task));
  pool_.wait();
  raise_errors();
}

void Engine::raise_errors() {
  std::string message;
  std::exception_ptr first;
  for (size_t i = 0; i < errors_.size(); ++i) {
    if (!errors_[i]) continue;
    if (!first) first = errors_[i];
    std::string what = "unknown error";
    try {
      std::rethrow_exception(errors_[i]);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    message += (message.empty() ? "env " : "; env ") + std::to_string(i) + ": " + what;
  }
  if (!first) return;
  try {
    std::rethrow_exception(first);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(message);
  } catch (const std::out_of_range&) {
    throw std::out_of_range(message);
  } catch (...) {
    throw std::runtime_error(message);
  }
}

}  // namespace sb3ale
