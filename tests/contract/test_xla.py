"""xla(): ale-py's own XLA suite against the drop-in, ours beside ale-py's inside jit + scan,
AleVectorEnv's xla() against its own step(), vmap and the errors."""

import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled
from gymnasium.utils.env_checker import data_equivalence

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("chex")

import ale_py  # noqa: E402

from sb3_ale_vec import AleVectorEnv, AtariVectorEnv  # noqa: E402
from sb3_ale_vec.gymnasium import xla as xla_module  # noqa: E402
from ale_py_sdist import ROOT, sdist_path, drop_in_was_tested  # noqa: E402

SUITE = f"ale_py-{ale_py.__version__}/tests/python/test_atari_vector_xla.py"


def rollout(step, handle, actions):
    """One jitted lax.scan over step: what a JAX user runs."""
    return jax.jit(lambda h, xs: jax.lax.scan(lambda c, a: step(c, a), h, xs))(handle, jnp.asarray(actions))


def host(tree):
    return jax.tree.map(np.asarray, tree)


def sdist_suite(tmp_path):
    with tarfile.open(sdist_path()) as tar:
        (tmp_path / "test_atari_vector_xla.py").write_bytes(tar.extractfile(SUITE).read())
    return tmp_path / "test_atari_vector_xla.py"


