"""The profile-guided build of ALE's core (setup.py's BuildClib): which kind the compiler can do, the
training run, and Clang's llvm-profdata.

GCC: the instrumented core writes .gcda files beside its objects; each trainer process adds its counts
into them under a lock. Clang (and Apple Clang): IR instrumentation; each trainer process writes a raw
profile of its own (LLVM_PROFILE_FILE with %p), llvm-profdata merges them into the indexed profile the
final build reads. The raw format changes between LLVM releases, so only an llvm-profdata of the
compiler's own release is used (same major version, Apple's or not: Apple numbers its own).
MSVC: no profile-guided build (its PGO, /GENPROFILE with pgomgr and /GL, was not asked for).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools.errors import SetupError

from build_support.ale_source import file_sha256

TRAINER = Path(__file__).resolve().parent / "pgo_train.cpp"
FRAMES_PER_ROM = 10000
RAW_PATTERN = "ale-%p.profraw"  # %p: the process id, one file per trainer


def training_roms() -> list:
    """Every ROM of the ale-py wheel (a build requirement), or none when it is not importable."""
    try:
        from ale_py import roms
    except ImportError:
        return []
    return [str(roms.get_rom_path(rom)) for rom in roms.get_all_rom_ids()]


def compiler_kind(version_text: str) -> str | None:
    """"gcc", "clang" (Apple's too) or None, from the compiler's --version banner."""
    if "Free Software Foundation" in version_text:  # GCC's banner; Clang names no foundation
        return "gcc"
    return "clang" if llvm_release(version_text, "clang") else None


def llvm_release(version_text: str, word: str) -> tuple | None:
    """(Apple's?, major version) from a banner: "Debian clang version 14.0.6", "Apple clang version
    15.0.0 (clang-1500.3.9.4)"; word "LLVM" for llvm-profdata's ("LLVM version 14.0.6")."""
    match = re.search(rf"(Apple )?\b{word} version (\d+)", version_text)
    return (match.group(1) is not None, int(match.group(2))) if match else None


def key(kind: str, roms: list, use_flags: list) -> dict:
    """The profile's part of the core's cache key; Clang's with the flags of its final build
    (native_flags.pgo_use with a stand-in for the profile's path). GCC's is what it was before Clang
    had a profile-guided build, so GCC's cached cores stay valid."""
    inputs = {"frames_per_rom": FRAMES_PER_ROM, "roms": len(roms), "trainer_sha256": file_sha256(TRAINER)}
    return inputs if kind == "gcc" else {**inputs, "kind": "clang-instr", "flags": use_flags}


def llvm_profdata(cxx: str, version_text: str) -> list | None:
    """The command of an llvm-profdata of the same release as the Clang `cxx`, or None. Tried in turn:
    beside the compiler's real file (/usr/lib/llvm-14/bin/ for Debian's /usr/bin/clang++-14),
    llvm-profdata-MAJOR beside it or on PATH, plain llvm-profdata, and on macOS `xcrun llvm-profdata`."""
    release = llvm_release(version_text, "clang")
    found = shutil.which(cxx)
    if release is None or found is None:
        return None
    names = (f"llvm-profdata-{release[1]}", "llvm-profdata")
    places = [(Path(os.path.realpath(found)).parent, "llvm-profdata"), *((Path(found).parent, n) for n in names),
              *((None, n) for n in names)]  # None: PATH; which() adds .exe on Windows
    files = [shutil.which(name, path=folder and str(folder)) for folder, name in places]
    candidates = [[f] for f in dict.fromkeys(filter(None, files))]  # in order, each once
    for command in candidates + ([["xcrun", "llvm-profdata"]] if sys.platform == "darwin" else []):
        if profdata_release(command) == release:
            return command
    return None


def profdata_release(command: list) -> tuple | None:
    for args in (["--version"], ["merge", "--version"]):  # LLVM 14's wants a subcommand first
        try:
            out = subprocess.run([*command, *args], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            return None
        release = llvm_release(out, "LLVM")
        if release:
            return release
    return None


def train(trainer: Path, roms: list, raw_dir: Path | None = None) -> None:
    """One trainer per core, each on its share of the ROMs. GCC's runtime adds each process's counts
    into the same profile files under a lock; Clang's writes each process's raw profile to raw_dir."""
    env = None if raw_dir is None else dict(os.environ, LLVM_PROFILE_FILE=str(raw_dir / RAW_PATTERN))
    jobs = max(1, min(len(roms), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
    print(f"training ALE's core on {len(roms)} ROMs for its profile-guided build ({jobs} processes)")
    trainers = [subprocess.Popen([str(trainer), str(FRAMES_PER_ROM), *roms[j::jobs]], env=env) for j in range(jobs)]
    failed = [t.args for t in trainers if t.wait() != 0]
    if failed:
        raise SetupError(f"the profile training failed: {failed[0][:3]}")


def merge(profdata: list, raw_dir: Path, output: Path) -> Path:
    """Clang: the trainers' raw profiles merged into one indexed profile, for -fprofile-use."""
    raws = sorted(raw_dir.glob("*.profraw"))
    if not raws:
        raise SetupError(f"the profile training wrote no raw profile into {raw_dir}")
    done = subprocess.run([*profdata, "merge", "-o", str(output), *map(str, raws)], capture_output=True, text=True)
    if done.returncode != 0 or not output.is_file():
        raise SetupError(f"{' '.join(profdata)} merge failed: {done.stderr.strip()[-2000:]}")
    print(f"merged {len(raws)} raw profiles into {output}")
    return output
