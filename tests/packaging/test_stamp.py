"""The deep tier's stamp (.ci/stamp.py): in a clone of this repository, a stamp written on its content makes
`check` choose the core tier, and a change to any one guarded file, a new toolchain, or a missing or malformed
stamp make it choose the deep tier; a change to the docs or to a test file without deep tests does not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP_PY = ROOT / ".ci" / "stamp.py"
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]


def _stamp(clone: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(clone / ".ci" / "stamp.py"), *args], cwd=clone, env=env,
                          capture_output=True, text=True, check=True)


def _tier(clone: Path, env: dict | None = None) -> tuple[str, str]:
    result = _stamp(clone, "check", env=env)
    return result.stdout.strip(), result.stderr


@pytest.fixture
def clone(tmp_path):
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("this repository's .git is not beside this checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    # The stamp module as it is here, committed or not, so that the clone checks with the code under test.
    shutil.copyfile(STAMP_PY, clone / ".ci" / "stamp.py")
    subprocess.run([*GIT, "-C", str(clone), "commit", "-q", "--allow-empty", "-am", "stamp.py"], check=True)
    _stamp(clone, "write")
    return clone


def _touch(path: Path) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write("\n")


def test_a_guarded_change_chooses_the_deep_tier_and_a_docs_change_does_not(clone):
    assert _tier(clone)[0] == "core"  # the stamp just written
    _touch(sorted((clone / "native").rglob("*.cpp"))[0])
    tier, why = _tier(clone)
    assert (tier, "native" in why) == ("deep", True), why
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--", "native"], check=True)
    assert _tier(clone)[0] == "core"  # the same content again: the same hash
    _touch(clone / "docs" / "building.md")
    (clone / "docs" / "new.md").write_text("a new page\n")
    _touch(clone / "tests" / "unit" / "test_options.py")  # no deep test, and tests/sanitize.sh does not run it
    assert _tier(clone)[0] == "core"
    _touch(clone / "tests" / "parity" / "test_parity.py")  # it holds deep tests
    assert _tier(clone)[0] == "deep"


def test_a_change_to_a_helper_beside_conftest_chooses_the_deep_tier(clone):
    # The reference runs the deep tests import (tests/gymnasium_runs.py, ...) are guarded as the tests are.
    _touch(clone / "tests" / "gymnasium_runs.py")
    tier, why = _tier(clone)
    assert (tier, "gymnasium_runs.py" in why) == ("deep", True), why


def test_a_committed_change_or_another_compiler_chooses_the_deep_tier(clone, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gcc").write_text("#!/bin/sh\necho 99.1.0\n")
    (bin_dir / "gcc").chmod(0o755)
    tier, why = _tier(clone, env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert (tier, "toolchain:gcc" in why) == ("deep", True), why
    _touch(clone / "setup.py")
    subprocess.run([*GIT, "-C", str(clone), "commit", "-q", "-am", "setup.py"], check=True)
    tier, why = _tier(clone)
    assert (tier, why.endswith("setup.py)\n")) == ("deep", True), why


def test_a_missing_or_malformed_stamp_chooses_the_deep_tier(clone):
    stamp = clone / ".ci" / "deep.stamp"
    text = stamp.read_text()
    for broken in (text.replace("\n", "\n\n", 2), text.replace("native ", "native  "), "", text.split("\n", 1)[1]):
        stamp.write_text(broken)
        tier, why = _tier(clone)
        assert (tier, "malformed" in why) == ("deep", True), (broken[:100], why)
    stamp.unlink()
    tier, why = _tier(clone)
    assert (tier, "missing" in why) == ("deep", True), why


def test_write_refuses_when_the_content_changed_since_the_snapshot(clone, tmp_path):
    snapshot = tmp_path / "snapshot"
    _stamp(clone, "snapshot", str(snapshot))
    _touch(clone / "tests" / "sanitize.sh")
    refused = subprocess.run([sys.executable, str(clone / ".ci" / "stamp.py"), "write", "--as-of", str(snapshot)],
                             cwd=clone, capture_output=True, text=True)
    assert refused.returncode == 1 and "not written" in refused.stderr
    assert _tier(clone)[0] == "deep"  # the old stamp stays, and it no longer holds
