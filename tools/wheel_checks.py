"""What tools/wheels.py checks of each wheel it built, and the table it writes: what the wheel's
binaries need (read from their headers with tools that read any architecture), and, where this
machine can run it, the wheel installed with no compiler and tested (x86-64 natively, by the tests
[tool.cibuildwheel]'s test-command runs; AArch64 under qemu); macOS's and Windows' wheels can only be
inspected here."""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wheel_tests() -> tuple[list, list]:
    """[tool.cibuildwheel]'s test-requires and test-command (its words after `python`): what every
    wheel is checked by, here as on a real runner. The command selects the tests marked `wheel`."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    python, *command = shlex.split(config["test-command"])
    if python != "python" or "{" in config["test-command"]:
        raise SystemExit(f"test-command must start with `python` and use no placeholder: {config['test-command']}")
    return config["test-requires"], command


def binaries(wheel: Path, out: Path) -> list:
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.endswith((".so", ".pyd"))]
        archive.extractall(out, names)
    return [out / n for n in names]


def needs_elf(paths: list) -> str:
    """The libraries the extensions load and the newest glibc symbol version they ask for."""
    libs, versions = set(), set()
    for path in paths:
        dynamic = subprocess.run(["readelf", "-d", "-V", "-W", str(path)], capture_output=True, text=True).stdout
        libs |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic))
        versions |= set(re.findall(r"Name: (GLIBC(?:XX)?_[\d.]+)", dynamic))
    glibc = max((v for v in versions if v.startswith("GLIBC_")), key=lambda v: [int(x) for x in v[6:].split(".")])
    cxx = sorted(v for v in versions if v.startswith("GLIBCXX"))
    return f"{', '.join(sorted(libs))}; glibc symbols up to {glibc[6:]}" + (f"; {cxx[-1]}" if cxx else "")


def needs_macho(paths: list) -> str:
    tool = shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")
    if tool is None:
        return "not read (llvm-objdump missing: apt-get install llvm)"
    libs = set()
    for path in paths:
        text = subprocess.run([tool, "--macho", "--dylibs-used", str(path)], capture_output=True, text=True).stdout
        libs |= {line.split()[0] for line in text.splitlines()[1:] if line.strip()}
    return ", ".join(sorted(libs))


def _pe_imports():
    sys.path.insert(0, str(ROOT))
    from build_support import pe_imports  # noqa: E402  (the import tables' reader and the UCRT's list)
    return pe_imports


def needs_pe(paths: list) -> str:
    """The DLLs the extensions import (build_support/pe_imports.py reads their import tables), the UCRT's
    API sets written as one pattern."""
    pe_imports = _pe_imports()
    dlls = {d for path in paths for d in pe_imports.imported_dlls(path.read_bytes())}
    sets = sorted(m.group(1) for d in dlls if (m := re.fullmatch(r"api-ms-win-crt-([a-z]+)-l1-1-0\.dll", d)))
    named = sorted((d for d in dlls if not d.startswith("api-ms-win-crt-")), key=str.lower)
    return ", ".join(named + ([f"api-ms-win-crt-{{{','.join(sets)}}}-l1-1-0.dll"] if sets else []))


def check_pe(version: str, wheel: Path) -> str:
    """The UCRT's check (build_support/pe_imports.py) on each extension: a DLL outside its list fails."""
    pe_imports = _pe_imports()
    with tempfile.TemporaryDirectory() as tmp:
        bad = {path.name: pe_imports.outside_ucrt(pe_imports.imported_dlls(path.read_bytes()), version)
               for path in binaries(wheel, Path(tmp))}
    if any(bad.values()):
        return "FAILED: " + "; ".join(f"{name} imports {', '.join(dlls)}, outside the UCRT's list"
                                      for name, dlls in bad.items() if dlls)
    return "imports within the UCRT's list (build_support/pe_imports.py); not run (no Windows here)"


