"""Every engine option once: its check, its default and its meaning (the OPTIONS table), and each
preset once (PRESETS: the defaults it gives the options left as None, its layouts, what it forbids).
build_batch turns a front-end's options into one validated config per env."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import ale_py
import gymnasium
import numpy as np

from sb3_ale_vec import _engine, reset_table
from sb3_ale_vec.games import rom_id, rom_path
from sb3_ale_vec.obs_types import check_obs_type, raw_values


class OptionValueError(gymnasium.error.Error, ValueError):
    """An option out of its range: a ``ValueError``, and a ``gymnasium.error.Error`` as gymnasium's
    ``AtariEnv`` and ale-py raise for a bad ``frameskip``."""


class OptionTypeError(gymnasium.error.Error, TypeError):
    """An option of the wrong type: a ``TypeError``, and a ``gymnasium.error.Error`` (see above)."""


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise OptionTypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise OptionValueError(f"{name} must be {allowed}, got {value}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise OptionTypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_float(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise OptionTypeError(f"{name} must be a float, got {type(value).__name__}")
    if not low <= value <= high:
        raise OptionValueError(f"{name} must be in [{low}, {high}], got {value}")
    return float(value)


def _int(low: int, high: int | None = None) -> Callable[[str, Any], int]:
    return lambda name, value: check_int(name, value, low, high)


def _optional_int(name: str, value: Any) -> int:
    return -1 if value is None else check_int(name, value, 0)


def _probability(name: str, value: Any) -> float:
    return check_float(name, value, 0.0, 1.0)


def _env_frameskip(name: str, value: Any) -> tuple[int, int]:
    """An int, or a (low, high) range drawn every step as plain ``*-v4`` ids do: (env_frameskip, env_frameskip_max)."""
    if isinstance(value, tuple):
        if len(value) != 2 or not all(isinstance(v, (int, np.integer)) for v in value) or not 1 <= value[0] < value[1]:
            raise OptionValueError(f"{name} as a range must be (low, high) with 1 <= low < high, got {value}")
        return int(value[0]), int(value[1])
    return check_int(name, value, 1), 0


@dataclass(frozen=True)
class Option:
    """One engine option. ``default`` None means "the preset's value" (PRESETS). ``wrapper`` and
    ``atari_env`` are its names among SB3 ``AtariWrapper``'s and gymnasium ``AtariEnv``'s keywords
    (``make_ale_vec_env`` takes those)."""

    name: str
    check: Callable[[str, Any], Any]
    default: Any
    meaning: str
    wrapper: str | None = None
    atari_env: str | None = None


OPTIONS: tuple[Option, ...] = (
    Option("frameskip", _int(1), 4, "emulator frames per agent step (SB3 `frame_skip`)", wrapper="frame_skip"),
    Option("maxpool", check_bool, True, "max over the last two frames of a skip: in RGB before the gray conversion (sb3), in gray (gymnasium, ale)"),
    Option("grayscale", check_bool, True, "gray observations (sb3: OpenCV `RGB2GRAY`; gymnasium, ale: ALE's palette), else RGB"),
    Option("img_height", _int(1, 4096), 84, "observation height, OpenCV `INTER_AREA` resize"),
    Option("img_width", _int(1, 4096), 84, "observation width"),
    Option("stack_num", _int(1), 4, "frames per observation, newest last, zero-padded after every reset"),
    Option("noop_max", _int(0), 30, "a real reset plays 1..`noop_max` no-ops (ale: 0..`noop_max`-1, less the FIRE frame); 0 turns them off", wrapper="noop_max"),
    Option("use_fire_reset", check_bool, None, "sb3: FIRE, then action 2, after every reset and life loss (None: when the game has FIRE); ale: one FIRE frame at reset"),
    Option("episodic_life", check_bool, None, "a life loss ends the episode: sb3 goes on with the same game (`EpisodicLifeEnv`), gymnasium and ale start a new one", wrapper="terminal_on_life_loss"),
    Option("life_loss_info", check_bool, False, "a life loss is reported as terminated (a done), and nothing resets, not even the frame stack"),
    Option("reward_clipping", check_bool, None, "rewards become their sign (SB3 `clip_reward`)", wrapper="clip_reward"),
    Option("repeat_action_probability", _probability, None, "ALE's own sticky actions (`ALE/*-v5` uses 0.25)", atari_env="repeat_action_probability"),
    Option("action_repeat_probability", _probability, 0.0, "SB3's `StickyActionEnv` (sb3 preset only)", wrapper="action_repeat_probability"),
    Option("full_action_space", check_bool, False, "all 18 actions", atari_env="full_action_space"),
    Option("max_num_frames_per_episode", _int(0), 108_000, "ALE truncates a game after this many frames (`TimeLimit.truncated`); 0 means never (ale: frames since the reset, >= 1)", atari_env="max_num_frames_per_episode"),
    Option("mode", _optional_int, None, "game mode (None: the game's default)", atari_env="mode"),
    Option("difficulty", _optional_int, None, "game difficulty (None: the game's default)", atari_env="difficulty"),
    Option("env_frameskip", _env_frameskip, 1, "the frame skip of gymnasium's `AtariEnv` under SB3's wrappers: 4 as in `ALE/*-v5`, `(2, 5)` as in plain `*-v4` (sb3 only)", atari_env="frameskip"),
    Option("obs_type", check_obs_type, None, "None: the preset's processed frames; `\"rgb\"`, `\"grayscale\"` or `\"ram\"`: gymnasium `AtariEnv`'s own observations (`(210, 160, 3)`, `(210, 160)`, `(128,)`), with no preprocessing and no stack, `frameskip` its own frame skip ([observation types](faithfulness.md#observation-types)); not with the ale preset", atari_env="obs_type"),
    Option("ram_info", check_bool, False, "`info[\"ram\"]`: the RAM (128 uint8) at each observation's frame, and at each final one (sb3: `info[\"terminal_ram\"]` beside `terminal_observation`; gymnasium `SAME_STEP`: `final_info[\"ram\"]`; ale `SAME_STEP`: `info[\"final_ram\"]`)"),
    Option("num_threads", _int(0), 0, "threads that step envs, the caller's included (it steps envs while it waits for a batch); 0 means one per CPU this process may run on (its affinity mask: what Ray, Kubernetes or Slurm give it), at most `num_envs`"),
    Option("thread_affinity_offset", _int(-1), -1, "pins worker t to core `offset + t` (the caller's thread is left as it is); -1 turns pinning off"),
)
OPTION_NAMES = tuple(option.name for option in OPTIONS)


def table_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """The table's options among a front-end's arguments (``locals()`` of its explicit, documented
    signature), for ``build_batch``: a new option reaches every front-end that names it."""
    return {name: arguments[name] for name in OPTION_NAMES if name in arguments}


@dataclass(frozen=True)
class PresetSpec:
    """One preset: whose pipeline it reproduces and what that means for the options."""

    native: Any                  # _engine.Preset
    defaults: dict[str, Any]     # values of the options left as None
    sb3_layout: str              # observation layout behind SB3's VecEnv API
    gym_layout: str              # behind Gymnasium's VectorEnv API
    forbids: tuple[tuple[str, Callable[[Any], bool], str], ...] = field(default=())  # (option, is_bad, why)


PRESETS: dict[str, PresetSpec] = {
    # AtariWrapper(AtariEnv("<Game>NoFrameskip-v4")) + VecFrameStack(4) (+ VecTransposeImage)
    "sb3": PresetSpec(_engine.Preset.SB3, {"episodic_life": True, "reward_clipping": True,
                                           "repeat_action_probability": 0.0, "use_fire_reset": None}, "chw", "chw"),
    # FrameStackObservation(AtariPreprocessing(gym.make("ALE/<Game>-v5", frameskip=1)), 4, padding_type="zero")
    "gymnasium": PresetSpec(
        _engine.Preset.GYMNASIUM, {"episodic_life": False, "reward_clipping": False,
                                   "repeat_action_probability": 0.25, "use_fire_reset": False}, "frames", "frames",
        (("use_fire_reset", bool, "AtariPreprocessing has no fire reset"),
         ("action_repeat_probability", bool, "it is SB3's StickyActionEnv: use repeat_action_probability, ALE's own"),
         ("env_frameskip", lambda v: v != (1, 0), "AtariPreprocessing needs AtariEnv(frameskip=1)"))),
    # ale_py.vector_env.AtariVectorEnv(game, num_envs)
    "ale": PresetSpec(
        _engine.Preset.ALE, {"episodic_life": False, "reward_clipping": True, "repeat_action_probability": 0.0,
                             "use_fire_reset": True}, "frames", "frames",
        (("action_repeat_probability", bool, "it is SB3's StickyActionEnv: use repeat_action_probability, ALE's own"),
         ("env_frameskip", lambda v: v != (1, 0), "ALE's vector env steps the emulator frame by frame"),
         ("max_num_frames_per_episode", lambda v: v == 0, "ALE's vector env counts frames against a limit >= 1"),
         ("mode", lambda v: v != -1, "ALE's vector env plays the default mode"),
         ("difficulty", lambda v: v != -1, "ALE's vector env plays the default difficulty"))),
}
LAYOUTS = {"chw": _engine.Layout.CHW, "hwc": _engine.Layout.HWC, "frames": _engine.Layout.FRAMES}


def check_actions(actions: Any, count: int, n: int, column_ok: bool = False) -> np.ndarray:
    """Action indices in [0, n), shape (count,) (or (count, 1) if column_ok), as a fresh int64 copy:
    the step may run on after the caller returns."""
    array = np.asarray(actions)
    if array.dtype.kind not in "iu":  # numpy's integers (bool is "b"); on every step: no issubdtype
        raise TypeError(f"actions must be integers (action indices), got dtype {array.dtype}")
    shapes = ((count,), (count, 1)) if column_ok else ((count,),)
    if array.shape not in shapes:
        raise ValueError(f"actions must have shape {' or '.join(map(str, shapes))}, got {array.shape}")
    array = array.reshape(count).astype(np.int64)
    if (array.view(np.uint64) >= n).any():  # one comparison: a negative index wraps above n
        bad = np.flatnonzero((array < 0) | (array >= n))
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

    configs: list[Any]            # per env: ROM and fire reset (decided per game)
    games: list[str]              # ROM id per env
    action_meanings: list[str]    # shared by every env
    num_threads: int
    thread_affinity_offset: int
    preset: str


# ALE's own seeds are C ints: the ale preset takes seeds up to this.
ALE_MAX_SEED = 2**31 - 1


def games_for(game: str | Sequence[str], num_envs: int) -> list[str]:
    if isinstance(game, str):
        return [rom_id(game)] * num_envs
    if not isinstance(game, Sequence) or len(game) != num_envs:
        raise ValueError(f"game must be one name or a list of num_envs={num_envs} names, got {game!r}")
    return [rom_id(g) for g in game]


def check_preset(preset: Any) -> PresetSpec:
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}; allowed: {', '.join(PRESETS)}")
    return PRESETS[preset]


@lru_cache(maxsize=None)
def _screen_height(path: str) -> int:
    return _engine.screen_height(path)  # loads the ROM once a process


def build_batch(game: str | Sequence[str], num_envs: int, preset: str, *, layout: str, next_step_autoreset: bool,
                pad_with_reset: bool = False, continuous: bool = False, **options: Any) -> Batch:
    """Validate a front-end's options (names of OPTIONS; missing ones take the table's default, None
    ones the preset's) into one EnvConfig per env. Raises TypeError/ValueError naming what is wrong."""
    spec = check_preset(preset)
    unknown = set(options) - set(OPTION_NAMES)
    if unknown:
        raise TypeError(f"unknown options {sorted(unknown)}; allowed: {', '.join(OPTION_NAMES)}")
    values: dict[str, Any] = {}
    for option in OPTIONS:
        value = options.get(option.name, option.default)
        if value is None:
            value = spec.defaults.get(option.name)
        unset = value is None and option.name in ("use_fire_reset", "obs_type")  # None has a meaning of its own
        values[option.name] = value if unset else option.check(option.name, value)
    for name, is_bad, why in spec.forbids:
        if is_bad(values[name]):
            raise OptionValueError(f"{name}={options.get(name)!r} is not allowed with preset={preset!r}: {why}")
    if values["obs_type"] is not None:  # AtariEnv alone: the preprocessing options mean nothing
        values = raw_values(values, options, {o.name: o.default for o in OPTIONS}, preset)
        layout = "frames"  # one frame as AtariEnv returns it
    if next_step_autoreset and preset == "sb3":
        raise ValueError("SB3's chain resets in the same step: next-step auto-reset needs preset='gymnasium' or 'ale'")
    games = games_for(game, num_envs)
    full_action_space = values["full_action_space"] or check_bool("continuous", continuous)
    # Continuous actions address ALE's whole action set, as gymnasium's AtariEnv does.
    action_sets = {g: _engine.action_set(rom_path(g), full_action_space) for g in set(games)}
    meanings = {g: [ale_py.Action(a).name for a in ids] for g, ids in action_sets.items()}
    if len({tuple(m) for m in meanings.values()}) > 1:
        raise ValueError("these games have different action sets: "
                         + "; ".join(f"{g}: {', '.join(m)}" for g, m in sorted(meanings.items()))
                         + ". Use full_action_space=True to give every game all 18 actions.")
    if layout not in LAYOUTS:
        raise ValueError(f"Unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")

    base = _engine.EnvConfig()
    base.preset = spec.native
    base.layout = LAYOUTS[layout]
    base.next_step_autoreset = check_bool("next_step_autoreset", next_step_autoreset)
    base.pad_with_reset = check_bool("pad_with_reset", pad_with_reset)
    for name, value in values.items():
        if name == "env_frameskip":
            base.env_frameskip, base.env_frameskip_max = value
        elif name == "obs_type":
            base.obs_type = _engine.ObsType.PROCESSED if value is None else _engine.ObsType.__members__[value.upper()]
        elif name == "full_action_space":
            base.full_action_space = full_action_space
        elif name not in ("use_fire_reset", "num_threads", "thread_affinity_offset"):
            setattr(base, name, value)
    configs = []
    for g in games:
        actions = meanings[g]
        fire = values["use_fire_reset"]
        if preset == "ale":  # ALE presses FIRE whenever its action set has it
            fire = fire and "FIRE" in actions
        else:
            fire = "FIRE" in actions if fire is None else fire  # AtariWrapper's test for FireResetEnv
            if fire and (len(actions) < 3 or actions[1] != "FIRE"):
                raise ValueError(f"use_fire_reset=True needs FIRE as action 1 and 3+ actions; {g} has {actions}")
            # NoopResetEnv and AtariPreprocessing refuse this too: their no-ops play action 0.
            if values["noop_max"] > 0 and actions[0] != "NOOP":
                raise ValueError(f"noop_max={values['noop_max']} needs NOOP as action 0, as AtariPreprocessing's "
                                 f"no-ops do; {g} has {actions}: pass noop_max=0")
        config = _engine.EnvConfig(base)
        config.rom_path = rom_path(g)
        if values["obs_type"] in ("rgb", "grayscale"):  # AtariEnv's screen: the ROM's own rows
            config.screen_height = _screen_height(config.rom_path)
        config.fire_reset = fire
        config.reset_ahead = reset_table.vetted(g, config.mode, config.difficulty, config.repeat_action_probability > 0)
        configs.append(config)
    heights = {g: c.screen_height for g, c in zip(games, configs)}
    if len(set(heights.values())) > 1:
        raise ValueError(f"obs_type={values['obs_type']!r} observes whole screens, and these games' differ in "
                         f"rows: {dict(sorted(heights.items()))}; one batch needs one observation shape")
    return Batch(configs, games, meanings[games[0]], values["num_threads"], values["thread_affinity_offset"], preset)


def options_markdown() -> str:
    """docs/options.md's table of engine options, made from OPTIONS (a test keeps that page equal to it)."""
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for o in OPTIONS:
        own_none = o.name in ("mode", "difficulty", "obs_type")  # None is a value of theirs, not the preset's
        default = "the preset's" if o.default is None and not own_none else f"`{o.default!r}`"
        rows.append(f"| `{o.name}` | {default} | {o.meaning} |")
    return "\n".join(rows)


def presets_markdown() -> str:
    """docs/options.md's table of what each preset gives the options left as None, made from PRESETS."""
    names = sorted({key for spec in PRESETS.values() for key in spec.defaults})
    rows = ["| option | " + " | ".join(f"`{p}`" for p in PRESETS) + " |", "|---" * (len(PRESETS) + 1) + "|"]
    for name in names:
        cells = []
        for spec in PRESETS.values():
            value = spec.defaults.get(name)
            cells.append("when the game has FIRE" if value is None else f"`{value!r}`")
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)
