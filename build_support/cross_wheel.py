"""Wheels for macOS arm64 and Windows AMD64, cross-built on Linux: ALE's core (cached per target in the
build cache, as setup.py caches its own), the two extensions of setup.py for one CPython version,
linked as build_support/cross_targets.py says for the target, then a wheel (build_support/wheel_files.py).

    python -m build_support.cross_wheel --target macos-arm64 --python 3.12 --out dist

Needs pybind11 (a build requirement), and per target: `pip install ziglang` (macOS) or MinGW-w64's UCRT
toolchain (Windows: build_support/mingw_ucrt.py makes it on first use, as root); CPython 3.X's headers
from pyenv. jaxlib, when importable, gives the XLA targets their headers, as in setup.py.
The wheels are built, linked and inspected here, never run: no macOS or Windows Python is at hand; a
Windows extension that imports a DLL outside the UCRT's list (build_support/pe_imports.py) fails the build.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from build_support import ale_core, cross_targets, mingw_ucrt, pe_imports, wheel_files
from build_support.ale_cache import core_key, core_path, publish_file
from build_support.ale_patches import patched_source_dir, patches_digest, patches_sha256
from build_support.ale_source import pinned
from build_support.link_inputs import xla_ffi_include

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "native"


def extension_sources() -> dict:
    """setup.py's two extensions' sources, read from setup.py (its HOOKS list and _testing's list) so
    they stay written once: {"_engine": [...], "_testing": [...]}, paths relative to the repository."""
    scope = {"NATIVE": NATIVE, "ROOT": ROOT, "sorted": sorted, "str": str}
    found = {}
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if names == ["HOOKS"]:
            found["hooks"] = eval(compile(ast.Expression(node.value), "setup.py", "eval"), scope)
        elif names == ["testing"]:
            found["testing"] = eval(compile(ast.Expression(node.value.args[1]), "setup.py", "eval"), scope)
    engine = sorted(str(p.relative_to(ROOT)) for p in NATIVE.rglob("*.cpp") if p not in found["hooks"])
    return {"_engine": engine, "_testing": [str(Path(s)) for s in found["testing"]]}


def jobs() -> int:
    return int(os.environ.get("SB3_ALE_VEC_JOBS", "0")) or min(2, os.cpu_count() or 1)


def compile_all(commands: list, what: str) -> None:
    """Runs (command, output) pairs, jobs() at once, printing progress; the first failure stops it."""
    start, done = time.monotonic(), 0

    def run(command: list) -> None:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"failed: {' '.join(command)}\n{result.stdout}{result.stderr}")

    with ThreadPoolExecutor(jobs()) as pool:
        for _ in pool.map(run, commands):
            done += 1
            if done % 20 == 0 or done == len(commands):
                print(f"  {what}: {done}/{len(commands)} compiled ({time.monotonic() - start:.0f} s)", flush=True)


def build_core(target: cross_targets.Target, work: Path) -> tuple:
    """ALE's core for the target, from the cache or built into it (keyed as setup.py keys its own:
    release, sdist and patch hashes, compiler and its version, flags). Returns (library, includes)."""
    version = ale_core.ale_version()
    src = patched_source_dir(version) / "src"
    generated = work / "ale-generated"
    ale_core.write_version_hpp(src, generated, version)
    includes = [str(src), str(generated)]
    flags = target.core_flags()
    inputs = {"ale": version, "sdist_sha256": pinned(version)[1], "patches_sha256": patches_sha256(),
              "compiler": [c for c in target.cxx if c != sys.executable],
              "compiler_version": cross_targets.compiler_version(target), "flags": flags, "pgo": False}
    library = core_path(version, core_key(**inputs), "libale_core.a")
    if library.is_file():
        print(f"{target.name}: ALE's core from the cache: {library}")
        return library, includes
    sources = ale_core.core_sources(src)
    objects = [work / "core" / (str(s.relative_to(src)).replace("/", "_") + ".o") for s in sources]
    (work / "core").mkdir(parents=True, exist_ok=True)
    print(f"{target.name}: compiling ALE's core ({len(sources)} files, {' '.join(flags)})", flush=True)
    compile_all([[*target.cxx, *flags, *(f"-I{d}" for d in includes), "-c", str(s), "-o", str(o)]
                 for s, o in zip(sources, objects)], "ALE's core")
    archive = work / "libale_core.a"
    archive.unlink(missing_ok=True)
    subprocess.run([*target.ar, "rcs", str(archive), *map(str, objects)], check=True)
    publish_file(archive, library, {**inputs, "target": target.name})
    print(f"{target.name}: ALE's core is cached as {library}")
    return library, includes


def build_extensions(target: cross_targets.Target, python: str, core: Path, ale_includes: list,
                     work: Path) -> dict:
    """Both extensions for CPython `python`: {path in the wheel: built file}."""
    import pybind11

    include = cross_targets.python_headers(target, python, work / "include")
    system = [*ale_includes, str(include), pybind11.get_include()]
    defines = [f'-DSB3_ALE_VEC_ALE_VERSION="{ale_core.ale_version()}"',
               f'-DSB3_ALE_VEC_ALE_PATCHES="{patches_digest()}"']
    xla = xla_ffi_include()
    if xla:
        system.append(xla)
        defines.append("-DSB3_ALE_VEC_XLA_FFI=1")
    flags = [*target.engine_flags(), *defines, f"-I{NATIVE}", *(f for d in system for f in ("-isystem", d))]
    sources = extension_sources()
    unique = sorted({s for listed in sources.values() for s in listed})
    obj_dir = work / f"py{python}"
    obj = {s: obj_dir / (s[:-len(".cpp")] + ".o") for s in unique}
    for path in obj.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    stamp = obj_dir / "flags.txt"  # an object is kept while newer than its source, our headers, compiler and flags
    compiler = repr([target.cxx, cross_targets.compiler_version(target), flags])
    if not stamp.is_file() or stamp.read_text() != compiler:
        stamp.write_text(compiler)
    newest = max(p.stat().st_mtime for p in [stamp, *NATIVE.rglob("*.hpp")])
    stale = [s for s in unique
             if not obj[s].is_file() or obj[s].stat().st_mtime < max(newest, (ROOT / s).stat().st_mtime)]
    print(f"{target.name}: compiling the engine for CPython {python} ({len(stale)} of {len(unique)} files)", flush=True)
    compile_all([[*target.cxx, *flags, "-c", str(ROOT / s), "-o", str(obj[s])] for s in stale], f"cp{python}")
    built = {}
    for name, listed in sources.items():
        output = obj_dir / f"{name}{target.ext_suffix(python)}"
        output.unlink(missing_ok=True)
        subprocess.run(cross_targets.link_command(target, [obj[s] for s in listed], core, obj_dir, output, python,
                                                  include), check=True)
        built[f"sb3_ale_vec/{output.name}"] = output
        print(f"{target.name}: linked {output.name} ({output.stat().st_size // 1024} KiB)")
        if target.platform == "win32":
            dlls = pe_imports.imported_dlls(output.read_bytes())
            if bad := pe_imports.outside_ucrt(dlls, python):
                raise RuntimeError(f"{output.name} imports {', '.join(bad)}, outside the UCRT's list (all: {dlls})")
    return built


def build_cross_wheel(target: str, python: str, out: Path) -> Path:
    """The wheel sb3_ale_vec-VERSION-cpXY-cpXY-PLATFORM.whl for `target` ("macos-arm64",
    "windows-amd64") and CPython `python` ("3.12") in `out`; its path."""
    chosen = cross_targets.TARGETS[target]
    if chosen.cxx[0] == mingw_ucrt.COMPILER:
        mingw_ucrt.ensure()  # on PATH, made on first use
    work = ROOT / "build" / "cross" / target
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    core, ale_includes = build_core(chosen, work)
    extensions = build_extensions(chosen, python, core, ale_includes, work)
    nodot = python.replace(".", "")
    wheel = wheel_files.write_wheel(out, f"cp{nodot}-cp{nodot}-{chosen.tag}", extensions, work)
    problems = wheel_files.check_wheel(wheel)
    if problems:
        raise RuntimeError(f"{wheel}: " + "; ".join(problems))
    print(f"{wheel} ({wheel.stat().st_size // 1024} KiB, {time.monotonic() - start:.0f} s)")
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(cross_targets.TARGETS), required=True)
    parser.add_argument("--python", nargs="+", default=["3.12"], help="CPython versions, e.g. 3.10 3.13")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    for python in args.python:
        wheel = build_cross_wheel(args.target, python, args.out)
        with zipfile.ZipFile(wheel) as archive:
            archive.printdir()


if __name__ == "__main__":
    main()
