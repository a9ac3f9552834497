"""The option table (sb3_ale_vec.options) against everything that repeats it: the front-ends'
signatures, the native EnvConfig, docs/options.md; and the checks it runs."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, _engine
from sb3_ale_vec.options import OPTION_NAMES, OPTIONS, PRESETS, build_batch, options_markdown, presets_markdown

OPTIONS_PAGE = (Path(__file__).parents[1] / "docs" / "options.md").read_text()
# EnvConfig fields that no option names directly: set by build_batch from the front-end and preset.
DERIVED = {"rom_path", "preset", "layout", "pad_with_reset", "next_step_autoreset", "fire_reset", "env_frameskip_max"}
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
    # ALE's vector env has no SB3 sticky actions, env frame skip, mode or difficulty (the preset forbids them).
    assert params - own == set(OPTION_NAMES) - {"action_repeat_probability", "env_frameskip", "mode", "difficulty"}


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
