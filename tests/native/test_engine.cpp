// Engine on a real ROM: whole and partial batches, thread counts, cancel, failures, one driver.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.hpp"
#include "check.hpp"
#include "envs.hpp"

using sb3ale::Engine;
using check::configs;
using check::ids;
using check::seeds;
using sb3ale::EnvConfig;

namespace {

int64_t action(int step, int env) { return (step * 7 + env * 3) % 4; }  // Breakout's 4 actions

/// Every env's observations over `steps` full synchronous batches (rows written in place); a
/// frame cap of 50 steps, so that envs reset inside the batches.
std::vector<uint8_t> run_whole(int n, int threads, int steps, int64_t* taken = nullptr) {
  Engine engine(configs(n, 200), threads, -1, 0);
  // *taken: 0 resets inline, 1 prepared by each env itself (swaps even on a busy machine), 2 by the
  // threads at idle priority (as users run it: how many swap depends on the machine's idle time).
  if (taken != nullptr) engine.set_reset_ahead(*taken != 0, *taken == 1);
  const size_t row = static_cast<size_t>(engine.config(0).obs_size());
  std::vector<uint8_t> rows(row * static_cast<size_t>(n)), all;
  std::string error;
  int resets = 0;
  engine.send_reset(ids(n), seeds(n), rows.data());
  engine.recv(nullptr, error);
  for (int t = 0; t < steps; ++t) {
    std::vector<int64_t> actions;
    for (int i = 0; i < n; ++i) actions.push_back(action(t, i));
    engine.send(ids(n), actions, std::vector<float>(static_cast<size_t>(n), 1.0f), rows.data());
    const std::vector<int> done = engine.recv(nullptr, error);
    CHECK(error.empty() && static_cast<int>(done.size()) == n);
    for (int i : done) resets += engine.result(i).reset;
    all.insert(all.end(), rows.begin(), rows.end());
  }
  CHECK(resets > 0);
  if (taken != nullptr) *taken = engine.resets_count(Engine::Count::kTaken);
  return all;
}

}  // namespace

TEST(whole_batches_do_not_depend_on_the_thread_count) {
  const std::vector<uint8_t> one = run_whole(5, 1, 80);
  CHECK(one == run_whole(5, 2, 80));
  CHECK(one == run_whole(5, 4, 80));
  CHECK(std::any_of(one.begin(), one.end(), [](uint8_t v) { return v != 0; }));
}

TEST(resets_computed_ahead_change_nothing_and_are_taken) {
  // On by default with more threads than one; one thread is one core, with no idle time to use.
  CHECK(Engine(configs(2), 2, -1, 0).reset_ahead() && !Engine(configs(2), 1, -1, 0).reset_ahead());
  int64_t off = 0, on = 1, idle = 2;
  const std::vector<uint8_t> inline_resets = run_whole(3, 2, 120, &off);
  CHECK(inline_resets == run_whole(3, 2, 120, &on));
  CHECK(off == 0 && on > 0);  // the swap really ran
  CHECK(inline_resets == run_whole(3, 2, 120, &idle));
}

TEST(partial_batches_return_each_env_once_and_equal_the_whole_batches) {
  const int n = 6, steps = 80;
  const std::vector<uint8_t> whole = run_whole(n, 1, steps);
  Engine engine(configs(n, 200), 3, -1, 2);  // batches of 2 of 6 envs
  const size_t row = static_cast<size_t>(engine.config(0).obs_size());
  std::string error;
  std::vector<int> step_of(static_cast<size_t>(n), 0);
  std::vector<uint8_t> gather(2 * row);
  engine.send_reset(ids(n), seeds(n), nullptr);
  for (int k = 0; k < 3; ++k) CHECK(engine.recv(gather.data(), error).size() == 2);
  bool equal = true;
  std::vector<int> pending = ids(n), returned;
  while (true) {
    std::vector<int> send;
    std::vector<int64_t> actions;
    for (int i : pending) {
      if (step_of[static_cast<size_t>(i)] < steps) {
        send.push_back(i);
        actions.push_back(action(step_of[static_cast<size_t>(i)], i));
      }
    }
    if (!send.empty()) engine.send(send, actions, std::vector<float>(send.size(), 1.0f), nullptr);
    if (engine.in_flight() == 0) break;
    CHECK(engine.expected() == std::min(2, engine.in_flight()));
    pending = engine.recv(gather.data(), error);
    CHECK(error.empty());
    for (size_t k = 0; k < pending.size(); ++k) {
      const auto i = static_cast<size_t>(pending[k]);
      const size_t at = (static_cast<size_t>(step_of[i]) * n + i) * row;  // the whole run's row
      equal = equal && std::equal(gather.begin() + static_cast<long>(k * row),
                                  gather.begin() + static_cast<long>((k + 1) * row), whole.begin() + static_cast<long>(at));
      ++step_of[i];
    }
  }
  CHECK(equal);
  CHECK(std::all_of(step_of.begin(), step_of.end(), [&](int s) { return s == steps; }));
}

