// Vectorizer on a real ROM: partial resets (the envs left alone staged), the next batch's ids,
// rows written in place or gathered, and the rules it enforces.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/vectorizer.hpp"
#include "core/vectorizer_hold.hpp"
#include "check.hpp"
#include "envs.hpp"

using check::seeds;
using sb3ale::EnvConfig;
using sb3ale::Row;
using sb3ale::Vectorizer;

namespace {

/// The caller's array, as the Python module and the XLA targets own theirs; counts the calls.
struct Rows {
  explicit Rows(size_t row) : row(row) {}
  sb3ale::RowsFor give() {
    return [this](size_t n) {
      ++given;
      data.assign(n * row, 0);
      return data.data();
    };
  }
  size_t row;
  int given = 0;
  std::vector<uint8_t> data;
};

std::vector<Row> receive(Vectorizer& vec, std::vector<uint8_t>& gather) {
  gather.assign(static_cast<size_t>(vec.expected()) * vec.obs_size(), 0);
  std::string error;
  std::vector<Row> rows = vec.recv(vec.in_place() ? nullptr : gather.data(), error);
  CHECK(error.empty());
  return rows;
}

}  // namespace

TEST(a_partial_reset_returns_every_env_the_others_as_they_are) {
  const int n = 4;
  Vectorizer vec(check::configs(n, 200), 2, -1, 0);
  Rows rows(vec.obs_size());
  std::vector<uint8_t> gather;
  vec.send_reset(check::ids(n), seeds(n), rows.give());
  receive(vec, gather);
  std::vector<Row> last;
  for (int t = 0; t < 30; ++t) {
    vec.send({}, std::vector<int64_t>(n, t % 4), std::vector<float>(n, 1.0f), rows.give());
    last = receive(vec, gather);
  }
  const std::vector<uint8_t> before = rows.data;
  vec.send_reset({3, 1}, seeds(2), rows.give());
  CHECK(vec.in_place() && vec.expected() == n);
  const std::vector<Row> got = receive(vec, gather);
  CHECK(static_cast<int>(got.size()) == n);
  const size_t row = vec.obs_size();
  for (int i = 0; i < n; ++i) {
    const Row& r = got[static_cast<size_t>(i)];
    const auto from = static_cast<std::ptrdiff_t>(static_cast<size_t>(i) * row);
    const bool same = std::equal(before.begin() + from, before.begin() + from + static_cast<std::ptrdiff_t>(row),
                                 rows.data.begin() + from);
    CHECK(r.env_id == i);
    if (i == 1 || i == 3) {  // reset: a fresh episode's stack and the reset's info
      CHECK(!r.staged && r.step.reset && r.step.requested_reset && !same);
      CHECK(r.reset.empty || r.now.episode_frame_number == r.reset.episode_frame_number);
    } else {  // left alone: its stack and info of the last step, nothing new
      CHECK(r.staged && !r.step.reset && r.step.reward == 0 && same);
      CHECK(r.now.frame_number == last[static_cast<size_t>(i)].now.frame_number);
      CHECK(r.now.lives == last[static_cast<size_t>(i)].now.lives);
    }
  }
  vec.send_reset({}, {}, rows.give());  // a partial reset of none: every env as it is
  const std::vector<Row> none = receive(vec, gather);
  CHECK(static_cast<int>(none.size()) == n &&
        std::all_of(none.begin(), none.end(), [](const Row& r) { return r.staged; }));
}

TEST(a_batched_step_goes_to_the_envs_the_last_batch_returned) {
  const int n = 6, batch = 2;
  Vectorizer vec(check::configs(n, 200), 3, -1, batch);
  Rows rows(vec.obs_size());
  std::vector<uint8_t> gather;
  vec.send_reset(check::ids(n), seeds(n), rows.give());
  CHECK(rows.given == 0 && !vec.in_place());  // a batch of some envs is gathered, never in place
  std::vector<Row> got = receive(vec, gather);
  std::set<int> flying;  // what the test expects in flight: every env sent and not yet returned
  for (int i = 0; i < n; ++i) flying.insert(i);
  for (const Row& r : got) flying.erase(r.env_id);
  for (int t = 0; t < 60; ++t) {
    for (const Row& r : got) flying.insert(r.env_id);  // the envs a send without ids must step
    vec.send({}, std::vector<int64_t>(batch, 1), std::vector<float>(batch, 1.0f), rows.give());
    got = receive(vec, gather);
    CHECK(static_cast<int>(got.size()) == batch);
    for (const Row& r : got) {
      CHECK(flying.erase(r.env_id) == 1);
    }
  }
  while (vec.expected() > 0) {  // the rest come back, each once (which env finishes first is the OS's call)
    const std::vector<Row> rest = receive(vec, gather);
    CHECK(!rest.empty());
    for (const Row& r : rest) CHECK(flying.erase(r.env_id) == 1);
    if (rest.empty()) break;
  }
  CHECK(flying.empty() && rows.given == 0);
}

