"""make_ale_vec_env: SB3's make_atari_env, one line to switch, the native engine behind it."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import ale_py
import gymnasium as gym
from stable_baselines3.common.vec_env import VecEnv

from sb3_ale_vec.options import OPTIONS
from sb3_ale_vec.sb3.monitor import AleVecMonitor
from sb3_ale_vec.sb3.vec_env import AleNativeVecEnv

gym.register_envs(ale_py)

# AtariWrapper's and gymnasium AtariEnv's keyword names (env_kwargs or the id's registration) -> ours,
# from the option table; screen_size is AtariWrapper's for both image sides.
_WRAPPER_KWARGS = {o.wrapper: o.name for o in OPTIONS if o.wrapper}
_ENV_KWARGS = {o.atari_env: o.name for o in OPTIONS if o.atari_env} | {
    "game": None,  # read from the id
    "render_mode": "render_mode",
    "obs_type": None,  # "rgb", what AtariWrapper needs, or "ram": make_vec_env's AtariEnv alone
}


def _ram_id(env_id: str) -> str:
    """ale-py 0.9+ registers no ``-ram`` ids: ``"Breakout-ramNoFrameskip-v4"`` is now
    ``"BreakoutNoFrameskip-v4"`` with ``obs_type="ram"`` (``ALE/Breakout-ram-v5``: ``ALE/Breakout-v5``)."""
    return env_id.replace("-ram", "", 1)


def make_ale_vec_env(
    env_id: str,
    n_envs: int = 1,
    seed: int | None = None,
    start_index: int = 0,
    monitor_dir: str | None = None,
    wrapper_kwargs: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vec_env_class: Callable[..., VecEnv] = AleNativeVecEnv,
    **engine_kwargs: Any,
) -> VecEnv:
    """Drop-in for ``stable_baselines3.common.env_util.make_atari_env``.

    Returns single frames ``(84, 84, 1)``, as ``make_atari_env`` does, so that an existing
    ``VecFrameStack(env, 4)`` line gives exactly what ``make_atari_env`` + ``VecFrameStack`` gives.
    The id's registration is honoured: ``"PongNoFrameskip-v4"``, ``"ALE/Pong-v5"`` (sticky actions
    and an env frame skip of 4, below ``AtariWrapper``'s own, as ``make_atari_env`` does) or
    ``"Pong-v4"``.

    RAM observations (``env_kwargs={"obs_type": "ram"}``, or an old ``-ram`` id such as
    ``"Breakout-ramNoFrameskip-v4"``) give what ``make_vec_env(id, n_envs, seed,
    env_kwargs={"obs_type": "ram"})`` gives, the RAM workflow of SB3's ``MlpPolicy``: ``AtariEnv``
    alone under ``Monitor``, 128 uint8 per observation; ``AtariWrapper`` cannot take RAM, so
    ``wrapper_kwargs`` are refused.

    :param env_id: a gymnasium Atari id
    :param n_envs: number of envs
    :param seed: env i is seeded with ``seed + i`` at the first reset
    :param start_index: rank of the first env, for the monitor file names
    :param monitor_dir: write ``<monitor_dir>/<rank>.monitor.csv`` per env with the true game scores
    :param wrapper_kwargs: ``AtariWrapper``'s options (``noop_max``, ``frame_skip``, ``screen_size``,
        ``terminal_on_life_loss``, ``clip_reward``, ``action_repeat_probability``)
    :param env_kwargs: ``gym.make`` options of the Atari env (``repeat_action_probability``,
        ``full_action_space``, ``max_num_frames_per_episode``, ``frameskip``, ``mode``, ``difficulty``,
        ``render_mode``)
    :param vec_env_class: what builds the envs from the game, ``n_envs``, ``seed`` and the options
        (``functools.partial(RayAleVecEnv, num_shards=4)`` spreads them over a Ray cluster)
    :param engine_kwargs: further ``AleNativeVecEnv`` options (``num_threads``, ``stack_num``, ...)
    """
    ram_id = "-ram" in env_id
    try:
        spec = gym.spec(_ram_id(env_id) if ram_id else env_id)
    except gym.error.Error as error:
        raise ValueError(f"{env_id!r} is not a registered gymnasium id: {error}") from None
    if "AtariEnv" not in str(spec.entry_point):
        raise ValueError(f"{env_id!r} is not an Atari env (its entry point is {spec.entry_point})")

    options: dict[str, Any] = {"stack_num": 1, "channels_last": True}
    unknown = set(wrapper_kwargs or {}) - set(_WRAPPER_KWARGS) - {"screen_size"}
    for key, value in (wrapper_kwargs or {}).items():
        if key == "screen_size":
            options["img_height"] = options["img_width"] = value
        elif key in _WRAPPER_KWARGS:
            options[_WRAPPER_KWARGS[key]] = value
    env_options = {**spec.kwargs, **({"obs_type": "ram"} if ram_id else {}), **(env_kwargs or {})}
    unknown |= {f"env_kwargs[{k!r}]" for k in env_options if k not in _ENV_KWARGS}
    ram = env_options.get("obs_type", "rgb") == "ram"
    if env_options.get("obs_type", "rgb") not in ("rgb", "ram"):
        unknown.add(f"env_kwargs['obs_type']={env_options['obs_type']!r} (AtariWrapper needs 'rgb'; 'ram' is "
                    "make_vec_env's AtariEnv alone)")
    if ram and wrapper_kwargs:
        unknown.add(f"wrapper_kwargs with RAM observations (AtariWrapper cannot take RAM): {sorted(wrapper_kwargs)}")
    if unknown:
        raise ValueError(f"make_ale_vec_env does not support: {', '.join(sorted(unknown))}. Supported "
                         f"wrapper_kwargs: {', '.join([*_WRAPPER_KWARGS, 'screen_size'])}; env_kwargs: "
                         f"{', '.join(k for k in _ENV_KWARGS if k != 'game')}")
    for key, value in env_options.items():
        if _ENV_KWARGS[key] is not None:
            options[_ENV_KWARGS[key]] = value
    options.setdefault("render_mode", "rgb_array")  # make_vec_env's default for string ids
    if options.get("mode") is None:
        options.pop("mode", None)
    if options.get("difficulty") is None:
        options.pop("difficulty", None)
    if options.get("max_num_frames_per_episode") is None:
        options["max_num_frames_per_episode"] = 0
    if options["render_mode"] == "human":
        options["render_mode"] = "rgb_array"  # VecEnv.render("human") shows the tiles with OpenCV
    if ram:  # AtariEnv alone: its frame skip is the engine's frameskip (a range stays env_frameskip's)
        del options["stack_num"], options["channels_last"]
        skip = options.pop("env_frameskip", 1)
        options.update(obs_type="ram", frameskip=1 if isinstance(skip, tuple) else skip)
        if isinstance(skip, tuple):
            options["env_frameskip"] = skip
    options.update(engine_kwargs)

    env = vec_env_class(env_options["game"], n_envs, seed=seed, **options)
    # The spec of make_vec_env's envs: gym.make's kwargs (render_mode, then env_kwargs) and the wrappers.
    made_with = {"render_mode": "rgb_array", **({"obs_type": "ram"} if ram_id else {}), **(env_kwargs or {})}
    env.spec = dataclasses.replace(spec, kwargs={**spec.kwargs, **made_with},
                                   additional_wrappers=env.get_attr("spec", 0)[0].additional_wrappers)
    env.set_attr("spec", env.spec)
    if monitor_dir is None:
        return env
    os.makedirs(monitor_dir, exist_ok=True)
    paths = [os.path.join(monitor_dir, str(start_index + i)) for i in range(n_envs)]
    return AleVecMonitor(env, filenames=paths)