TEST(bad_sends_throw_before_anything_runs) {
  Engine engine(configs(3), 2, -1, 0);
  std::string error;
  engine.send_reset(ids(3), seeds(3), nullptr);
  CHECK_THROWS(std::invalid_argument, engine.send({0}, {0}, {1.0f}, nullptr));  // in flight
  engine.recv(nullptr, error);
  CHECK_THROWS(std::out_of_range, engine.send({3}, {0}, {1.0f}, nullptr));
  CHECK_THROWS(std::invalid_argument, engine.send({1, 1}, {0, 0}, {1.0f, 1.0f}, nullptr));
  CHECK_THROWS(std::out_of_range, engine.send({0}, {4}, {1.0f}, nullptr));
  CHECK_THROWS(std::out_of_range, engine.send({0}, {0}, {2.0f}, nullptr));
  CHECK_THROWS(std::logic_error, engine.recv(nullptr, error));  // nothing in flight
  CHECK(engine.in_flight() == 0);
  CHECK_THROWS(std::invalid_argument, Engine(configs(2), 1, -1, 3));  // batch_size > num_envs
  CHECK_THROWS(std::invalid_argument, Engine(configs(2), -1, -1, 0));
}

TEST(cancel_refuses_recv_and_steps_until_a_reset) {
  Engine engine(configs(8), 2, -1, 0);
  std::string error;
  engine.send_reset(ids(8), seeds(8), nullptr);
  engine.recv(nullptr, error);
  engine.send(ids(8), std::vector<int64_t>(8, 1), std::vector<float>(8, 1.0f), nullptr);
  engine.cancel();
  CHECK_THROWS(std::runtime_error, engine.recv(nullptr, error));
  CHECK_THROWS(std::runtime_error, engine.send({0}, {0}, {1.0f}, nullptr));
  engine.send_reset(ids(8), seeds(8), nullptr);  // drains what still ran, then resets
  CHECK(engine.recv(nullptr, error).size() == 8 && error.empty());
  engine.send(ids(8), std::vector<int64_t>(8, 1), std::vector<float>(8, 1.0f), nullptr);
  CHECK(engine.recv(nullptr, error).size() == 8);
}

TEST(a_failed_env_keeps_the_others_results_and_is_rebuilt_by_a_reset) {
  Engine engine(configs(4), 2, -1, 0);
  const size_t row = static_cast<size_t>(engine.config(0).obs_size());
  std::vector<uint8_t> rows(4 * row, 7);
  std::string error;
  engine.send_reset(ids(4), seeds(4), rows.data());
  engine.recv(nullptr, error);
  engine.inject_fault(2);
  engine.send(ids(4), {1, 1, 1, 1}, std::vector<float>(4, 1.0f), rows.data());
  CHECK(engine.recv(nullptr, error).size() == 4);
  CHECK(error.find("env 2") != std::string::npos && error.find("injected fault") != std::string::npos);
  CHECK(engine.failed_envs() == std::vector<int>{2});
  CHECK(std::all_of(rows.begin() + 2 * static_cast<long>(row), rows.begin() + 3 * static_cast<long>(row),
                    [](uint8_t v) { return v == 0; }));  // never a half-written row
  CHECK(engine.result(1).frame_number > 0);
  CHECK_THROWS(std::runtime_error, engine.send({2}, {0}, {1.0f}, nullptr));
  engine.send({0, 1, 3}, {0, 0, 0}, {1.0f, 1.0f, 1.0f}, nullptr);  // the others go on
  CHECK(engine.recv(nullptr, error).size() == 3 && error.empty());
  engine.send_reset({2}, {std::vector<uint32_t>{9}}, nullptr);
  CHECK(engine.recv(nullptr, error).size() == 1 && error.empty() && engine.failed_envs().empty());
}

