// check_config: each EnvConfig field held to its range where a config enters the engine (the Engine's
// constructor, _engine.obs_shape). options.py checks the user's options; a config built directly
// skipped those checks, and stack_num=0 divided by zero in the frame stack.
#include <climits>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "config.hpp"

namespace sb3ale {

namespace {

constexpr int kMaxImageSide = 4096;  // options.py's bound on img_height and img_width
// ALE's TIA raises a ROM's display height below 200 to 200 and draws into a 160 x 300 buffer.
constexpr int kMinScreenHeight = 200, kMaxScreenHeight = 300;

template <typename T>
std::string shown(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

template <typename T>
void require(bool ok, const char* field, T value, const std::string& allowed) {
  if (!ok) throw std::invalid_argument(std::string("EnvConfig.") + field + " must be " + allowed + ", got " + shown(value));
}

void at_least(const char* field, int value, int low) { require(value >= low, field, value, ">= " + shown(low)); }

void between(const char* field, int value, int low, int high) {
  require(low <= value && value <= high, field, value, "in [" + shown(low) + ", " + shown(high) + "]");
}

/// NaN fails both comparisons: refused too.
void probability(const char* field, double value) { require(value >= 0.0 && value <= 1.0, field, value, "in [0, 1]"); }

}  // namespace

void check_config(const EnvConfig& c) {
  // pybind11's enums take any int (Layout(7)): every switch on them assumes a listed value.
  between("preset", static_cast<int>(c.preset), 0, 2);
  between("layout", static_cast<int>(c.layout), 0, 2);
  between("obs_type", static_cast<int>(c.obs_type), 0, 3);
  at_least("frameskip", c.frameskip, 1);
  between("img_height", c.img_height, 1, kMaxImageSide);
  between("img_width", c.img_width, 1, kMaxImageSide);
  at_least("stack_num", c.stack_num, 1);  // the frame stack's ring is stack_num slots
  // AtariEnv's own observation is one frame, with no stack axis in its shape (config_obs_shape).
  require(c.obs_type == ObsType::kProcessed || c.stack_num == 1, "stack_num", c.stack_num,
          "1 with obs_type RGB, GRAYSCALE or RAM (AtariEnv's own observation: one frame)");
  at_least("noop_max", c.noop_max, 0);
  probability("repeat_action_probability", c.repeat_action_probability);
  probability("action_repeat_probability", c.action_repeat_probability);
  at_least("max_num_frames_per_episode", c.max_num_frames_per_episode, 0);
  // ALE's vector env truncates once its frames since the reset reach the limit: 0 would end every step.
  require(c.preset != Preset::kALE || c.max_num_frames_per_episode >= 1, "max_num_frames_per_episode",
          c.max_num_frames_per_episode, ">= 1 with preset ALE");
  at_least("mode", c.mode, -1);  // -1: the game's default
  at_least("difficulty", c.difficulty, -1);
  at_least("env_frameskip", c.env_frameskip, 1);
  // A range draws integers(env_frameskip, env_frameskip_max) per step, as plain *-v4 ids (2..4).
  require(c.env_frameskip_max == 0 || c.env_frameskip_max > c.env_frameskip, "env_frameskip_max",
          c.env_frameskip_max, "0 (a fixed frame skip) or > env_frameskip (" + shown(c.env_frameskip) + ")");
  between("screen_height", c.screen_height, kMinScreenHeight, kMaxScreenHeight);
  // Rows are indexed with ints in places (numpy's shapes, XLA's buffers): under 2^31 bytes each.
  const int64_t size = c.obs_size();
  require(size <= INT_MAX, "stack_num", c.stack_num,
          "small enough that an observation (" + shown(size) + " bytes) stays under 2^31 bytes");
}

}  // namespace sb3ale
