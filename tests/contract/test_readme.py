"""Every Python block of README.md runs as written, each in a fresh interpreter (as a reader
pastes it): the front door's examples must not rot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
# Blocks that train or start a Ray cluster take tens of seconds: the slow tier.
SLOW = ("PPO(", "ray.init(")


def test_the_readme_has_a_quick_start_for_each_kind_of_user():
    text = "\n".join(BLOCKS)
    for name in ("AleNativeVecEnv", "make_ale_vec_env", "AleVectorEnv", "AtariVectorEnv", "xla()", "RayAleVecEnv"):
        assert name in text, name


def _marks(block: str) -> list:
    """Slow where it trains or starts Ray; a block that starts Ray of its own runs on the Ray tests'
    xdist worker (tests/conftest.py), so that two Ray clusters never start at once."""
    return ([pytest.mark.slow] if any(s in block for s in SLOW) else []) + (
        [pytest.mark.xdist_group("ray")] if "ray" in block else [])


@pytest.mark.parametrize("block", [pytest.param(b, id=f"block{i}", marks=_marks(b)) for i, b in enumerate(BLOCKS)])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
@pytest.mark.deep  # every example
def test_a_readme_block_runs_as_written(block, tmp_path):
    if "jax" in block:
        pytest.importorskip("jax")
    if "ray" in block:
        pytest.importorskip("ray")
    # A reader's machine runs no Ray of ours: a Ray temp dir of its own keeps ray.init() from joining
    # the test suite's cluster (short, for Ray's socket paths).
    with tempfile.TemporaryDirectory(prefix="ray", dir="/tmp") as ray_tmp:
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_TMPDIR": ray_tmp}
        done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
