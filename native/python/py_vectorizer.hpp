// PyVectorizer: the native engine as the Python module holds it. numpy arrays in and out, the GIL
// released around all stepping and waiting, Ctrl-C and close() during a wait. Included by
// bindings.cpp alone (with py_batch.hpp and hooks.cpp, the only code that includes pybind11).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "python/py_batch.hpp"
#include "core/vectorizer.hpp"
#include "xla/xla_ffi.hpp"

namespace sb3ale {

namespace py = pybind11;

template <typename T>
py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
  return py::array_t<T>(shape);
}

/// Waits for the engine's next recv with the GIL released, in slices, so that Ctrl-C gets
/// through: on a signal, envs not yet started are skipped, running ones finish, then it raises.
inline void wait_interruptibly(Engine& engine) {
  for (;;) {
    bool done;
    {
      py::gil_scoped_release release;
      done = engine.wait_for(std::chrono::milliseconds(50));
    }
    if (done) return;
    if (PyErr_CheckSignals() != 0) {
      py::error_already_set interrupt;  // takes the KeyboardInterrupt set by the signal handler
      {
        py::gil_scoped_release release;
        engine.cancel();
      }
      throw interrupt;
    }
  }
}

using IdArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

/// The shape of one observation of an env with config `c` (the engine's rows are this, C-contiguous).
inline std::vector<py::ssize_t> config_obs_shape(const EnvConfig& c) {
  switch (c.obs_type) {  // AtariEnv's own observation_space
    case sb3ale::ObsType::kRGB:
      return {sb3ale::kScreenHeight, sb3ale::kScreenWidth, 3};
    case sb3ale::ObsType::kGrayscale:
      return {sb3ale::kScreenHeight, sb3ale::kScreenWidth};
    case sb3ale::ObsType::kRAM:
      return {sb3ale::kRamSize};
    case sb3ale::ObsType::kProcessed:
      break;
  }
  const py::ssize_t h = c.img_height, w = c.img_width, channels = c.channels(), stack = c.stack_num;
  switch (c.layout) {
    case sb3ale::Layout::kCHW:
      return {channels * stack, h, w};
    case sb3ale::Layout::kHWC:
      return {h, w, channels * stack};
    case sb3ale::Layout::kFrames:
      break;
  }
  std::vector<py::ssize_t> shape{stack, h, w};  // gymnasium: no channel axis for gray,
  if (channels > 1) shape.push_back(channels);
  // AtariPreprocessing alone has no stack axis; ALE's vector env always has one.
  if (stack == 1 && c.preset == sb3ale::Preset::kGymnasium) shape.erase(shape.begin());
  return shape;
}

/// Owns the vectorizer and the observation array a batch of every env is written into.
class PyVectorizer {
 public:
  PyVectorizer(const std::vector<EnvConfig>& configs, int num_threads, int thread_affinity_offset, int batch_size) {
    py::gil_scoped_release release;
    vec_ = std::make_unique<Vectorizer>(configs, num_threads, thread_affinity_offset, batch_size);
  }

  ~PyVectorizer() { close(); }

  /// Frees the engine; calling it again does nothing. While a call waits on the engine with the GIL
  /// released (recv, send_reset), another thread, or a signal handler run from that wait, may call
  /// close(): then the engine is only marked closed, and the waiting call frees it once its wait is
  /// over (the envs in flight finish) and raises, so that no thread ever waits on a freed engine.
  /// (The Engine is not thread-safe: a close from another thread must not touch it meanwhile.)
  void close() {
    if (!vec_ || close_requested_) return;
    if (waiting_ > 0) {
      close_requested_ = true;
      return;
    }
    {
      py::gil_scoped_release release;  // joining waits for work in flight
      sb3ale::xla::forget(vec_.get());  // waits for an XLA step using it; its handle then names nothing
      vec_.reset();
    }
    pending_obs_ = py::none();
  }

  void send_reset(const std::vector<sb3ale::Seed>& seeds, const std::optional<IdArray>& env_ids) {
    Vectorizer& vec = get();
    Waiting waiting(*this);
    std::vector<int> ids = env_ids ? to_ids(*env_ids) : every_env(seeds.size());
    py::object fresh = py::none();
    {
      py::gil_scoped_release release;  // steps still in flight finish first; their results are dropped
      vec.send_reset(ids, seeds, [&](size_t rows) {
        py::gil_scoped_acquire acquire;
        return allocate(fresh, rows);
      });
    }
    pending_obs_ = fresh;
  }

