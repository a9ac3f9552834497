#include "core/vectorizer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sb3ale {

void Vectorizer::send_reset(const std::vector<int>& ids, const std::vector<Seed>& seeds, const RowsFor& rows) {
  const Engine::Driver driver(engine_);  // this state too is the one driver's
  const auto n = static_cast<size_t>(num_envs());
  const bool partial = ids.size() != n;
  if (partial && batch_size() < num_envs()) {
    throw std::invalid_argument("a partial reset is not supported in batched mode where batch_size < num_envs (got "
                                "batch_size=" + std::to_string(batch_size()) + ", num_envs=" +
                                std::to_string(num_envs()) + "): reset every env");
  }
  if (partial && !started_) {
    throw std::runtime_error("The first reset() must reset every environment (got " + std::to_string(ids.size()) +
                             " of " + std::to_string(n) + ")");
  }
  // The envs a partial reset leaves alone report their current state: there must be one. Refused
  // before anything is dispatched.
  if (partial && engine_.interrupted()) {
    throw std::runtime_error("the last step or reset was interrupted part-way (Ctrl-C): reset() every env first");
  }
  for (int i : partial ? engine_.failed_envs() : std::vector<int>{}) {
    if (std::find(ids.begin(), ids.end(), i) == ids.end()) {
      throw std::runtime_error("env " + std::to_string(i) + " failed in an earlier step and has no state to report: "
                               "a partial reset must include it (reset() rebuilds it)");
    }
  }
  // Every env comes back by env id (a full batch, or a partial reset's): the workers write the caller's rows.
  uint8_t* out = batch_size() == num_envs() ? rows(n) : nullptr;
  if (!ids.empty()) engine_.send_reset(ids, seeds, out);  // validates ids and seeds first
  else engine_.send_reset({}, {}, nullptr);                // drops the steps in flight, resets none
  staged_.assign(n, partial ? 1 : 0);
  for (int i : ids) staged_[static_cast<size_t>(i)] = 0;
  staging_ = partial;
  sent_ = !ids.empty();
  in_place_ = out;
  started_ = true;
}

void Vectorizer::send(std::vector<int> ids, const std::vector<int64_t>& actions, const std::vector<float>& strengths,
                      const RowsFor& rows) {
  const Engine::Driver driver(engine_);
  if (!started_) throw std::runtime_error("send() called before reset()");
  if (staging_) throw std::runtime_error("a reset is waiting for recv(): recv() it before stepping");
  if (ids.empty()) {
    if (batch_size() < num_envs()) {
      ids = next_ids_;  // EnvPool-style: the envs the last batch returned, in its order
    } else {
      ids.resize(static_cast<size_t>(num_envs()));
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
    }
  }
  const bool every = batch_size() == num_envs() && static_cast<int>(ids.size()) == num_envs();
  uint8_t* out = every ? rows(ids.size()) : nullptr;
  engine_.send(ids, actions, strengths, out);  // validates ids, actions and strengths first
  sent_ = true;
  in_place_ = out;
}

int Vectorizer::expected() const {
  return staging_ ? num_envs() : engine_.expected();
}

std::vector<Row> Vectorizer::recv(uint8_t* gather, std::string& error) {
  const Engine::Driver driver(engine_);
  if (expected() == 0) throw std::runtime_error("recv() called with nothing in flight: send() first");
  error.clear();
  std::vector<int> ids;
  if (sent_ || engine_.in_flight() > 0) {  // (after cancel() nothing is in flight, and the engine refuses)
    ids = engine_.recv(in_place_ != nullptr ? nullptr : gather, error);
  }
  uint8_t* obs = in_place_ != nullptr ? in_place_ : gather;
  if (in_place_ != nullptr) std::sort(ids.begin(), ids.end());  // row i is env i
  if (staging_) {  // every env, by id: the reset ones and those left alone
    ids.resize(static_cast<size_t>(num_envs()));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  }
  // A partial reset's envs left alone may have failed in the steps it dropped: reported failed too.
  const std::vector<int> failed = error.empty() && !staging_ ? std::vector<int>{} : engine_.failed_envs();
  std::vector<Row> rows(ids.size());
  const bool ram = engine_.config(0).ram_info;  // an engine's envs share their options
  for (size_t k = 0; k < ids.size(); ++k) {
    Row& row = rows[k];
    const int i = row.env_id = ids[k];
    if (std::find(failed.begin(), failed.end(), i) != failed.end()) {
      row.failed = true;  // the engine zeroed its observation row, or, left alone, here
      if (staging_ && staged_[static_cast<size_t>(i)]) {
        std::fill_n(obs + k * obs_size(), obs_size(), uint8_t{0});
        error += (error.empty() ? "env " : "; env ") + std::to_string(i) + ": failed in a step this reset dropped";
      }
      continue;
    }
    const AtariEnv& env = engine_.env(i);
    if (ram) row.ram = env.ram();
    if (staging_ && staged_[static_cast<size_t>(i)]) {
      row.staged = true;
      const ResetInfo info = env.observe(obs + k * obs_size());
      row.now = {info.lives, info.frame_number, info.episode_frame_number};
      row.step.lives = info.lives;
      row.step.frame_number = info.frame_number;
      row.step.episode_frame_number = info.episode_frame_number;
      continue;
    }
    row.step = engine_.result(i);
    row.now = {row.step.lives, row.step.frame_number, row.step.episode_frame_number};
    if (row.step.reset) {
      row.reset = env.reset_info();
      if (!row.reset.empty) row.now = {row.reset.lives, row.reset.frame_number, row.reset.episode_frame_number};
    }
    if (row.step.terminated || row.step.truncated) {
      row.final_obs = &env.final_obs();
      if (row.ram != nullptr) row.final_ram = env.final_ram();
    }
  }
  next_ids_ = ids;
  staging_ = sent_ = false;
  in_place_ = nullptr;
  return rows;
}

}  // namespace sb3ale
