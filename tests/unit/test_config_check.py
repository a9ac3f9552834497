"""The native EnvConfig held to its ranges by the engine itself (native/config_check.cpp): options.py
checks what users pass, but sb3_ale_vec._engine.EnvConfig can be built and handed to the engine
directly. Out of range there, stack_num=0 once divided by zero (SIGFPE) and AtariEnv's own RGB
observation with more than one frame, or laid out HWC, wrote past its row (SIGSEGV); each bad value
is now a ValueError naming the field, the value and what is allowed."""

from __future__ import annotations

import math
import re

import cv2
import gymnasium as gym
import numpy as np
import pytest
from helpers import compare_rollouts, make_reference
from stable_baselines3.common import atari_wrappers

from sb3_ale_vec import AleNativeVecEnv, _engine
from sb3_ale_vec.games import rom_path

E = _engine

ONE_FRAME = r"1 with obs_type RGB, GRAYSCALE or RAM \(AtariEnv's own observation: one frame\)"
# (fields set, the field the error names, the allowed range it states)
BAD = [
    ({"frameskip": 0}, "frameskip", ">= 1"),
    ({"img_height": 0}, "img_height", r"in \[1, 4096\]"),
    ({"img_width": -3}, "img_width", r"in \[1, 4096\]"),
    ({"img_height": 5000}, "img_height", r"in \[1, 4096\]"),
    ({"stack_num": 0}, "stack_num", ">= 1"),
    ({"stack_num": -2}, "stack_num", ">= 1"),
    ({"obs_type": E.ObsType.RGB, "stack_num": 4}, "stack_num", ONE_FRAME),
    ({"obs_type": E.ObsType.RAM, "stack_num": 2}, "stack_num", ONE_FRAME),
    ({"img_height": 4096, "img_width": 4096, "grayscale": False, "stack_num": 50}, "stack_num",
     r"small enough that an observation \(2516582400 bytes\) stays under 2\^31 bytes"),
    # Sizes past int's range: checked before the engine sizes anything (else its frame size overflows,
    # an undefined int, and its resize is built for 2^31 rows first).
    ({"img_height": 2**31 - 1, "img_width": 2**31 - 1}, "img_height", r"in \[1, 4096\]"),
    ({"img_height": 4096, "img_width": 4096, "grayscale": False, "stack_num": 2**31 - 1}, "stack_num",
     r"small enough that an observation \(108086391006560256 bytes\) stays under 2\^31 bytes"),
    ({"layout": E.Layout(3)}, "layout", r"in \[0, 2\]"),
    ({"preset": E.Preset(-1)}, "preset", r"in \[0, 2\]"),
    ({"obs_type": E.ObsType(4)}, "obs_type", r"in \[0, 3\]"),
    ({"noop_max": -1}, "noop_max", ">= 0"),
    ({"repeat_action_probability": 1.5}, "repeat_action_probability", r"in \[0, 1\]"),
    ({"repeat_action_probability": -0.25}, "repeat_action_probability", r"in \[0, 1\]"),
    ({"action_repeat_probability": math.nan}, "action_repeat_probability", r"in \[0, 1\]"),
    ({"max_num_frames_per_episode": -1}, "max_num_frames_per_episode", ">= 0"),
    ({"preset": E.Preset.ALE, "max_num_frames_per_episode": 0}, "max_num_frames_per_episode", ">= 1 with preset ALE"),
    ({"mode": -2}, "mode", ">= -1"),
    ({"difficulty": -7}, "difficulty", ">= -1"),
    ({"env_frameskip": 0}, "env_frameskip", ">= 1"),
    ({"env_frameskip": 4, "env_frameskip_max": 3}, "env_frameskip_max", r"0 \(a fixed frame skip\) or > env_frameskip \(4\)"),
    ({"env_frameskip_max": -1}, "env_frameskip_max", r"0 \(a fixed frame skip\) or > env_frameskip \(1\)"),
    ({"screen_height": 0}, "screen_height", r"in \[200, 300\]"),
    ({"screen_height": 1000}, "screen_height", r"in \[200, 300\]"),
]


def config(**fields) -> _engine.EnvConfig:
    c = _engine.EnvConfig()
    c.rom_path = rom_path("pong")
    for name, value in fields.items():
        setattr(c, name, value)
    return c


