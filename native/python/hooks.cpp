// sb3_ale_vec._testing: the hooks of the tests and the benchmark, a module of its own so that the
// module users import (_engine) offers only the engine: the engine's pure parts, to compare with
// cv2 and numpy, and the bare emulator loop that is the benchmark's limit.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "env/emulator.hpp"
#include "env/reset_probe.hpp"
#include "frames/frame_ops.hpp"
#include "env/rng.hpp"
#include "python/py_vectorizer.hpp"

namespace py = pybind11;

namespace sb3ale {

namespace {

using Bytes = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

/// _engine's hooks (PyVectorizerHooks), left in pybind11's shared data as it loaded.
const PyVectorizerHooks& engine_hooks() {
  const auto* hooks = static_cast<const PyVectorizerHooks*>(py::get_shared_data(PyVectorizerHooks::kKey));
  if (hooks == nullptr) throw std::runtime_error("sb3_ale_vec._engine left no hooks: a build of another version?");
  return *hooks;
}

/// The level a hook's `isa` names: "" is the process's (SB3_ALE_VEC_ISA, else the CPU's best).
Isa hook_isa(const std::string& isa) { return isa.empty() ? process_isa() : parse_isa(isa); }

py::array_t<uint8_t> area_resize(const Bytes& src, int dst_h, int dst_w, bool simd, const std::string& isa) {
  if (src.ndim() != 3) throw std::invalid_argument("src must be (h, w, channels)");
  const AreaResize resize(static_cast<int>(src.shape(0)), static_cast<int>(src.shape(1)), dst_h, dst_w,
                          static_cast<int>(src.shape(2)), simd ? hook_isa(isa) : Isa::kScalar);
  py::array_t<uint8_t> out({static_cast<py::ssize_t>(dst_h), static_cast<py::ssize_t>(dst_w), src.shape(2)});
  resize(src.data(), out.mutable_data());
  return out;
}

py::array_t<uint8_t> area_resize_update(const Bytes& src, const Bytes& prev, const Bytes& dst, const std::string& isa) {
  if (src.ndim() != 3 || dst.ndim() != 3) throw std::invalid_argument("src and dst must be (h, w, channels)");
  if (prev.size() != src.size()) throw std::invalid_argument("prev must have src's size");
  const AreaResize resize(static_cast<int>(src.shape(0)), static_cast<int>(src.shape(1)), static_cast<int>(dst.shape(0)),
                          static_cast<int>(dst.shape(1)), static_cast<int>(src.shape(2)), hook_isa(isa));
  py::array_t<uint8_t> out({dst.shape(0), dst.shape(1), dst.shape(2)});
  std::copy(dst.data(), dst.data() + dst.size(), out.mutable_data());
  resize.update(src.data(), prev.data(), out.mutable_data());
  return out;
}

py::array_t<uint8_t> gray_of_rgb(const Bytes& rgb) {
  if (rgb.ndim() < 1 || rgb.shape(rgb.ndim() - 1) != 3) throw std::invalid_argument("rgb must end in 3 channels");
  py::array_t<uint8_t> out(rgb.size() / 3);
  for (py::ssize_t p = 0; p < rgb.size() / 3; ++p) {
    out.mutable_data()[p] = rgb_to_gray(rgb.data()[3 * p], rgb.data()[3 * p + 1], rgb.data()[3 * p + 2]);
  }
  return out;
}

py::array_t<uint8_t> lookup(const Bytes& indices, const Bytes& table, const std::string& isa) {
  if (table.size() != 256) throw std::invalid_argument("table must have 256 entries");
  py::array_t<uint8_t> out(indices.size());
  palette_lookup(indices.data(), table.data(), out.mutable_data(), static_cast<size_t>(indices.size()), hook_isa(isa));
  return out;
}

py::array_t<uint8_t> lookup_pairs(const Bytes& a, const Bytes& b, const Bytes& pairs, const std::string& isa) {
  if (pairs.size() != 256 * 256) throw std::invalid_argument("pairs must have 65536 entries");
  if (a.size() != b.size()) throw std::invalid_argument("a and b must have the same size");
  py::array_t<uint8_t> out(a.size());
  pair_lookup(a.data(), b.data(), pairs.data(), out.mutable_data(), static_cast<size_t>(a.size()), hook_isa(isa));
  return out;
}

std::vector<int64_t> numpy_integers(const std::vector<uint32_t>& entropy, int64_t low, int64_t high, int count) {
  NumpyGenerator rng(entropy);
  std::vector<int64_t> values;
  for (int k = 0; k < count; ++k) values.push_back(rng.integers(low, high));
  return values;
}

std::vector<double> numpy_random(const std::vector<uint32_t>& entropy, int count) {
  NumpyGenerator rng(entropy);
  std::vector<double> values;
  for (int k = 0; k < count; ++k) values.push_back(rng.random());
  return values;
}

/// Frames ALE's reset_game() emulates without counting them in getFrameNumber(): 60 no-ops, two
/// soft resets of 4 frames, then the game's starting actions (StellaEnvironment::reset).
int reset_frames(ale::ALEInterface& ale) {
  return 60 + 2 * 4 + static_cast<int>(ale.romSettings->getStartingActions().size());
}

// Colour-averaged screens (ALE's PhosphorBlend, its tables shared by our build patch) of each ROM,
// all ROMs played at once on threads of their own: the tests compare them with ale-py's own ALE.
std::vector<py::array_t<uint8_t>> colour_averaged_screens(const std::vector<std::string>& rom_paths,
                                                           const std::vector<int>& actions, int seed) {
  for (const std::string& rom_path : rom_paths) {
    check_supported_rom(rom_path);
  }
  for (int action : actions) {
    if (action < 0 || action >= PLAYER_A_MAX) throw std::out_of_range("not an ALE action id: " + std::to_string(action));
  }
  quiet_ale_logs();
  std::vector<std::vector<uint8_t>> screens(rom_paths.size());
  std::vector<std::array<size_t, 2>> shapes(rom_paths.size());  // PAL games have more rows
  {
    py::gil_scoped_release release;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < rom_paths.size(); ++i) {
      threads.emplace_back([&, i] {
        ale::ALEInterface ale;
        ale.setBool("color_averaging", true);
        ale.setFloat("repeat_action_probability", 0.0f);
        ale.setInt("random_seed", seed);
        ale.loadROM(rom_paths[i]);
        const ale::ALEScreen& screen = ale.getScreen();
        const size_t size = screen.arraySize();
        shapes[i] = {screen.height(), screen.width()};
        for (int action : actions) {
          ale.act(static_cast<ale::Action>(action));
          screens[i].insert(screens[i].end(), screen.getArray(), screen.getArray() + size);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::vector<py::array_t<uint8_t>> out;
  for (size_t i = 0; i < rom_paths.size(); ++i) {
    py::array_t<uint8_t> array({actions.size(), shapes[i][0], shapes[i][1]});
    std::copy(screens[i].begin(), screens[i].end(), array.mutable_data());
    out.push_back(array);
  }
  return out;
}

py::dict bare_act(const std::string& rom_path, double seconds, int seed) {
  check_supported_rom(rom_path);
  if (!(seconds > 0)) throw std::invalid_argument("seconds must be > 0");
  quiet_ale_logs();
  long frames = 0, resets = 0;
  double elapsed = 0;
  int per_reset = 0;
  {
    py::gil_scoped_release release;
    ale::ALEInterface ale;
    ale.setFloat("repeat_action_probability", 0.0f);
    ale.setInt("random_seed", seed);
    ale.loadROM(rom_path);
    per_reset = reset_frames(ale);
    const ale::ActionVect actions = ale.getMinimalActionSet();
    std::mt19937 rng(static_cast<uint32_t>(seed));
    const auto start = std::chrono::steady_clock::now();
    const int first = ale.getFrameNumber();
    do {
      for (int i = 0; i < 1000; ++i) {
        ale.act(actions[rng() % actions.size()]);
        if (ale.game_over()) {
          ale.reset_game();
          ++resets;
        }
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < seconds);
    frames = ale.getFrameNumber() - first;
  }
  py::dict out;
  out["act_frames"] = frames;
  out["resets"] = resets;
  out["reset_frames"] = per_reset;
  out["seconds"] = elapsed;
  return out;
}

int rom_reset_frames(const std::string& rom_path) {
  check_supported_rom(rom_path);
  quiet_ale_logs();
  ale::ALEInterface ale;
  ale.loadROM(rom_path);
  return reset_frames(ale);
}

}  // namespace

void add_hooks(py::module_& m);
void add_xla_stage_hook(py::module_& m);  // xla_stage_test.cpp

}  // namespace sb3ale

PYBIND11_MODULE(_testing, m) {
  m.doc() = "sb3_ale_vec's test and benchmark hooks (not part of the API)";
  sb3ale::add_hooks(m);
  sb3ale::add_xla_stage_hook(m);
}

namespace sb3ale {

void add_hooks(py::module_& m) {
  m.def("_area_resize", &area_resize, py::arg("src"), py::arg("height"), py::arg("width"), py::arg("simd") = true,
        py::arg("isa") = "",
        "Tests: cv2.resize(src, (width, height), interpolation=cv2.INTER_AREA); simd=False: the scalar path, "
        "isa: at most that level's (\"\": the process's).");
  m.def("_area_resize_update", &area_resize_update, py::arg("src"), py::arg("prev"), py::arg("dst"), py::arg("isa") = "",
        "Tests: AreaResize::update, dst (the resize of prev) made the resize of src, as a new array.");
  m.def("_rgb_to_gray", &gray_of_rgb, py::arg("rgb"), "Tests: cv2.cvtColor(RGB2GRAY), flattened.");
  m.def("_palette_lookup", &lookup, py::arg("indices"), py::arg("table"), py::arg("isa") = "",
        "Tests: table[indices], flattened, with at most `isa`'s instructions (\"\": the process's).");
  m.def("_pair_lookup", &lookup_pairs, py::arg("a"), py::arg("b"), py::arg("pairs"), py::arg("isa") = "",
        "Tests: pairs[a * 256 + b], flattened, with at most `isa`'s instructions (\"\": the process's).");
  m.def("_isa", [] { return std::string(isa_name(process_isa())); },
        "Tests: the level the engine's vector paths use (SB3_ALE_VEC_ISA, else the CPU's best).");
  m.def("_cpu_isa", [] { return std::string(isa_name(cpu_isa())); }, "Tests: the best level this CPU runs.");
  m.def("_seed_sequence_state", &seed_sequence_state, py::arg("entropy"), py::arg("n_words"),
        "Tests: numpy SeedSequence(entropy).generate_state(n_words).");
  m.def("_numpy_integers", &numpy_integers, py::arg("entropy"), py::arg("low"), py::arg("high"), py::arg("count"),
        "Tests: Generator(PCG64(SeedSequence(entropy))).integers(low, high), count times.");
  m.def("_numpy_random", &numpy_random, py::arg("entropy"), py::arg("count"),
        "Tests: Generator(PCG64(SeedSequence(entropy))).random(), count times.");
  m.def("_bare_act", &bare_act, py::arg("rom_path"), py::arg("seconds"), py::arg("seed") = 0,
        "Benchmark: this build's emulator alone, random minimal actions and reset_game() on game over, "
        "for `seconds` with the GIL released. Returns act_frames, resets, reset_frames (per reset), seconds.");
  m.def("_colour_averaged_screens", &colour_averaged_screens, py::arg("rom_paths"), py::arg("actions"),
        py::arg("seed") = 0,
        "Tests: getScreen() after each of `actions` (ALE action ids) with color_averaging on, one array "
        "(frames, height, width) per ROM, the ROMs played at once on threads of their own.");
  // The engine's own class (pybind11 shares a type among the modules of one pybind11 build), and a
  // method that _engine leaves in pybind11's shared data instead of binding it: the module users import
  // offers no way to break an env.
  m.def(
      "_inject_fault", [](PyVectorizer& engine, int env_id) { engine_hooks().inject_fault(engine, env_id); },
      py::arg("engine"), py::arg("env_id"), "Tests: env_id's next step throws (engine: an sb3_ale_vec._engine.Vectorizer).");
  m.def(
      "_reset_ahead_wait", [](PyVectorizer& engine, bool on) { engine_hooks().reset_ahead_wait(engine, on); },
      py::arg("engine"), py::arg("on"),
      "Tests: resets ahead on, each prepared by its env at its episode's end on its own thread (not by idle "
      "threads, which a busy machine may never run), so that swaps happen; nothing may be in flight.");
  m.def(
      "_hold_prepares", [](PyVectorizer& engine, bool on) { engine_hooks().hold_prepares(engine, on); },
      py::arg("engine"), py::arg("on"),
      "Tests: while on, no thread starts a prepare: they come late, and every reset is made for real.");
  m.def(
      "_wakes_steered", [](PyVectorizer& engine) { return engine_hooks().wakes_steered(engine); }, py::arg("engine"),
      "Tests: the engine's sleeping workers kept off the caller's CPU for a wake-up so far.");
  m.def(
      "_reset_checks_dropped", [] { return engine_hooks().checks_dropped(); },
      "Tests: checks of resets ahead owed and never made in this process, every engine's (closed ones too).");
  m.def(
      "_rom_facts",
      [](const std::string& rom_path) {
        // This build's ALE: its colour tables shared, so a load is cheap.
        return with_rom(rom_path, [](ale::ALEInterface& ale) {
          return py::make_tuple(ale.getScreen().height(), ale.getAvailableModes().size(),
                                ale.getAvailableDifficulties().size());
        });
      },
      py::arg("rom_path"), "Docs: (screen rows, modes, difficulties) of a ROM ALE supports.");
  m.def("_reset_frames", &rom_reset_frames, py::arg("rom_path"),
        "Benchmark: the frames one ALE reset_game() emulates beyond those getFrameNumber() counts.");
  const ProbeEffort quick;  // the defaults, written once (reset_probe.hpp)
  m.def(
      "_probe_reset",
      [](const std::string& rom_path, int mode, int difficulty, float repeat_action_probability, int random_plays,
         int max_frames, int scoring_plays, int scoring_frames, int search_width, int search_frames, int check_every,
         int scrambles) {
        EnvConfig config;
        config.rom_path = rom_path;
        config.mode = mode;
        config.difficulty = difficulty;
        config.repeat_action_probability = repeat_action_probability;
        const ProbeEffort effort{random_plays, max_frames,    scoring_plays, scoring_frames,
                                 search_width, search_frames, check_every,   scrambles};
        quiet_ale_logs();
        ProbeResult result;
        {
          py::gil_scoped_release release;
          result = probe_reset(config, effort);
        }
        return py::make_tuple(result.why, result.frames);
      },
      py::arg("rom_path"), py::arg("mode") = -1, py::arg("difficulty") = -1, py::arg("repeat_action_probability") = 0.0f,
      py::kw_only(), py::arg("random_plays") = quick.random_plays, py::arg("max_frames") = quick.max_frames,
      py::arg("scoring_plays") = quick.scoring_plays, py::arg("scoring_frames") = quick.scoring_frames,
      py::arg("search_width") = quick.search_width, py::arg("search_frames") = quick.search_frames,
      py::arg("check_every") = quick.check_every, py::arg("scrambles") = quick.scrambles,
      "tools/reset_verdicts.py and tests: the resets-ahead probe of a ROM, mode, difficulty and sticky setting "
      "from a fresh emulator, at the effort the keywords give (reset_probe.hpp's ProbeEffort; the defaults are "
      "its quick look): (why, frames), why '' when no reset kept anything of play, frames the frames it played. "
      "ValueError for a ROM ALE does not support, a mode or difficulty the ROM lacks, or an effort out of range.");
}

}  // namespace sb3ale
