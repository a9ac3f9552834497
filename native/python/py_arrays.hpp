// numpy in and out of the binding: observation shapes, env ids, and the profile's columns. No engine
// state: what PyVectorizer (py_vectorizer.hpp) converts before and after it drives the engine.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "core/task_profile.hpp"

namespace sb3ale {

namespace py = pybind11;

using IdArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

template <typename T>
py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
  return py::array_t<T>(shape);
}

/// The shape of one observation of an env with config `c` (the engine's rows are this, C-contiguous).
inline std::vector<py::ssize_t> config_obs_shape(const EnvConfig& c) {
  switch (c.obs_type) {  // AtariEnv's own observation_space
    case ObsType::kRGB:
      return {c.screen_height, kScreenWidth, 3};
    case ObsType::kGrayscale:
      return {c.screen_height, kScreenWidth};
    case ObsType::kRAM:
      return {kRamSize};
    case ObsType::kProcessed:
      break;
  }
  const py::ssize_t h = c.img_height, w = c.img_width, channels = c.channels(), stack = c.stack_num;
  switch (c.layout) {
    case Layout::kCHW:
      return {channels * stack, h, w};
    case Layout::kHWC:
      return {h, w, channels * stack};
    case Layout::kFrames:
      break;
  }
  std::vector<py::ssize_t> shape{stack, h, w};  // gymnasium: no channel axis for gray,
  if (channels > 1) shape.push_back(channels);
  // AtariPreprocessing alone has no stack axis; ALE's vector env always has one.
  if (stack == 1 && c.preset == Preset::kGymnasium) shape.erase(shape.begin());
  return shape;
}

/// `env_ids` as ints, each checked against [0, num_envs).
inline std::vector<int> to_ids(const IdArray& env_ids, int num_envs) {
  if (env_ids.ndim() != 1) throw std::invalid_argument("env_ids must be a 1-d array");
  std::vector<int> ids;
  for (py::ssize_t k = 0; k < env_ids.shape(0); ++k) {
    const int64_t i = env_ids.at(k);
    if (i < 0 || i >= num_envs) {
      throw std::out_of_range("env id " + std::to_string(i) + " is out of range [0, " + std::to_string(num_envs) + ")");
    }
    ids.push_back(static_cast<int>(i));
  }
  return ids;
}

/// 0..num_envs-1, for a call given one value per env (`count` of them) and no ids.
inline std::vector<int> every_env(size_t count, int num_envs) {
  if (count != static_cast<size_t>(num_envs)) {
    throw std::invalid_argument("without env_ids, one value per env is needed (" + std::to_string(num_envs) +
                                "), got " + std::to_string(count));
  }
  std::vector<int> ids(count);
  for (size_t i = 0; i < count; ++i) ids[i] = static_cast<int>(i);
  return ids;
}

/// The tasks of a profile as a dict of equal-length int64 arrays (see TaskRecord).
inline py::dict profile_columns(const std::vector<TaskRecord>& records) {
  const auto n = static_cast<py::ssize_t>(records.size());
  auto column = [&](auto field) {
    auto a = new_array<int64_t>({n});
    for (py::ssize_t k = 0; k < n; ++k) a.mutable_data()[k] = field(records[static_cast<size_t>(k)]);
    return a;
  };
  py::dict d;
  d["batch"] = column([](const TaskRecord& r) { return r.batch; });
  d["env"] = column([](const TaskRecord& r) { return int64_t{r.env}; });
  d["thread"] = column([](const TaskRecord& r) { return int64_t{r.thread}; });
  d["reset"] = column([](const TaskRecord& r) { return int64_t{r.reset}; });
  d["start_ns"] = column([](const TaskRecord& r) { return r.start_ns; });
  d["end_ns"] = column([](const TaskRecord& r) { return r.end_ns; });
  d["sent_ns"] = column([](const TaskRecord& r) { return r.sent_ns; });
  d["woke_ns"] = column([](const TaskRecord& r) { return r.woke_ns; });
  return d;
}

}  // namespace sb3ale
