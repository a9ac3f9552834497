// One batch of the vectorizer as numpy arrays: the binding's other half (with bindings.cpp, the only
// code that includes pybind11).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "core/vectorizer.hpp"

namespace sb3ale {

namespace py = pybind11;

/// The arrays of one batch, allocated with the GIL held and filled without it.
struct Columns {
  /// `ram`: the batch carries RAM (ram_info), else no RAM column is made at all.
  Columns(py::ssize_t n, py::ssize_t finals, const std::vector<py::ssize_t>& final_shape, bool ram)
      : env_id(n), lives(n), episode_frame_number(n), frame_number(n), episode_length(n),
        episode_steps(n), reset_lives(n), reset_episode_frame_number(n), reset_frame_number(n),
        final_rows(finals), reward(n), episode_return(n), terminated(n), truncated(n), reset(n), reset_requested(n),
        time_limit(n), game_end(n), reset_empty(n), reset_has_seeds(n), final_obs(final_shape),
        reset_seeds(std::vector<py::ssize_t>{n, 2}) {
    if (ram) {
      this->ram.emplace(std::vector<py::ssize_t>{n, kRamSize});
      final_ram.emplace(std::vector<py::ssize_t>{finals, kRamSize});
    }
  }

  void fill(const std::vector<Row>& rows) {
    py::ssize_t j = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows[k];
      const StepResult& r = row.step;
      const ResetInfo& info = row.reset;
      env_id.mutable_data()[k] = row.env_id;
      reward.mutable_data()[k] = r.reward;
      terminated.mutable_data()[k] = r.terminated;
      truncated.mutable_data()[k] = r.truncated;
      reset.mutable_data()[k] = r.reset;
      reset_requested.mutable_data()[k] = r.requested_reset;
      time_limit.mutable_data()[k] = r.time_limit_truncated;
      lives.mutable_data()[k] = r.lives;
      episode_frame_number.mutable_data()[k] = r.episode_frame_number;
      frame_number.mutable_data()[k] = r.frame_number;
      game_end.mutable_data()[k] = r.game_end;
      episode_return.mutable_data()[k] = r.episode_return;
      episode_length.mutable_data()[k] = r.episode_length;
      episode_steps.mutable_data()[k] = r.episode_steps;
      reset_empty.mutable_data()[k] = info.empty;
      reset_lives.mutable_data()[k] = info.lives;
      reset_episode_frame_number.mutable_data()[k] = info.episode_frame_number;
      reset_frame_number.mutable_data()[k] = info.frame_number;
      reset_has_seeds.mutable_data()[k] = info.has_seeds;
      reset_seeds.mutable_data()[2 * k] = info.seeds[0];
      reset_seeds.mutable_data()[2 * k + 1] = info.seeds[1];
      if (row.final_obs != nullptr) {
        final_rows.mutable_data()[j] = static_cast<int64_t>(k);
        std::copy(row.final_obs->begin(), row.final_obs->end(), final_obs.mutable_data() + j * row.final_obs->size());
        if (final_ram && row.final_ram != nullptr) {
          std::copy_n(row.final_ram, kRamSize, final_ram->mutable_data() + j * kRamSize);
        }
        ++j;
      }
    }
    if (ram) fill_ram(rows);
  }

  void fill_ram(const std::vector<Row>& rows) {
    for (size_t k = 0; k < rows.size(); ++k) write_ram_row(rows[k].ram, ram->mutable_data() + k * kRamSize);
  }

  py::dict to_dict() const {
    py::dict d;
    d["env_id"] = env_id;
    d["reward"] = reward;
    d["terminated"] = terminated;
    d["truncated"] = truncated;
    d["reset"] = reset;
    d["reset_requested"] = reset_requested;
    d["TimeLimit.truncated"] = time_limit;
    d["lives"] = lives;
    d["episode_frame_number"] = episode_frame_number;
    d["frame_number"] = frame_number;
    d["game_end"] = game_end;
    d["episode_return"] = episode_return;
    d["episode_length"] = episode_length;
    d["episode_steps"] = episode_steps;
    d["final_rows"] = final_rows;
    d["final_obs"] = final_obs;
    d["reset_empty"] = reset_empty;
    d["reset_lives"] = reset_lives;
    d["reset_episode_frame_number"] = reset_episode_frame_number;
    d["reset_frame_number"] = reset_frame_number;
    d["reset_has_seeds"] = reset_has_seeds;
    d["reset_seeds"] = reset_seeds;
    if (ram) {
      d["ram"] = *ram;
      d["final_ram"] = *final_ram;
    }
    return d;
  }

  py::array_t<int64_t> env_id, lives, episode_frame_number, frame_number, episode_length, episode_steps;
  py::array_t<int64_t> reset_lives, reset_episode_frame_number, reset_frame_number, final_rows;
  py::array_t<float> reward;
  py::array_t<double> episode_return;
  py::array_t<bool> terminated, truncated, reset, reset_requested, time_limit, game_end, reset_empty, reset_has_seeds;
  py::array_t<uint8_t> final_obs;
  py::array_t<uint32_t> reset_seeds;
  std::optional<py::array_t<uint8_t>> ram, final_ram;  // (n, 128) and (finals, 128), with ram_info only
};

}  // namespace sb3ale