@pytest.mark.slow
def test_ale_py_xla_suite_passes_unchanged_against_the_drop_in(tmp_path):
    suite = sdist_suite(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "ale_py_dropin", "-p", "no:cacheprovider",
                             str(suite)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "25 passed" in result.stdout, result.stdout[-1000:]
    assert drop_in_was_tested(result.stdout), result.stdout[-1000:]


@pytest.mark.parametrize("game, kwargs", [("breakout", {}), ("breakout", {"continuous": True}),
                                          ("breakout", {"grayscale": False, "stack_num": 2}),
                                          ("pooyan", {}), ("pacman", {"grayscale": False})])  # 220, 250 rows
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_equal_to_ale_pys_own_xla_inside_jit_and_scan(game, kwargs):
    n, steps, seeds = 3, 150, np.array([5, 6, 7])
    ours, theirs = AtariVectorEnv(game, n, **kwargs), ale_py.AtariVectorEnv(game, num_envs=n, **kwargs)
    results = []
    actions = np.stack([ours.action_space.sample() for _ in range(steps)])
    for env in (ours, theirs):
        handle, reset, step = env.xla()
        handle, first = reset(handle, seed=seeds)
        handle, out = rollout(step, handle, actions)
        results.append(host((first, out)))
        env.close()
    assert data_equivalence(results[0], results[1])
    assert results[0][1][4]["frame_number"][-1].min() > 0


@pytest.mark.parametrize("ram_info", [False, True])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_equal_to_the_drop_ins_own_step_with_a_partial_reset(ram_info):
    env, ref = AtariVectorEnv("breakout", 3, ram_info=ram_info), AtariVectorEnv("breakout", 3, ram_info=ram_info)
    handle, reset, step = env.xla()
    handle, got = reset(handle, seed=1)
    assert data_equivalence(host(got), ref.reset(seed=1))
    actions = np.stack([env.action_space.sample() for _ in range(40)])
    handle, out = rollout(step, handle, actions)
    expected = [ref.step(a) for a in actions]
    stacked = tuple(np.stack([e[j] for e in expected]) for j in range(4))
    infos = {key: np.stack([e[4][key] for e in expected]) for key in expected[0][4]}
    assert ("ram" in infos) == ram_info and data_equivalence(host(out), (*stacked, infos))
    mask = np.array([False, True, False])
    handle, got = reset(handle, seed=np.array([9]), reset_mask=mask)
    assert data_equivalence(host(got), ref.reset(seed=np.array([9]), options={"reset_mask": mask}))
    handle, got = step(handle, np.zeros(3, np.int32))
    assert data_equivalence(host(got), ref.step(np.zeros(3, np.int64)))
    env.close(), ref.close()


@pytest.mark.parametrize("preset, game, mode, life, kwargs", [
    ("gymnasium", "pong", "NextStep", False, {}),
    ("gymnasium", "breakout", "SameStep", True, {"ram_info": True}),
    ("sb3", "breakout", "SameStep", True, {}),
    ("sb3", "breakout", "SameStep", True, {"ram_info": True}),
    ("gymnasium", "breakout", "NextStep", False, {"obs_type": "ram", "ram_info": True}),
    ("gymnasium", "pooyan", "SameStep", False, {"obs_type": "grayscale", "frameskip": 2,
                                                "max_num_frames_per_episode": 150})])  # 220 rows
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_ale_vector_env_xla_equals_its_step(preset, game, mode, life, kwargs):
    env, ref = (AleVectorEnv(game, 3, preset=preset, autoreset_mode=mode, episodic_life=life, **kwargs)
                for _ in range(2))
    ram = kwargs.get("ram_info", False)
    handle, reset, step = env.xla()
    handle, (obs, info) = host(reset(handle, seed=3))
    ref_obs, ref_info = ref.reset(seed=3)
    assert np.array_equal(obs, ref_obs)
    for key in set(ref_info) & set(info):
        assert np.array_equal(info[key], ref_info[key]), key
    actions = np.stack([env.action_space.sample() for _ in range(200)])
    _, (obs, rewards, terminated, truncated, info) = host(rollout(step, handle, actions))
    assert rewards.dtype == np.float32
    games = finals = 0
    for t, a in enumerate(actions):
        o, r, te, tr, i = ref.step(a)
        assert np.array_equal(obs[t], o) and np.array_equal(rewards[t], r.astype(np.float32))
        assert np.array_equal(terminated[t], te) and np.array_equal(truncated[t], tr)
        for key in ("lives", "episode_frame_number", "frame_number", "_lives", "_frame_number",
                    *(("ram", "_ram") if ram else ())):
            assert np.array_equal(info[key][t], i[key]), key
        if "final_obs" in i:
            finals += 1
            assert np.array_equal(info["_final_obs"][t], i["_final_obs"])
            for k in np.flatnonzero(i["_final_obs"]):
                assert np.array_equal(info["final_obs"][t][k], i["final_obs"][k])
                for key in ("lives", "episode_frame_number", "frame_number", *(("ram",) if ram else ())):
                    assert np.array_equal(info["final_info"][key][t][k], i["final_info"][key][k]), key
        if "episode" in i:
            games += 1
            assert np.array_equal(info["_episode"][t], i["_episode"])
            assert np.allclose(info["episode"]["r"][t], i["episode"]["r"])
            assert np.array_equal(info["episode"]["l"][t], i["episode"]["l"])
    assert ("episode" in info) == (preset == "sb3") and ("final_obs" in info) == (mode == "SameStep")
    assert ("ram" in info) == ram and ("ram" in info.get("final_info", {})) == (ram and mode == "SameStep")
    assert finals > 0 or mode == "NextStep"
    env.close(), ref.close()


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_vmap_is_refused_as_by_ale_py():
    for env in (AtariVectorEnv("pong", 2), ale_py.AtariVectorEnv("pong", num_envs=2)):
        handle, reset, step = env.xla()
        handle, _ = reset(handle, seed=0)
        with pytest.raises(Exception):  # broadcast_all hands the target a (2, 8) handle
            jax.block_until_ready(jax.vmap(step, in_axes=(None, 0))(handle, jnp.zeros((2, 2), jnp.int32)))
        env.close()
    env = AtariVectorEnv("pong", 2)
    handle, reset, step = env.xla()
    with pytest.raises(Exception, match="cannot be vmapped"):
        jax.block_until_ready(jax.vmap(lambda h: reset(h, seed=0))(jnp.stack([handle, handle])))
    env.close()


def test_each_call_returns_a_new_handle_and_the_batched_mode_follows_env_ids():
    env = AtariVectorEnv("pong", 4, batch_size=2)
    handle, reset, step = env.xla()
    with pytest.raises(Exception, match="before reset"):
        jax.block_until_ready(step(handle, jnp.zeros(2, jnp.int32)))
    new, (obs, info) = reset(handle, seed=0)
    assert new.shape == (8,) and new.dtype == jnp.uint8 and obs.shape == (2, 4, 84, 84)
    for _ in range(5):
        new, (obs, _, _, _, info) = step(new, jnp.zeros(2, jnp.int32))
        assert len(set(np.asarray(info["env_id"]).tolist())) == 2
    env.close()


def test_errors():
    env = AtariVectorEnv("pong", 2)
    handle, reset, step = env.xla()
    with pytest.raises(ValueError, match="shape"):
        step(handle, jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="one entry per"):
        reset(handle, seed=np.arange(3))
    with pytest.raises(ValueError, match="reset_mask"):
        reset(handle, reset_mask=np.ones(3, bool))
    handle, _ = reset(handle, seed=0)
    with pytest.raises(Exception, match="out of range"):
        jax.block_until_ready(step(handle, jnp.full(2, 99, jnp.int32)))
    env.close()
    with pytest.raises(Exception, match="names no open env"):
        jax.block_until_ready(step(handle, jnp.zeros(2, jnp.int32)))
    with pytest.raises(RuntimeError, match="closed"):
        env.xla()
    with pytest.raises(ValueError, match="NEXT_STEP"):
        AtariVectorEnv("pong", 2, autoreset_mode="SameStep").xla()
    with pytest.raises(ValueError, match="DISABLED"):
        AleVectorEnv("pong", 2, autoreset_mode="Disabled").xla()
    with pytest.raises(RuntimeError, match="API 0.3, but .* provides API 0.2"):
        xla_module.check_ffi_api((0, 3), (0, 2), "0.0.1")
    xla_module.check_ffi_api((0, 3), (0, 4), "9.9")  # a newer minor runs older handlers


def test_a_ram_buffer_of_the_wrong_size_is_refused():
    """A RAM buffer neither empty nor one row per env is refused with both sizes, and the env still
    resets as ale-py's contract says."""
    env, ref = AtariVectorEnv("pong", 2, ram_info=True), AtariVectorEnv("pong", 2, ram_info=True)
    handle, reset, _ = env.xla()
    xla_module.register(jax)
    structs = [jax.ShapeDtypeStruct(s, d) for s, d in [((8,), jnp.uint8), (env.observation_space.shape, jnp.uint8),
                                                        *[((2,), jnp.int32)] * 4, ((2, 127), jnp.uint8)]]
    call = jax.ffi.ffi_call(xla_module.RESET_TARGET, structs, has_side_effect=True)
    with pytest.raises(Exception, match="ram has 254 elements, expected 256"):
        jax.block_until_ready(call(handle, jnp.arange(2, dtype=jnp.int32), jnp.full(2, 4, jnp.int32)))
    assert data_equivalence(host(reset(handle, seed=4)[1]), ref.reset(seed=4))
    env.close(), ref.close()


def test_the_cuda_targets_staging_through_host_memory():
    """The CUDA targets run the CPU ones on host copies (native/xla/xla_stage.hpp). No GPU is here, so
    _testing stages a small target the same way with memcpy as the copies: every argument in, every
    result out, dims and dtypes kept, an empty result, bad dtypes refused; the CUDA targets exist."""
    from sb3_ale_vec import _engine, _testing

    assert all(_engine.xla_ffi_cuda_targets())
    jax.ffi.register_ffi_target("sb3_ale_vec_test_staged", _testing._xla_staged_target(), platform="cpu")
    x = np.arange(250, 256, dtype=np.uint8).reshape(2, 3)
    y, z = np.arange(-3, 4, dtype=np.int32), np.linspace(-1, 1, 5, dtype=np.float32)
    shapes = [(x.shape, jnp.uint8), (y.shape, jnp.int32), (z.shape, jnp.float32), (x.shape, jnp.bool_), ((0,), jnp.uint8)]
    call = jax.ffi.ffi_call("sb3_ale_vec_test_staged", [jax.ShapeDtypeStruct(*s) for s in shapes])
    _testing._xla_staged_bytes(True)
    got = host(jax.jit(call)(x, y, z))
    expected = [x + np.uint8(1), 2 * y, -z, x % 2 == 1, np.zeros(0, np.uint8)]
    assert all(data_equivalence(a, b) for a, b in zip(got, expected))
    assert _testing._xla_staged_bytes() == 2 * (x.nbytes + y.nbytes + z.nbytes) + x.size
    with pytest.raises(Exception, match="argument 1 has the wrong dtype"):
        jax.block_until_ready(call(x, y.astype(np.float32), z))
    with pytest.raises(Exception, match="expected 3 arguments"):
        jax.block_until_ready(call(x, y))


def test_without_jax_xla_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    env = AtariVectorEnv("pong", 1)
    with pytest.raises(DependencyNotInstalled, match=r'pip install "sb3-ale-vec\[jax\]"'):
        env.xla()
    env.close()


@pytest.mark.slow
def test_ppo_example_runs():
    """A smoke test: learning is out of reach in a test's seconds on 2 cores (a CPU Nature CNN runs
    tens of env steps/s with its updates), so it checks the run, the losses and the throughput line."""
    pytest.importorskip("optax")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "ppo_atari_jax.py"), "--num-envs", "2",
                          "--num-steps", "16", "--total-steps", "64", "--minibatches", "2", "--epochs", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    line = next(s for s in out.stdout.splitlines() if s.startswith("iteration 2/2"))
    assert "env steps/s" in line and np.isfinite(float(line.split("loss ")[1].split(",")[0]))


