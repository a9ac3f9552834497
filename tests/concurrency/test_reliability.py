"""Faults, interrupts, teardown and bad ROMs: clear exceptions, never a crash, a hang or lost data."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from ale_py import roms
from all_roms import ROMS
from sanitizer import SANITIZER

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, EngineError, _engine, _testing


def _python(code, **kwargs):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.tsan
def test_a_failing_env_keeps_the_others_data():
    ref, env = AleNativeVecEnv("breakout", 3, seed=0), AleNativeVecEnv("breakout", 3, seed=0)
    ref.reset(), env.reset()
    actions = np.array([1, 2, 3])
    for _ in range(20):
        ref.step(actions), env.step(actions)
    _testing._inject_fault(env._native._vec, 1)
    o, r, d, i = ref.step(actions)
    with pytest.raises(EngineError, match="env 1: injected fault") as caught:
        env.step(actions)
    error = caught.value
    assert error.env_ids == [1]
    assert np.array_equal(error.obs[[0, 2]], o[[0, 2]]) and not error.obs[1].any()
    assert np.array_equal(error.rewards[[0, 2]], r[[0, 2]]) and error.infos[1] == {}
    assert error.infos[0]["frame_number"] == i[0]["frame_number"]
    with pytest.raises(RuntimeError, match="env 1 failed in an earlier step: reset"):
        env.step(actions)
    assert env.reset().shape == (3, 4, 84, 84)  # rebuilds env 1
    env.step(actions)
    ref.close(), env.close()


@pytest.mark.slow
@pytest.mark.nosan
def test_ctrl_c_during_long_steps_interrupts_cleanly():
    # 256 envs on one thread: each reset or step keeps the engine busy long enough to be interrupted.
    # The child installs Python's Ctrl-C handler itself: started from a background job of a
    # non-interactive shell, it would inherit SIGINT ignored and never see the signal.
    proc = _python("""
        import signal
        import numpy as np
        from sb3_ale_vec import AleNativeVecEnv
        signal.signal(signal.SIGINT, signal.default_int_handler)
        env = AleNativeVecEnv("pong", 256, num_threads=1)
        print("ready", flush=True)
        while True:
            env.reset()
            env.step(np.zeros(256, dtype=np.int64))
    """)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in stderr, stderr[-2000:]
    assert time.monotonic() - sent < 10
    assert "Segmentation" not in stderr and "Aborted" not in stderr


@pytest.mark.tsan
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_interpreter_exits_cleanly_with_envs_open():
    proc = _python("""
        import numpy as np
        from sb3_ale_vec import AleNativeVecEnv
        env = AleNativeVecEnv("breakout", 4)
        other = AleNativeVecEnv("pong", 2)
        env.reset()
        env.step_async(np.zeros(4, dtype=np.int64))   # still in flight at exit
        print("bye", flush=True)
    """)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and stdout.strip() == "bye", stderr[-2000:]


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _engine_threads() -> int:
    """This process's threads of our engines (workers and idle threads), by the names they give themselves."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                count += f.read().startswith("sb3ale-")
        except FileNotFoundError:  # ended meanwhile
            pass
    return count


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))


@pytest.mark.nosan
@pytest.mark.slow
@pytest.mark.deep  # a soak
def test_many_engines_leak_no_threads_and_no_memory():
    def cycle():
        env = AleNativeVecEnv("breakout", 4, num_threads=2)
        env.reset()
        env.step(np.ones(4, dtype=np.int64))
        env.close()

    for _ in range(10):
        cycle()
    threads, rss = _threads(), _rss_kib()
    for _ in range(60):
        cycle()
    # The idle threads are detached (nothing waits for them): they end on their own, soon after, and
    # none of an engine's threads outlives it for long.
    deadline = time.monotonic() + 60
    while _engine_threads() > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _engine_threads() == 0 and _threads() <= threads
    assert _rss_kib() - rss < 16 * 1024, "resident memory grew by more than 16 MiB over 60 engines"


@pytest.mark.parametrize("front_end", [AleNativeVecEnv, AleVectorEnv, AtariVectorEnv])
def test_roms_ale_does_not_run_are_refused_by_name_before_an_engine_starts(front_end, monkeypatch):
    # ale-py ships a few ROMs ALE knows no game for (its loadROM would end the process): a ValueError
    # naming the ROM, raised before any engine (and so any thread) exists.
    refused = sorted(set(roms.get_all_rom_ids()) - set(ROMS))
    assert refused
    monkeypatch.setattr(_engine, "Vectorizer", lambda *args, **kwargs: pytest.fail("an engine was built"))
    for rom in refused:
        with pytest.raises(ValueError, match=f"ALE does not run '{rom}'"):
            front_end(rom, 2)


def test_missing_and_corrupt_roms(tmp_path, monkeypatch):
    config = _engine.EnvConfig()
    config.rom_path = str(tmp_path / "nothing.bin")
    with pytest.raises(RuntimeError, match="doesn't exist"):
        _engine.Vectorizer([config])
    corrupt = tmp_path / "breakout.bin"
    corrupt.write_bytes(b"\x00" * 4096)
    config.rom_path = str(corrupt)
    with pytest.raises(ValueError, match="not a ROM that ALE supports"):
        _engine.Vectorizer([config])
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))  # ale-py's own ROM folder override
    with pytest.raises(OSError, match="hash of breakout.bin does not match"):
        AleNativeVecEnv("breakout", 1)
    with pytest.raises(FileNotFoundError, match="pong.bin"):
        AleNativeVecEnv("pong", 1)


