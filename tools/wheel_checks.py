"""What tools/wheels.py checks of each wheel it built, and the table it writes: what the wheel's
binaries need (read from their headers with tools that read any architecture), and, where this
machine can run it, the wheel installed with no compiler and tested (x86-64 natively, AArch64 under
qemu); macOS's and Windows' wheels can only be inspected here."""

import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The suite's files that test an installed wheel outside the source tree (the Gymnasium and ale-py
# front-ends against ale-py's own AtariVectorEnv, batching, ale-py's own vector suite), as
# [tool.cibuildwheel]'s test-command runs them.
WHEEL_TESTS = ["tests/test_imports.py", "tests/test_ale_vector.py", "tests/test_gymnasium.py",
               "tests/test_batching.py", "tests/test_ale_py_suite.py"]


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


def needs_pe(paths: list) -> str:
    tool = shutil.which("x86_64-w64-mingw32-objdump") or "objdump"
    dlls = set()
    for path in paths:
        text = subprocess.run([tool, "-p", str(path)], capture_output=True, text=True).stdout
        dlls |= set(re.findall(r"DLL Name: (\S+)", text))
    return ", ".join(sorted(dlls, key=str.lower))


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
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        venv, tests = Path(tmp) / "venv", Path(tmp) / "t"
        env = {**os.environ, "CC": "false", "CXX": "false"}
        subprocess.run([interpreter(version), "-m", "venv", venv], check=True)
        pip = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
        # SB3's front-end too where torch installs from this disk (2.13.0, the CPU build, is 3.11's).
        sb3 = version == "3.11"
        if sb3:
            subprocess.run([*pip, "torch==2.13.0"], check=True, env=env)
        subprocess.run([*pip, "--only-binary", ":all:", f"{wheel}{'[sb3]' if sb3 else ''}",
                        "opencv-python-headless", "hypothesis", "pytest", "pytest-timeout"], check=True, env=env)
        for name in ("tests", "build_support", "pyproject.toml"):
            (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, tests / name)
        files = [*WHEEL_TESTS, *(["tests/test_vec_env.py"] if sb3 else [])]
        done = subprocess.run([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-m", "not slow", *files], cwd=tests, env=env, capture_output=True, text=True)
    return f"ran in a fresh venv, no compiler{' (with SB3)' if sb3 else ''}: {pytest_summary(done.stdout)}"


# aarch64 CPythons run by qemu: ../shared/tools/arm64-python.sh's 3.11, tests/native/arm64_python313.sh's
# 3.13 (ARM64_PYTHONS: their folders, colon-separated).
ARM64_PYTHONS = os.environ.get("ARM64_PYTHONS", "/work/arm64py:/work/arm64py313")


def test_aarch64(version: str, wheel: Path) -> str:
    """Under qemu, with an aarch64 CPython of that version."""
    found = [Path(d) for d in ARM64_PYTHONS.split(":")
             if (Path(d) / "python").exists() and (Path(d) / "root" / "usr" / "bin" / f"python{version}").exists()]
    if not found:
        return f"built and inspected; not run (no aarch64 CPython {version} in {ARM64_PYTHONS})"
    arm64 = found[0]
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
    return "built, linked and inspected; not run (no macOS or Windows here)"


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