@pytest.mark.slow  # about 10 s
def test_a_key_refused_during_xla_steps_is_warned_once_at_close(monkeypatch):
    # xla()'s steps return to no Python of ours: a run-time check that refuses a key meanwhile is
    # warned of when the env closes, once for the key (4 envs of it).
    import time
    import warnings

    from sb3_ale_vec import reset_table

    monkeypatch.setattr(reset_table, "vetted", lambda *key: True)  # Kung-Fu Master's resets keep play
    env = AtariVectorEnv("kung_fu_master", 4, num_threads=2, max_num_frames_per_episode=2000)
    vec, n = env._native._vec, env.single_action_space.n
    handle, reset, step = env.xla()
    handle, _ = reset(handle, seed=0)
    actions = np.random.default_rng(0).integers(0, n, (800, 4)).astype(np.int32)
    for a in actions:  # episodes of about 500 steps: the first swaps, then their checks
        handle, out = step(handle, jnp.asarray(a))
        jax.block_until_ready(out)
        deadline = time.monotonic() + 60
        while not vec._prepares_idle and time.monotonic() < deadline:  # each prepare and check in time
            time.sleep(0.002)
    assert vec.reset_ahead_mismatches > 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.close()
    refused = [str(w.message) for w in caught if "differed from the real reset" in str(w.message)]
    assert len(refused) == 1 and "kung_fu_master" in refused[0], [str(w.message) for w in caught]
