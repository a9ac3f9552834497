"""pytest setup: helpers.py (next to this file) is importable from every test module."""

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# One torch (OpenMP) thread in each test process and in every process it starts: pytest-xdist runs a
# worker per core, and torch's threads beside another busy worker wait for each other, spinning.
# Measured here: README's PPO block took 84 s of wall and 90 s of CPU beside one busy process, 25 s
# and 25 s with one thread (16 s and 28 s on an idle machine). No test depends on torch's thread count.
os.environ.setdefault("OMP_NUM_THREADS", "1")


import pytest  # noqa: E402

NODES = 3  # the Ray tests' cluster: 3 nodes of 2 CPUs on this machine


def add_node(cluster) -> None:
    cluster.add_node(num_cpus=2, object_store_memory=100 * 2**20)
    cluster.wait_for_nodes()


_CLUSTER: list = []  # the running cluster, started by the first test that asks for it


def _start_cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # Fast node-death detection, so that a removed node's actors are declared dead in seconds. Worker
    # processes (the shards) at the driver's priority: Ray starts them at nice 15 by default, and beside
    # CI's other xdist worker (nice 0) and its sanitizer builds (nice 10) they got a few percent of a core,
    # each step's round trip waiting for them (measured here with one nice-0 and one nice-10 spinning
    # process beside a 2-shard env: 200 steps 10.3 s at nice 15, 3.3 s at 0; its start 6.3 s, 3.0 s).
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "include_dashboard": False, "object_store_memory": 100 * 2**20,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                           "worker_niceness": 0}})
    for _ in range(NODES - 1):
        add_node(cluster)
    ray.init(address=cluster.address)
    return cluster


@pytest.fixture
def cluster():
    """A real multi-node Ray cluster on this machine, shared by the Ray tests (it takes a while to start)."""
    if not _CLUSTER:
        _CLUSTER.append(_start_cluster())
    return _CLUSTER[0]