def test_bad_mode_and_difficulty_name_the_allowed_values():
    with pytest.raises(ValueError, match="mode 99 is not available; modes: 0, 1"):
        AleNativeVecEnv("pong", 2, mode=99)
    with pytest.raises(ValueError, match="difficulty 7 is not available"):
        AleNativeVecEnv("pong", 1, difficulty=7)


@pytest.mark.tsan
def test_calls_after_close_raise():
    env = AleNativeVecEnv("pong", 1)
    env.close()
    for call in (env.reset, env.get_images, lambda: env.step_async(np.zeros(1, dtype=np.int64)), env.step_wait):
        with pytest.raises(RuntimeError, match="closed"):
            call()


@pytest.mark.tsan
@pytest.mark.slow
@pytest.mark.deep  # a soak
def test_short_soak_keeps_memory_flat_and_results_equal_across_thread_counts():
    steps = os.environ.get("SB3_ALE_VEC_SOAK_STEPS", "6000")  # tests/sanitize.sh runs a shorter one
    result = subprocess.run([sys.executable, "-m", "sb3_ale_vec.bench.soak", "--steps", steps, "--reset-every", "1499",
                             "--replay-steps", "300"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0 and "soak: ok" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]


def _slow_env():
    # One thread and a long frame skip: each step keeps recv() waiting for a good fraction of a second
    # (under ASan emulation is slower: a shorter skip waits as long there; 500 frames could end within
    # the 50 ms timer on an idle machine).
    return AleNativeVecEnv("pong", 2, num_threads=1, frameskip=1500 if SANITIZER == "address" else 3000,
                           max_num_frames_per_episode=0, seed=0)


def _during_recv(env, action):
    """Starts a step, runs action() from a timer thread while step_wait() waits, returns what step_wait did."""
    import threading

    env.step_async(np.zeros(2, dtype=np.int64))
    timer = threading.Timer(0.05, action)
    timer.start()
    try:
        return env.step_wait()
    finally:
        timer.join()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_ctrl_c_in_step_wait_refuses_steps_until_reset():
    env = _slow_env()
    env.reset()
    # Python's own Ctrl-C handler, as a terminal session has it: a background job of a
    # non-interactive shell (CI's sanitizer run) starts with SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _during_recv(env, lambda: os.kill(os.getpid(), signal.SIGINT))
    finally:
        signal.signal(signal.SIGINT, previous)
    for _ in range(2):  # refused, clearly, and again: nothing ran meanwhile
        with pytest.raises(RuntimeError, match=r"interrupted \(Ctrl-C\).*reset\(\) before stepping again"):
            env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(RuntimeError, match=r"cancelled \(Ctrl-C\): reset\(\) first"):
        env._native._vec.recv()  # the engine refuses too, whoever calls it
    env.reset()
    obs, rewards, dones, infos = env.step(np.zeros(2, dtype=np.int64))
    assert obs.shape == (2, 4, 84, 84) and len(infos) == 2
    env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_signal_handler_that_closes_the_env_during_step_wait():
    env = _slow_env()
    env.reset()
    previous = signal.signal(signal.SIGINT, lambda *_: env.close())
    try:
        with pytest.raises(RuntimeError, match="closed .* while recv\\(\\) waited"):
            _during_recv(env, lambda: os.kill(os.getpid(), signal.SIGINT))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert env._native.closed
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    env.close()  # still idempotent


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_close_from_another_thread_during_step_wait():
    env = _slow_env()
    env.reset()
    with pytest.raises(RuntimeError, match="closed .* while recv\\(\\) waited"):
        _during_recv(env, env.close)
    assert env._native.closed
    env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.tsan
def test_a_second_thread_driving_the_engine_gets_a_runtime_error_and_changes_nothing():
    env = _slow_env()
    env.reset()
    errors = []

    def second():  # calls the engine itself while the first caller waits in step_wait
        try:
            env._native._vec.recv()
        except RuntimeError as error:
            errors.append(str(error))

    obs, rewards, dones, infos = _during_recv(env, second)
    assert len(errors) == 1 and "another call is using this engine" in errors[0], errors
    assert obs.shape == (2, 4, 84, 84) and len(infos) == 2  # the first caller's step, whole
    env.step(np.zeros(2, dtype=np.int64))
    env.close()


@pytest.mark.nosan
def test_a_worker_thread_that_cannot_start_is_a_runtime_error_not_a_crash():
    # Every new thread asks glibc for a 128 TiB stack (all of user space): pthread_create fails for
    # the engine's workers.
    proc = _python("""
        import ctypes
        from sb3_ale_vec import AtariVectorEnv
        libc = ctypes.CDLL(None)
        huge, before = ctypes.create_string_buffer(256), ctypes.create_string_buffer(256)
        libc.pthread_getattr_default_np(before)
        libc.pthread_attr_init(huge)
        libc.pthread_attr_setstacksize(huge, ctypes.c_size_t(1 << 47))
        libc.pthread_setattr_default_np(huge)
        try:
            AtariVectorEnv("pong", 4, num_threads=4)
        except RuntimeError as error:
            print("RAISED", error)
        libc.pthread_setattr_default_np(before)
        envs = AtariVectorEnv("pong", 2, num_threads=2)
        envs.reset(seed=0)
        envs.close()
        print("THEN BUILT")
    """)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    assert "RAISED could not start worker thread 1 of 3" in out and "THEN BUILT" in out, out + err[-2000:]
