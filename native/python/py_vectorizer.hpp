// PyVectorizer: the native engine as the Python module holds it. Every call that touches the engine
// goes through drive(): the GIL released, the engine's one caller (VectorizerHold::use, which the XLA
// targets share), a close() meanwhile carried out as the call leaves. Included by bindings.cpp, and by
// hooks.cpp for the type alone (with py_arrays.hpp and py_batch.hpp, the only code that includes pybind11).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/vectorizer_hold.hpp"
#include "python/py_arrays.hpp"
#include "python/py_batch.hpp"
#include "xla/xla_ffi.hpp"

namespace sb3ale {

/// Waits for the engine's next recv without the GIL, taking it every 50 ms to let Ctrl-C through: on
/// a signal, envs not yet started are skipped, running ones finish, then the interrupt is raised.
inline void wait_interruptibly(Engine& engine) {
  while (!engine.wait_for(std::chrono::milliseconds(50))) {
    py::gil_scoped_acquire acquire;
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

/// Owns the engine (through its hold) and the array a batch of every env is written into.
class PyVectorizer {
 public:
  PyVectorizer(const std::vector<EnvConfig>& configs, int num_threads, int thread_affinity_offset, int batch_size) {
    std::unique_ptr<Vectorizer> vec;
    {
      py::gil_scoped_release release;
      vec = std::make_unique<Vectorizer>(configs, num_threads, thread_affinity_offset, batch_size);
    }
    // What never changes, kept here: reading it needs no engine (and no wait for one).
    num_envs_ = vec->num_envs();
    num_threads_ = vec->engine().num_threads();
    batch_size_ = vec->batch_size();
    obs_shape_ = config_obs_shape(vec->engine().config(0));
    ram_info_ = vec->engine().config(0).ram_info;  // an engine's envs share their options
    for (int i = 0; i < num_envs_; ++i) screen_heights_.push_back(vec->engine().env(i).screen_height());  // the ROM's
    hold_ = std::make_shared<VectorizerHold>(std::move(vec));
  }

  ~PyVectorizer() {
    close();
    // An XLA call still inside destroys the engine as it leaves: the array stays, leaked, for it.
    if (!hold_->destroyed()) pending_obs_.release();
  }

  /// Frees the engine; again does nothing. A call inside (another thread's, or the one a signal
  /// handler interrupted) is not disturbed: the engine goes as it leaves, and it raises if it waited.
  void close() {
    xla::forget(hold_.get());
    {
      py::gil_scoped_release release;  // joining waits for work in flight
      hold_->close();
    }
    if (hold_->destroyed()) pending_obs_ = py::none();  // no worker writes into it any more
  }

  void send_reset(const std::vector<Seed>& seeds, const std::optional<IdArray>& env_ids) {
    check_open();
    const std::vector<int> ids = env_ids ? to_ids(*env_ids, num_envs_) : every_env(seeds.size(), num_envs_);
    py::object fresh = py::none();
    // Steps still in flight finish first; their results are dropped.
    drive([&](Vectorizer& vec) {
      vec.send_reset(ids, seeds, rows_into(fresh));
      keep_rows(fresh);
    });
  }

  void send(const IdArray& actions, const std::optional<IdArray>& env_ids, const std::optional<FloatArray>& strengths) {
    check_open();
    if (actions.ndim() != 1) throw std::invalid_argument("actions must be a 1-d array");
    std::vector<int> ids = env_ids ? to_ids(*env_ids, num_envs_) : std::vector<int>{};  // none: the vectorizer's
    const std::vector<int64_t> copy(actions.data(), actions.data() + actions.shape(0));
    std::vector<float> strength(copy.size(), 1.0f);
    if (strengths) {
      if (strengths->ndim() != 1 || strengths->shape(0) != actions.shape(0)) {
        throw std::invalid_argument("paddle strengths must be a 1-d array as long as the actions");
      }
      std::copy(strengths->data(), strengths->data() + strengths->shape(0), strength.begin());
    }
    py::object fresh = py::none();
    drive([&](Vectorizer& vec) {
      vec.send(std::move(ids), copy, strength, rows_into(fresh));
      keep_rows(fresh);
    });
  }

  /// Waits for the next batch and returns it whole, as one dict of arrays (row k is env env_id[k]):
  /// obs, the step's scalars and info, the final stacks of the rows that are done (final_obs, with
  /// their rows in final_rows), the reset infos of the rows that reset, and the envs that failed.
  py::dict recv() {
    check_open();
    // Python objects live out here: created and dropped with the GIL held.
    py::object obs = py::none();
    std::optional<Columns> columns;
    std::string error;
    std::vector<int> failed;
    std::vector<std::string> refused;
    drive([&](Vectorizer& vec) {
      wait_interruptibly(vec.engine());
      if (hold_->closed()) {
        throw std::runtime_error("the engine was closed (by a signal handler or another thread) while recv() "
                                 "waited for its results: they are lost");
      }
      uint8_t* gather = nullptr;
      {
        py::gil_scoped_acquire acquire;
        if (vec.in_place()) {
          obs = pending_obs_;  // the rows of the send this batch is of; no other call in between
        } else {
          auto gathered = new_array<uint8_t>(batch_shape(vec.expected()));
          gather = gathered.mutable_data();
          obs = gathered;
        }
      }
      const std::vector<Row> rows = vec.recv(gather, error);
      const auto finals = static_cast<py::ssize_t>(
          std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.final_obs != nullptr; }));
      {
        py::gil_scoped_acquire acquire;
        columns.emplace(static_cast<py::ssize_t>(rows.size()), finals, batch_shape(finals), ram_info_);
      }
      columns->fill(rows);  // reads the envs' final stacks: still the one caller
      for (const Row& r : rows) {
        if (r.failed) failed.push_back(r.env_id);
      }
      forget_rows();  // (`obs` holds them now)
      refused = vec.engine().take_refused();
    });
    py::dict batch = columns->to_dict();
    batch["obs"] = obs;
    if (!refused.empty()) batch["reset_ahead_refused"] = refused;  // each key once: the front-end warns
    batch["error"] = error.empty() ? py::object(py::none()) : py::object(py::str(error));
    batch["failed"] = failed;
    return batch;
  }

  py::array_t<uint8_t> screen_rgb(int i) {
    check_open();
    if (i < 0 || i >= num_envs_) throw std::out_of_range("env index " + std::to_string(i) + " out of range");
    auto out = new_array<uint8_t>({screen_heights_[static_cast<size_t>(i)], kScreenWidth, 3});
    uint8_t* data = out.mutable_data();
    drive([&](Vectorizer& vec) { vec.engine().env(i).screen_rgb(data); });
    return out;
  }

  uint64_t xla_handle() {
    check_open();
    return xla::handle_for(hold_);
  }

  void profile(bool on) {
    drive([&](Vectorizer& vec) { vec.engine().profile(on); });
  }
  /// The tasks timed since the last call, as a dict of equal-length arrays (see TaskRecord).
  py::dict take_profile() {
    return profile_columns(drive([](Vectorizer& vec) { return vec.engine().take_profile(); }));
  }
  bool resets_first() {
    return drive([](Vectorizer& vec) { return vec.engine().resets_first(); });
  }
  void set_resets_first(bool on) {
    drive([&](Vectorizer& vec) { vec.engine().set_resets_first(on); });
  }
  bool reset_ahead() {
    return drive([](Vectorizer& vec) { return vec.engine().reset_ahead(); });
  }
  void set_reset_ahead(bool on) {  // off abandons a prepare that is running: waits for none
    drive([&](Vectorizer& vec) { vec.engine().set_reset_ahead(on); });
  }
  /// The keys refused since the last recv or call (Engine::take_refused), for close() and xla().
  std::vector<std::string> take_refused() {
    return drive([](Vectorizer& vec) { return vec.engine().take_refused(); });
  }
  bool prepares_idle() {
    return drive([](Vectorizer& vec) { return vec.engine().prepares_idle(); });
  }
  int prepared() {
    return drive([](Vectorizer& vec) { return vec.engine().prepared(); });
  }
  int64_t resets_count(Engine::Count what) {
    return drive([&](Vectorizer& vec) { return vec.engine().resets_count(what); });
  }
  /// Tests' switches, not bound in _engine: sb3_ale_vec._testing reaches them through PyVectorizerHooks.
  /// Env i's next step throws.
  void inject_fault(int i) {
    drive([&](Vectorizer& vec) { vec.engine().inject_fault(i); });
  }
  /// Resets ahead on, each prepare run by its env at its episode's end (Engine::set_reset_ahead's wait).
  void reset_ahead_wait(bool wait) {
    drive([&](Vectorizer& vec) { vec.engine().set_reset_ahead(true, wait); });
  }
  void hold_prepares(bool on) {
    drive([&](Vectorizer& vec) { vec.engine().hold_prepares(on); });
  }
  int64_t wakes_steered() {
    return drive([](Vectorizer& vec) { return vec.engine().wakes_steered(); });
  }

  /// A send whose results recv() has not returned yet, as the last call left it (any thread may ask).
  bool pending() {
    check_open();
    return pending_.load(std::memory_order_acquire);
  }
  bool closed() const { return hold_->closed(); }
  int num_envs() const { return num_envs_; }
  int num_threads() const { return num_threads_; }
  int batch_size() const { return batch_size_; }
  std::vector<py::ssize_t> obs_shape() const { return obs_shape_; }

 private:
  /// The one guard: body(Vectorizer&) with the GIL released, as the engine's only caller; `pending_`
  /// updated as it ends. Bodies take the GIL back only to make or fill Python objects declared
  /// outside them.
  template <typename Body>
  auto drive(Body&& body) -> decltype(body(std::declval<Vectorizer&>())) {
    struct DropRows {  // after the GIL is back: an engine closed during the call is gone now
      PyVectorizer& self;
      ~DropRows() {
        if (self.hold_->destroyed()) self.pending_obs_ = py::none();
      }
    } drop{*this};
    py::gil_scoped_release release;
    return hold_->use([&](Vectorizer& vec) {
      struct Pending {
        std::atomic<bool>& flag;
        Vectorizer& vec;
        ~Pending() { flag.store(vec.expected() > 0, std::memory_order_release); }
      } pending{pending_, vec};
      return body(vec);
    });
  }
  void check_open() const {
    if (hold_->closed()) throw std::runtime_error("the engine is closed");
  }
  /// The caller's array for a batch of every env (SB3 keeps the last one), made with the GIL when the
  /// vectorizer asks for it and kept in `holder` until recv.
  RowsFor rows_into(py::object& holder) {
    return [this, &holder](size_t rows) {
      py::gil_scoped_acquire acquire;
      auto obs = new_array<uint8_t>(batch_shape(static_cast<py::ssize_t>(rows)));
      holder = obs;
      return obs.mutable_data();
    };
  }
  /// The rows a send's workers write into, kept until recv: set by the engine's caller only, so a
  /// batch in flight never loses its array (a refused send leaves the one before as it was).
  void keep_rows(const py::object& rows) {
    py::gil_scoped_acquire acquire;
    pending_obs_ = rows;
  }
  void forget_rows() {
    py::gil_scoped_acquire acquire;
    pending_obs_ = py::none();
  }
  std::vector<py::ssize_t> batch_shape(py::ssize_t n) const {
    std::vector<py::ssize_t> shape = obs_shape_;
    shape.insert(shape.begin(), n);
    return shape;
  }

  py::object pending_obs_ = py::none();  // the rows the workers write a batch of every env into
  std::shared_ptr<VectorizerHold> hold_;  // shared with the XLA registry (weakly)
  std::atomic<bool> pending_{false};
  int num_envs_ = 0, num_threads_ = 0, batch_size_ = 0;
  std::vector<py::ssize_t> obs_shape_;
  std::vector<py::ssize_t> screen_heights_;
  bool ram_info_ = false;
};

/// The engine's test hooks, for sb3_ale_vec._testing (hooks.cpp) and not bound in _engine: _engine leaves
/// them in pybind11's shared data (one table per process for the modules of one pybind11 build), so the
/// hooks run _engine's own code, which _testing does not link, through drive() as every call.
struct PyVectorizerHooks {
  static constexpr const char* kKey = "sb3_ale_vec._engine.PyVectorizerHooks";
  void (*inject_fault)(PyVectorizer& vec, int env_id);
  void (*reset_ahead_wait)(PyVectorizer& vec, bool wait);
  void (*hold_prepares)(PyVectorizer& vec, bool on);
  int64_t (*wakes_steered)(PyVectorizer& vec);
  int64_t (*checks_dropped)();  // OwedCheck::dropped_in_process, _engine's (not _testing's own copy)
};

}  // namespace sb3ale