def inspect(target: str, wheel: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        paths = binaries(wheel, Path(tmp))
        read = {"linux": needs_elf, "macos": needs_macho, "windows": needs_pe}[target.split("-")[0]]
        needs = read(paths)
    tag = wheel.name[:-4].split("-", 4)[4]  # name-version-python-abi-platform
    return {"target": target, "file": wheel.name, "size_kib": wheel.stat().st_size // 1024, "tag": tag,
            "needs": needs, "checked": "inspected"}


def pytest_summary(text: str) -> str:
    lines = [line for line in text.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return lines[-1].strip("= ") if lines else "no summary: " + text[-300:]


def test_x86_64(version: str, wheel: Path, work: Path) -> str:
    """In a fresh venv where no compiler can run (CC=false CXX=false), outside the source tree."""
    from wheels import interpreter  # noqa: E402  (pyenv's CPython of that version)
    requires, command = wheel_tests()
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        venv, tests = Path(tmp) / "venv", Path(tmp) / "t"
        env = {**os.environ, "CC": "false", "CXX": "false"}
        subprocess.run([interpreter(version), "-m", "venv", venv], check=True)
        python = venv / "bin" / "python"
        pip = [python, "-m", "pip", "install", "-q"]
        # SB3's front-end too where torch installs from this disk (2.13.0, the CPU build, is 3.11's).
        sb3 = version == "3.11"
        if sb3:
            subprocess.run([*pip, "torch==2.13.0"], check=True, env=env)
        subprocess.run([*pip, "--only-binary", ":all:", f"{wheel}{'[sb3]' if sb3 else ''}", *requires],
                       check=True, env=env)
        for name in ("tests", "build_support", "pyproject.toml"):
            (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, tests / name)
        begun = time.monotonic()
        done = subprocess.run([python, *command], cwd=tests, env=env, capture_output=True, text=True)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:12]  # two builds of one name: two logs
        log = work / "logs" / f"check-{wheel.name[:-4]}-{digest}.log"  # each failure's name and traceback
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(done.stdout + done.stderr)
        failed = f"FAILED ({log}), " if done.returncode else ""
        result = f"`pytest -m wheel`: {failed}{pytest_summary(done.stdout)} ({time.monotonic() - begun:.0f} s)"
        if sb3:  # SB3's VecEnv, whose package the test-command's venv lacks
            done = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                                   "tests/contract/test_vec_env.py"], cwd=tests, env=env, capture_output=True,
                                  text=True)
            result += f"; SB3's VecEnv: {'FAILED, ' if done.returncode else ''}{pytest_summary(done.stdout)}"
    return f"ran in a fresh venv, no compiler: {result}"


# The versions tools/arm64_python.sh makes aarch64 CPythons of (Debian's arm64 packages), which qemu runs.
ARM64_VERSIONS = ("3.11", "3.13", "3.14")


def test_aarch64(version: str, wheel: Path) -> str:
    """Under qemu, with an aarch64 CPython of that version, made into the project's cache on first use."""
    sys.path.insert(0, str(ROOT))
    from build_support.ale_cache import cache_root  # noqa: E402  (the cache tools/arm64_python.sh writes to)
    if version not in ARM64_VERSIONS:
        return f"built and inspected; not run (Debian packages no aarch64 CPython {version})"
    arm64 = cache_root() / "arm64-python" / version
    made = subprocess.run(["bash", ROOT / "tools" / "arm64_python.sh", version, arm64], capture_output=True, text=True)
    if made.returncode:
        return f"built and inspected; not run (tools/arm64_python.sh {version}: {(made.stdout + made.stderr)[-300:]})"
    done = subprocess.run(["bash", ROOT / "tests" / "native" / "aarch64_wheel.sh", arm64],
                          env={**os.environ, "WHEEL": str(wheel)}, capture_output=True, text=True)
    if done.returncode:
        return f"FAILED under qemu: {done.stdout[-600:]}{done.stderr[-300:]}"
    equal = len(re.findall(r"steps x 3 envs equal", done.stdout))
    return f"ran under qemu: {equal} runs equal to ale-py's frame for frame; {pytest_summary(done.stdout)}"


def test(target: str, version: str, wheel: Path, work: Path) -> str:
    if target == "linux-x86_64":
        return test_x86_64(version, wheel, work)
    if target == "linux-aarch64":
        return test_aarch64(version, wheel)
    if target == "windows-amd64":
        return check_pe(version, wheel)
    return "built, linked and inspected; not run (no macOS here)"


def table(rows: list) -> str:
    head = "| wheel | size | needs | checked |\n|---|---|---|---|\n"
    return head + "".join(f"| `{r['file']}` | {r['size_kib']:,} KiB | {r['needs']} | {r['checked']} |\n"
                          for r in rows)


def write_docs(doc: Path, text: str, begin: str, end: str) -> None:
    """Replaces what lies between the markers (their own lines) with the table."""
    content = doc.read_text()
    if begin not in content or end not in content:
        raise SystemExit(f"{doc} lacks the markers {begin} ... {end}")
    head, rest = content.split(begin, 1)
    content = head + begin + "\n" + text + end + rest.split(end, 1)[1]
    doc.write_text(content)
