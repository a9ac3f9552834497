"""What the module users import, sb3_ale_vec._engine, offers: exactly the engine, its config, the ROMs'
facts and the benchmark's switches. The tests' hooks live in sb3_ale_vec._testing, a module of its own,
so that a hook added to _engine fails here; _testing._inject_fault still goes through the engine's one
guard (one caller at a time), as every call of _engine does."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sb3_ale_vec import AleNativeVecEnv, _engine, _testing

MODULE = {"ALE_VERSION", "ALE_PATCHES", "RAM_SIZE", "EngineBusy", "EnvConfig", "Layout", "ObsType", "Preset", "Vectorizer",
          "action_set", "default_mode", "obs_shape", "screen_height", "xla_ffi_targets", "xla_ffi_cuda_targets",
          "_stop_background"}  # the package's atexit hook: the idle threads stop as the interpreter exits
VECTORIZER = {
    "send_reset", "send", "recv", "screen_rgb", "close", "xla_handle",  # the engine
    "pending", "closed", "num_envs", "num_threads", "batch_size", "obs_shape",
    "_profile", "_take_profile", "_resets_first", "_reset_ahead",  # the benchmark's switches and log
    # the benchmark's and the tests' views of the resets computed ahead
    "_game_resets", "_resets_taken", "_resets_replayed", "_prepares_idle", "_prepared",
    "_resets_checked", "_resets_check_dropped", "_replays_abandoned", "reset_ahead_mismatches",
    "_take_refused",  # the keys a run-time check refused, for the front-ends' warning
}


def offered(obj) -> set[str]:
    """Every name but the dunders Python gives any object and pybind11's own (its cross-module conduit)."""
    return {name for name in dir(obj) if not name.startswith(("__", "_pybind11_"))}


def test_the_engine_module_offers_exactly_its_api():
    assert offered(_engine) == MODULE
    assert offered(_engine.Vectorizer) == VECTORIZER


def test_inject_fault_is_a_hook_of_testing_that_fails_the_envs_next_step():
    env = AleNativeVecEnv("pong", 2, num_threads=1, seed=0)
    env.reset()
    vec = env._native._vec
    _testing._inject_fault(vec, 1)
    vec.send(np.zeros(2, dtype=np.int64))
    batch = vec.recv()
    assert batch["failed"] == [1] and "env 1: injected fault" in batch["error"]
    with pytest.raises(IndexError):
        _testing._inject_fault(vec, 2)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        _testing._inject_fault(env, 0)  # the engine itself, not a front-end
    env.close()
    with pytest.raises(RuntimeError, match="the engine is closed"):
        _testing._inject_fault(vec, 0)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_inject_fault_waits_its_turn_as_every_call():
    # One thread and a long frame skip keep recv() inside the engine while a timer thread calls the hook.
    env = AleNativeVecEnv("pong", 2, num_threads=1, frameskip=3000, max_num_frames_per_episode=0, seed=0)
    env.reset()
    vec, refused = env._native._vec, []

    def inject():
        try:
            _testing._inject_fault(vec, 0)
        except _engine.EngineBusy as error:
            refused.append(str(error))

    env.step_async(np.zeros(2, dtype=np.int64))
    timer = threading.Timer(0.05, inject)
    timer.start()
    try:
        env.step_wait()
    finally:
        timer.join()
    assert refused and "one call at a time" in refused[0]
    env.step(np.zeros(2, dtype=np.int64))  # no fault was injected
    env.close()
