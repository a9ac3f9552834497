// The only file that includes pybind11: numpy in and out, the GIL released around all stepping.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

#include "engine.hpp"

namespace py = pybind11;
using sb3ale::Engine;
using sb3ale::EnvConfig;

namespace {

template <typename T>
py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
  return py::array_t<T>(shape);
}

/// Waits for the engine's work in flight with the GIL released, in slices, so that Ctrl-C gets
/// through: on a signal, envs not yet started are skipped, running ones finish, then it raises.
void wait_interruptibly(Engine& engine) {
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

/// Owns the engine and the observation array a pending step writes into.
class PyEngine {
 public:
  PyEngine(const EnvConfig& config, int num_envs, int num_threads, int thread_affinity_offset) {
    py::gil_scoped_release release;
    engine_ = std::make_unique<Engine>(config, num_envs, num_threads, thread_affinity_offset);
  }

  ~PyEngine() { close(); }

  void close() {
    if (!engine_) return;
    {
      py::gil_scoped_release release;  // joining waits for a step in flight
      engine_.reset();
    }
    pending_obs_ = py::none();
  }

  py::array_t<uint8_t> reset(const std::vector<sb3ale::Seed>& seeds) {
    Engine& engine = get();
    if (engine.pending()) {
      wait_interruptibly(engine);
      engine.recv();  // a step in flight finishes first; its results are dropped
    }
    auto obs = new_array<uint8_t>(batch_shape());
    engine.send_reset(seeds, obs.mutable_data());
    pending_obs_ = obs;
    wait_interruptibly(engine);
    pending_obs_ = py::none();
    engine.recv();
    return obs;
  }

  void send(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& actions) {
    Engine& engine = get();
    if (actions.ndim() != 1 || actions.shape(0) != engine.num_envs()) {
      throw std::invalid_argument("actions must have shape (" + std::to_string(engine.num_envs()) + ",)");
    }
    std::vector<int64_t> copy(actions.data(), actions.data() + actions.shape(0));
    auto obs = new_array<uint8_t>(batch_shape());  // fresh every step: SB3 keeps the previous one
    engine.send(copy, obs.mutable_data());
    pending_obs_ = obs;
  }

  py::tuple recv() {
    Engine& engine = get();
    if (!engine.pending()) throw std::runtime_error("recv() called without send()");
    wait_interruptibly(engine);
    py::object error = py::none();
    try {
      engine.recv();
    } catch (const std::exception& e) {
      error = py::str(e.what());
    }
    const auto& results = engine.results();
    const py::ssize_t n = engine.num_envs();
    auto rewards = new_array<float>({n});
    auto dones = new_array<bool>({n});
    auto truncated = new_array<bool>({n});
    auto lives = new_array<int64_t>({n});
    auto episode_frame_number = new_array<int64_t>({n});
    auto frame_number = new_array<int64_t>({n});
    auto game_end = new_array<bool>({n});
    auto episode_return = new_array<double>({n});
    auto episode_length = new_array<int64_t>({n});
    for (py::ssize_t i = 0; i < n; ++i) {
      const auto& r = results[static_cast<size_t>(i)];
      rewards.mutable_at(i) = r.reward;
      dones.mutable_at(i) = r.done;
      truncated.mutable_at(i) = r.time_limit_truncated;
      lives.mutable_at(i) = r.lives;
      episode_frame_number.mutable_at(i) = r.episode_frame_number;
      frame_number.mutable_at(i) = r.frame_number;
      game_end.mutable_at(i) = r.game_end;
      episode_return.mutable_at(i) = r.episode_return;
      episode_length.mutable_at(i) = r.episode_length;
    }
    auto obs = py::reinterpret_borrow<py::array_t<uint8_t>>(pending_obs_);
    pending_obs_ = py::none();
    const std::vector<int> failed = engine.failed_envs();
    const size_t size = static_cast<size_t>(engine.config().obs_size());
    for (int i : failed) std::fill_n(obs.mutable_data() + i * size, size, 0);  // never half-written rows
    py::dict info;
    info["error"] = error;
    info["failed"] = failed;
    info["TimeLimit.truncated"] = truncated;
    info["lives"] = lives;
    info["episode_frame_number"] = episode_frame_number;
    info["frame_number"] = frame_number;
    info["game_end"] = game_end;
    info["episode_return"] = episode_return;
    info["episode_length"] = episode_length;
    return py::make_tuple(obs, rewards, dones, info);
  }

  py::array_t<uint8_t> terminal_obs(int i) {
    const auto& src = env(i).final_obs();
    auto out = new_array<uint8_t>(obs_shape());
    std::copy(src.begin(), src.end(), out.mutable_data());
    return out;
  }

  py::dict reset_info(int i) {
    const auto& r = env(i).reset_info();
    py::dict info;
    if (r.empty) return info;  // FireResetEnv returns {}
    info["lives"] = r.lives;
    info["episode_frame_number"] = r.episode_frame_number;
    info["frame_number"] = r.frame_number;
    if (r.has_seeds) info["seeds"] = py::make_tuple(r.seeds[0], r.seeds[1]);
    return info;
  }

  py::array_t<uint8_t> screen_rgb(int i) {
    const auto& e = env(i);
    auto out = new_array<uint8_t>({e.screen_height(), e.screen_width(), 3});
    e.screen_rgb(out.mutable_data());
    return out;
  }

  std::vector<int> action_set() { return to_ints(env(0).action_set()); }
  bool pending() { return engine_ && engine_->pending(); }
  void inject_fault(int i) { get().inject_fault(i); }
  bool closed() const { return !engine_; }
  int num_envs() { return get().num_envs(); }
  int num_threads() { return get().num_threads(); }
  std::vector<py::ssize_t> obs_shape() {
    const EnvConfig& c = get().config();
    const py::ssize_t depth = static_cast<py::ssize_t>(c.channels()) * c.stack_num;
    if (c.channels_last) return {c.img_height, c.img_width, depth};
    return {depth, c.img_height, c.img_width};
  }

  static std::vector<int> to_ints(const ale::ActionVect& actions) {
    return std::vector<int>(actions.begin(), actions.end());
  }

 private:
  Engine& get() {
    if (!engine_) throw std::runtime_error("the engine is closed");
    return *engine_;
  }
  const sb3ale::AtariEnv& env(int i) {
    Engine& engine = get();
    if (engine.pending()) throw std::runtime_error("a step is in flight: call recv() first");
    if (i < 0 || i >= engine.num_envs()) throw std::out_of_range("env index " + std::to_string(i) + " out of range");
    return engine.env(i);
  }
  std::vector<py::ssize_t> batch_shape() {
    std::vector<py::ssize_t> shape = obs_shape();
    shape.insert(shape.begin(), get().num_envs());
    return shape;
  }

  py::object pending_obs_ = py::none();  // declared first: destroyed after the engine's threads
  std::unique_ptr<Engine> engine_;
};

std::vector<int> action_set(const std::string& rom_path, bool full_action_space) {
  if (!ale::ALEInterface::isSupportedROM(rom_path)) {
    throw std::invalid_argument("not a ROM that ALE supports (unknown MD5): " + rom_path);
  }
  sb3ale::quiet_ale_logs();
  ale::ALEInterface ale;
  ale.loadROM(rom_path);
  return PyEngine::to_ints(full_action_space ? ale.getLegalActionSet() : ale.getMinimalActionSet());
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "sb3_ale_vec's native batched Atari engine (ALE emulator + SB3 preprocessing)";
  m.attr("ALE_VERSION") = SB3_ALE_VEC_ALE_VERSION;

  py::class_<EnvConfig>(m, "EnvConfig")
      .def(py::init<>())
      .def_readwrite("rom_path", &EnvConfig::rom_path)
      .def_readwrite("frameskip", &EnvConfig::frameskip)
      .def_readwrite("maxpool", &EnvConfig::maxpool)
      .def_readwrite("grayscale", &EnvConfig::grayscale)
      .def_readwrite("img_height", &EnvConfig::img_height)
      .def_readwrite("img_width", &EnvConfig::img_width)
      .def_readwrite("stack_num", &EnvConfig::stack_num)
      .def_readwrite("channels_last", &EnvConfig::channels_last)
      .def_readwrite("noop_max", &EnvConfig::noop_max)
      .def_readwrite("fire_reset", &EnvConfig::fire_reset)
      .def_readwrite("episodic_life", &EnvConfig::episodic_life)
      .def_readwrite("reward_clipping", &EnvConfig::reward_clipping)
      .def_readwrite("repeat_action_probability", &EnvConfig::repeat_action_probability)
      .def_readwrite("action_repeat_probability", &EnvConfig::action_repeat_probability)
      .def_readwrite("full_action_space", &EnvConfig::full_action_space)
      .def_readwrite("max_num_frames_per_episode", &EnvConfig::max_num_frames_per_episode)
      .def_readwrite("mode", &EnvConfig::mode)
      .def_readwrite("difficulty", &EnvConfig::difficulty)
      .def_readwrite("env_frameskip", &EnvConfig::env_frameskip)
      .def_readwrite("env_frameskip_max", &EnvConfig::env_frameskip_max);

  py::class_<PyEngine>(m, "Engine")
      .def(py::init<const EnvConfig&, int, int, int>(), py::arg("config"), py::arg("num_envs"),
           py::arg("num_threads") = 0, py::arg("thread_affinity_offset") = -1)
      .def("reset", &PyEngine::reset, py::arg("seeds"),
           "Reset every env; seeds[i] is None or the seed's 32-bit words, least significant first.")
      .def("send", &PyEngine::send, py::arg("actions"), "Start a step of every env (returns at once).")
      .def("recv", &PyEngine::recv, "Wait for the step: (obs, rewards, dones, info arrays).")
      .def("terminal_obs", &PyEngine::terminal_obs, py::arg("env_id"))
      .def("reset_info", &PyEngine::reset_info, py::arg("env_id"))
      .def("screen_rgb", &PyEngine::screen_rgb, py::arg("env_id"))
      .def("close", &PyEngine::close)
      .def("_inject_fault", &PyEngine::inject_fault, py::arg("env_id"), "Tests: env_id's next step throws.")
      .def_property_readonly("action_set", &PyEngine::action_set)
      .def_property_readonly("pending", &PyEngine::pending)
      .def_property_readonly("closed", &PyEngine::closed)
      .def_property_readonly("num_envs", &PyEngine::num_envs)
      .def_property_readonly("num_threads", &PyEngine::num_threads)
      .def_property_readonly("obs_shape", &PyEngine::obs_shape);

  m.def("action_set", &action_set, py::arg("rom_path"), py::arg("full_action_space") = false,
        "The game's action set (ALE action ids), minimal or full.");
}
