// The Python module sb3_ale_vec._engine: the engine (PyVectorizer, py_vectorizer.hpp), its config and the
// ROMs' action sets. With the other files of python/ the only code that includes pybind11.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/engine.hpp"
#include "python/py_vectorizer.hpp"
#include "xla/xla_ffi.hpp"

namespace py = pybind11;
using sb3ale::Engine;
using sb3ale::EnvConfig;
using sb3ale::PyVectorizer;

namespace {

/// The rows of the ROM's screen (210 for most; 214-250 for 13 of them): what raw screens measure.
int screen_height(const std::string& rom_path) {
  return sb3ale::with_rom(rom_path, [](ale::ALEInterface& ale) { return static_cast<int>(ale.getScreen().height()); });
}

/// The (mode, difficulty) ALE plays the ROM in when none is set: its state's once the ROM is loaded
/// (loadROM resets the game in them); what reset_table maps a half-explicit key with.
std::pair<int, int> default_mode(const std::string& rom_path) {
  return sb3ale::with_rom(rom_path, [](ale::ALEInterface& ale) {
    const ale::ALEState state = ale.cloneState();
    return std::make_pair(static_cast<int>(state.getCurrentMode()), static_cast<int>(state.getDifficulty()));
  });
}

/// sb3_ale_vec._testing's way in (PyVectorizerHooks), left in pybind11's shared data, never bound here.
sb3ale::PyVectorizerHooks hooks{
    [](PyVectorizer& vec, int env_id) { vec.inject_fault(env_id); },
    [](PyVectorizer& vec, bool wait) { vec.reset_ahead_wait(wait); },
    [](PyVectorizer& vec, bool on) { vec.hold_prepares(on); },
    [](PyVectorizer& vec) { return vec.wakes_steered(); },
    [] { return sb3ale::OwedCheck::dropped_in_process(); },
};

std::vector<int> action_set(const std::string& rom_path, bool full_action_space) {
  return sb3ale::with_rom(rom_path, [&](ale::ALEInterface& ale) {
    const ale::ActionVect actions = full_action_space ? ale.getLegalActionSet() : ale.getMinimalActionSet();
    return std::vector<int>(actions.begin(), actions.end());
  });
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "sb3_ale_vec's native batched Atari engine (ALE emulator + each preset's preprocessing)";
  m.attr("ALE_VERSION") = SB3_ALE_VEC_ALE_VERSION;
  m.attr("ALE_PATCHES") = SB3_ALE_VEC_ALE_PATCHES;  // our changes to ALE's sources (build_support/ale_patches.py)
  m.attr("RAM_SIZE") = sb3ale::kRamSize;  // bytes of RAM per row of info["ram"]
  py::set_shared_data(sb3ale::PyVectorizerHooks::kKey, &hooks);

  py::enum_<sb3ale::Preset>(m, "Preset")
      .value("SB3", sb3ale::Preset::kSB3)
      .value("GYMNASIUM", sb3ale::Preset::kGymnasium)
      .value("ALE", sb3ale::Preset::kALE);
  py::enum_<sb3ale::Layout>(m, "Layout")
      .value("CHW", sb3ale::Layout::kCHW)
      .value("HWC", sb3ale::Layout::kHWC)
      .value("FRAMES", sb3ale::Layout::kFrames);
  py::enum_<sb3ale::ObsType>(m, "ObsType")
      .value("PROCESSED", sb3ale::ObsType::kProcessed)
      .value("RGB", sb3ale::ObsType::kRGB)
      .value("GRAYSCALE", sb3ale::ObsType::kGrayscale)
      .value("RAM", sb3ale::ObsType::kRAM);

  py::class_<EnvConfig> config(m, "EnvConfig");
  config.def(py::init<>()).def(py::init<const EnvConfig&>(), py::arg("other"), "A copy.");
#define SB3ALE_BIND(type, name, value) config.def_readwrite(#name, &EnvConfig::name);
  SB3ALE_ENV_CONFIG(SB3ALE_BIND)  // every field, from config.hpp's one list
#undef SB3ALE_BIND

  // A RuntimeError, so that "one call at a time" reads as before; its own class, so a front-end (and
  // a caller) can tell that nothing was consumed: the call may simply be made again.
  py::register_exception<sb3ale::EngineBusy>(m, "EngineBusy", PyExc_RuntimeError);

  py::class_<PyVectorizer>(m, "Vectorizer")
      .def(py::init<const std::vector<EnvConfig>&, int, int, int>(), py::arg("configs"),
           py::arg("num_threads") = 0, py::arg("thread_affinity_offset") = -1, py::arg("batch_size") = 0,
           "One env per config; batch_size 0 means every recv returns all envs.")
      .def("send_reset", &PyVectorizer::send_reset, py::arg("seeds"), py::arg("env_ids") = py::none(),
           "Start resetting envs (all, or env_ids: a partial reset, whose recv returns every env, those "
           "left alone as they are); seeds[k] is None or the seed's 32-bit words, least significant first. "
           "Steps still in flight finish first and are dropped.")
      .def("send", &PyVectorizer::send, py::arg("actions"), py::arg("env_ids") = py::none(),
           py::arg("paddle_strengths") = py::none(),
           "Start a step of env_ids, or by default of every env (batched: the envs the last recv returned); "
           "returns at once.")
      .def("recv", &PyVectorizer::recv,
           "Wait for the next min(batch_size, in flight) envs: one dict of arrays, env_id naming each row.")
      .def("screen_rgb", &PyVectorizer::screen_rgb, py::arg("env_id"))
      .def("close", &PyVectorizer::close)
      .def("_profile", &PyVectorizer::profile, py::arg("on"),
           "Benchmark: start (clearing the log) or stop timing each env's task; nothing may be in flight.")
      .def("_take_profile", &PyVectorizer::take_profile,
           "Benchmark: the tasks timed since the last call: batch, env, thread, reset, start/end/sent/woke "
           "ns (time.perf_counter_ns()'s clock).")
      .def_property("_resets_first", &PyVectorizer::resets_first, &PyVectorizer::set_resets_first,
                    "Benchmark: a full batch queues the envs that will reset first (default True).")
      .def_property("_reset_ahead", &PyVectorizer::reset_ahead, &PyVectorizer::set_reset_ahead,
                    "Benchmark: threads at idle priority compute each env's next reset ahead of time "
                    "(default: True with more than one thread); nothing may be in flight to change it.")
      .def_property_readonly("_game_resets", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kGames); },
                             "Benchmark: the envs' game resets so far (ALE reset_game()), made or swapped in.")
      .def_property_readonly("_resets_taken", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kTaken); },
                             "Benchmark: resets the envs took from their spare emulators so far.")
      .def_property_readonly("_resets_replayed", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kReplayed); },
                             "Tests: of those, the ones whose no-ops and FIRE were computed ahead too.")
      .def_property_readonly("_replays_abandoned", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kAbandoned); },
                             "Tests: replays left part-way (a post-reset script predicted wrong): 0 where predictions hold.")
      .def_property_readonly("_resets_checked", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kChecked); },
                             "Tests: swaps re-checked against a real reset in idle time.")
      .def_property_readonly("_resets_check_dropped", [](PyVectorizer& v) { return v.resets_count(Engine::Count::kDropped); },
                             "Tests: checks owed and never made (an env rebuilt owing one): 0 in a run without failures.")
      .def("_take_refused", &PyVectorizer::take_refused,
           "The games whose resets ahead a check refused since the last recv or call, each once (close() and "
           "xla() warn of them).")
      .def_property_readonly("reset_ahead_mismatches",
                             [](PyVectorizer& v) { return v.resets_count(Engine::Count::kMismatches); },
                             "Swaps that a real reset did not reproduce (each refuses its game's resets ahead "
                             "in this engine; 0 unless the shipped table is wrong).")
      .def_property_readonly("_prepares_idle", &PyVectorizer::prepares_idle,
                             "Tests: no reset prepared ahead is queued or running on the idle threads.")
      .def_property_readonly("_prepared", &PyVectorizer::prepared,
                             "Tests: the envs whose next reset is prepared on their spare emulators.")
      .def_property_readonly("pending", &PyVectorizer::pending)
      .def_property_readonly("closed", &PyVectorizer::closed)
      .def_property_readonly("num_envs", &PyVectorizer::num_envs)
      .def_property_readonly("num_threads", &PyVectorizer::num_threads)
      .def_property_readonly("batch_size", &PyVectorizer::batch_size)
      .def_property_readonly("obs_shape", &PyVectorizer::obs_shape)
      .def("xla_handle", &PyVectorizer::xla_handle, "The id that sb3_ale_vec.xla's handle carries (registered once).");

  // XLA FFI handlers (native/xla/xla_ffi.cpp) as capsules for jax.ffi.register_ffi_target; None when not built.
  m.def("xla_ffi_targets", [] {
    if (!sb3ale::xla::available()) return py::object(py::none());
    return py::object(py::make_tuple(py::make_tuple(sb3ale::xla::api_major(), sb3ale::xla::api_minor()),
                                     py::capsule(sb3ale::xla::reset_handler()), py::capsule(sb3ale::xla::step_handler())));
  }, "((ffi_api_major, ffi_api_minor), reset capsule, step capsule) or None.");
  m.def("xla_ffi_cuda_targets", [] {
    if (!sb3ale::xla::available()) return py::object(py::none());
    return py::object(py::make_tuple(py::capsule(sb3ale::xla::reset_cuda_handler()),
                                     py::capsule(sb3ale::xla::step_cuda_handler())));
  }, "(reset capsule, step capsule) of the CUDA targets (native/xla/xla_cuda.cpp), or None.");
  m.def("obs_shape", [](const EnvConfig& config) {
    sb3ale::check_config(config);
    return sb3ale::config_obs_shape(config);
  }, py::arg("config"),
        "The shape of one observation of an env with this config, as an engine of it returns.");
  m.def("_stop_background", [] { sb3ale::exit_registry::stop_all(); }, py::call_guard<py::gil_scoped_release>(),
        "Interpreter exit (atexit): every engine's idle threads told to stop, their jobs abandoned, then at most "
        "300 ms for the threads to be gone (so that none is the last one out of the process, at idle priority).");
  m.def("default_mode", &default_mode, py::arg("rom_path"),
        "The (mode, difficulty) ALE plays the ROM in when none is set (its state's after loadROM).");
  m.def("screen_height", &screen_height, py::arg("rom_path"), "The rows of the ROM's screen (ALE's getScreen()).");
  m.def("action_set", &action_set, py::arg("rom_path"), py::arg("full_action_space") = false,
        "The game's action set (ALE action ids), minimal or full.");
}
