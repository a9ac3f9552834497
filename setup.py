"""Build sb3_ale_vec._engine: our engine (native/) linked with ALE's emulator core.

ALE's C++ sources are never part of this repository: they come from the source distribution of
the pinned ale-py release, fetched with pip at build time (or from $SB3_ALE_VEC_ALE_SOURCE, an
unpacked sdist or a .tar.gz) and cached under build/.
"""

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext, naive_recompile
from setuptools import setup
from setuptools.command.build_clib import build_clib

ROOT = Path(__file__).resolve().parent
PGO_TRAINER = ROOT / "native" / "pgo_train.cpp"
# ale-py is pinned in pyproject.toml, as a dependency and as a build requirement (the ROMs of the
# profile-guided build); the engine must be built from the same release whose wheel provides the
# ROMs (checked again at import time).
_PINS = set(re.findall(r'"ale-py==([\w.]+)"', (ROOT / "pyproject.toml").read_text()))
if len(_PINS) != 1:
    sys.exit(f"pyproject.toml must pin one ale-py release everywhere, found {sorted(_PINS)}")
ALE_VERSION = _PINS.pop()
CACHE = ROOT / "build" / "ale-sdist"


def _unpack(tarball: Path) -> Path:
    with tarfile.open(tarball) as tar:
        tar.extractall(CACHE, filter="data")
    return CACHE / f"ale_py-{ALE_VERSION}"


def ale_source_dir() -> Path:
    """Return the root of ale-py's unpacked sdist, fetching it with pip if needed."""
    override = os.environ.get("SB3_ALE_VEC_ALE_SOURCE")
    if override:
        path = Path(override)
        return _unpack(path) if path.is_file() else path
    unpacked = CACHE / f"ale_py-{ALE_VERSION}"
    if (unpacked / "src" / "ale" / "ale_interface.cpp").is_file():
        return unpacked
    tarball = CACHE / f"ale_py-{ALE_VERSION}.tar.gz"
    if not tarball.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        # Without build isolation: pip only prepares the sdist's metadata, which needs
        # scikit-build-core and nanobind (our own build requirements) to be importable.
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--no-build-isolation", f"ale-py=={ALE_VERSION}", "-d", str(CACHE)]
        if subprocess.run(cmd).returncode != 0 or not tarball.is_file():
            sys.exit(f"Could not fetch the ale-py {ALE_VERSION} source distribution with pip.\n"
                     f"Download it yourself (`{' '.join(cmd[2:])}`) and point "
                     "SB3_ALE_VEC_ALE_SOURCE at the .tar.gz or its unpacked folder.")
    return _unpack(tarball)


def ale_library() -> tuple:
    """ALE's emulator core as a static library (its own flags: we do not police its warnings)."""
    src = ale_source_dir() / "src"
    ale = src / "ale"
    generated = ROOT / "build" / "ale-generated"
    generated.mkdir(parents=True, exist_ok=True)
    major, minor, patch = (ALE_VERSION.split(".") + ["0", "0"])[:3]
    version_hpp = (ale / "version.hpp.in").read_text()
    for key, value in {"ALE_VERSION": ALE_VERSION, "ALE_VERSION_MAJOR": major,
                       "ALE_VERSION_MINOR": minor, "ALE_VERSION_PATCH": patch,
                       "ALE_VERSION_GIT_SHA": "sdist"}.items():
        version_hpp = version_hpp.replace(f"@{key}@", value)
    if not (generated / "version.hpp").is_file() or (generated / "version.hpp").read_text() != version_hpp:
        (generated / "version.hpp").write_text(version_hpp)
    sources = [ale / "ale_interface.cpp"]
    for sub in ("common", "emucore", "environment", "games", "games/supported"):
        sources += sorted((ale / sub).glob("*.c*"))
    # -g0: Python's CFLAGS add -g. No LTO: across ALE's own files it measured slower than without.
    flags = ["-std=c++17", "-O3", "-w", "-fPIC", "-g0", *SANITIZE_FLAGS]
    return ("ale_core", {"sources": [str(s) for s in sources],
                         "include_dirs": [str(src), str(generated)], "cflags": flags})


# SB3_ALE_VEC_SANITIZE=address|thread builds everything with that sanitizer (see tests/README).
SANITIZE = os.environ.get("SB3_ALE_VEC_SANITIZE", "")
if SANITIZE == "address":
    SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize=vptr", "-fno-omit-frame-pointer", "-g"]
elif SANITIZE == "thread":
    SANITIZE_FLAGS = ["-fsanitize=thread", "-g"]
elif SANITIZE:
    sys.exit(f"SB3_ALE_VEC_SANITIZE={SANITIZE!r}: use 'address' or 'thread'")
else:
    SANITIZE_FLAGS = []
# SB3_ALE_VEC_PGO=0 turns off the profile-guided build of ALE's core (see BuildClib).
PGO = os.environ.get("SB3_ALE_VEC_PGO", "1") != "0" and not SANITIZE
PGO_FRAMES_PER_ROM = 1000