  void send(const IdArray& actions, const std::optional<IdArray>& env_ids,
            const std::optional<py::array_t<float, py::array::c_style | py::array::forcecast>>& strengths) {
    Vectorizer& vec = get();
    if (actions.ndim() != 1) throw std::invalid_argument("actions must be a 1-d array");
    std::vector<int> ids = env_ids ? to_ids(*env_ids) : std::vector<int>{};  // none: the vectorizer's
    std::vector<int64_t> copy(actions.data(), actions.data() + actions.shape(0));
    std::vector<float> strength(copy.size(), 1.0f);
    if (strengths) {
      if (strengths->ndim() != 1 || strengths->shape(0) != actions.shape(0)) {
        throw std::invalid_argument("paddle strengths must be a 1-d array as long as the actions");
      }
      std::copy(strengths->data(), strengths->data() + strengths->shape(0), strength.begin());
    }
    py::object fresh = py::none();
    vec.send(std::move(ids), copy, strength, [&](size_t rows) { return allocate(fresh, rows); });
    pending_obs_ = fresh;
  }

  /// Waits for the next batch and returns it whole, as one dict of arrays (row k is env env_id[k]):
  /// obs, the step's scalars and info, the final stacks of the rows that are done (final_obs, with
  /// their rows in final_rows), the reset infos of the rows that reset, and the envs that failed.
  py::dict recv() {
    Vectorizer& vec = get();
    // Destroyed in reverse: the driver first, then `waiting` carries out a close() that came
    // meanwhile, also when this raises (Ctrl-C: the interrupt is what the caller sees).
    Waiting waiting(*this);
    const Engine::Driver driving(vec.engine());  // from the wait to the results: no other thread in between
    wait_interruptibly(vec.engine());
    if (close_requested_) {
      throw std::runtime_error("the engine was closed (by a signal handler or another thread) while recv() "
                               "waited for its results: they are lost");
    }
    const bool in_place = vec.in_place();
    py::array_t<uint8_t> obs = in_place ? py::reinterpret_borrow<py::array_t<uint8_t>>(pending_obs_)
                                        : new_array<uint8_t>(batch_shape(vec.expected()));
    std::string error;
    std::vector<Row> rows;
    {
      py::gil_scoped_release release;
      rows = vec.recv(in_place ? nullptr : obs.mutable_data(), error);
    }
    pending_obs_ = py::none();
    const auto finals = static_cast<py::ssize_t>(
        std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.final_obs != nullptr; }));
    sb3ale::Columns columns(static_cast<py::ssize_t>(rows.size()), finals, batch_shape(finals),
                            vec.engine().config(0).ram_info);
    {
      py::gil_scoped_release release;
      columns.fill(rows);
    }
    py::dict batch = columns.to_dict();
    std::vector<int> failed;
    for (const Row& r : rows) {
      if (r.failed) failed.push_back(r.env_id);
    }
    batch["obs"] = obs;
    batch["error"] = error.empty() ? py::object(py::none()) : py::object(py::str(error));
    batch["failed"] = failed;
    return batch;
  }

  py::array_t<uint8_t> screen_rgb(int i) {
    const auto& e = env(i);
    auto out = new_array<uint8_t>({sb3ale::kScreenHeight, sb3ale::kScreenWidth, 3});
    e.screen_rgb(out.mutable_data());
    return out;
  }

  uint64_t xla_handle() { return sb3ale::xla::handle_for(get()); }

  void profile(bool on) {
    get().engine().profile(on);
  }
  /// The tasks timed since the last call, as a dict of equal-length arrays (see TaskRecord).
  py::dict take_profile() {
    const std::vector<sb3ale::TaskRecord> records = get().engine().take_profile();
    const auto n = static_cast<py::ssize_t>(records.size());
    auto column = [&](auto field) {
      auto a = new_array<int64_t>({n});
      for (py::ssize_t k = 0; k < n; ++k) a.mutable_data()[k] = field(records[static_cast<size_t>(k)]);
      return a;
    };
    py::dict d;
    d["batch"] = column([](const sb3ale::TaskRecord& r) { return r.batch; });
    d["env"] = column([](const sb3ale::TaskRecord& r) { return int64_t{r.env}; });
    d["thread"] = column([](const sb3ale::TaskRecord& r) { return int64_t{r.thread}; });
    d["reset"] = column([](const sb3ale::TaskRecord& r) { return int64_t{r.reset}; });
    d["start_ns"] = column([](const sb3ale::TaskRecord& r) { return r.start_ns; });
    d["end_ns"] = column([](const sb3ale::TaskRecord& r) { return r.end_ns; });
    d["sent_ns"] = column([](const sb3ale::TaskRecord& r) { return r.sent_ns; });
    d["woke_ns"] = column([](const sb3ale::TaskRecord& r) { return r.woke_ns; });
    return d;
  }
  bool resets_first() { return get().engine().resets_first(); }
  void set_resets_first(bool on) { get().engine().set_resets_first(on); }
  bool reset_ahead() { return get().engine().reset_ahead(); }
  int64_t resets_taken() { return get().engine().resets_taken(); }
  int64_t resets_replayed() { return get().engine().resets_taken(true); }
  void set_reset_ahead(bool on) {
    sb3ale::Engine& engine = get().engine();
    py::gil_scoped_release release;  // waits for a prepare that is running
    engine.set_reset_ahead(on);
  }
  bool reset_ahead_wait() { return get().engine().wait_for_prepares(); }
  void set_reset_ahead_wait(bool wait) {
    sb3ale::Engine& engine = get().engine();
    py::gil_scoped_release release;
    engine.set_reset_ahead(true, wait);
  }
  bool pending() { return vec_ && vec_->expected() > 0; }
  void inject_fault(int i) { get().engine().inject_fault(i); }
  bool closed() const { return !vec_ || close_requested_; }
  int num_envs() { return get().num_envs(); }
  int num_threads() { return get().engine().num_threads(); }
  int batch_size() { return get().batch_size(); }
  std::vector<py::ssize_t> obs_shape() { return config_obs_shape(get().engine().config(0)); }

  static std::vector<int> to_ints(const ale::ActionVect& actions) {
    return std::vector<int>(actions.begin(), actions.end());
  }

 private:
  Vectorizer& get() {
    if (close_requested_) throw std::runtime_error("the engine was closed while a call waited on it");
    if (!vec_) throw std::runtime_error("the engine is closed");
    return *vec_;
  }
  /// Marks a call that waits with the GIL released; the end of its scope carries out a close()
  /// that came meanwhile. Only touched with the GIL held.
  class Waiting {
   public:
    explicit Waiting(PyVectorizer& owner) : owner_(owner) { ++owner_.waiting_; }
    ~Waiting() {
      if (--owner_.waiting_ == 0 && owner_.close_requested_) {
        owner_.close_requested_ = false;
        owner_.close();
        owner_.close_requested_ = false;
      }
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    PyVectorizer& owner_;
  };
  const sb3ale::AtariEnv& env(int i) {
    Engine& engine = get().engine();
    if (i < 0 || i >= engine.num_envs()) throw std::out_of_range("env index " + std::to_string(i) + " out of range");
    return engine.env(i);
  }
  std::vector<int> every_env(size_t count) {
    const int n = get().num_envs();
    if (count != static_cast<size_t>(n)) {
      throw std::invalid_argument("without env_ids, one value per env is needed (" + std::to_string(n) + "), got " +
                                  std::to_string(count));
    }
    std::vector<int> ids(count);
    for (size_t i = 0; i < count; ++i) ids[i] = static_cast<int>(i);
    return ids;
  }
  std::vector<int> to_ids(const IdArray& env_ids) {
    const int n = get().num_envs();
    if (env_ids.ndim() != 1) throw std::invalid_argument("env_ids must be a 1-d array");
    std::vector<int> ids;
    for (py::ssize_t k = 0; k < env_ids.shape(0); ++k) {
      const int64_t i = env_ids.at(k);
      if (i < 0 || i >= n) {
        throw std::out_of_range("env id " + std::to_string(i) + " is out of range [0, " + std::to_string(n) + ")");
      }
      ids.push_back(static_cast<int>(i));
    }
    return ids;
  }
  /// A fresh array for a batch of every env (SB3 keeps the last one), kept in `holder` until recv.
  uint8_t* allocate(py::object& holder, size_t rows) {
    auto obs = new_array<uint8_t>(batch_shape(static_cast<py::ssize_t>(rows)));
    holder = obs;
    return obs.mutable_data();
  }
  std::vector<py::ssize_t> batch_shape(py::ssize_t n) {
    std::vector<py::ssize_t> shape = obs_shape();
    shape.insert(shape.begin(), n);
    return shape;
  }

  py::object pending_obs_ = py::none();  // declared first: destroyed after the engine's threads
  std::unique_ptr<Vectorizer> vec_;
  int waiting_ = 0;                // calls waiting on the engine with the GIL released
  bool close_requested_ = false;   // close() came during such a wait: the waiting call frees it
};

}  // namespace sb3ale
