"""Chaos: several threads call, at random, every public method of one env of each front-end (steps,
send/recv, full and partial resets, render, get/set_attr, env_method, pending, a Ctrl-C delivered
mid-recv, the xla() step; close in its own round). Allowed: the call works, or an ordinary Python
exception at once. Never a crash, a hang, a sanitizer report, an observation row no env produced;
and afterwards a seeded reset gives an env equal to a fresh one, step by step. The quick tier runs a
few hundred sequences (also under both sanitizers); the slow tier 10,200 over the three. A failure
names its seed: SB3_ALE_VEC_CHAOS_SEED=<seed> replays that draw (thread timing aside)."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from sanitizer import SANITIZER

from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv

N = 3
# What a refused or bad call raises. (EngineError is a RuntimeError; KeyboardInterrupt is the
# test's own Ctrl-C.) Anything else, an AttributeError or a KeyError say, is a front-end's state torn.
ORDINARY = (RuntimeError, ValueError, TypeError, IndexError, KeyboardInterrupt)


def _make(front: str):
    if front == "sb3":
        # Without EpisodicLifeEnv, whose reset() after a life loss goes on with the same game (as SB3's
        # does): every reset() is then a full one, which "equal to a fresh env" needs.
        return AleNativeVecEnv("breakout", N, num_threads=2, seed=0, max_num_frames_per_episode=400,
                               episodic_life=False)
    cls = AleVectorEnv if front == "gymnasium" else AtariVectorEnv
    return cls("breakout", N, num_threads=2, max_num_frames_per_episode=400)


def _check_obs(env, obs) -> None:
    """A batch of observations as the env's space has them, every row an env's (never all zero:
    Breakout's frames never are, and a failed env's zero row comes with an EngineError instead)."""
    obs = np.asarray(obs)
    shape = getattr(env, "single_observation_space", env.observation_space).shape  # SB3's is one env's
    assert obs.dtype == np.uint8 and obs.shape == (N, *shape), obs.shape
    assert all(row.any() for row in obs), "an all-zero observation row"


def _calls(front: str, env, rng):
    """The front-end's public methods, each as a function of nothing (arguments drawn here)."""
    actions = lambda: rng.integers(0, env.action_space.n if front == "sb3" else env.single_action_space.n, N)  # noqa: E731
    if front == "sb3":
        def step():
            _check_obs(env, env.step(actions())[0])

        def step_wait():
            _check_obs(env, env.step_wait()[0])

        return [step, step, step, lambda: env.step_async(actions()), step_wait,
                lambda: _check_obs(env, env.reset()), lambda: env.seed(int(rng.integers(0, 1000))),
                lambda: env.get_images(), lambda: env.get_attr("render_mode"),
                lambda: env.set_attr("chaos", 1), lambda: env.env_method("get_action_meanings"),
                lambda: env._native._vec.pending]

    def step():
        _check_obs(env, env.step(actions())[0])

    def recv():
        _check_obs(env, env.recv()[0])

    def partial():
        mask = rng.random(N) < 0.5
        _check_obs(env, env.reset(seed=int(rng.integers(0, 1000)), options={"reset_mask": mask})[0])

    calls = [step, step, step, lambda: env.send(actions()), recv, partial,
             lambda: _check_obs(env, env.reset(seed=int(rng.integers(0, 1000)))[0]), lambda: env.render(),
             lambda: env.get_action_meanings(), lambda: env._native._vec.pending]
    xla = _xla_step(env)
    return calls + ([xla] if xla else [])


def _xla_step(env):
    if SANITIZER == "thread":
        return None  # jaxlib is not instrumented: ThreadSanitizer reports its own futures' races
    try:
        import jax
    except ImportError:
        return None
    handle, reset, step = env.xla()
    # Compiled here, before any Ctrl-C is armed: jax's tracing swallows a KeyboardInterrupt in a bare
    # `except:` (core.is_constant_dim) and then fails on its own state (an AttributeError inside
    # lowering, CI's seed 837761646), which is jax's under Ctrl-C, not the engine's.
    jit_step = jax.jit(step).lower(handle, np.ones(N, dtype=np.int32)).compile()
    state = {"handle": handle}

    def run():
        try:
            state["handle"], (obs, *_) = jit_step(state["handle"], np.ones(N, dtype=np.int32))
            _check_obs(env, obs)
        except Exception as error:  # XLA's error type: only the refusal of a call inside is ordinary
            if not any(s in str(error) for s in ("another call", "reset", "in flight", "closed", "failed")):
                raise
            raise RuntimeError(str(error)) from None
    return run


def _seed() -> int:
    return int(os.environ.get("SB3_ALE_VEC_CHAOS_SEED", np.random.SeedSequence().entropy % 2**32))


