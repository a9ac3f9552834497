"""Engine options, validated once for both front-ends; one game per env allowed (multi-task batches)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ale_py
import numpy as np

from sb3_ale_vec import _engine
from sb3_ale_vec.games import rom_id, rom_path

# What each preset reproduces, where an option is left as None:
# - "sb3": AtariWrapper(AtariEnv("<Game>NoFrameskip-v4")) + VecFrameStack(4) (+ VecTransposeImage)
# - "gymnasium": FrameStackObservation(AtariPreprocessing(gym.make("ALE/<Game>-v5", frameskip=1)), 4,
#   padding_type="zero")
PRESET_DEFAULTS: dict[str, dict[str, Any]] = {
    "sb3": {"episodic_life": True, "reward_clipping": True, "repeat_action_probability": 0.0},
    "gymnasium": {"episodic_life": False, "reward_clipping": False, "repeat_action_probability": 0.25,
                  "use_fire_reset": False},
}
LAYOUTS = {"chw": _engine.Layout.CHW, "hwc": _engine.Layout.HWC, "frames": _engine.Layout.FRAMES}


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_float(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return float(value)


def check_actions(actions: Any, count: int, n: int, column_ok: bool = False) -> np.ndarray:
    """Action indices in [0, n), shape (count,) (or (count, 1) if column_ok), as a fresh int64 copy:
    the step may run on after the caller returns."""
    array = np.asarray(actions)
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"actions must be integers (action indices), got dtype {array.dtype}")
    shapes = ((count,), (count, 1)) if column_ok else ((count,),)
    if array.shape not in shapes:
        raise ValueError(f"actions must have shape {' or '.join(map(str, shapes))}, got {array.shape}")
    array = array.reshape(count).astype(np.int64)
    bad = np.flatnonzero((array < 0) | (array >= n))
    if bad.size:
        raise ValueError(f"action {array[bad[0]]} (row {bad[0]}) is out of range: allowed 0..{n - 1}")
    return array


def seed_words(seed: Any) -> list[int] | None:
    """A seed as numpy's SeedSequence reads it: 32-bit words, least significant first."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"a seed must be a non-negative int or None, got {type(seed).__name__}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"a seed must be a non-negative int or None, got {seed}")
    words = []
    while True:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
        if not seed:
            return words


@dataclass
class Batch:
    """The validated configs of a batch, one per env, and what the front-ends show of them."""

    configs: list[Any]            # per env: ROM and fire reset (AtariWrapper decides per game)
    games: list[str]              # ROM id per env
    action_meanings: list[str]    # shared by every env


def games_for(game: str | Sequence[str], num_envs: int) -> list[str]:
    if isinstance(game, str):
        return [rom_id(game)] * num_envs
    if not isinstance(game, Sequence) or len(game) != num_envs:
        raise ValueError(f"game must be one name or a list of num_envs={num_envs} names, got {game!r}")
    return [rom_id(g) for g in game]


