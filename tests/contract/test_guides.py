"""ALE's vector-env guides as users read them. The 0.12 guide, from the pinned ale-py sdist
(docs/vector-environment.md): every Python block runs with only its import changed to sb3_ale_vec. The
older guide's API (``VectorAtariEnv``, names ale-py never shipped): each of its keywords and calls held to
ale-py's own ``AtariVectorEnv`` under ale-py's names."""

from __future__ import annotations

import inspect
import re
import tarfile

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as Reference

from ale_py_sdist import sdist_path
from sb3_ale_vec import AtariVectorEnv, VectorAtariEnv, _engine


def code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```(?:python)?\n(.*?)```", markdown, flags=re.S)


def ours(block: str) -> str:
    return block.replace("from ale_py.vector_env import", "from sb3_ale_vec import")


def guide_012() -> str:
    version = _engine.ALE_VERSION
    with tarfile.open(sdist_path()) as tar:
        return tar.extractfile(f"ale_py-{version}/docs/vector-environment.md").read().decode()


@pytest.fixture
def drop_in_registry(monkeypatch):
    """gym.make_vec("ALE/...") reaches the drop-in, as ale-py's own suite is run here."""
    gym.register_envs(ale_py)
    for spec in gym.registry.values():
        if spec.vector_entry_point == "ale_py.vector_env:AtariVectorEnv":
            monkeypatch.setattr(spec, "vector_entry_point", "sb3_ale_vec:AtariVectorEnv")


def run_blocks(blocks: list[str], namespace: dict, make=AtariVectorEnv) -> None:
    """Run the blocks in order in one namespace, as a reader would: a block that uses ``envs`` after
    an earlier one closed it gets a fresh one, and each new ``envs`` is reset for the next block."""
    for block in blocks:
        if "observations.shape = (" in block:  # a shape written as prose, not code: check it instead
            env = AtariVectorEnv("breakout", 2)
            assert env.reset()[0].shape == (2, 4, 84, 84)
            env.close()
            continue
        if "envs." in block and "envs =" not in block and getattr(namespace.get("envs"), "closed", True):
            namespace["envs"] = make(game="breakout", num_envs=4)
            namespace["envs"].reset()
            namespace["actions"] = namespace["envs"].action_space.sample()
        before = namespace.get("envs")
        exec(compile(ours(block), "<guide>", "exec"), namespace)
        envs = namespace.get("envs")
        if envs is not before and envs is not None:
            if before is not None and not before.closed:
                before.close()
            if not envs.closed and "reset(" not in block:
                envs.reset()  # a configuration block: the next block steps it
        if envs is not None and not envs.closed:
            namespace["actions"] = envs.action_space.sample()


@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_the_012_guide_runs(drop_in_registry):
    blocks = code_blocks(guide_012())
    assert len(blocks) >= 6
    signature, runnable = [b for b in blocks if "game: str =" in b], [b for b in blocks if "game: str =" not in b]
    # The equivalence block names its variables; the signature block is a listing, checked below.
    namespace = {"gym": gym, "env_id": "ALE/Breakout-v5", "stack_num": 4, "num_envs": 2}
    run_blocks(runnable, namespace)
    for name in ("gym_envs", "ale_envs"):
        env = namespace[name]
        env.reset(seed=0)
        env.step(env.action_space.sample())
    assert isinstance(namespace["ale_envs"], AtariVectorEnv)
    namespace["envs"].close()
    # The "Advanced Configuration" listing: every keyword and default it shows is the drop-in's.
    listed = dict(re.findall(r"^\s*(\w+)(?::\s*[\w.]+)?\s*=\s*([^,#\n]+),", signature[0], flags=re.M))
    params = inspect.signature(AtariVectorEnv.__init__).parameters
    for name, default in listed.items():
        if name in ("game", "num_envs"):
            continue
        assert params[name].default == eval(default, {"gym": gym}), name
    # Every keyword the guide lists, and ours beside them: ram_info, keyword-only, last (issue 36).
    assert set(listed) - {"game", "num_envs"} == set(params) - {"self", "game", "num_envs", "ram_info"}


# The older guide's "Advanced Configuration", every keyword at the value it shows, and ale-py's name for each.
OLDER_KEYWORDS = dict(frame_skip=4, grayscale=True, stack_num=4, img_height=84, img_width=84, noop_max=30,
                      fire_reset=True, episodic_life=False, max_episode_steps=108000, repeat_action_probability=0.0,
                      full_action_space=False, batch_size=0, num_threads=0, thread_affinity_offset=-1)
ALE_PY_NAMES = {"frame_skip": "frameskip", "fire_reset": "use_fire_reset",
                "max_episode_steps": "max_num_frames_per_episode"}


def steps_equal(ours, reference, steps: int, seed: int, batched: bool = False) -> None:
    got, expected = ours.reset(seed=seed), reference.reset(seed=seed)
    assert np.array_equal(got[0], expected[0]) and got[1].keys() == expected[1].keys()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        actions = rng.integers(0, ours.single_action_space.n, ours.batch_size if batched else ours.num_envs)
        if batched:  # the guide's send/recv: each batch's env_id names its rows
            ours.send(actions)
            reference.send(actions)
            got, expected = ours.recv(), reference.recv()
        else:
            got, expected = ours.step(actions), reference.step(actions)
        for a, b in zip(got[:4], expected[:4]):
            assert np.array_equal(a, b)
        assert all(np.array_equal(got[4][k], expected[4][k]) for k in ("env_id", "lives", "episode_frame_number"))


@pytest.mark.slow
def test_every_keyword_of_the_older_guide_gives_ale_pys_env_under_its_names():
    ours = VectorAtariEnv(game="Breakout", num_envs=8, seed=0, **OLDER_KEYWORDS)
    reference = Reference("breakout", 8, **{ALE_PY_NAMES.get(k, k): v for k, v in OLDER_KEYWORDS.items()})
    try:
        assert ours.observation_space == reference.observation_space and ours.games == ["breakout"] * 8
        steps_equal(ours, reference, 60, seed=0)
    finally:
        ours.close()
        reference.close()


@pytest.mark.slow
def test_the_older_guides_batches_and_affinity_give_ale_pys_batches():
    # "envs = VectorAtariEnv(game="Breakout", num_envs=16, batch_size=4)", then send/recv; and affinity from core 0.
    for kwargs in (dict(num_envs=16, batch_size=4, num_threads=1), dict(num_envs=8, thread_affinity_offset=0)):
        ours, reference = VectorAtariEnv(game="Breakout", **kwargs), Reference("breakout", **kwargs)
        try:
            steps_equal(ours, reference, 40, seed=3, batched="batch_size" in kwargs)
        finally:
            ours.close()
            reference.close()


def test_vector_atari_env_takes_the_older_guides_names():
    env = VectorAtariEnv(game="ALE/Breakout-v5", num_envs=2, frame_skip=3, fire_reset=False, max_episode_steps=90,
                         seed=5)
    reference = AtariVectorEnv("breakout", 2, frameskip=3, use_fire_reset=False, max_num_frames_per_episode=90)
    obs, info = env.reset()  # the constructor's seed seeds the first reset
    expected, expected_info = reference.reset(seed=5)
    assert np.array_equal(obs, expected) and all(np.array_equal(info[k], expected_info[k]) for k in info)
    for _ in range(40):
        actions = np.ones(2, dtype=np.int64)
        for a, b in zip(env.step(actions)[:4], reference.step(actions)[:4]):
            assert np.array_equal(a, b)
    with pytest.raises(TypeError, match="not both"):
        VectorAtariEnv("Breakout", 1, frameskip=4)
    env.close()
    reference.close()
