"""What ``get_attr("spec")`` answers: the ``EnvSpec`` of each env of the preset's reference pipeline as
gym.make and SB3's wrappers leave it (gymnasium's ``Wrapper.spec``): the id's registration, its kwargs
updated with those of the make call, and the wrappers put over it."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, WrapperSpec

from sb3_ale_vec import _engine
from sb3_ale_vec.games import camel_name

# The gymnasium id whose registration each preset's reference pipeline starts from.
SPEC_IDS = {"sb3": "{}NoFrameskip-v4", "gymnasium": "ALE/{}-v5", "ale": "ALE/{}-v5"}


def registered_spec(preset: str, game: str) -> EnvSpec:
    """The registration the preset's reference pipeline starts from. ale-py registers NoFrameskip-v4 ids
    for its older ROMs only: for the others (Klax, Pac-Man, ...) SB3's pipeline is make_atari_env over the
    v5 id with the v4 id's settings, whose spec gym.make gives those kwargs."""
    name = camel_name(game)
    if preset == "sb3" and SPEC_IDS["sb3"].format(name) not in gym.registry:
        spec = gym.spec(f"ALE/{name}-v5")
        return dataclasses.replace(spec, kwargs={**spec.kwargs, "frameskip": 1, "repeat_action_probability": 0.0})
    return gym.spec(SPEC_IDS[preset].format(name))


def atari_env_kwargs(base: EnvSpec, config: Any) -> dict[str, Any]:
    """The registration's kwargs updated with the AtariEnv keywords this env runs with: what
    ``make_atari_env(id, env_kwargs=...)`` passes gym.make. AtariEnv's frame skip is ``env_frameskip``
    under the preset's own, and ``frameskip`` itself (or a range) where the obs are AtariEnv's own."""
    own_obs = config.obs_type != _engine.ObsType.PROCESSED
    skip = (config.env_frameskip, config.env_frameskip_max) if config.env_frameskip_max else (
        config.frameskip if own_obs else config.env_frameskip)
    kwargs = {**base.kwargs, "repeat_action_probability": config.repeat_action_probability,
              "full_action_space": config.full_action_space, "frameskip": skip,
              "max_num_frames_per_episode": config.max_num_frames_per_episode}
    kwargs.update({name: getattr(config, name) for name in ("mode", "difficulty") if getattr(config, name) >= 0})
    if own_obs:
        kwargs["obs_type"] = config.obs_type.name.lower()
    return kwargs


def _wrapper(cls: type) -> WrapperSpec:
    return WrapperSpec(name=cls.__name__, entry_point=f"{cls.__module__}:{cls.__name__}", kwargs=None)


def sb3_wrappers(config: Any) -> tuple[WrapperSpec, ...]:
    """make_vec_env's Monitor, then what AtariWrapper puts over it for this env's options, in its order
    (stable_baselines3.common.atari_wrappers.AtariWrapper.__init__); AtariEnv's own observations
    (obs_type) are make_vec_env's AtariEnv under Monitor alone."""
    from stable_baselines3.common import atari_wrappers as aw
    from stable_baselines3.common.monitor import Monitor

    if config.obs_type != _engine.ObsType.PROCESSED:
        return (_wrapper(Monitor),)
    chain = [(Monitor, True), (aw.StickyActionEnv, config.action_repeat_probability > 0),
             (aw.NoopResetEnv, config.noop_max > 0), (aw.MaxAndSkipEnv, config.frameskip > 1),
             (aw.EpisodicLifeEnv, config.episodic_life), (aw.FireResetEnv, config.fire_reset), (aw.WarpFrame, True),
             (aw.ClipRewardEnv, config.reward_clipping), (aw.AtariWrapper, True)]
    return tuple(_wrapper(cls) for cls, present in chain if present)


def env_spec(preset: str, game: str, config: Any, render_mode: str | None) -> EnvSpec:
    """Env ``game``'s spec. SB3's preset: the spec its ``make_atari_env`` env has (make_vec_env passes
    ``render_mode``; the wrappers). The others: the id's registration, with the AtariEnv options set."""
    base = registered_spec(preset, game)
    kwargs = atari_env_kwargs(base, config)
    if preset != "sb3":
        return dataclasses.replace(base, kwargs=kwargs)
    return dataclasses.replace(base, kwargs={**kwargs, "render_mode": render_mode},
                               additional_wrappers=sb3_wrappers(config))
