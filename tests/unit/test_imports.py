"""What importing the package costs each kind of user: Gymnasium, ale-py, JAX and Ray users import
neither torch nor SB3; SB3 users get them on first use. One version, everywhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import version

import pytest

import sb3_ale_vec

HEAVY = ("torch", "stable_baselines3")


def modules_after(code: str) -> dict[str, bool]:
    probe = f"import sys\n{code}\nimport json; print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import sb3_ale_vec",
    "from sb3_ale_vec import AtariVectorEnv; e = AtariVectorEnv('pong', 2); e.reset(seed=0); e.close()",
    "from sb3_ale_vec import AleVectorEnv, VectorAtariEnv; e = AleVectorEnv('pong', 2); e.reset(seed=0); e.close()",
    "import gymnasium as gym, sb3_ale_vec; e = gym.make_vec('sb3_ale_vec/Pong-v5', 2); e.reset(); e.close()",
    "import sb3_ale_vec.distributed.shard",
])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.wheel
def test_the_gymnasium_ale_and_ray_paths_import_neither_torch_nor_sb3(code):
    assert modules_after(code) == {m: False for m in HEAVY}


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
def test_the_jax_path_imports_neither_torch_nor_sb3():
    pytest.importorskip("jax")
    code = ("import numpy as np; from sb3_ale_vec import AtariVectorEnv; e = AtariVectorEnv('pong', 2)\n"
            "h, reset, step = e.xla(); h, _ = reset(h, seed=0); step(h, np.zeros(2, np.int32)); e.close()")
    assert modules_after(code) == {m: False for m in HEAVY}


@pytest.mark.slow  # over 2.5 s in the quick tier
def test_sb3_users_get_sb3_on_first_use():
    pytest.importorskip("stable_baselines3")
    assert modules_after("from sb3_ale_vec import AleNativeVecEnv") == {m: True for m in HEAVY}


@pytest.mark.wheel
def test_one_version():
    assert sb3_ale_vec.__version__ == version("sb3-ale-vec")


@pytest.mark.wheel
def test_the_engine_exports_nothing_of_ales_core():
    # ALE's core is linked in with its symbols hidden, so it never binds to ale-py's own ALE.
    import shutil

    from sb3_ale_vec import _engine, _testing

    if shutil.which("nm") is None:
        pytest.skip("nm is not installed: a tool this machine lacks")
    for module in (_engine, _testing):
        out = subprocess.run(["nm", "-D", "--defined-only", "-C", module.__file__], capture_output=True, text=True,
                             check=True).stdout
        assert "PyInit_" in out and not re.search(r"(?<!\w)(ale::|inflate)", out), module.__name__


@pytest.mark.slow  # over 1 s: the quick tier's budget (30 s on 2 cores)
@pytest.mark.wheel
def test_ale_pys_own_ale_and_this_engine_in_one_process():
    # ale-py's ALEInterface plays the same frames before and after this engine ran in the process,
    # and the engine's results equal ale-py's own vector env, built beside it.
    import ale_py
    import numpy as np
    from ale_py import roms
    from ale_py.vector_env import AtariVectorEnv as Reference

    from sb3_ale_vec import AtariVectorEnv

    def play() -> tuple[int, bytes]:
        ale = ale_py.ALEInterface()
        ale.setInt("random_seed", 3)
        ale.loadROM(roms.get_rom_path("breakout"))
        actions = ale.getMinimalActionSet()
        score = sum(ale.act(actions[t % len(actions)]) for t in range(600))
        return score, ale.getScreenRGB().tobytes()

    before = play()
    ours, ref = AtariVectorEnv("breakout", 2), Reference("breakout", 2)
    for a, b in zip(ours.reset(seed=1), ref.reset(seed=1)):
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a.keys() == b.keys()
    for _ in range(50):
        actions = np.array([1, 3])
        for a, b in zip(ours.step(actions)[:4], ref.step(actions)[:4]):
            assert np.array_equal(a, b)
    ours.close()
    ref.close()
    assert play() == before
