"""The option table (sb3_ale_vec.options) against everything that repeats it: the front-ends'
signatures, the native EnvConfig, docs/options.md; and the checks it runs."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, _engine
from sb3_ale_vec.options import (OPTION_NAMES, OPTIONS, PRESETS, build_batch, check_bool, options_markdown,
                                 presets_markdown)

OPTIONS_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text()
# EnvConfig fields that no option names directly: set by build_batch from the front-end and preset.
DERIVED = {"rom_path", "preset", "layout", "pad_with_reset", "next_step_autoreset", "fire_reset", "env_frameskip_max",
           "screen_height", "reset_ahead"}
ENGINE_ONLY = {"num_threads", "thread_affinity_offset", "use_fire_reset"}  # not EnvConfig fields
FRONT_END_ONLY = {
    AleNativeVecEnv: {"game", "num_envs", "seed", "preset", "channels_last", "render_mode"},
    AleVectorEnv: {"game", "num_envs", "preset", "batch_size", "autoreset_mode", "stack_padding", "continuous",
                   "continuous_action_threshold", "render_mode", "true_scores"},
}


def test_every_config_field_is_an_option_or_derived_from_one():
    fields = {name for name in dir(_engine.EnvConfig) if not name.startswith("_")}
    assert fields == (set(OPTION_NAMES) - ENGINE_ONLY) | DERIVED


@pytest.mark.parametrize("front_end", [AleNativeVecEnv, AleVectorEnv])
def test_front_end_signatures_take_the_tables_names_and_defaults(front_end):
    params = dict(inspect.signature(front_end.__init__).parameters)
    params.pop("self")
    defaults = {o.name: o.default for o in OPTIONS}
    own = FRONT_END_ONLY[front_end]
    assert set(params) - own <= set(OPTION_NAMES), set(params) - own - set(OPTION_NAMES)
    for name, param in params.items():
        if name in defaults:
            assert param.default == defaults[name], (front_end.__name__, name, param.default, defaults[name])
    # Every option but SB3's own (env_frameskip, action_repeat_probability) reaches the Gymnasium facade.
    missing = set(OPTION_NAMES) - set(params)
    assert missing <= ({"env_frameskip", "action_repeat_probability"} if front_end is AleVectorEnv else set())


def test_the_ale_drop_in_takes_every_ale_option_by_the_tables_name():
    params = set(inspect.signature(AtariVectorEnv.__init__).parameters) - {"self", "game", "num_envs"}
    own = {"batch_size", "autoreset_mode", "continuous", "continuous_action_threshold"}
    # ALE's vector env has no SB3 sticky actions, env frame skip, mode, difficulty or obs_type (the preset forbids them).
    assert params - own == set(OPTION_NAMES) - {"action_repeat_probability", "env_frameskip", "mode", "difficulty",
                                                "obs_type"}


def test_readme_tables_are_made_from_the_table():
    assert options_markdown() in OPTIONS_PAGE
    assert presets_markdown() in OPTIONS_PAGE


@pytest.mark.parametrize("options, error, match", [
    ({"frameskip": 0}, ValueError, "frameskip must be >= 1"),
    ({"frameskip": 2.0}, TypeError, "frameskip must be an int"),
    ({"grayscale": 1}, TypeError, "grayscale must be a bool"),
    ({"repeat_action_probability": 1.5}, ValueError, r"repeat_action_probability must be in \[0.0, 1.0\]"),
    ({"env_frameskip": (3, 2)}, ValueError, "1 <= low < high"),
    ({"stack_size": 4}, TypeError, "unknown options"),
    ({"mode": -2}, ValueError, "mode must be >= 0"),
    ({"img_height": 5000}, ValueError, r"img_height must be in \[1, 4096\]"),
])
def test_bad_options_name_what_is_wrong(options, error, match):
    with pytest.raises(error, match=match):
        build_batch("pong", 2, "sb3", layout="chw", next_step_autoreset=False, **options)


@pytest.mark.parametrize("preset, options, match", [
    ("gymnasium", {"use_fire_reset": True}, "AtariPreprocessing has no fire reset"),
    ("gymnasium", {"action_repeat_probability": 0.1}, "StickyActionEnv"),
    ("ale", {"env_frameskip": 4}, "frame by frame"),
    ("ale", {"max_num_frames_per_episode": 0}, "limit >= 1"),
    ("sb3", {}, "next-step auto-reset needs"),
])
def test_each_preset_forbids_what_its_reference_cannot_do(preset, options, match):
    with pytest.raises(ValueError, match=match):
        build_batch("pong", 2, preset, layout="frames", next_step_autoreset=preset == "sb3", **options)


def test_none_options_take_the_presets_values():
    for name, spec in PRESETS.items():
        config = build_batch("breakout", 1, name, layout="frames", next_step_autoreset=False).configs[0]
        for option, value in spec.defaults.items():
            got = getattr(config, "fire_reset" if option == "use_fire_reset" else option)
            assert got == (True if value is None else value) or np.isclose(got, value), (name, option, got, value)


def test_the_native_configs_defaults_are_the_tables():
    # C++'s EnvConfig{} holds a default for every field: for options with one, it is the table's.
    config = _engine.EnvConfig()
    for option in OPTIONS:
        if option.default is None or option.name in ENGINE_ONLY or option.name == "env_frameskip":
            continue
        assert getattr(config, option.name) == option.default, option.name
    assert (config.env_frameskip, config.env_frameskip_max) == (1, 0)


def test_the_drop_ins_defaults_are_the_tables_for_the_ale_preset():
    # What AtariVectorEnv's signature writes out is what the table and PRESETS["ale"] give.
    params = inspect.signature(AtariVectorEnv.__init__).parameters
    for option in OPTIONS:
        if option.name not in params:
            continue
        expected = option.default if option.default is not None else PRESETS["ale"].defaults.get(option.name)
        assert params[option.name].default == expected, option.name


# A value other than the default for every option that is not a bool (bools are flipped): an option
# added to the table without one here fails the test below until its path is checked end to end.
SAMPLES = {"frameskip": 3, "img_height": 60, "img_width": 50, "stack_num": 2, "noop_max": 5,
           "repeat_action_probability": 0.5, "action_repeat_probability": 0.5, "max_num_frames_per_episode": 5000,
           "mode": 4, "difficulty": 1, "env_frameskip": 2, "num_threads": 1, "thread_affinity_offset": 0,
           "obs_type": "ram"}


@pytest.mark.slow  # an engine per option and front-end: 35 s
@pytest.mark.parametrize("front_end", [AleNativeVecEnv, AleVectorEnv, AtariVectorEnv])
def test_every_option_a_front_end_takes_reaches_the_native_config(front_end, monkeypatch):
    """One table row and one native field are all an option needs: each front-end hands it on."""
    built = []
    real = _engine.Vectorizer

    def recording(configs, num_threads, thread_affinity_offset, batch_size):
        built.append((configs[0], {"num_threads": num_threads, "thread_affinity_offset": thread_affinity_offset}))
        return real(configs, num_threads, thread_affinity_offset, batch_size)

    monkeypatch.setattr(_engine, "Vectorizer", recording)
    front_end("breakout", 1).close()
    default = built.pop()[0]
    taken = [o for o in OPTIONS if o.name in inspect.signature(front_end.__init__).parameters]
    assert taken
    for option in taken:
        field = "fire_reset" if option.name == "use_fire_reset" else option.name
        bool_option = option.check is check_bool
        assert bool_option or option.name in SAMPLES, f"add a sample value for the new option {option.name!r}"
        value = (not getattr(default, field)) if bool_option else SAMPLES[option.name]
        try:
            front_end("breakout", 1, **{option.name: value}).close()
        except ValueError as error:  # only a preset's own rule may refuse it
            assert "is not allowed with preset" in str(error), (option.name, error)
            continue
        config, engine_args = built.pop()
        got = engine_args[field] if field in engine_args else getattr(config, field)
        if isinstance(got, _engine.ObsType):
            got = got.name.lower()
        assert got == value or np.isclose(got, value), (front_end.__name__, option.name, got, value)


def test_games_with_different_action_sets_are_refused_naming_each_set():
    """Pong and Pooyan both have 6 actions, but not the same 6: the error lists each game's actions as
    gymnasium's AtariEnv names them, and full_action_space=True (18 for both) is allowed."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    meanings = {}
    for game in ("Pong", "Pooyan"):
        env = gym.make(f"ALE/{game}-v5")
        meanings[game.lower()] = env.unwrapped.get_action_meanings()
        env.close()
    assert len(meanings["pong"]) == len(meanings["pooyan"]) and meanings["pong"] != meanings["pooyan"]
    with pytest.raises(ValueError) as error:
        build_batch(["pong", "pooyan"], 2, "gymnasium", layout="frames", next_step_autoreset=True)
    for game, names in meanings.items():
        assert f"{game}: {', '.join(names)}" in str(error.value)
    assert "full_action_space=True" in str(error.value)
    assert len(build_batch(["pong", "pooyan"], 2, "gymnasium", layout="frames", next_step_autoreset=True,
                           full_action_space=True).action_meanings) == 18
