"""``xla()``: an env's reset and step as pure JAX functions, for ``jax.jit`` and ``lax.scan``.

The functions call XLA FFI targets compiled into the engine (native/xla/xla_ffi.cpp), which reset and step
the env's own native engine with no Python and no GIL. The contract is ale-py 0.12.1's
``AtariVectorEnv.xla()``: ``(handle, reset, step)``, ``reset(handle, seed=None, reset_mask=None) ->
(handle, (obs, info))`` and ``step(handle, actions) -> (handle, (obs, rewards, terminations,
truncations, info))``, a new handle out of each call (thread it through, as a scan's carry), and
``vmap_method="broadcast_all"``, under which, as with ale-py, the targets refuse a batch of handles.

The handle is 8 bytes naming the env in a registry of open engines (never a pointer): after
``close()`` a step fails with a clear error instead of touching freed memory. The env's state lives
in the engine, so the Python ``reset()``/``step()`` and these functions see one env; don't call
both at once (block on the JAX results first). Each target is registered for the CPU and for CUDA;
the CUDA one copies its arguments to the host, runs the CPU target, and copies the results back on
XLA's stream, as ale-py's does (native/xla/xla_cuda.cpp, through the CUDA driver found at run time).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from gymnasium.vector import AutoresetMode

from sb3_ale_vec import _engine
from sb3_ale_vec.gymnasium.base import is_int_seed, joystick, seed_convention

RESET_TARGET, STEP_TARGET = "sb3_ale_vec_xla_reset", "sb3_ale_vec_xla_step"
_INSTALL = 'pip install "sb3-ale-vec[jax]"'
_registered = False
_lock = threading.Lock()


def import_jax() -> tuple[Any, Any]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as error:
        raise DependencyNotInstalled(f"xla() needs jax: {_INSTALL}") from error
    return jax, jnp


def runtime_ffi_api(jax: Any) -> tuple[int, int] | None:
    """The XLA FFI API version of the installed jaxlib, from the headers it ships (None if absent)."""
    try:
        text = (Path(jax.ffi.include_dir()) / "xla" / "ffi" / "api" / "c_api.h").read_text()
    except OSError:
        return None
    found = [re.search(rf"#define XLA_FFI_API_{part}\s+(\d+)", text) for part in ("MAJOR", "MINOR")]
    return (int(found[0].group(1)), int(found[1].group(1))) if all(found) else None


def check_ffi_api(built: tuple[int, int], runtime: tuple[int, int] | None, jaxlib_version: str) -> None:
    """Same major version, and a runtime at least as new as the headers the handlers were built with."""
    if runtime is None or (runtime[0] == built[0] and runtime[1] >= built[1]):
        return
    raise RuntimeError(
        f"sb3_ale_vec's XLA FFI targets were built against XLA FFI API {built[0]}.{built[1]}, but the installed "
        f"jaxlib {jaxlib_version} provides API {runtime[0]}.{runtime[1]}: install a jaxlib whose API is "
        f"{built[0]}.{built[1]} or newer (same major), or rebuild sb3-ale-vec against this one "
        f"(pip install --force-reinstall --no-binary sb3-ale-vec sb3-ale-vec)")


def register(jax: Any) -> None:
    """Registers the CPU and CUDA targets once per process, after checking the FFI API version."""
    global _registered
    with _lock:
        if _registered:
            return
        targets = _engine.xla_ffi_targets()
        if targets is None:
            raise RuntimeError("this build of sb3_ale_vec has no XLA FFI targets (it was built without jaxlib's "
                               "headers, or with SB3_ALE_VEC_XLA=0): reinstall it with jaxlib available to the build")
        built, reset, step = targets
        import jaxlib

        check_ffi_api(tuple(built), runtime_ffi_api(jax), getattr(jaxlib, "__version__", "?"))
        cuda_reset, cuda_step = _engine.xla_ffi_cuda_targets()
        for name, capsule, platform in ((RESET_TARGET, reset, "cpu"), (STEP_TARGET, step, "cpu"),
                                        (RESET_TARGET, cuda_reset, "CUDA"), (STEP_TARGET, cuda_step, "CUDA")):
            try:
                jax.ffi.register_ffi_target(name, capsule, platform=platform)
            except Exception as error:  # XLA refuses handlers of an API version it does not support
                raise RuntimeError(f"jax refused sb3_ale_vec's XLA FFI target {name} (built against XLA FFI API "
                                   f"{built[0]}.{built[1]}): {error}") from error
        _registered = True


def xla_functions(env: Any, kind: str) -> tuple[Any, Any, Any]:
    """``(handle, reset, step)`` for ``env``; ``kind`` is ``"ale"`` (the drop-in: ale-py's seeds, int32
    rewards, NEXT_STEP) or ``"gymnasium"`` (AleVectorEnv, any preset: its seeds, its info keys, float32
    rewards; NEXT_STEP, or SAME_STEP with dense ``final_obs``/``final_info``, zeros where no reset). With
    ram_info, ``info["ram"]`` as ``step()`` gives it, and SAME_STEP's ``final_info["ram"]``."""
    jax, jnp = import_jax()
    mode = AutoresetMode(env.autoreset_mode)
    # ale-py's xla() asserts NEXT_STEP; AleVectorEnv's SB3 chain only resets in the same step.
    allowed = (AutoresetMode.NEXT_STEP,) if kind == "ale" else (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
    if mode not in allowed:
        raise ValueError(f"xla() needs autoreset_mode {' or '.join(m.name for m in allowed)}, this env has {mode.name}")
    same_step = mode == AutoresetMode.SAME_STEP
    engine = env._native.live()  # a closed env raises here
    register(jax)
    num_envs, batch = env.num_envs, env.batch_size
    obs_shape = tuple(env.observation_space.shape)
    continuous, threshold = env.continuous, float(env.continuous_action_threshold)
    table = jnp.asarray(np.asarray(env.map_action_idx) if continuous else 0,
                        dtype=jnp.int32)
    scores = kind == "gymnasium" and env._scores.enabled  # the true game scores, where the chain hides them
    ram = env._native.ram_info  # info["ram"] (and SAME_STEP's final RAM); the targets skip empty buffers
    masked = (*_GYM_INFO_KEYS, "ram") if ram else _GYM_INFO_KEYS  # gymnasium's keys with a `_` mask

    def info_struct(dtype: Any) -> Any:
        return jax.ShapeDtypeStruct((batch,), dtype)

    handle_struct = jax.ShapeDtypeStruct((8,), jnp.uint8)
    obs_struct = jax.ShapeDtypeStruct(obs_shape, jnp.uint8)
    ram_struct = jax.ShapeDtypeStruct((batch, _engine.RAM_SIZE) if ram else (0,), jnp.uint8)
    reset_call = jax.ffi.ffi_call(RESET_TARGET, (handle_struct, obs_struct, *[info_struct(jnp.int32)] * 4, ram_struct),
                                  has_side_effect=True, vmap_method="broadcast_all")
    step_call = jax.ffi.ffi_call(
        STEP_TARGET, (handle_struct, obs_struct, info_struct(jnp.float32), info_struct(jnp.bool_),
                      info_struct(jnp.bool_), *[info_struct(jnp.int32)] * 4, info_struct(jnp.bool_),
                      info_struct(jnp.float32), info_struct(jnp.int32), info_struct(jnp.bool_),
                      jax.ShapeDtypeStruct((batch, 3), jnp.int32),
                      jax.ShapeDtypeStruct(obs_shape if same_step else (0,), jnp.uint8), ram_struct,
                      ram_struct if same_step else jax.ShapeDtypeStruct((0,), jnp.uint8)),
        has_side_effect=True, vmap_method="broadcast_all")

    def infos(env_id: Any, lives: Any, frame_number: Any, episode_frame_number: Any, ram_rows: Any) -> dict[str, Any]:
        info = {"env_id": env_id, "lives": lives, "frame_number": frame_number,
                "episode_frame_number": episode_frame_number}
        if ram:
            info["ram"] = ram_rows
        if kind == "gymnasium":  # gymnasium's masks of the batched infos: every row has them
            info.update({f"_{key}": jnp.ones(batch, jnp.bool_) for key in masked})
        return info

    def reset(handle: Any, seed: Any = None, reset_mask: Any = None) -> tuple[Any, tuple[Any, dict[str, Any]]]:
        if reset_mask is None:
            ids = jnp.arange(num_envs, dtype=jnp.int32)
        else:
            mask = jnp.asarray(reset_mask)
            if mask.shape != (num_envs,) or mask.dtype != jnp.bool_:
                raise ValueError(f"reset_mask must be a bool array of shape ({num_envs},), got {mask.dtype} {mask.shape}")
            ids = jnp.flatnonzero(mask).astype(jnp.int32)  # a concrete mask: not inside jit (as ale-py)
        seeds = _reset_seeds(jnp, kind, seed, ids, num_envs)
        handle, obs, env_id, lives, frame_number, episode_frame_number, ram_rows = reset_call(handle, ids, seeds)
        return handle, (obs, infos(env_id, lives, frame_number, episode_frame_number, ram_rows))

    def step(handle: Any, actions: Any) -> tuple[Any, tuple[Any, Any, Any, Any, dict[str, Any]]]:
        actions = jnp.asarray(actions)
        if continuous:
            if actions.shape != (batch, 3) or not jnp.issubdtype(actions.dtype, jnp.floating):
                raise ValueError(f"continuous actions must be floats of shape ({batch}, 3), got {actions.dtype} "
                                 f"{actions.shape}")
            ids, strengths = joystick(jnp, actions.astype(jnp.float32), threshold, table)  # as the Python step
        else:
            if actions.shape != (batch,) or not jnp.issubdtype(actions.dtype, jnp.integer):
                raise ValueError(f"actions must be integers of shape ({batch},), got {actions.dtype} {actions.shape}")
            ids, strengths = actions.astype(jnp.int32), jnp.ones(batch, jnp.float32)
        (handle, obs, rewards, terminated, truncated, env_id, lives, frame_number, episode_frame_number, game_end,
         episode_return, episode_steps, reset_rows, step_info, final_obs, ram_rows, final_ram) = step_call(
            handle, ids, strengths)
        info = infos(env_id, lives, frame_number, episode_frame_number, ram_rows)
        if kind == "ale":
            rewards = rewards.astype(jnp.int32)
        if same_step:  # gymnasium's final_obs / final_info, dense: zeros in the rows that did not reset
            final_info = {key: jnp.where(reset_rows, step_info[:, column], 0)
                          for column, key in enumerate(("lives", "frame_number", "episode_frame_number"))}
            if ram:
                final_info["ram"] = final_ram  # zeros where no reset, as the other columns
            final_info.update({f"_{key}": reset_rows for key in masked})
            info.update({"final_obs": final_obs, "_final_obs": reset_rows, "final_info": final_info,
                         "_final_info": reset_rows})
        if scores:
            info["episode"] = {"r": episode_return, "l": episode_steps}
            info["_episode"] = game_end
        return handle, (obs, rewards, terminated, truncated, info)

    handle = jnp.asarray(np.frombuffer(np.uint64(engine.xla_handle()).tobytes(), dtype=np.uint8))
    return handle, reset, step


_GYM_INFO_KEYS = ("lives", "episode_frame_number", "frame_number")
_INT32_MAX = np.iinfo(np.int32).max


def _reset_seeds(jnp: Any, kind: str, seed: Any, ids: Any, num_envs: int) -> Any:
    """int32 seeds, one per env reset, -1 unseeded. ale-py: an int seeds the envs reset with consecutive
    values, an array gives one per env reset. AleVectorEnv: env i gets seed + i, or seed[i] of one per env."""
    count, per_reset = ids.shape[0], kind == "ale"
    if seed is None:
        return jnp.full(count, -1, jnp.int32)
    if is_int_seed(seed):
        if not -_INT32_MAX - 1 <= int(seed) <= _INT32_MAX - num_envs + 1:
            raise ValueError(f"seeds are int32 here: an int seed must be at most {_INT32_MAX - num_envs + 1}")
        return seed_convention(jnp, per_reset, jnp.int32(seed), ids)  # the Python reset's conventions
    if per_reset:
        seeds = jnp.asarray(seed)
        if seeds.shape != (count,):
            raise ValueError(f"`seed` must have one entry per sub-environment being reset, expected shape ({count},), "
                             f"got {seeds.shape}")
    else:
        seeds = jnp.asarray([-1 if s is None else s for s in seed] if isinstance(seed, (list, tuple)) else seed)
        if seeds.shape != (num_envs,):
            raise ValueError(f"seed as an array needs one entry per env ({num_envs},), got {seeds.shape}")
    return seed_convention(jnp, per_reset, seeds.astype(jnp.int32), ids)