def build_batch(game: str | Sequence[str], num_envs: int, *, preset: str, frameskip: int, maxpool: bool,
                grayscale: bool, img_height: int, img_width: int, stack_num: int, layout: str,
                pad_with_reset: bool, noop_max: int, use_fire_reset: bool | None, episodic_life: bool | None,
                life_loss_info: bool, reward_clipping: bool | None, repeat_action_probability: float | None,
                action_repeat_probability: float, full_action_space: bool, continuous: bool,
                max_num_frames_per_episode: int, mode: int | None, difficulty: int | None,
                env_frameskip: int | tuple[int, int], next_step_autoreset: bool) -> Batch:
    if preset not in PRESET_DEFAULTS:
        raise ValueError(f"Unknown preset {preset!r}; allowed: {', '.join(PRESET_DEFAULTS)}")
    defaults = PRESET_DEFAULTS[preset]
    games = games_for(game, num_envs)
    full_action_space = check_bool("full_action_space", full_action_space)
    continuous = check_bool("continuous", continuous)
    # Continuous actions address ALE's whole action set, as gymnasium's AtariEnv does.
    action_sets = {g: _engine.action_set(rom_path(g), full_action_space or continuous) for g in set(games)}
    meanings = {g: [ale_py.Action(a).name for a in ids] for g, ids in action_sets.items()}
    if len({tuple(m) for m in meanings.values()}) > 1:
        raise ValueError("these games have different action sets: "
                         + "; ".join(f"{g}: {len(m)} actions" for g, m in sorted(meanings.items()))
                         + ". Use full_action_space=True to give every game all 18 actions.")

    base = _engine.EnvConfig()
    base.preset = _engine.Preset.SB3 if preset == "sb3" else _engine.Preset.GYMNASIUM
    base.frameskip = check_int("frameskip", frameskip, 1)
    base.maxpool = check_bool("maxpool", maxpool)
    base.grayscale = check_bool("grayscale", grayscale)
    base.img_height = check_int("img_height", img_height, 1, 4096)
    base.img_width = check_int("img_width", img_width, 1, 4096)
    base.stack_num = check_int("stack_num", stack_num, 1)
    if layout not in LAYOUTS:
        raise ValueError(f"Unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")
    base.layout = LAYOUTS[layout]
    base.pad_with_reset = check_bool("pad_with_reset", pad_with_reset)
    base.noop_max = check_int("noop_max", noop_max, 0)
    base.full_action_space = full_action_space or continuous
    base.episodic_life = check_bool("episodic_life", defaults["episodic_life"] if episodic_life is None
                                    else episodic_life)
    base.life_loss_info = check_bool("life_loss_info", life_loss_info)
    base.reward_clipping = check_bool("reward_clipping", defaults["reward_clipping"] if reward_clipping is None
                                      else reward_clipping)
    base.repeat_action_probability = check_float(
        "repeat_action_probability",
        defaults["repeat_action_probability"] if repeat_action_probability is None else repeat_action_probability,
        0.0, 1.0)
    base.action_repeat_probability = check_float("action_repeat_probability", action_repeat_probability, 0.0, 1.0)
    base.max_num_frames_per_episode = check_int("max_num_frames_per_episode", max_num_frames_per_episode, 0)
    base.mode = -1 if mode is None else check_int("mode", mode, 0)
    base.difficulty = -1 if difficulty is None else check_int("difficulty", difficulty, 0)
    if isinstance(env_frameskip, tuple):
        if len(env_frameskip) != 2 or not 1 <= env_frameskip[0] < env_frameskip[1]:
            raise ValueError(f"env_frameskip as a range must be (low, high) with 1 <= low < high, got {env_frameskip}")
        base.env_frameskip = check_int("env_frameskip[0]", env_frameskip[0], 1)
        base.env_frameskip_max = check_int("env_frameskip[1]", env_frameskip[1], 2)
    else:
        base.env_frameskip = check_int("env_frameskip", env_frameskip, 1)
    base.next_step_autoreset = check_bool("next_step_autoreset", next_step_autoreset)
    if base.next_step_autoreset and preset == "sb3":
        raise ValueError("SB3's VecEnv contract resets in the same step: next-step auto-reset needs preset='gymnasium'")
    if base.preset == _engine.Preset.GYMNASIUM and base.action_repeat_probability > 0:
        raise ValueError("action_repeat_probability is SB3's StickyActionEnv: with preset='gymnasium' use "
                         "repeat_action_probability (ALE's own sticky actions)")
    if use_fire_reset is None and "use_fire_reset" in defaults:
        use_fire_reset = defaults["use_fire_reset"]
    if use_fire_reset is not None:
        use_fire_reset = check_bool("use_fire_reset", use_fire_reset)
        if use_fire_reset and base.preset == _engine.Preset.GYMNASIUM:
            raise ValueError("AtariPreprocessing has no fire reset: use_fire_reset=True needs preset='sb3'")

    configs = []
    for g in games:
        actions = meanings[g]
        has_fire = "FIRE" in actions  # AtariWrapper's test for FireResetEnv
        env_fire = has_fire if use_fire_reset is None else use_fire_reset
        if env_fire and (len(actions) < 3 or actions[1] != "FIRE"):
            raise ValueError(f"use_fire_reset=True needs FIRE as action 1 and 3+ actions; {g} has {actions}")
        config = _engine.EnvConfig(base)
        config.rom_path = rom_path(g)
        config.fire_reset = env_fire
        configs.append(config)
    return Batch(configs, games, meanings[games[0]])
