"""Build sb3_ale_vec._engine: our engine (native/) linked with ALE's emulator core.

ALE's C++ sources are never part of this repository or its sdist. The build step takes them from
the pinned ale-py release's source distribution, checked against its sha256
(build_support/ale_source.py), and compiles ALE's core once per machine, ALE version, compiler and
flags into a per-user cache (build_support/ale_cache.py). Asking for metadata or an sdist does
neither.
"""

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext, naive_recompile
from setuptools import setup
from setuptools.command.build_clib import build_clib
from setuptools.errors import CompileError, LinkError, SetupError

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # PEP 517 backends do not put the project on sys.path
from build_support import ale_core  # noqa: E402
from build_support.ale_cache import core_key, core_path, publish_file  # noqa: E402
from build_support.ale_patches import patched_source_dir, patches_digest, patches_sha256  # noqa: E402
from build_support.ale_source import AleSourceError, pinned  # noqa: E402
from build_support import glibc_floor, native_flags, pgo as pgo_build  # noqa: E402
from build_support.link_inputs import portable, xla_ffi_include, zlib_dirs, zlib_link_args  # noqa: E402

NATIVE = ROOT / "native"  # by layer: core/, env/, frames/, python/, xla/; includes name the layer


def ale_version() -> str:
    """ale-py is pinned in pyproject.toml as a dependency and as a build requirement (the ROMs of the
    profile-guided build); the engine must be built from that same release (checked again at import)."""
    try:
        return ale_core.ale_version()
    except ValueError as error:
        raise SetupError(str(error)) from None


def sanitizer() -> str:
    kind = os.environ.get("SB3_ALE_VEC_SANITIZE", "")
    if kind not in native_flags.SANITIZERS:
        raise SetupError(f"SB3_ALE_VEC_SANITIZE={kind!r}: use 'address' or 'thread'")
    return kind


def sanitize_flags() -> list:
    return native_flags.SANITIZERS[sanitizer()]


def is_msvc(compiler) -> bool:
    return compiler.compiler_type == "msvc"


def needs_recompile(obj: str, src: str) -> bool:
    """Timestamps, with our headers counted as inputs of our sources (an engine.o built against an
    older atari_env.hpp would disagree with atari_env.o about the class layout)."""
    if naive_recompile(obj, src):
        return True
    if NATIVE not in Path(src).resolve().parents:
        return False
    built = os.stat(obj).st_mtime
    return any(header.stat().st_mtime > built for header in NATIVE.rglob("*.hpp"))


ParallelCompile("SB3_ALE_VEC_JOBS", default=0, needs_recompile=needs_recompile).install()


