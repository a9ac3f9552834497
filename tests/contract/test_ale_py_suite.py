"""ale-py's own vector-env test suite, taken from the pinned sdist at test time (never committed)
and run unchanged against sb3_ale_vec.AtariVectorEnv (tests/ale_py_dropin.py swaps the class in)."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest
from sb3_ale_vec import _engine

from ale_py_sdist import SUITE, counts, drop_in_was_tested, run_suite, sdist_path


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory) -> Path:
    version = _engine.ALE_VERSION
    dest = tmp_path_factory.mktemp("ale_py_tests")
    with tarfile.open(sdist_path()) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(f"ale_py-{version}/tests/")]
        # extractall's filter is CPython 3.10.12's and 3.11.4's; before them the regular files picked above.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=members, **safe)
    return dest / f"ale_py-{version}" / "tests" / "python"


# One run of the whole suite serves every test here (-rA: a line per case); they share an xdist worker.
pytestmark = pytest.mark.xdist_group("ale_py_suite")


@pytest.fixture(scope="module")
def whole_run(suite_dir) -> tuple[int, str, dict[str, str]]:
    """The suite's exit code, its output, and each case's outcome by its id."""
    code, output = run_suite(suite_dir, SUITE, "-rA")
    outcomes = dict(reversed(m) for m in re.findall(rf"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL) ({SUITE}::\S+)", output, re.M))
    return code, output, outcomes


@pytest.mark.slow
@pytest.mark.timeout(1800)  # whichever test comes first runs the suite
@pytest.mark.wheel
def test_the_suite_is_ale_pys_own_and_unchanged(suite_dir, whole_run):
    text = (suite_dir / SUITE).read_text()
    assert "gym.make_vec(" in text and "ale_py" in text
    _, output, outcomes = whole_run
    assert len(outcomes) >= 80 and len(outcomes) == sum(counts(output).values()), output[-2000:]


# The 8 cases of masks and errors the drop-in used to fail (an all-False mask, frameskip errors,
# ale.reset's checks), named on their own so that a failure names them.
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.wheel
def test_the_suites_reset_mask_and_error_cases_pass(whole_run):
    _, output, outcomes = whole_run
    cases = {case: outcome for case, outcome in outcomes.items()
             if any(k in case for k in ("reset_mask", "invalid_frameskip", "invalid_reset_masks"))}
    assert len(cases) == 8 and set(cases.values()) == {"PASSED"}, cases
    assert drop_in_was_tested(output), output[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.wheel
def test_ale_pys_whole_vector_suite_passes(whole_run):
    code, output, outcomes = whole_run
    found = counts(output)
    assert code == 0 and set(found) == {"passed"} and found["passed"] >= 80, output[-5000:]
    assert set(outcomes.values()) == {"PASSED"} and len(outcomes) == found["passed"], output[-3000:]
    assert drop_in_was_tested(output), output[-3000:]
