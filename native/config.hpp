// Every engine option, its unit and its default: the only copy (validated in Python, options.py).
#pragma once

#include <string>

namespace sb3ale {

constexpr int kScreenHeight = 210;  ///< every ALE game renders 210 x 160
constexpr int kScreenWidth = 160;

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

struct EnvConfig {
  std::string rom_path;                 ///< ROM file, from the installed ale-py wheel
  int frameskip = 4;                    ///< emulator frames per agent step (action repeat)
  bool maxpool = true;                  ///< max over the last two frames of a skip (SB3 MaxAndSkipEnv)
  bool grayscale = true;                ///< OpenCV RGB2GRAY of the pooled RGB frame, else RGB
  int img_height = 84;                  ///< observation height, OpenCV INTER_AREA resize
  int img_width = 84;                   ///< observation width
  int stack_num = 4;                    ///< frames per observation, newest last, zero-padded
  Layout layout = Layout::kCHW;
  bool pad_with_reset = false;          ///< pad a fresh stack with the reset frame, not zeros
  Preset preset = Preset::kSB3;
  bool next_step_autoreset = false;     ///< reset on the step after a done (gymnasium NEXT_STEP)
  int noop_max = 30;                    ///< no-op frames 1..noop_max after a real reset (ALE: 0..noop_max-1); 0 = none
  bool fire_reset = true;               ///< FIRE then action 2 after every reset and life loss (ALE: one FIRE frame)
  /// SB3: a life loss is a done that continues the same game (EpisodicLifeEnv). Gymnasium: a life
  /// loss terminates the episode at that frame, the next reset starts a new game (terminal_on_life_loss).
  bool episodic_life = true;
  bool life_loss_info = false;          ///< a life loss is reported as terminated, without any reset
  bool reward_clipping = true;          ///< reward -> sign(reward)
  float repeat_action_probability = 0;  ///< ALE's own sticky actions (per frame, ALE's RNG)
  double action_repeat_probability = 0; ///< SB3 StickyActionEnv (per frame, the env's numpy RNG)
  bool full_action_space = false;       ///< all 18 actions instead of the game's minimal set
  int max_num_frames_per_episode = 108000;  ///< ALE truncates a game after this many frames; 0 = never
                                            ///< (the ALE preset counts frames since its reset, >= 1)
  int mode = -1;                        ///< game mode (ALE setMode); -1 = the game's default
  int difficulty = -1;                  ///< difficulty switch (ALE setDifficulty); -1 = the default
  /// Frames per step of gymnasium's AtariEnv itself, below all of SB3's wrappers: 1 for the
  /// *NoFrameskip-v4 ids, 4 for ALE/*-v5. When env_frameskip_max > env_frameskip, every AtariEnv
  /// step draws its count from integers(env_frameskip, env_frameskip_max) (plain *-v4 ids: 2..4).
  int env_frameskip = 1;
  int env_frameskip_max = 0;

  int channels() const { return grayscale ? 1 : 3; }
  int frame_size() const { return img_height * img_width * channels(); }
  int obs_size() const { return frame_size() * stack_num; }
};

}  // namespace sb3ale