TEST(every_env_by_id_is_written_in_place_some_envs_are_gathered) {
  const int n = 3;
  Vectorizer vec(check::configs(n, 200), 2, -1, 0);
  Rows rows(vec.obs_size());
  std::vector<uint8_t> gather;
  vec.send_reset(check::ids(n), seeds(n), rows.give());
  CHECK(rows.given == 1 && vec.in_place());
  receive(vec, gather);
  vec.send({2, 0}, {1, 1}, {1.0f, 1.0f}, rows.give());  // some envs: the engine's rows, gathered
  CHECK(rows.given == 1 && !vec.in_place());
  const std::vector<Row> some = receive(vec, gather);
  CHECK(some.size() == 2 && gather.size() == 2 * vec.obs_size());
  CHECK(std::any_of(gather.begin(), gather.end(), [](uint8_t v) { return v != 0; }));
  vec.send({}, {0, 1, 2}, {1.0f, 1.0f, 1.0f}, rows.give());
  CHECK(rows.given == 2 && vec.in_place());
  receive(vec, gather);
}

TEST(the_rules_are_refused_with_the_front_ends_errors) {
  Vectorizer batched(check::configs(4, 200), 2, -1, 2);
  Rows rows(batched.obs_size());
  std::vector<uint8_t> gather;
  CHECK_THROWS(std::runtime_error, batched.send({}, {0, 0}, {1.0f, 1.0f}, rows.give()));  // before reset
  std::string error;
  CHECK_THROWS(std::runtime_error, batched.recv(nullptr, error));  // nothing in flight
  batched.send_reset(check::ids(4), seeds(4), rows.give());
  receive(batched, gather);
  CHECK_THROWS(std::invalid_argument, batched.send_reset({1}, seeds(1), rows.give()));  // partial, batched

  Vectorizer whole(check::configs(3, 200), 1, -1, 0);
  CHECK_THROWS(std::runtime_error, whole.send_reset({1}, seeds(1), rows.give()));  // partial before a full reset
  whole.send_reset(check::ids(3), seeds(3), rows.give());
  receive(whole, gather);
  whole.send_reset({0}, seeds(1), rows.give());
  CHECK_THROWS(std::runtime_error, whole.send({}, {0, 0, 0}, {1.0f, 1.0f, 1.0f}, rows.give()));  // reset pending
  receive(whole, gather);
}

TEST(a_second_caller_through_the_hold_is_refused_at_once_and_changes_nothing) {
  // One thread resets 16 envs on one engine thread (about 100 ms inside each call); another calls in
  // all the while. The hold lets one caller in: the other's call is refused with EngineBusy at once
  // (the first thread retries its refused calls); no call runs beside another (Engine::Driver would end
  // the process).
  sb3ale::VectorizerHold hold(std::make_unique<Vectorizer>(check::configs(16), 1, -1, 0));
  std::atomic<bool> over{false};
  std::atomic<int> refusals{0};
  std::thread other([&] {
    while (!over.load()) {
      try {
        hold.use([](Vectorizer& vec) { return vec.expected(); });
      } catch (const sb3ale::EngineBusy&) {
        refusals.fetch_add(1);
      }
    }
  });
  Rows rows(static_cast<size_t>(check::configs(1)[0].obs_size()));
  std::vector<uint8_t> gather;
  for (int round = 0; round < 3; ++round) {
    for (;;) {
      try {
        const std::vector<Row> got = hold.use([&](Vectorizer& vec) {
          vec.send_reset(check::ids(16), seeds(16), rows.give());
          return receive(vec, gather);
        });
        CHECK(got.size() == 16);
        break;
      } catch (const sb3ale::EngineBusy&) {
      }
    }
  }
  over.store(true);
  other.join();
  CHECK(refusals.load() > 0);  // while the first thread was inside
  hold.close();
  CHECK(hold.destroyed());
}
