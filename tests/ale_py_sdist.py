"""ale-py's own tests, taken from the pinned sdist the build verified (never committed), and run in a
fresh pytest with tests/ale_py_dropin.py swapping our drop-in in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sb3_ale_vec import _engine

ROOT = Path(__file__).resolve().parents[1]
SUITE = "test_atari_vector_env.py"


def sdist_path() -> Path:
    """The pinned ale-py sdist the build verified (downloaded and checked again if missing)."""
    sys.path.insert(0, str(ROOT))
    try:
        from build_support.ale_source import sdist_tarball
    finally:
        sys.path.remove(str(ROOT))
    return sdist_tarball(_engine.ALE_VERSION)


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


