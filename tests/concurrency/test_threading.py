"""The threading contract (docs/design.md): every entry point of `_engine.Vectorizer` and the XLA
targets goes through one guard, so a call from another thread, a signal handler or XLA either works
or raises an ordinary exception at once, and close() from anywhere never frees an engine under a
call. Each test here guards one defect, named in its comment, and fails where that defect is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, _engine, _testing


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


def _slow_env(n: int = 2):
    # One thread and a long frame skip: a step keeps recv() waiting for a good fraction of a second.
    return AleVectorEnv("pong", n, num_threads=1, frameskip=3000, max_num_frames_per_episode=0)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.tsan
def test_close_from_another_thread_while_a_call_waits_never_frees_the_engine_under_it():
    # A call that waits with the GIL released and no guard lets a close() meanwhile free the engine under
    # it: recv, send_reset and the resets-ahead switch alike.
    for call in ("reset", "step", "switch"):
        env = AleVectorEnv("breakout", 4, num_threads=2, max_num_frames_per_episode=60)
        env.reset(seed=0)
        for _ in range(20):  # episodes end: prepares are queued on the idle threads
            env.step(np.ones(4, dtype=np.int64))
        vec, outcome = env._native._vec, []

        def caller():
            try:
                for k in range(40):
                    if call == "reset":
                        env.reset(seed=k)
                    elif call == "step":
                        env.step(np.ones(4, dtype=np.int64))
                    else:
                        vec._reset_ahead = bool(k % 2)
                outcome.append("done")
            except RuntimeError as error:
                outcome.append(str(error))

        thread = threading.Thread(target=caller)
        thread.start()
        time.sleep(0.01)
        env.close()
        # close() waits for no idle-priority prepare (on a saturated machine one can take over a minute),
        # only for the caller's call in flight.
        thread.join(20)
        assert not thread.is_alive() and len(outcome) == 1, outcome
        assert outcome[0] == "done" or "closed" in outcome[0] or "another call" in outcome[0], outcome
        assert vec.closed


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_a_partial_reset_after_an_interrupted_batch_is_refused_before_anything_is_dispatched():
    env = _slow_env()
    env.reset(seed=0)
    env.send(np.zeros(2, dtype=np.int64))
    _cancel(env)
    with pytest.raises(RuntimeError, match="interrupted part-way"):
        env.reset(seed=1, options={"reset_mask": np.array([True, False])})
    obs, _ = env.reset(seed=1)  # a full reset works at once
    fresh = _slow_env()
    assert np.array_equal(obs, fresh.reset(seed=1)[0])
    env.close(), fresh.close()


def _cancel(env) -> None:
    """Cancels the batch in flight as Ctrl-C would: a signal handler that raises while recv() waits."""
    import signal

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(0.05, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            env.recv()
    finally:
        timer.join()
        signal.signal(signal.SIGUSR1, previous)


@pytest.mark.tsan
def test_a_partial_reset_never_reports_a_failed_env_as_healthy():
    env = AleVectorEnv("breakout", 3, num_threads=2)
    env.reset(seed=0)
    _testing._inject_fault(env._native._vec, 1)
    with pytest.raises(RuntimeError, match="env 1: injected fault"):
        env.step(np.ones(3, dtype=np.int64))
    # Left alone by a partial reset, env 1 has no state to report: refused before dispatch (not a staged
    # row with its stale stack).
    with pytest.raises(RuntimeError, match="env 1 failed in an earlier step"):
        env.reset(seed=1, options={"reset_mask": np.array([True, False, False])})
    env.reset(seed=1, options={"reset_mask": np.array([True, True, False])})  # with it: rebuilt
    # A failure in the steps a partial reset drops: that env's row is reported failed, zeros (not
    # memory no env wrote).
    native = env._native
    _testing._inject_fault(native._vec, 2)
    native.send(np.ones(3, dtype=np.int64))
    native.send_reset([5], np.array([0]))
    batch = native.recv()
    assert batch.failed == [2] and "env 2" in batch.error and not batch.obs[2].any()
    assert batch.obs[0].any() and batch.obs[1].any()
    env.close()


@pytest.mark.tsan
def test_pending_and_render_from_another_thread_are_synchronised():
    # `pending` as a plain bool that recv writes without the GIL, or render reading the envs' busy flags
    # without being the engine's caller: ThreadSanitizer reports either.
    env = AleNativeVecEnv("pong", 2, num_threads=2, seed=0)
    env.reset()
    stop, seen = threading.Event(), []

    def watch():
        while not stop.is_set():
            try:
                seen.append(env._native._vec.pending)
                env.get_images()
            except RuntimeError as error:
                assert "another call" in str(error) or "in flight" in str(error), error

    watcher = threading.Thread(target=watch)
    watcher.start()
    for _ in range(60):
        _retrying(env.step_async, np.ones(2, dtype=np.int64))
        _retrying(env.step_wait)  # a refused step_wait took nothing: the step is still there to receive
    stop.set()
    watcher.join()
    assert seen and env.get_images()[0].shape == (210, 160, 3)
    env.close()


def _retrying(call, *args):
    """call(*args), again while the engine refuses it as busy (EngineBusy: nothing was consumed)."""
    while True:
        try:
            return call(*args)
        except _engine.EngineBusy:
            time.sleep(0.0005)


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.tsan
def test_a_signal_handlers_calls_during_a_wait_are_refused_or_deferred():
    import signal

    env, calls = _slow_env(), []

    def handler(*_):
        try:
            env.step(np.zeros(2, dtype=np.int64))  # the engine is inside recv: refused
        except RuntimeError as error:
            calls.append(str(error))
        env.close()  # deferred to the end of the wait, which then raises

    env.reset(seed=0)
    env.send(np.zeros(2, dtype=np.int64))
    previous = signal.signal(signal.SIGUSR1, handler)
    timer = threading.Timer(0.05, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1))
    timer.start()
    try:
        with pytest.raises(RuntimeError, match="closed .* while recv\\(\\) waited"):
            env.recv()
    finally:
        timer.join()
        signal.signal(signal.SIGUSR1, previous)
    assert len(calls) == 1 and "another call is using this engine" in calls[0]
    assert env._native.closed


def test_switching_resets_ahead_on_twice_loses_no_prepare():
    # The defect guarded: a second switch dropping each env's queued prepare, never queued again.
    env = AleVectorEnv("pong", 4, num_threads=2)
    vec = env._native._vec
    env.reset(seed=0)
    vec._reset_ahead = True
    vec._reset_ahead = True
    deadline = time.monotonic() + 120  # idle threads run when the machine has time for them
    while not vec._prepares_idle and time.monotonic() < deadline:
        time.sleep(0.05)
    assert vec._prepares_idle and vec._prepared == 4  # every env's next reset
    env.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
def test_exit_with_prepares_running_is_clean():
    # The idle threads may be inside a prepare when the process exits without closing its envs: the
    # jobs own what they touch (a function-local static they read would be destroyed under them).
    for game in ("space_invaders", "asterix"):
        proc = _python(f"""
            import numpy as np
            from sb3_ale_vec import AtariVectorEnv
            env = AtariVectorEnv({game!r}, 4, num_threads=2, max_num_frames_per_episode=40)
            env.reset(seed=0)
            for _ in range(30):
                env.step(np.zeros(4, dtype=np.int64))
            print("EXITING", flush=True)
        """)
        assert proc.returncode == 0 and "EXITING" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.sanitizers  # tests/sanitize.sh's CI tier runs it all the same
@pytest.mark.parametrize("cls", [AleVectorEnv, AtariVectorEnv])
def test_xla_steps_and_python_calls_on_one_env_never_take_each_others_batch(cls):
    jax = pytest.importorskip("jax")
    env = cls("breakout", 2, num_threads=2)
    handle, reset, step = env.xla()
    handle, _ = reset(handle, seed=0)
    jit_step = jax.jit(step)
    stop, python_errors, xla_errors = threading.Event(), [], []

    def python_calls():
        while not stop.is_set():
            try:
                env._native._vec.recv()  # nothing of its own in flight: never the XLA step's batch
                python_errors.append("took a batch")
            except RuntimeError as error:
                python_errors.append(str(error))

    other = threading.Thread(target=python_calls)
    other.start()
    try:
        for _ in range(100):
            try:
                handle, (obs, *_rest) = jit_step(handle, np.ones(2, dtype=np.int32))
                obs.block_until_ready()
            except Exception as error:  # XLA's own error type: refused while a Python call is inside
                xla_errors.append(str(error))
    finally:
        stop.set()
        other.join()
    assert python_errors and "took a batch" not in python_errors
    # The defect guarded: the Python recv taking the XLA step's batch between its send and its recv.
    assert len(xla_errors) < 100 and all("another call is using this engine" in e for e in xla_errors), xla_errors[:3]
    env.close()


def _workers() -> set[int]:
    """The engine workers' thread ids (Linux's /proc)."""
    found = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                if f.read().strip() == "sb3ale-worker":
                    found.add(int(task))
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return found


@pytest.mark.slow  # over 1 s
def test_a_worker_moved_while_it_sleeps_stays_where_it_was_put():  # Linux (its /proc), 2 CPUs or more
    # Two engines in one process, stepped with gaps longer than their workers' spin: the workers sleep,
    # and each wake-up is steered (kept off the caller's CPU, then given back). Then their threads are
    # moved to one CPU, as `taskset -a -p` or a scheduler does, and stepped on with gaps: each stays
    # there: a waking worker that restored the CPUs it had recorded would undo the move.
    before = _workers()
    ale = AtariVectorEnv("breakout", 2, num_threads=2)
    sb3 = AleNativeVecEnv("pong", 2, num_threads=2, seed=0)  # their workers have every CPU, as this thread
    ale.reset(seed=0)
    sb3.reset()
    every = os.sched_getaffinity(0)
    last = max(every)
    # This thread, the engines' caller, on `last` from now on: each steered wake-up narrows a worker to
    # the other CPUs, never to {last}, where the test moves them. So a worker still narrowed when moved
    # (its wake-up not yet come: on a loaded machine the caller may take every task first, and the
    # worker sleeps on) is told apart from its narrowing: the one move steering cannot tell
    # (wake_steering.hpp) cannot arise, and the test needs no wait for the workers' restores.
    os.sched_setaffinity(0, {last})

    def steps(n):
        for _ in range(n):
            time.sleep(0.003)
            ale.step(np.zeros(2, dtype=np.int64))
            time.sleep(0.003)
            sb3.step(np.zeros(2, dtype=np.int64))

    try:
        steps(50)
        steered = [_testing._wakes_steered(env._native._vec) for env in (ale, sb3)]
        assert all(n > 0 for n in steered), steered  # the steering under test does happen
        workers = _workers() - before
        assert len(workers) == 2, workers
        for tid in workers:
            os.sched_setaffinity(tid, {last})
        steps(100)
        assert {tid: os.sched_getaffinity(tid) for tid in workers} == {tid: {last} for tid in workers}
    finally:
        os.sched_setaffinity(0, every)
        ale.close()
        sb3.close()
