"""``obs_type``: gymnasium ``AtariEnv``'s own observations (``"rgb"``, ``"grayscale"``, ``"ram"``) instead of
a preset's processed frames, and what the preprocessing options mean then: nothing.

With ``obs_type`` set, each env is ``AtariEnv`` alone, as ``gym.make("ALE/<Game>-v5", obs_type=...)``
and SB3's ``make_vec_env("<Game>-ramNoFrameskip-v4")`` give it: no ``AtariPreprocessing`` or
``AtariWrapper`` (neither can take RAM), no frame stack. ``frameskip`` is ``AtariEnv``'s own frame skip
(``env_frameskip`` may instead give a ``(low, high)`` range, as plain ``*-v4`` ids draw); sticky actions
(``repeat_action_probability``), ``full_action_space``, ``max_num_frames_per_episode``, ``mode`` and
``difficulty`` keep their meaning. The preprocessing options must be left at their defaults (which are
not applied) or set to "none" (``noop_max=0``, ``stack_num=1``, ...); anything else raises.
"""

from __future__ import annotations

from typing import Any

OBS_TYPES = ("rgb", "grayscale", "ram")

# Preprocessing options: the values that also mean "none of it", besides the table's default.
_NONE_VALUES: dict[str, tuple[Any, ...]] = {
    "noop_max": (0,), "use_fire_reset": (False,), "episodic_life": (False,), "reward_clipping": (False,),
    "stack_num": (1,), "maxpool": (False,), "life_loss_info": (), "action_repeat_probability": (),
    "grayscale": (), "img_height": (), "img_width": (),
}
# What the raw env plays instead (the config the raw chain reads).
_RAW_VALUES = {"noop_max": 0, "use_fire_reset": False, "episodic_life": False, "reward_clipping": False,
               "stack_num": 1, "maxpool": False, "life_loss_info": False, "action_repeat_probability": 0.0}


def check_obs_type(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be None or a str, got {type(value).__name__}")
    if value is not None and value not in OBS_TYPES:
        raise ValueError(f"{name} must be None (the preset's processed frames) or one of "
                         f"{', '.join(map(repr, OBS_TYPES))}, got {value!r}")
    return value


def raw_values(values: dict[str, Any], given: dict[str, Any], defaults: dict[str, Any], preset: str) -> dict[str, Any]:
    """The option values of an env with ``obs_type`` set (``values``: checked, the preset's defaults
    filled in; ``given``: what the front-end passed; ``defaults``: the table's). Raises ValueError for
    an option that means nothing without preprocessing."""
    obs_type = values["obs_type"]
    if preset == "ale":
        raise ValueError(f"obs_type={obs_type!r} is not allowed with preset='ale': ale-py's AtariVectorEnv only "
                         "has its processed frames. Use preset='gymnasium' (ALE/*-v5) or 'sb3' (*NoFrameskip-v4)")
    for name, none_values in _NONE_VALUES.items():
        value = given.get(name, defaults[name])
        if value != defaults[name] and value not in none_values:
            allowed = " or ".join(repr(v) for v in (defaults[name], *none_values))
            raise ValueError(f"{name}={value!r} means nothing with obs_type={obs_type!r}: the env is gymnasium's "
                             f"AtariEnv alone, without preprocessing or frame stack; leave {name} out "
                             f"(allowed: {allowed})")
    frameskip, (low, high) = values["frameskip"], values["env_frameskip"]
    if high and frameskip != 1:
        raise ValueError(f"frameskip={frameskip} and env_frameskip={(low, high)} both give AtariEnv's frame skip with "
                         f"obs_type={obs_type!r}: pass frameskip=1 with the range")
    if not high and low != 1:
        raise ValueError(f"env_frameskip={low} with obs_type={obs_type!r}: AtariEnv's frame skip is frameskip; "
                         f"pass frameskip={low}")
    return {**values, **_RAW_VALUES, "frameskip": 1, "env_frameskip": (low, high) if high else (frameskip, 0)}
