"""The Linux wheels run on the oldest and newest glibc Debian's archive serves here, x86-64 and AArch64:
python tools/debian_roots.py [--roots bullseye,sid,bullseye-arm64,sid-arm64] [--wheels DIR] [--cache DIR] [--docs]

    --roots    which roots (tools/debian_root_setup.py), all four by default: bullseye (Debian 11, glibc 2.31,
               libpthread and libdl still apart from libc; CPython 3.11 and 3.13 built inside from bookworm's
               and trixie's source packages) and sid (glibc 2.43; Debian's CPython 3.13 and 3.14, and this
               machine's pyenv CPythons of the other versions copied in: --no-host-pythons leaves them out),
               each for amd64, and for arm64 under qemu-user: sid-arm64 (Debian's 3.13 and 3.14) and
               bullseye-arm64 (CPython 3.11 cross-compiled by bullseye's own cross compiler)
    --wheels   the folder of wheels (default dist/, where tools/wheels.py writes them); each
               *manylinux*_x86_64.whl runs in every amd64 root that has a CPython of its version, each
               *manylinux*_aarch64.whl in every arm64 root that has one; the others are compared by link
    --cache    where the roots are kept (default ~/.cache/sb3-ale-vec; the roots under roots/)
    --docs     rewrite docs/building.md's table of where the wheels ran from this run

Needs root (debootstrap, chroot, mount), debootstrap, and for arm64 qemu-user-static and binfmt-support
(apt-get install debootstrap qemu-user-static binfmt-support). Each run, per wheel and CPython: a fresh
venv inside the root, the wheel installed with pip from PyPI's binaries only (numpy, Gymnasium and
ale-py's own wheel for the root's architecture beside it; for arm64 fetched here first and installed
offline there) while the root has no compiler (checked; CC=false CXX=false too), and
tools/wheel_checks.py's selection of the suite run outside the source tree, which compares frames with
ale-py's AtariVectorEnv. Making the roots takes minutes (the CPython builds most of it); they are
cached, so a second run only installs and tests."""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools")]
import debian_root_setup as setup  # noqa: E402
import wheel_checks  # noqa: E402  (which tests a wheel runs, and the docs' table writer)

TABLE_BEGIN, TABLE_END = "<!-- roots: tools/debian_roots.py --docs -->", "<!-- /roots -->"
TEST_SOURCES = ("tests", "build_support", "pyproject.toml")  # what the checks need beside the wheel
# Under qemu a Python loop ran 83 times slower and ale-py's emulator 9 times (docs/building.md): ale-py's own
# suite alone ran past 7 minutes, a frames-against-ale-py case about 3.5 (at a load of 12). So an arm64 root
# runs one case of each kind: frames against ale-py's and Gymnasium's, both batched runs, the imports.
QEMU_ARGS = ["--deselect", "tests/contract/test_ale_py_suite.py", "-k",
             "(defaults_equal_ale_py and breakout) or (batched_one_thread_equals_ale_py and NEXT_STEP) or "
             "a_batched_run_equals_the_synchronous or (default_preset_equals_gymnasium and breakout and NEXT_STEP) "
             "or test_one_version or exports_nothing or ale_pys_own_ale_and_this_engine"]


def wheel_python(wheel: Path) -> str:
    """cp311 -> 3.11."""
    tag = wheel.name.split("-")[2]
    return f"{tag[2]}.{tag[3:]}"


def host_pythons(versions: set) -> dict:
    """This machine's pyenv CPythons of those versions: version -> its folder."""
    found = {}
    for version in sorted(versions):
        folders = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*"),
                         key=lambda p: tuple(int(x) for x in p.name.split(".") if x.isdigit()))
        if folders:
            found[version] = folders[-1]
    return found


def copy_host_python(root: Path, folder: Path) -> str:
    """pyenv's CPython copied into the root at the same path (its prefix is compiled in)."""
    inside = root / folder.relative_to("/")
    if not (inside / "bin" / "python").exists():
        setup.say(f"{root.name}: copying this machine's CPython {folder.name} in")
        shutil.rmtree(inside, ignore_errors=True)
        shutil.copytree(folder, inside, symlinks=True)
    return f"{folder}/bin/python{folder.name.rsplit('.', 1)[0]}"