def compiler_version(command: list) -> str:
    try:
        return subprocess.run([command[0], "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


class BuildClib(build_clib):
    """Provides ALE's core as a static library, from the cache or built into it.

    With GCC and Clang the core is built profile-guided (build_support/pgo.py): an instrumented build
    plays every ROM for a moment (build_support/pgo_train.cpp), then the final build is optimised with
    that profile. The emulator is most of the engine's time: measured with GCC, it ran about 12% more
    frames per second this way, and the engine 9-13% more steps per second. GCC optimises the functions
    the training never ran as without a profile (-fprofile-partial-training), so games and paths
    outside it lose nothing; Clang has no such flag (native_flags.pgo_use)."""

    def build_libraries(self, libraries) -> None:
        (name, _), = libraries  # its sources are only known once ALE's sdist is unpacked
        version = ale_version()
        src = patched_source_dir(version) / "src"  # with our changes (build_support/ale_patches.py)
        generated = Path(self.build_temp) / "ale-generated"
        ale_core.write_version_hpp(src, generated, version)
        if sanitizer() and is_msvc(self.compiler):
            raise SetupError("SB3_ALE_VEC_SANITIZE needs GCC or Clang")
        self.ale_include_dirs = [str(src), str(generated), *zlib_dirs()[0]]
        cxx = getattr(self.compiler, "compiler_cxx", None) or [getattr(self.compiler, "cc", "cl.exe")]  # MSVC: cl
        self.ale_library = self.provide_core(name, version, src, cxx, compiler_version(cxx), sanitizer())

    def recipe(self, version: str, cxx: list, version_text: str, kind: str) -> tuple:
        """What shapes the core built for sanitizer `kind` ("": the release core): its cache key's inputs, its
        flags, the compiler's kind where a profile-guided build is wanted ("gcc", "clang"; None: not wanted),
        whether it is profile-guided, the ROMs it trains on and Clang's llvm-profdata."""
        flags = [*native_flags.core_flags(is_msvc(self.compiler)), *native_flags.CORE_SANITIZERS[kind]]
        roms = pgo_build.training_roms()
        wanted = os.environ.get("SB3_ALE_VEC_PGO", "1") != "0" and not kind and bool(roms)
        pgo_kind = pgo_build.compiler_kind(version_text) if wanted else None  # MSVC: none (see build_support/pgo.py)
        profdata = self.clang_profdata(cxx, version_text, flags) if pgo_kind == "clang" else None
        pgo = pgo_kind == "gcc" or bool(profdata)
        inputs = {"ale": version, "sdist_sha256": pinned(version)[1], "patches_sha256": patches_sha256(),
                  "compiler": getattr(self.compiler, "compiler_so", cxx),
                  "compiler_cxx": cxx, "compiler_version": version_text, "flags": flags,
                  "pgo": pgo and pgo_build.key(pgo_kind, roms, native_flags.pgo_use(pgo_kind, "FILE"))}
        return inputs, flags, pgo_kind, pgo, roms, profdata

    def provide_core(self, name: str, version: str, src: Path, cxx: list, version_text: str, kind: str) -> Path:
        """The core for sanitizer `kind` ("": the release core) from the cache, or built into it. The part a
        sanitizer leaves alone (native_flags.CORE_UNINSTRUMENTED) is the release core's objects, taken from
        its archive (built first where the cache lacks it): ALE's emulator is compiled once, not per sanitizer."""
        inputs, flags, pgo_kind, pgo, roms, profdata = self.recipe(version, cxx, version_text, kind)
        filename = self.compiler.library_filename(name)
        plain = native_flags.CORE_UNINSTRUMENTED.get(kind)
        release = None
        if plain:  # the release core's key names its objects: a new release core makes a new one here
            release = core_path(version, core_key(**self.recipe(version, cxx, version_text, "")[0]), filename)
            inputs["uninstrumented"] = {"part": plain, "from": release.parent.name}
        library = core_path(version, core_key(**inputs), filename)
        if library.is_file():
            print(f"reusing ALE's core from the cache: {library}")
            return library
        if release and not release.is_file():
            print(f"building the release core first: the {kind} core takes its {plain} objects from it")
            self.provide_core(name, version, src, cxx, version_text, "")
        self.check_compiler(cxx, version_text, flags)
        if pgo_kind == "gcc" and not self.accepts(flags + native_flags.pgo_use("gcc")):
            print(f"note: {cxx[0]} lacks -fprofile-partial-training (GCC 10+): no profile-guided build")
            pgo = False
        elif not pgo and pgo_kind != "clang" and os.environ.get("SB3_ALE_VEC_PGO", "1") != "0" and not kind:
            print("note: building ALE's core without profile guidance (needs GCC, or Clang with its "
                  "llvm-profdata, and ale-py)")
        self.profdata = profdata
        sources = [str(s) for s in ale_core.core_sources(src)]
        alone = [s for s in sources if Path(s).parent.name == plain]
        objects = self.compile_core([s for s in sources if s not in alone], flags, roms if pgo else [], pgo_kind)
        if alone:
            objects += self.release_objects(release, alone)
        built = Path(self.build_clib) / filename
        built.unlink(missing_ok=True)  # ar adds to an archive that is there: the release core's, just built
        self.compiler.create_static_lib(objects, name, output_dir=self.build_clib)
        publish_file(built, library, inputs)
        print(f"ALE's core is cached as {library}")
        return library

    def release_objects(self, release: Path, sources: list) -> list:
        """The objects of `sources` as the release core's archive holds them, by name (ALE's file names are
        distinct): extracted into a folder of their own."""
        names = [Path(o).name for o in self.compiler.object_filenames(sources)]
        ar = self.compiler.archiver[0]
        held = subprocess.run([ar, "t", str(release)], capture_output=True, text=True, check=True).stdout.split()
        missing = sorted(set(names) - set(held))
        if missing or len(set(held)) != len(held) or len(set(names)) != len(names):
            raise SetupError(f"{release}: not one member each for {', '.join(missing) or 'the uninstrumented part'}")
        out = Path(self.build_temp) / "release-objects"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        subprocess.run([ar, "x", str(release), *names], cwd=out, check=True)
        return [str(out / n) for n in names]

    def accepts(self, flags: list, link: bool = False) -> bool:
        probe = Path(self.build_temp) / "probe" / "cxx17.cpp"
        probe.parent.mkdir(parents=True, exist_ok=True)
        probe.write_text("#include <optional>\nint main() { return std::optional<int>(0).value(); }\n")
        try:
            objects = self.compiler.compile([str(probe)], output_dir=self.build_temp, extra_postargs=flags)
            if link:
                self.compiler.link_executable(objects, "probe", output_dir=str(probe.parent),
                                              extra_postargs=flags, target_lang="c++")
        except (CompileError, LinkError):
            return False
        return True

    def clang_profdata(self, cxx: list, version_text: str, flags: list) -> list | None:
        """Clang's profile-guided build needs an llvm-profdata of its release (build_support/pgo.py) and
        its profile runtime (a separate package on some systems: Debian's libclang-rt-16-dev)."""
        profdata = pgo_build.llvm_profdata(cxx[0], version_text)
        if profdata is None:
            print(f"note: no llvm-profdata of {cxx[0]}'s release (beside it, llvm-profdata-MAJOR or "
                  "llvm-profdata on PATH): ALE's core is built without profile guidance")
        elif not self.accepts(flags + native_flags.pgo_generate("clang", self.build_temp), link=True):
            print(f"note: {cxx[0]} cannot link an instrumented program (its profile runtime, "
                  "libclang_rt.profile, is missing): ALE's core is built without profile guidance")
            return None
        return profdata

    def check_compiler(self, cxx: list, version_text: str, flags: list) -> None:
        if not self.accepts(flags):
            first_line = version_text.splitlines()[0] if version_text else "unknown version"
            raise SetupError(
                f"The C++ compiler {cxx[0]} ({first_line}) rejects the flags {' '.join(flags)}.\n"
                "ALE's core and the engine need a C++17 compiler (GCC 12 is what was built here; GCC "
                "older than 8 or Clang older than 7 will not do). Point CC and CXX at a newer one, or "
                "install a wheel, which needs no compiler.")

    def compile_core(self, sources: list, flags: list, roms: list, kind: str | None) -> list:
        """ALE's core; profile-guided when given ROMs to train on, as `kind` ("gcc", "clang") does it."""
        include_dirs = self.ale_include_dirs

        def compile_with(extra: list) -> list:
            for obj in self.compiler.object_filenames(sources, output_dir=self.build_temp):
                Path(obj).unlink(missing_ok=True)  # rebuilt in place, flags changed
            return self.compiler.compile(sources, output_dir=self.build_temp, include_dirs=include_dirs,
                                         extra_postargs=flags + extra)

        if not roms:
            return compile_with([])
        raw_dir = Path(self.build_temp) / "pgo-raw"  # Clang's raw profiles; GCC's .gcda lie by the objects
        for stale in [*Path(self.build_temp).rglob("*.gcda"), *raw_dir.glob("*.profraw")]:
            stale.unlink()
        generate = native_flags.pgo_generate(kind, str(raw_dir))
        objects = compile_with(generate)
        trainer = self.compiler.compile([str(pgo_build.TRAINER)], output_dir=self.build_temp,
                                        include_dirs=include_dirs, extra_postargs=["-std=c++17", "-O2"])
        self.compiler.link_executable(objects + trainer, "ale_pgo_train", output_dir=self.build_temp,
                                      libraries=["z"], library_dirs=zlib_dirs()[1], extra_postargs=generate[:1], target_lang="c++")
        pgo_build.train(Path(self.build_temp) / "ale_pgo_train", roms, raw_dir if kind == "clang" else None)
        if kind == "gcc":
            return compile_with(native_flags.pgo_use("gcc"))
        profile = pgo_build.merge(self.profdata, raw_dir, Path(self.build_temp) / "ale-core.profdata")
        return compile_with(native_flags.pgo_use("clang", str(profile)))


def editable_build_temp(library: str, msvc: bool) -> str:
    """A lasting folder for the engine's objects in an editable install, which setuptools builds in a
    fresh temporary folder every time: README's test command reinstalls, and the objects are then
    reused by timestamp (needs_recompile) instead of compiled again. Its name is a digest of what
    shapes them besides our sources: Python, platform, pybind11, jaxlib, ALE's core (its path names
    compiler, flags and release), our flags and the compiler's environment."""
    import pybind11

    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    inputs = {"python": sys.implementation.cache_tag, "platform": sysconfig.get_platform(),
              "pybind11": pybind11.__version__, "jaxlib": version("jaxlib"),
              "xla": os.environ.get("SB3_ALE_VEC_XLA", "1"),
              "core": library, "flags": [*native_flags.engine_flags(msvc), *sanitize_flags()],
              "env": {k: os.environ.get(k) for k in ("CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")}}
    return str(ROOT / "build" / f"editable-{core_key(**inputs)}")


class BuildExt(build_ext):
    """build_ext that gets ALE's core first, also when run alone (`build_ext --inplace`), and links
    the extension against it; a different core (other flags, compiler or release) rebuilds it all."""

    def run(self) -> None:
        try:
            self.run_command("build_clib")
        except AleSourceError as error:
            raise SetupError(str(error)) from None
        clib = self.get_finalized_command("build_clib")
        library = str(clib.ale_library)
        msvc = is_msvc(clib.compiler)  # build_ext makes its own compiler only in super().run()
        if getattr(self, "editable_mode", False):
            self.build_temp = editable_build_temp(library, msvc)
        stamp = Path(self.build_temp) / "ale-core-path.txt"
        # The core and the link's kind: switching SB3_ALE_VEC_PORTABLE rebuilds, as another core does.
        built_with = library + (" portable" if self.glibc_floor() else "")
        if not stamp.is_file() or stamp.read_text() != built_with:
            shutil.rmtree(Path(self.build_temp) / "native", ignore_errors=True)
            self.force = True
        # ALE's headers as system headers: -Wall -Wextra then judge only our own code. The sanitizer's
        # flags last: their -O1 overrides the engine's -O3.
        flags = [*native_flags.system_includes(clib.ale_include_dirs, msvc), *native_flags.engine_flags(msvc),
                 *sanitize_flags()]
        stubs = self.glibc_floor_stubs(clib.compiler) if self.glibc_floor() else None  # made once for both
        for ext in self.extensions:
            if not ext.extra_objects:  # once, also if setuptools runs this command again
                ext.extra_compile_args += flags
                ext.define_macros.append(("SB3_ALE_VEC_ALE_VERSION", f'"{ale_version()}"'))
                ext.define_macros.append(("SB3_ALE_VEC_ALE_PATCHES", f'"{patches_digest()}"'))
                xla_include = xla_ffi_include()
                if xla_include:  # as a system header: -Wall -Wextra judge only our code
                    ext.extra_compile_args += native_flags.system_includes([xla_include], msvc)
                    ext.define_macros.append(("SB3_ALE_VEC_XLA_FFI", "1"))
                # After ALE's core, which needs zlib; nothing of ALE's core (or a static zlib) exported.
                ext.extra_link_args += [*sanitize_flags(), *zlib_link_args(msvc), *native_flags.hide_static_libs()]
                if stubs:  # SB3_ALE_VEC_PORTABLE=1 on Linux
                    ext.sources.append(str(glibc_floor.SHIMS.relative_to(ROOT)))
                    ext.extra_link_args += glibc_floor.link_args(stubs)
            ext.extra_objects = [library]
        super().run()
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(built_with)
        for ext in self.extensions if self.glibc_floor() else []:
            newer = glibc_floor.unversioned_imports(Path(self.get_ext_fullpath(ext.name)))
            if newer:
                raise SetupError(f"{ext.name} needs {', '.join(newer)} from newer than glibc {glibc_floor.FLOOR}: "
                                 "define them in build_support/glibc_floor_shims.cpp")

    @staticmethod
    def glibc_floor() -> bool:
        return portable() and sys.platform.startswith("linux")

    def glibc_floor_stubs(self, compiler) -> Path:
        command = glibc_floor.compiler_command(compiler.compiler_so)  # CC whole: "ccache gcc", not "ccache"
        return glibc_floor.make_stubs(command, Path(self.build_temp) / "glibc-floor")

    def build_extensions(self) -> None:
        # run() adds -lale_core from build_clib's folder, which a cache hit leaves empty.
        self.compiler.set_libraries([lib for lib in self.compiler.libraries if lib != "ale_core"])
        super().build_extensions()


HEADERS = sorted(str(p.relative_to(ROOT)) for p in NATIVE.rglob("*.hpp"))
HOOKS = [NATIVE / "python" / "hooks.cpp", NATIVE / "xla" / "xla_stage_test.cpp",
         NATIVE / "env" / "reset_probe.cpp"]  # the offline probe: the tool's, through _testing
engine = Pybind11Extension(
    "sb3_ale_vec._engine",
    sorted(str(p.relative_to(ROOT)) for p in NATIVE.rglob("*.cpp") if p not in HOOKS),
    depends=HEADERS, cxx_std=17, include_dirs=[str(NATIVE)],
)
# The hooks of the tests and the benchmark, out of the module users import: the pure parts they
# compare with cv2 and numpy, and the bare emulator loop (ALE's core linked in again).
testing = Pybind11Extension(
    "sb3_ale_vec._testing",
    [f"native/{name}.cpp" for name in ("python/hooks", "xla/xla_stage_test", "env/emulator", "frames/frame_ops",
                                        "frames/resize_avx2", "frames/palette_lookup", "env/reset_ahead",
                                        "env/reset_job", "env/reset_check", "env/ale_state", "env/reset_probe")],
    depends=HEADERS, cxx_std=17, include_dirs=[str(NATIVE)],
)
# build_clib's sources stay empty here, so an sdist never lists ALE's files; BuildClib finds them.
setup(libraries=[("ale_core", {"sources": []})], ext_modules=[engine, testing],
      cmdclass={"build_clib": BuildClib, "build_ext": BuildExt})
