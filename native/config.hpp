// An env's config: every field, its unit and its default, once. options.py validates the user's options;
// check_config (config_check.cpp) holds each field to its range wherever a config enters the engine.
#pragma once

#include <cstdint>
#include <string>

namespace sb3ale {

constexpr int kScreenWidth = 160;  ///< every ALE game's screen; its height is the ROM's (210 to 250 rows)
constexpr int kRamSize = 128;       ///< bytes of the Atari's RAM, what ALE's getRAM() returns

/// Whose preprocessing chain an env reproduces, step for step.
enum class Preset : int {
  kSB3 = 0,        ///< AtariWrapper(AtariEnv(frameskip=1)) + VecFrameStack, DummyVecEnv auto-reset
  kGymnasium = 1,  ///< FrameStackObservation(AtariPreprocessing(AtariEnv(frameskip=1)))
  kALE = 2,        ///< ale_py.vector_env.AtariVectorEnv (ALE's own PreprocessedEnv)
};

/// How the stacked observation is laid out (C = 1 for gray, 3 for RGB).
enum class Layout : int {
  kCHW = 0,     ///< (stack*C, h, w): SB3 VecTransposeImage, the CnnPolicy layout
  kHWC = 1,     ///< (h, w, stack*C): SB3 VecFrameStack without the transpose
  kFrames = 2,  ///< (stack, h, w[, C]): gymnasium FrameStackObservation, frames in order
};

/// What an observation is: the preset chain's processed frames, or gymnasium AtariEnv's own obs_type
/// (AtariEnv alone, no preprocessing): its RGB screen, gray screen or RAM.
enum class ObsType : int {
  kProcessed = 0,
  kRGB = 1,        ///< (screen_height, 160, 3), getScreenRGB
  kGrayscale = 2,  ///< (screen_height, 160), getScreenGrayscale
  kRAM = 3,        ///< (128,), getRAM
};

/// Every field of an env's config: type, name, default, meaning. EnvConfig and its Python binding
/// (bindings.cpp) are both made from this list; the user-facing options, their checks and presets are
/// options.py's OPTIONS and PRESETS, which tests/unit/test_options.py holds equal to it.
#define SB3ALE_ENV_CONFIG(X)                                                                              \
  X(std::string, rom_path, "")              /* ROM file, from the installed ale-py wheel */               \
  X(int, frameskip, 4)                      /* emulator frames per agent step (action repeat) */          \
  X(bool, maxpool, true)                    /* max over the last two frames of a skip (MaxAndSkipEnv) */   \
  X(bool, grayscale, true)                  /* OpenCV RGB2GRAY of the pooled RGB frame, else RGB */        \
  X(int, img_height, 84)                    /* observation height, OpenCV INTER_AREA resize */             \
  X(int, img_width, 84)                     /* observation width */                                        \
  X(int, stack_num, 4)                      /* frames per observation, newest last, zero-padded */         \
  X(Layout, layout, Layout::kCHW)           /* how the stack is laid out */                                \
  X(bool, pad_with_reset, false)            /* pad a fresh stack with the reset frame, not zeros */        \
  X(Preset, preset, Preset::kSB3)           /* whose chain, step for step */                               \
  X(bool, next_step_autoreset, false)       /* reset on the step after a done (gymnasium NEXT_STEP) */     \
  X(int, noop_max, 30)                      /* no-ops 1..noop_max after a real reset (ALE: 0..max-1) */    \
  X(bool, fire_reset, true)                 /* FIRE, then action 2, after resets and life losses */        \
  /* SB3: a life loss is a done that goes on with the same game (EpisodicLifeEnv); gymnasium: it */       \
  /* ends the episode there and the next reset starts a new game (terminal_on_life_loss). */              \
  X(bool, episodic_life, true)                                                                             \
  X(bool, life_loss_info, false)            /* a life loss is reported as terminated, nothing resets */    \
  X(bool, reward_clipping, true)            /* reward -> sign(reward) */                                   \
  X(float, repeat_action_probability, 0.0f) /* ALE's own sticky actions (per frame, ALE's RNG) */          \
  X(double, action_repeat_probability, 0.0) /* SB3 StickyActionEnv (per frame, the env's numpy RNG) */     \
  X(bool, full_action_space, false)         /* all 18 actions instead of the game's minimal set */         \
  /* ALE truncates a game after this many frames; 0 = never (the ALE preset: frames since its reset) */   \
  X(int, max_num_frames_per_episode, 108000)                                                               \
  X(int, mode, -1)                          /* game mode (ALE setMode); -1 = the game's default */         \
  X(int, difficulty, -1)                    /* difficulty switch (ALE setDifficulty); -1 = the default */  \
  /* Frames per step of gymnasium's AtariEnv under SB3's wrappers: 1 for the NoFrameskip-v4 ids, 4 */     \
  /* for the v5 ids; with env_frameskip_max > env_frameskip, each step draws its count from */                 \
  /* integers(env_frameskip, env_frameskip_max) (plain *-v4 ids: 2..4). */                                \
  X(int, env_frameskip, 1)                                                                                 \
  X(int, env_frameskip_max, 0)                                                                             \
  X(ObsType, obs_type, ObsType::kProcessed) /* the chain's frames, or AtariEnv's own obs (no chain) */      \
  X(bool, ram_info, false)                  /* keep the RAM at each obs and each done (info["ram"]) */    \
  X(int, screen_height, 210)                /* the ROM's screen rows (options.py asks ALE): raw screens */ \
  /* The package's table (reset_table.py) vetted this env's resets for computing them ahead. */         \
  X(bool, reset_ahead, false)

struct EnvConfig {
#define SB3ALE_FIELD(type, name, value) type name = value;
  SB3ALE_ENV_CONFIG(SB3ALE_FIELD)
#undef SB3ALE_FIELD

  int channels() const { return grayscale ? 1 : 3; }
  int64_t frame_size() const {  // 64-bit: a config is sized before check_config() has seen it
    switch (obs_type) {
      case ObsType::kRGB:
        return int64_t{screen_height} * kScreenWidth * 3;
      case ObsType::kGrayscale:
        return int64_t{screen_height} * kScreenWidth;
      case ObsType::kRAM:
        return kRamSize;
      case ObsType::kProcessed:
        break;
    }
    return int64_t{img_height} * img_width * channels();
  }
  int64_t obs_size() const { return frame_size() * stack_num; }
};

/// Throws std::invalid_argument naming the first field out of its range, its value and what is
/// allowed: a config built directly (sb3_ale_vec._engine.EnvConfig) skips options.py's checks.
void check_config(const EnvConfig& config);

}  // namespace sb3ale