def run_chaos(front: str, sequences: int, seed: int, threads: int = 3, calls_per_sequence: int = 4,
              close_at_end: bool = False):
    """`sequences` random call sequences spread over `threads` threads and the main one (which also
    takes Ctrl-C); returns the env (closed if close_at_end) and the unexpected errors."""
    env = _make(front)
    env.reset() if front == "sb3" else env.reset(seed=0)
    unexpected, armed, outcomes = [], threading.local(), {"worked": 0, "refused": 0, "interrupted": 0}
    refusals = run_chaos.refusals = set()

    def interrupt(*_):
        if getattr(armed, "on", False):
            armed.on = False  # once per call: never again while it unwinds
            raise KeyboardInterrupt

    def worker(k: int, count: int) -> None:
        rng = np.random.default_rng([seed, k])
        calls = _calls(front, env, rng)
        for _ in range(count):
            for _ in range(calls_per_sequence):
                call = calls[int(rng.integers(0, len(calls)))]
                try:
                    try:
                        armed.on = True
                        call()
                        outcomes["worked"] += 1
                    finally:
                        armed.on = False
                except KeyboardInterrupt:  # also one that came as the call returned
                    outcomes["interrupted"] += 1
                except ORDINARY as error:
                    outcomes["refused"] += 1
                    refusals.add(f"{type(error).__name__}: {str(error)[:70]}")
                except BaseException as error:  # noqa: BLE001 - the point: anything else is a finding
                    unexpected.append(f"{front}, seed {seed}, {call.__name__}: {type(error).__name__}: {error}")

    previous = signal.signal(signal.SIGUSR1, interrupt)
    stop = threading.Event()
    main_id = threading.main_thread().ident

    def ctrl_c() -> None:  # Ctrl-C at random moments; only the main thread runs the handler
        rng = np.random.default_rng([seed, 99])
        while not stop.wait(float(rng.uniform(0.005, 0.05))):
            signal.pthread_kill(main_id, signal.SIGUSR1)

    share = sequences // (threads + 1)
    pool = [threading.Thread(target=worker, args=(k, share), daemon=True) for k in range(threads)]
    pool.append(threading.Thread(target=ctrl_c, daemon=True))
    for t in pool:
        t.start()
    try:
        worker(threads, sequences - threads * share)
        if close_at_end:
            env.close()  # while the others may still be inside a call
    finally:
        for t in pool[:-1]:
            t.join(120)
        stop.set()
        pool[-1].join()
        signal.signal(signal.SIGUSR1, previous)
    hung = [t.name for t in pool if t.is_alive()]
    assert not hung, f"{front}, seed {seed}: threads still inside a call after 120 s: {hung}"
    assert outcomes["worked"] > 0, outcomes  # not a run of refusals alone
    run_chaos.outcomes = outcomes  # for the curious (and the closing note's figures)
    return env, unexpected


def _rollout(env, front: str, seed: int, steps: int = 40):
    rng = np.random.default_rng(seed)
    if front == "sb3":
        env.seed(seed)
        out = [env.reset().copy()]
        for _ in range(steps):
            obs, rewards, dones, _ = env.step(rng.integers(0, env.action_space.n, N))
            out += [obs.copy(), rewards.copy(), dones.copy()]
        return out
    out = [env.reset(seed=seed)[0].copy()]
    for _ in range(steps):
        obs, rewards, terminated, truncated, _ = env.step(rng.integers(0, env.single_action_space.n, N))
        out += [obs.copy(), rewards.copy(), terminated.copy(), truncated.copy()]
    return out


def _chaos_then_equal_to_fresh(front: str, sequences: int) -> None:
    seed = _seed()
    env, unexpected = run_chaos(front, sequences, seed)
    assert not unexpected, unexpected[:5]
    fresh = _make(front)
    try:
        ours, theirs = _rollout(env, front, 5), _rollout(fresh, front, 5)
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs)), f"{front}, seed {seed}: differs from a fresh env"
    finally:
        env.close(), fresh.close()
    closed, unexpected = run_chaos(front, sequences // 4, seed + 1, close_at_end=True)
    assert not unexpected, unexpected[:5]
    assert closed._native.closed


@pytest.mark.slow  # over 2.5 s in the quick tier; tests/sanitize.sh's CI tier runs it
@pytest.mark.sanitizers
@pytest.mark.tsan
@pytest.mark.parametrize("front", ["sb3", "gymnasium", "ale"])
def test_chaos_short(front):
    _chaos_then_equal_to_fresh(front, {"address": 60}.get(SANITIZER, 240))


@pytest.mark.slow
@pytest.mark.parametrize("front", ["sb3", "gymnasium", "ale"])
@pytest.mark.deep  # the short chaos runs stay in core
def test_chaos_long(front):
    _chaos_then_equal_to_fresh(front, 3_400)  # 10,200 sequences over the three, and a quarter more closing
