"""A fuzz of the raw `_engine.Vectorizer` API, below every front-end's checks: random sequences of
valid and invalid calls and arguments (ids, masks, dtypes, shapes, out-of-range actions and
strengths, seeds, calls in the wrong order and after close). Only ordinary Python exceptions may come
out: never a crash, a hang or a sanitizer report (tests/sanitize.sh runs this under ASan + UBSan).
Whatever the sequence, a full reset then gives an engine equal to a fresh one. A failure names its
seed: SB3_ALE_VEC_FUZZ_SEED=<seed> replays it."""

from __future__ import annotations

import os

import numpy as np
import pytest
from sanitizer import SANITIZER

from sb3_ale_vec import _engine, _testing
from sb3_ale_vec.options import build_batch

ORDINARY = (RuntimeError, ValueError, TypeError, IndexError, OverflowError)
N = 3


def _configs():
    return build_batch("breakout", N, "ale", layout="frames", next_step_autoreset=True).configs


def _value(rng, kind: str):
    """An argument: usually right, often wrong in one way."""
    n = int(rng.integers(0, 5))
    wrong = [
        lambda: rng.integers(-3, N + 3, n),                      # ids out of range, any count
        lambda: rng.integers(0, N, n).astype(rng.choice(["int8", "uint64", "float32", "float64", "bool"])),
        lambda: rng.integers(0, N, (2, 2)),                       # 2-d
        lambda: np.array(["a", "b"]),
        lambda: None,
        lambda: [int(rng.integers(-2**40, 2**40))],
        lambda: np.zeros(0, dtype=np.int64),
    ]
    if rng.random() < 0.4:
        return wrong[int(rng.integers(0, len(wrong)))]()
    if kind == "ids":
        return rng.permutation(N)[: int(rng.integers(1, N + 1))].astype(np.int64)
    if kind == "actions":
        return rng.integers(0, 4, N).astype(np.int64)
    if kind == "strengths":
        return rng.random(N).astype(np.float32) * (1.5 if rng.random() < 0.2 else 1.0)
    seeds = [None if rng.random() < 0.2 else [int(w) for w in rng.integers(0, 2**32, int(rng.integers(1, 3)))]
             for _ in range(N)]
    if rng.random() < 0.2:
        seeds = seeds[: int(rng.integers(0, N))] + [[-1]] * int(rng.random() < 0.5)
    return seeds


CALLS = ["send", "send", "send", "send_ids", "recv", "recv", "recv", "reset", "reset_ids", "screen", "pending",
         "switch", "profile", "close", "handle", "fault"]


def _call(vec, rng, name: str) -> None:
    if name == "send":
        vec.send(_value(rng, "actions"), None, _value(rng, "strengths") if rng.random() < 0.3 else None)
    elif name == "send_ids":
        ids = _value(rng, "ids")
        count = len(ids) if isinstance(ids, np.ndarray) and ids.ndim == 1 else 1
        vec.send(rng.integers(-1, 5, count), ids)
    elif name == "recv":
        batch = vec.recv()
        obs = batch["obs"]
        assert obs.dtype == np.uint8 and obs.shape[1:] == tuple(vec.obs_shape) and len(batch["env_id"]) == len(obs)
        ok = np.ones(len(obs), dtype=bool)
        ok[[list(batch["env_id"]).index(i) for i in batch["failed"]]] = False
        assert all(row.any() for row in obs[ok]), "an all-zero row of an env that did not fail"
    elif name == "reset":
        vec.send_reset(_value(rng, "seeds"), None)
    elif name == "reset_ids":
        ids = _value(rng, "ids")
        vec.send_reset([None] * (len(ids) if isinstance(ids, np.ndarray) and ids.ndim == 1 else 1), ids)
    elif name == "screen":
        vec.screen_rgb(int(rng.integers(-2, N + 2)))
    elif name == "pending":
        _ = vec.pending, vec.num_envs, vec.obs_shape, vec.batch_size
    elif name == "switch":
        switch = str(rng.choice(["_reset_ahead", "_resets_first", "_reset_ahead_wait", "_hold_prepares"]))
        if switch.startswith("_reset_ahead_wait") or switch == "_hold_prepares":  # the tests' switches
            getattr(_testing, switch)(vec, bool(rng.random() < 0.5))
        else:
            setattr(vec, switch, bool(rng.random() < 0.5))
    elif name == "profile":
        vec._profile(bool(rng.random() < 0.5)) if rng.random() < 0.7 else vec._take_profile()
    elif name == "close":
        if rng.random() < 0.1:
            vec.close()
    elif name == "handle":
        vec.xla_handle()
    elif name == "fault":
        _testing._inject_fault(vec, int(rng.integers(-1, N + 1)))


def _run(vec, steps: int = 30):
    vec.send_reset([[9]] * N, None)
    out = [vec.recv()["obs"].copy()]
    for t in range(steps):
        vec.send(np.full(N, t % 4, dtype=np.int64), None, None)
        batch = vec.recv()
        out += [batch["obs"].copy(), batch["reward"].copy(), batch["terminated"].copy()]
    return out


def fuzz(sequences: int, seed: int, length: int = 12) -> dict:
    outcomes: dict = {}
    configs = _configs()
    for s in range(sequences):
        rng = np.random.default_rng([seed, s])
        vec = _engine.Vectorizer(configs, int(rng.integers(1, 4)), -1, int(rng.choice([0, 0, 1, 2])))
        for _ in range(length):
            name = str(rng.choice(CALLS))
            try:
                _call(vec, rng, name)
                outcomes[name, "ok"] = outcomes.get((name, "ok"), 0) + 1
            except ORDINARY as error:
                outcomes[name, type(error).__name__] = outcomes.get((name, type(error).__name__), 0) + 1
            except Exception as error:  # anything else is a finding
                raise AssertionError(f"seed {seed}, sequence {s}, {name}: {type(error).__name__}: {error}") from error
        if not vec.closed and vec.batch_size == N:  # whatever came before: a full reset is a fresh engine
            fresh = _engine.Vectorizer(configs, 1, -1, 0)
            for call in (vec.recv, lambda: vec.send_reset([None] * N, None), vec.recv,
                         lambda: vec.send(np.zeros(N, dtype=np.int64), None, None), vec.recv):
                try:  # what is in flight, and a fault injected for a next step, used up
                    call()
                except ORDINARY:
                    pass
            ours, theirs = _run(vec), _run(fresh)
            assert all(np.array_equal(a, b) for a, b in zip(ours, theirs)), f"seed {seed}, sequence {s}"
            fresh.close()
        vec.close()
    return outcomes


def _seed() -> int:
    return int(os.environ.get("SB3_ALE_VEC_FUZZ_SEED", np.random.SeedSequence().entropy % 2**32))


@pytest.mark.slow  # over 2.5 s in the quick tier; tests/sanitize.sh's CI tier runs it
@pytest.mark.sanitizers
@pytest.mark.tsan
def test_fuzz_short():
    outcomes = fuzz({"address": 10}.get(SANITIZER, 15), _seed())
    assert sum(v for (_, kind), v in outcomes.items() if kind == "ok") > 10, outcomes


@pytest.mark.slow
@pytest.mark.deep  # the short fuzz run stays in core
def test_fuzz_long():
    seed = _seed()
    outcomes = fuzz(80, seed)  # an engine built and closed per sequence: about 0.3 s each
    print(f"fuzz seed {seed}: {sum(outcomes.values())} calls,", sorted(outcomes.items()))