def links(wheel: Path) -> dict:
    """Per extension (named without its CPython tag): the libraries it needs and each versioned symbol it
    imports (symbol@version, the version's library). Python's own symbols are unversioned: left out."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in wheel_checks.binaries(wheel, Path(tmp)):
            text = subprocess.run(["readelf", "-d", "-V", "--dyn-syms", "-W", str(path)], capture_output=True,
                                  text=True, check=True).stdout
            needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", text))
            versions, library = set(), None
            for line in text.split("Version needs section", 1)[-1].splitlines():
                if m := re.search(r"File: (\S+)", line):
                    library = m.group(1)
                elif m := re.search(r"Name: (\S+)", line):
                    versions.add(f"{m.group(1)} ({library})")
            symbols = {w[7] for w in (line.split() for line in text.splitlines())
                       if len(w) >= 8 and w[6] == "UND" and "@" in w[7]}
            found[path.name.split(".")[0]] = {"needed": needed, "versions": versions, "symbols": symbols}
    return found


def links_as(wheel: Path, ran: list) -> str:
    """Whether the wheel needs exactly what a wheel that ran in the root needs; '' if none matches."""
    mine = links(wheel)
    for other in ran:
        if links(other) == mine:
            count = sum(len(m["symbols"]) for m in mine.values())
            return f"links as {other.name.split('-')[2]}'s, which ran there ({count} versioned imports, same)"
    return ""


def counts(text: str) -> dict:
    lines = [line for line in text.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    summary = lines[-1] if lines else ""
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|deselected|errors?)", summary)}
    return {"passed": found.get("passed", 0), "failed": found.get("failed", 0) + found.get("errors", 0)
            + found.get("error", 0), "skipped": found.get("skipped", 0), "summary": summary.strip("= ")}


def fetch_arm64(wheel: Path, requires: list, version: str, glibc: str, out: Path, log: Path) -> None:
    """The wheel's and the checks' requirements for aarch64 fetched here, for an offline install in the
    root: pip inside qemu resolves and downloads many times slower (debian_root_arm64's measures)."""
    tag = version.replace(".", "")
    # Each manylinux level up to the root's glibc: pip does not widen a --platform to the older ones.
    platforms = [f"--platform=manylinux_2_{minor}_aarch64" for minor in range(17, int(glibc.split(".")[1]) + 1)]
    command = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(out), *platforms,
               "--python-version", version, "--implementation", "cp", "--abi", f"cp{tag}", "--abi", "abi3",
               "pip", str(wheel), *requires]
    with log.open("a") as output:
        output.write(f"\n$ {shlex.join(command)}\n")
        output.flush()
        subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, check=True)


