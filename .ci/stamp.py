"""The deep tier's stamp: the content `bash .ci/deep` last passed on, so that `.ci/run` runs the deep tier
again wherever the code it guards changed, decided by content (git's hashes), not by trust.

    python .ci/stamp.py snapshot FILE     # .ci/deep, at its start: the hashes of what it is about to check
    python .ci/stamp.py write [--as-of FILE]
                                          # .ci/deep, once it passed: .ci/deep.stamp (commit it), refused if the
                                          # guarded content changed since the snapshot FILE
    python .ci/stamp.py check             # .ci/run: prints "core" (the stamp holds) or "deep"; why, on stderr

Each hash is git's tree (a folder) or blob (a file) hash of the working tree's content, ignored files left out
(a temporary index), so a clean clone at a commit hashes as that commit does.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = Path(".ci/deep.stamp")
HEADER = "# sb3-ale-vec deep tier stamp, written by `python .ci/stamp.py write` after `bash .ci/deep` passed"

# What the deep tier's checks read: the engine and its build (the sanitizers, the AArch64 tests), the package
# and its examples (the sweeps, the matrices, the chaos runs), the test helpers and CI's own deep scripts;
# the Debian root maker the Windows tests' UCRT toolchain is made with (build_support/mingw_ucrt.py).
GUARDED = (
    "native", "build_support", "setup.py", "pyproject.toml", "sb3_ale_vec", "examples",
    "tests/native", "tests/sanitize.sh", "tests/tsan.supp", ".ci/deep", ".ci/apt_install", ".ci/stamp.py", "tools/debian_root_setup.py",
)
# And every test file that holds a deep test, or whose tests tests/sanitize.sh runs under the sanitizers.
DEEP_MARK = "pytest.mark.deep"


def guarded(root: Path) -> list[str]:
    tests = {p.relative_to(root).as_posix() for p in (root / "tests").rglob("test_*.py")
             if DEEP_MARK in p.read_text(encoding="utf-8")}
    # The helpers beside conftest.py (the reference runs, the comparisons, the plugins): every test imports them.
    tests |= {p.relative_to(root).as_posix() for p in (root / "tests").glob("*.py")}
    sanitize = root / "tests/sanitize.sh"
    if sanitize.is_file():
        tests |= set(re.findall(r"tests/(?:\w+/)?test_\w+\.py", sanitize.read_text(encoding="utf-8")))
    return sorted({*GUARDED, *tests})


def _git(root: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def toolchains() -> dict[str, str]:
    """The compilers' and Python's versions: a new toolchain is new code to the sanitizers and the builds."""
    out = {"python": platform.python_version()}
    for tool in ("gcc", "g++"):
        try:
            out[tool] = subprocess.run([tool, "-dumpfullversion"], capture_output=True, text=True,
                                       check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            out[tool] = "absent"
    return out


def hashes(root: Path) -> dict[str, str]:
    """Each guarded path's git hash in the working tree ("absent" where it is not), then the toolchains'."""
    paths = guarded(root)
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch, "index")
        real = Path(root, _git(root, "rev-parse", "--git-path", "index"))
        if real.is_file():
            shutil.copyfile(real, index)  # its stat data spares `git add` re-reading unchanged files
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        _git(root, "add", "-A", "--", ".", env=env)
        tree = _git(root, "write-tree", env=env)
        # "MODE TYPE HASH\tPATH" for each guarded path the tree holds
        listed = {path: meta.split()[2] for meta, path in
                  (line.split("\t", 1) for line in _git(root, "ls-tree", tree, "--", *paths).splitlines())}
    return {**{path: listed.get(path, "absent") for path in paths},
            **{f"toolchain:{tool}": version for tool, version in toolchains().items()}}


def render(entries: dict[str, str]) -> str:
    return HEADER + "\n" + "".join(f"{key} {value}\n" for key, value in sorted(entries.items()))


def parse(text: str) -> dict[str, str] | None:
    """A stamp's entries, or None if it is not one."""
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        return None
    entries = {}
    for line in lines[1:]:
        key, _, value = line.partition(" ")
        if not key or not value or " " in value or key in entries:
            return None
        entries[key] = value
    return entries or None


def check(root: Path) -> tuple[str, str]:
    """("core", why) when the stamp names exactly the content and toolchains here, else ("deep", why)."""
    path = root / STAMP
    if not path.is_file():
        return "deep", f"{STAMP} is missing"
    stamped = parse(path.read_text(encoding="utf-8"))
    if stamped is None:
        return "deep", f"{STAMP} is malformed"
    now = hashes(root)
    changed = sorted(k for k in now.keys() | stamped.keys() if now.get(k) != stamped.get(k))
    if changed:
        return "deep", f"changed since the deep tier last passed: {', '.join(changed[:8])}" + (
            f" and {len(changed) - 8} more" if len(changed) > 8 else "")
    return "core", f"{STAMP} holds: {len(now)} guarded paths and toolchains as the deep tier last passed them"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("snapshot").add_argument("file", type=Path)
    sub.add_parser("write").add_argument("--as-of", type=Path)
    sub.add_parser("check")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "snapshot":
        args.file.write_text(render(hashes(root)), encoding="utf-8")
    elif args.command == "write":
        now = render(hashes(root))
        if args.as_of is not None and args.as_of.read_text(encoding="utf-8") != now:
            print(f"the guarded content changed during the deep tier's run: {STAMP} not written", file=sys.stderr)
            return 1
        (root / STAMP).write_text(now, encoding="utf-8")
        print(f"wrote {STAMP}: commit it with the change it passed on", file=sys.stderr)
    else:
        tier, why = check(root)
        print(f"the tier: {tier} ({why})", file=sys.stderr)
        print(tier)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, subprocess.CalledProcessError) as error:  # no git, or no repository: nothing to hash
        print(f"stamp.py: {error}{': ' + error.stderr.strip() if getattr(error, 'stderr', None) else ''}",
              file=sys.stderr)
        sys.exit(2)
