"""CI's time map: the suite's seconds by file and by what the file spends them building, as the table
docs/building.md keeps ("CI's time map"), from the log of a run with SB3_ALE_VEC_DURATIONS=1 (CI's).

    python tools/time_map.py CI_LOG [BEFORE_LOG]

Each log's pytest runs (the core tier's, then the deep tier's where it ran) are summed into one column, after
a line of each run's total; with BEFORE_LOG, a column for each log. Each file counts under the one thing it
mostly builds: the references stepped beside ours (SB3's, Gymnasium's, ale-py's pipelines), Ray clusters and their
actors, fresh interpreters (children, forks, examples, ale-py's suites in a subprocess), the
resets-ahead probe, waits for the idle threads, compilations; the rest runs the engine alone.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

BUILDS = {
    "references beside ours": (
        "test_parity.py", "test_reset_ahead.py", "test_ale_vector.py", "test_presets.py", "test_every_rom.py",
        "test_gymnasium.py", "test_obs_types.py", "test_training_identity.py", "test_training.py", "test_config_check.py",
        "test_env_util.py", "test_sb3_contract.py", "test_monitor.py", "test_ram_info.py", "test_vec_env.py"),
    "Ray clusters and actors": ("test_distributed.py", "test_ray_faults.py", "test_ray_chaos.py", "test_readme.py"),
    "fresh interpreters": ("test_lifetime.py", "test_examples.py", "test_ale_py_suite.py", "test_xla.py", "test_imports.py",
                           "test_guides.py", "test_packaging.py"),
    "the resets-ahead probe": ("test_reset_table.py",),
    # Mostly asleep: the real idle threads (nice 19) run its prepares when a loaded machine lets them.
    "waits for the idle threads": ("test_reset_ahead_checks.py",),
    "compilations": ("test_glibc_floor.py", "test_linux_cross.py"),
}


def blocks(log: str) -> list[dict[str, float]]:
    """Each per-file block that tests/conftest.py prints at the end of a pytest run: CI's log holds the core
    tier's, then the deep tier's where .ci/run ran it."""
    return [{Path(name).name: float(s) for s, name in re.findall(r"^\s+([\d.]+)\s+[\d.]+%\s+(\S+)$",
                                                                  part.split("the 25 slowest", 1)[0], re.M)}
            for part in log.split("seconds by file")[1:]]


def seconds_by_file(log: str) -> dict[str, float]:
    """The log's per-file seconds, its tiers' blocks summed."""
    total: dict[str, float] = {}
    for block in blocks(log):
        for name, seconds in block.items():
            total[name] = total.get(name, 0.0) + seconds
    return total


def kind(name: str) -> str:
    return next((k for k, files in BUILDS.items() if name in files), "the engine alone")


def table(runs: list[dict[str, float]], top: int = 12) -> str:
    heads = ["seconds"] if len(runs) == 1 else ["after", "before"]
    lines = [f"| file | builds mostly | {' | '.join(heads)} |", "|---|---|" + "---|" * len(runs)]
    names = sorted(set().union(*runs), key=lambda n: -max(r.get(n, 0.0) for r in runs))
    cell = lambda run, n: f"{run[n]:,.0f}" if n in run else "-"  # noqa: E731
    for name in names[:top]:
        lines.append(f"| `{name}` | {kind(name)} | {' | '.join(cell(r, name) for r in runs)} |")
    rest = names[top:]
    lines.append(f"| the other {len(rest)} files | | "
                 + " | ".join(f"{sum(r.get(n, 0.0) for n in rest):,.0f}" for r in runs) + " |")
    for k in [*BUILDS, "the engine alone"]:
        lines.append(f"| **{k}** | | " + " | ".join(
            f"**{sum(s for n, s in r.items() if kind(n) == k):,.0f}**" for r in runs) + " |")
    lines.append("| **all** | | " + " | ".join(f"**{sum(r.values()):,.0f}**" for r in runs) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    logs = [Path(p).read_text() for p in sys.argv[1:]]
    for path, log in zip(sys.argv[1:], logs):  # each tier's test-seconds: the core tier's budget is 1,500
        print(f"{path}: test-seconds by run, in order: " + ", ".join(f"{sum(b.values()):,.0f}" for b in blocks(log)))
    print(table([seconds_by_file(log) for log in logs]))