def needs_recompile(obj: str, src: str) -> bool:
    """Timestamps, with our headers counted as inputs of our sources (an engine.o built against an
    older atari_env.hpp would disagree with atari_env.o about the class layout)."""
    if naive_recompile(obj, src):
        return True
    native = ROOT / "native"
    if Path(src).resolve().parent != native:
        return False
    built = os.stat(obj).st_mtime
    return any(header.stat().st_mtime > built for header in native.glob("*.hpp"))


ParallelCompile("SB3_ALE_VEC_JOBS", default=0, needs_recompile=needs_recompile).install()

ale_lib = ale_library()
engine = Pybind11Extension(
    "sb3_ale_vec._engine",
    sorted(str(p.relative_to(ROOT)) for p in (ROOT / "native").glob("*.cpp") if p.name != PGO_TRAINER.name),
    depends=sorted(str(p.relative_to(ROOT)) for p in (ROOT / "native").glob("*.hpp")),
    define_macros=[("SB3_ALE_VEC_ALE_VERSION", f'"{ALE_VERSION}"')],
    # ALE's headers as system headers: -Wall -Wextra then judge only our own code.
    extra_compile_args=[flag for d in ale_lib[1]["include_dirs"] for flag in ("-isystem", d)]
    + ["-O3", "-Wall", "-Wextra", "-ffp-contract=off", *SANITIZE_FLAGS],
    extra_link_args=[*SANITIZE_FLAGS, "-lz"],  # after ale_core on the command line, which needs it
    cxx_std=17,
)

def library_path(clib: build_clib) -> Path:
    """Where build_clib writes ALE's static library."""
    return Path(clib.build_clib) / clib.compiler.library_filename(ale_lib[0])


def training_roms() -> list:
    """Every ROM of the ale-py wheel (a build requirement), or none when it is not importable."""
    try:
        from ale_py import roms
    except ImportError:
        return []
    return [str(roms.get_rom_path(rom)) for rom in roms.get_all_rom_ids()]


def is_gcc(command: list) -> bool:
    try:
        version = subprocess.run([command[0], "--version"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "Free Software Foundation" in version  # GCC's banner; Clang's names no foundation


class BuildClib(build_clib):
    """build_clib that, with GCC, builds ALE's core profile-guided: an instrumented build plays every
    ROM for a moment (native/pgo_train.cpp), then the final build is optimised with that profile.
    The emulator is most of the engine's time: measured, it ran about 12% more frames per second this
    way, and the engine 9-13% more steps per second.
    Functions the training never ran are optimised as without a profile (-fprofile-partial-training),
    so games and paths outside it lose nothing."""

    def build_libraries(self, libraries) -> None:
        (name, info), = libraries
        sources = info["sources"]
        library = library_path(self)
        fresh = library.is_file() and all(os.stat(s).st_mtime <= library.stat().st_mtime for s in sources)
        roms = training_roms() if PGO and not fresh else []
        if not roms or not is_gcc(self.compiler.compiler_cxx):
            if PGO and not fresh:
                print("note: building ALE's core without profile guidance (needs GCC and ale-py)")
            return super().build_libraries(libraries)
        objects = self.compiler.object_filenames(sources, output_dir=self.build_temp)

        def compile_core(extra: list) -> None:
            for obj in objects:  # the object files are rebuilt in place, flags changed
                Path(obj).unlink(missing_ok=True)
            self.compiler.compile(sources, output_dir=self.build_temp, include_dirs=info["include_dirs"],
                                  extra_postargs=info["cflags"] + extra)

        for stale in Path(self.build_temp).rglob("*.gcda"):
            stale.unlink()
        compile_core(["-fprofile-generate", "-fprofile-update=single"])
        trainer = self.compiler.compile([str(PGO_TRAINER)], output_dir=self.build_temp,
                                        include_dirs=info["include_dirs"], extra_postargs=["-std=c++17", "-O2"])
        self.compiler.link_executable(objects + trainer, "ale_pgo_train", output_dir=self.build_temp,
                                      libraries=["z"], extra_postargs=["-fprofile-generate"], target_lang="c++")
        print(f"training ALE's core on {len(roms)} ROMs for its profile-guided build")
        subprocess.run([str(Path(self.build_temp) / "ale_pgo_train"), str(PGO_FRAMES_PER_ROM), *roms],
                       check=True)
        compile_core(["-fprofile-use", "-fprofile-partial-training", "-Wno-missing-profile"])
        self.compiler.create_static_lib(objects, name, output_dir=self.build_clib)


class BuildExt(build_ext):
    """build_ext that builds ALE's library first, also when run alone (`build_ext --inplace`), and
    relinks the extension whenever that library is newer."""

    def run(self) -> None:
        self.run_command("build_clib")
        library = str(library_path(self.get_finalized_command("build_clib")))
        for ext in self.extensions:  # a dependency and a link input: a newer library relinks
            ext.depends = [*ext.depends, library]
            ext.extra_objects = [library]
        super().run()


setup(libraries=[ale_lib], ext_modules=[engine], cmdclass={"build_clib": BuildClib, "build_ext": BuildExt})