@pytest.mark.parametrize("fields, field, allowed", BAD, ids=[" ".join(f"{k}={v}" for k, v in b[0].items()) for b in BAD])
def test_a_field_out_of_range_is_a_value_error_naming_it(fields, field, allowed):
    value = getattr(config(**fields), field)
    shown = int(value) if isinstance(value, (E.Layout, E.Preset, E.ObsType)) else value
    message = rf"EnvConfig\.{field} must be {allowed}, got {re.escape(str(shown))}$"
    with pytest.raises(ValueError, match=message):
        _engine.Vectorizer([config(**fields)], num_threads=1)
    with pytest.raises(ValueError, match=message):  # after a good config too: every env's is checked
        _engine.Vectorizer([config(), config(**fields)], num_threads=1)
    with pytest.raises(ValueError, match=message):
        _engine.obs_shape(config(**fields))


def test_the_bounds_themselves_are_allowed():
    edges = [{"img_height": 1, "img_width": 4096, "stack_num": 1}, {"noop_max": 0, "mode": -1, "difficulty": -1},
             {"repeat_action_probability": 1.0, "action_repeat_probability": 0.0}, {"env_frameskip": 2, "env_frameskip_max": 5},
             {"screen_height": 200, "max_num_frames_per_episode": 0}, {"preset": E.Preset.ALE, "max_num_frames_per_episode": 1}]
    for fields in edges:
        engine = _engine.Vectorizer([config(**fields)], num_threads=1)
        assert engine.obs_shape == _engine.obs_shape(config(**fields))
        engine.close()


@pytest.mark.parametrize("layout", ["CHW", "HWC", "FRAMES"])
@pytest.mark.parametrize("grayscale, size", [(True, 84), (False, 84), (False, 400)])
def test_atari_envs_own_rgb_observation_is_the_screen_in_any_layout(layout, grayscale, size):
    # The frame stack once laid AtariEnv's (210, 160, 3) screen out as an img_height x img_width image:
    # HWC gave wrong bytes, and past the screen's 210 * 160 pixels it read and wrote out of bounds.
    engine = _engine.Vectorizer([config(obs_type=E.ObsType.RGB, stack_num=1, layout=E.Layout.__members__[layout], grayscale=grayscale,
                                        img_height=size, img_width=size)], num_threads=1)
    engine.send_reset([[3]])
    for t in range(30):
        obs = engine.recv()["obs"][0]
        assert obs.shape == (210, 160, 3) and np.array_equal(obs, engine.screen_rgb(0)), t
        engine.send(np.full(1, t % 6, np.int64))
    engine.recv()
    engine.close()


class RgbWarpFrame(atari_wrappers.WarpFrame):
    """WarpFrame without its gray conversion: cv2.resize(INTER_AREA) of the max-pooled RGB frame."""

    size = (300, 250)  # (height, width): bigger than the 210 x 160 screen

    def __init__(self, env: gym.Env, width: int = 84, height: int = 84) -> None:
        super().__init__(env, width=self.size[1], height=self.size[0])
        self.observation_space = gym.spaces.Box(0, 255, (*self.size, 3), np.uint8)

    def observation(self, frame: np.ndarray) -> np.ndarray:
        return cv2.resize(frame, (self.width, self.height), interpolation=cv2.INTER_AREA)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_rgb_bigger_than_the_screen_equals_sb3s_chain_with_an_rgb_warp(monkeypatch):
    # cv2.resize upscales with INTER_AREA too (its bilinear variant): an RGB observation bigger than
    # the screen is legitimate, and HWC (channels_last) is VecFrameStack's own layout.
    monkeypatch.setattr(atari_wrappers, "WarpFrame", RgbWarpFrame)
    ref = make_reference("breakout", 2, seed=4, channels_last=True)
    ours = AleNativeVecEnv("breakout", 2, seed=4, channels_last=True, grayscale=False,
                           img_height=RgbWarpFrame.size[0], img_width=RgbWarpFrame.size[1])
    assert ours.observation_space.shape == (300, 250, 12)
    try:
        assert compare_rollouts(ref, ours, 60).steps == 120
    finally:
        ref.close()
        ours.close()