def _is_ray(item) -> bool:
    return (item.path.name in RAY_FILES or "cluster" in getattr(item, "fixturenames", ())
            or any(mark.args[:1] == ("ray",) for mark in item.iter_markers("xdist_group")))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The cluster stops after the last Ray test before a test that is not one (its module's fixtures
    done): an idle 3-node cluster took 5% of a core, beside every test after it. Under xdist the Ray
    group runs in one go, so it starts once; a run without xdist may start it again."""
    yield
    if _CLUSTER and (nextitem is None or not _is_ray(nextitem)):
        import ray

        ray.shutdown()
        _CLUSTER.pop().shutdown()


# The files whose tests share the Ray cluster: with pytest-xdist (`-n 2 --dist loadgroup`), one worker
# runs them all (with any other test that uses the cluster, and README's blocks that start Ray of
# their own: tests/contract/test_readme.py marks those), so that two clusters never start at once.
RAY_FILES = ("test_distributed.py", "test_ray_chaos.py", "test_ray_faults.py")


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_ray(item):
            item.add_marker(pytest.mark.xdist_group("ray"))
    # The quick tier (`-m "not slow"`) must never run a deep test: the deep tier is within the slow one.
    shallow = [item.nodeid for item in items if item.get_closest_marker("deep") and not item.get_closest_marker("slow")]
    if shallow:
        raise pytest.UsageError(f"marked deep but not slow (the quick tier would run it): {shallow[0]}")


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller, on a worker's collected ids
def pytest_xdist_node_collection_finished(node, ids):
    """With `--dist loadgroup`, xdist suffixes "@GROUP" to each grouped test's id, by which the controller
    sends a group to one worker. Without it the groups split silently and each worker starts its own Ray
    cluster (as they do when our marks come after xdist reads them): stop the run instead."""
    if node.config.getvalue("dist") == "loadgroup":
        lost = [i for i in ids if i.split("::")[0].rpartition("/")[2] in RAY_FILES and not i.endswith("@ray")]
        if lost:
            pytest.exit(f"--dist loadgroup did not group the Ray tests ({lost[0]} has no '@ray', {len(lost)} such): "
                        "tests/conftest.py must mark them before xdist reads the marks (tryfirst), and pytest 9.2 loses "
                        f"the suffix (the test extra asks for pytest<9.2; this is {pytest.__version__})", 3)


# The quick tier (`pytest -m "not slow"`, its budget 30 s on 2 cores) does not import the files whose every
# test is slow (each says so: a module-level `pytestmark = pytest.mark.slow`): their imports (Ray, SB3's
# algorithms, the test modules they import) cost seconds of collection for no test.
SLOW_FILE = re.compile(r"^pytestmark = \[?pytest\.mark\.slow\b", re.M)  # deep files: [slow, deep]


# A wheel's checks (`pytest -m wheel tests`) import only the files that mark a test `wheel`: the others need
# packages (Ray, SB3, JAX) that an installed wheel's test venv lacks.
WHEEL_MARK = "pytest.mark.wheel"
DEEP_MARK = "pytest.mark.deep"


def pytest_ignore_collect(collection_path, config):
    if not (collection_path.suffix == ".py" and collection_path.name.startswith("test_")):
        return None
    markexpr = config.getoption("markexpr", "")
    if markexpr == "not slow" and SLOW_FILE.search(collection_path.read_text()):
        return True
    if markexpr == "wheel" and WHEEL_MARK not in collection_path.read_text():
        return True
    if markexpr == "deep" and DEEP_MARK not in collection_path.read_text():  # `bash .ci/deep`: its files alone
        return True
    return None


# Skips that only mean "this machine lacks an optional file, tool or CPU feature", never a missing package
# (tests/packaging/test_packaging.py holds every pytest.skip message of the suite to this list).
ALLOWED_SKIPS = ("is not beside this checkout", "a file this machine lacks", "a tool this machine lacks",
                 "a CPU feature this machine lacks")


def pytest_sessionfinish(session, exitstatus):
    """With SB3_ALE_VEC_NO_SKIPS=1 (CI, where every extra is installed), a test skipped for any other
    reason (a package that failed to install or import: Ray, JAX, ...) fails the run."""
    if os.environ.get("SB3_ALE_VEC_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = [r for r in (reporter.stats.get("skipped", []) if reporter else [])
               if not any(allowed in str(r.longrepr) for allowed in ALLOWED_SKIPS)]
    if skipped:
        for report in skipped:
            reporter.write_line(f"SKIPPED, and SB3_ALE_VEC_NO_SKIPS=1 forbids it: {report.nodeid}: {report.longrepr}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Where the suite's time goes, by file: SB3_ALE_VEC_DURATIONS=1 (CI sets it) prints the per-file sums
# of setup, call and teardown at the end (the controller sees every xdist worker's reports), then the
# slowest tests.
_FILE_SECONDS: dict[str, float] = {}
_TEST_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    if os.environ.get("SB3_ALE_VEC_DURATIONS") == "1":
        name = report.nodeid.split("::")[0]
        _FILE_SECONDS[name] = _FILE_SECONDS.get(name, 0.0) + report.duration
        _TEST_SECONDS[report.nodeid] = _TEST_SECONDS.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _FILE_SECONDS:
        return
    total = sum(_FILE_SECONDS.values())
    terminalreporter.write_line(f"seconds by file (setup, call, teardown; {total:.0f} in all, every worker):")
    for name, seconds in sorted(_FILE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"  {seconds:8.1f}  {100 * seconds / total:5.1f}%  {name}")
    terminalreporter.write_line("the 25 slowest tests (seconds):")
    for name, seconds in sorted(_TEST_SECONDS.items(), key=lambda item: -item[1])[:25]:
        terminalreporter.write_line(f"  {seconds:8.1f}  {name}")