def check(root: Path, wheel: Path, interpreter: str, requires: list, command: list, log: Path,
          arch: str = "amd64", glibc: str = "") -> dict:
    """The wheel installed in a fresh venv inside the root, with no compiler, and its checks run."""
    inside = f"/tmp/wheel-checks-{os.getpid()}"  # its own folder: two runs may share a root
    work = root / inside.lstrip("/")
    shutil.rmtree(work, ignore_errors=True)
    (work / "src").mkdir(parents=True)
    shutil.copy(wheel, work / wheel.name)
    venv = f"{inside}/venv"
    pip = f"{venv}/bin/python -m pip install -q"
    make_venv = f"{interpreter} -m venv {venv} && {pip} --upgrade pip"
    if arch == "arm64":  # byte-compiling under qemu took most of an install: none, and pip run from its wheel
        fetch_arm64(wheel, requires, wheel_python(wheel), glibc, work / "wheels", log)
        pip += f" --no-index --find-links {inside}/wheels --no-compile"
        make_venv = (f"{interpreter} -m venv --without-pip {venv} && "
                     f"{venv}/bin/python $(echo {inside}/wheels/pip-*.whl)/pip install -q --no-index --no-compile "
                     f"--find-links {inside}/wheels pip")
    for name in TEST_SOURCES:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, work / "src" / name)
    compilers = setup.chroot(root, f"for c in {' '.join(setup.COMPILERS)}; do command -v $c || true; done").stdout
    if compilers.strip():
        sys.exit(f"{root.name} has a compiler ({compilers.split()}): the wheel must install without one")
    env = {"CC": "false", "CXX": "false", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    begun = time.monotonic()
    setup.chroot(root, f"{make_venv} && {pip} --only-binary :all: {inside}/{wheel.name} {shlex.join(requires)}",
                 log, env)
    installed = round(time.monotonic() - begun)
    versions = setup.chroot(root, f"{venv}/bin/python -m pip list --format=freeze | "
                                  "grep -iE '^(ale-py|numpy|gymnasium|sb3-ale-vec)=='", env=env).stdout.split()
    begun = time.monotonic()
    done = setup.chroot(root, f"cd {inside}/src && {venv}/bin/python {shlex.join(command)}", log, env,
                        check=False)
    result = counts(log.read_text().rsplit("\n$ ", 1)[-1])
    result.update(seconds=round(time.monotonic() - begun), rc=done.returncode, versions=versions,
                  install_seconds=installed)
    shutil.rmtree(work, ignore_errors=True)
    return result


def table(rows: list) -> str:
    head = ("| wheel | size | tag | root (glibc) | CPython | checks | passed | failed | skipped | seconds |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(f"| `{r['file']}` | {r['size_kib']:,} KiB | {r['tag']} | {r['root']} ({r['glibc']}) | "
                          f"{r['python']} | {r.get('set', '-')} | {r['passed']} | {r['failed']} | {r['skipped']} | "
                          f"{r.get('seconds', '-')} |\n" for r in rows)


def merged(doc: str, text: str) -> str:
    """The docs' table with this run's rows in: a row of the same wheel and root replaced, the others kept."""
    old = doc.split(TABLE_BEGIN, 1)[-1].split(TABLE_END, 1)[0] if TABLE_BEGIN in doc else ""
    key = lambda line: tuple(line.split(" | ")[i] for i in (0, 3))  # noqa: E731  (wheel, root)
    new = [line for line in text.splitlines()[2:]]
    columns = text.splitlines()[0].count("|")  # a row of another layout is of an older table: dropped
    kept = [line for line in old.splitlines()[2:] if line.startswith("| `") and line.count("|") == columns
            and key(line) not in map(key, new)]
    return "\n".join(text.splitlines()[:2] + sorted(kept + new, key=key)) + "\n"


ARCH_SUFFIX = {"amd64": "x86_64", "arm64": "aarch64"}  # a root's architecture -> its wheels' platform tag's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", default=",".join(setup.ROOTS))
    parser.add_argument("--wheels", type=Path, default=ROOT / "dist")
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--no-host-pythons", action="store_true")
    parser.add_argument("--docs", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.roots.split(",") if n]
    if unknown := set(names) - set(setup.ROOTS):
        parser.error(f"unknown roots {sorted(unknown)}; known: {sorted(setup.ROOTS)}")
    wheels = {arch: sorted(args.wheels.glob(f"*manylinux*_{suffix}.whl")) for arch, suffix in ARCH_SUFFIX.items()}
    for arch in {setup.ROOTS[n]["arch"] for n in names}:
        if not wheels[arch]:
            sys.exit(f"no *manylinux*_{ARCH_SUFFIX[arch]}.whl in {args.wheels} "
                     f"(python tools/wheels.py --target linux-{ARCH_SUFFIX[arch]} ...)")
    requires, command = wheel_checks.wheel_tests()  # the one list every wheel is checked by
    setup.say(f"{sum(map(len, wheels.values()))} wheels, roots {', '.join(names)}; checks: python "
              f"{shlex.join(command)} (under qemu: {shlex.join(QEMU_ARGS) or 'all of them'})")
    rows = []
    for name in names:
        spec = setup.ROOTS[name]
        root = setup.make_root(name, args.cache)
        pythons, arch = dict(spec["pythons"]), spec["arch"]
        mine = wheels[arch]
        label = f"Debian {spec['suite']} {arch}"
        with setup.mounted(root):
            if name == "sid" and not args.no_host_pythons:  # a newer glibc runs what this machine's built
                wanted = {wheel_python(w) for w in mine} - set(pythons)
                pythons.update({v: copy_host_python(root, f) for v, f in host_pythons(wanted).items()})
            glibc = setup.glibc_version(root)
            ran, absent = [], []
            for wheel in mine:
                version = wheel_python(wheel)
                if version not in pythons:
                    absent.append(wheel)
                    continue
                full = setup.python_version(root, pythons[version])
                log = root.parent / f"{root.name}-checks-{wheel.stem}.log"
                log.write_text("")
                setup.say(f"{root.name} (glibc {glibc}), CPython {full}: {wheel.name} (log: {log})")
                checks = command + QEMU_ARGS if arch == "arm64" else command
                result = check(root, wheel, pythons[version], requires, checks, log, arch, glibc)
                setup.say(f"  {result['summary'] or 'no pytest summary'} ({result['seconds']} s; installed in "
                          f"{result['install_seconds']} s); {' '.join(result['versions'])}")
                tag = wheel.name[:-4].split("-", 4)[4]
                origin = " (this machine's)" if pythons[version].startswith(str(Path.home())) else ""
                origin = " (cross-compiled)" if version in spec.get("cross", {}) else origin
                rows.append({"file": wheel.name, "size_kib": wheel.stat().st_size // 1024, "tag": tag,
                             "root": label, "glibc": glibc, "python": full + origin, **result,
                             "set": "qemu's subset" if arch == "arm64" else "`-m wheel`"})
                if not (result["failed"] or result["rc"]):
                    ran.append(wheel)
            for wheel in absent:  # no CPython of its version there: its link compared with those that ran
                same = links_as(wheel, ran)
                setup.say(f"{root.name}: no CPython {wheel_python(wheel)}, {wheel.name} not run; "
                          f"{same or 'links unlike every wheel that ran there'}")
                rows.append({"file": wheel.name, "size_kib": wheel.stat().st_size // 1024,
                             "tag": wheel.name[:-4].split("-", 4)[4], "root": label, "glibc": glibc,
                             "python": f"none ({same or 'links unlike those that ran'})", "passed": "-",
                             "failed": "-" if same else "link", "skipped": "-", "rc": 0 if same else 1})
    text = table(rows)
    print(text)
    (setup.cache_dir(args.cache) / "roots" / "matrix.md").write_text(text)
    if args.docs:
        doc = ROOT / "docs" / "building.md"
        wheel_checks.write_docs(doc, merged(doc.read_text(), text), TABLE_BEGIN, TABLE_END)
    if any(r["rc"] or r["failed"] not in (0, "-") for r in rows):
        sys.exit("some checks failed")


if __name__ == "__main__":
    main()
