"""ale-py's own vector-env test suite, taken from the pinned sdist at test time (never committed)
and run unchanged against sb3_ale_vec.AtariVectorEnv (tests/ale_py_dropin.py swaps the class in)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sb3_ale_vec import _engine

ROOT = Path(__file__).parents[1]
SUITE = "test_atari_vector_env.py"


def sdist_path() -> Path:
    """The pinned ale-py sdist the build verified (downloaded and checked again if missing)."""
    sys.path.insert(0, str(ROOT))
    try:
        from build_support.ale_source import sdist_tarball
    finally:
        sys.path.remove(str(ROOT))
    return sdist_tarball(_engine.ALE_VERSION)


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory) -> Path:
    version = _engine.ALE_VERSION
    dest = tmp_path_factory.mktemp("ale_py_tests")
    with tarfile.open(sdist_path()) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(f"ale_py-{version}/tests/")]
        tar.extractall(dest, members=members, filter="data")
    return dest / f"ale_py-{version}" / "tests" / "python"


def run_suite(suite_dir: Path, *selection: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "pytest", "-p", "ale_py_dropin", "-p", "no:cacheprovider", "-q",
               "-o", "addopts=", "--rootdir", str(suite_dir), *selection]
    done = subprocess.run(command, cwd=suite_dir, env=env, capture_output=True, text=True, timeout=1500)
    return done.returncode, done.stdout + done.stderr


def counts(output: str) -> dict[str, int]:
    summary = output.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|errors|skipped|xfailed)", summary)}


def drop_in_was_tested(output: str) -> bool:
    """The plugin's count: the suite built our vector envs, and never one of ale-py's."""
    built = re.search(r"vector envs built: sb3_ale_vec (\d+), ale_py (\d+)", output)
    return built is not None and int(built.group(1)) > 0 and int(built.group(2)) == 0


@pytest.mark.slow  # over 2.5 s in the quick tier
def test_the_suite_is_ale_pys_own_and_unchanged(suite_dir):
    text = (suite_dir / SUITE).read_text()
    assert "gym.make_vec(" in text and "ale_py" in text
    code, output = run_suite(suite_dir, SUITE, "--collect-only", "-q")
    collected = re.search(rf"{SUITE}: (\d+)", output)
    assert code == 0 and collected and int(collected.group(1)) >= 80, output[-2000:]


# The 8 cases of masks and errors the drop-in used to fail (an all-False mask, frameskip errors,
# ale.reset's checks), run on their own so that a failure names them (9 s: the slow tier).
@pytest.mark.slow
def test_the_suites_reset_mask_and_error_cases_pass(suite_dir):
    code, output = run_suite(suite_dir, SUITE, "-k", "reset_mask or invalid_frameskip or invalid_reset_masks")
    found = counts(output)
    assert code == 0 and found.get("passed", 0) == 8 and set(found) == {"passed"}, output[-3000:]
    assert drop_in_was_tested(output), output[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_ale_pys_whole_vector_suite_passes(suite_dir):
    code, output = run_suite(suite_dir, SUITE)
    found = counts(output)
    assert code == 0 and set(found) == {"passed"} and found["passed"] >= 80, output[-5000:]
    assert drop_in_was_tested(output), output[-3000:]
