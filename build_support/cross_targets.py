"""The cross builds' toolchains, one per target, from this Linux machine: what compiles, with which
flags, against which Python headers, and how an extension is linked there.

- macos-arm64: PyPI's ziglang (Zig's Clang and libc++, which target macOS without Apple's SDK),
  deployment target macOS 13.0 (ale-py 0.12.1's own wheel is macosx_13_0_arm64); libc++ linked in
  statically; Python's symbols resolved when the interpreter loads the module (-undefined
  dynamic_lookup, as setuptools links on macOS); zlib from macOS's /usr/lib/libz.1.dylib through a
  text stub (a TAPI .tbd) naming the symbols ALE's core uses.
- windows-amd64: MinGW-w64's GCC for the UCRT, the C runtime CPython is built on (Debian sid's, in a
  Debian root: build_support/mingw_ucrt.py; the posix thread model: std::thread), the compiler of
  tests/native/cross_windows.sh, whose C++ tests run the same code under Wine; libstdc++, libgcc,
  winpthreads and zlib linked in statically; Python's symbols from pythonXY.dll through an import
  library made here (make_import_library). The image imports KERNEL32.dll, the UCRT's api-ms-win-crt-*
  API sets and pythonXY.dll only (build_support/pe_imports.py checks it). CROSS_CXX names another
  MinGW-w64 g++ (its binutils beside it, by name).

Python's headers: pyenv's CPython 3.X install (its include/ is CPython's platform-independent headers)
with its Linux pyconfig.h replaced by one for the target (pyconfig_h).
`python -m build_support.cross_targets flags|headers TARGET 3.X DIR` prints them for a shell script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from build_support import mingw_ucrt, native_flags

MACOS_MIN = "13.0"


@dataclass(frozen=True)
class Target:
    name: str
    platform: str  # sys.platform there: native_flags' name for it
    cxx: tuple  # the compiler command, target included
    ar: tuple
    tag: str  # the wheel's platform tag

    def ext_suffix(self, version: str) -> str:
        """importlib.machinery.EXTENSION_SUFFIXES[0] there: .cpython-312-darwin.so, .cp312-win_amd64.pyd."""
        nodot = version.replace(".", "")
        return f".cpython-{nodot}-darwin.so" if self.platform == "darwin" else f".cp{nodot}-win_amd64.pyd"

    def core_flags(self) -> list:
        """ALE's core, as setup.py compiles it (native_flags.core_flags), with Python's own -DNDEBUG and
        -fwrapv (setuptools adds them from Python's CFLAGS), without profile guidance (no target to run
        the training on)."""
        return [*native_flags.core_flags(False, platform=self.platform), "-DNDEBUG", "-fwrapv"]

    def engine_flags(self) -> list:
        """Our code: the engine's flags, pybind11's (C++17, hidden visibility, -g0) and Python's, as
        setuptools compiles it. MinGW: -mbig-obj, pybind11's bindings exceed COFF's 2^15 sections."""
        extra = ["-Wa,-mbig-obj"] if self.platform == "win32" else []
        return ["-std=c++17", "-fvisibility=hidden", "-g0", "-DNDEBUG", "-fwrapv", *native_flags.ENGINE_FLAGS, *extra]


def _zig(*args: str) -> tuple:
    return (sys.executable, "-m", "ziglang", *args)


_WINDOWS_CXX = os.environ.get("CROSS_CXX", mingw_ucrt.COMPILER)


def mingw_tool(name: str) -> str:
    """A binutils program of the Windows compiler's (ar, nm, dlltool): its name beside the compiler's."""
    return re.sub(r"g\+\+(-posix)?$", name, _WINDOWS_CXX)


TARGETS = {
    "macos-arm64": Target("macos-arm64", "darwin", _zig("c++", "-target", f"aarch64-macos.{MACOS_MIN}"),
                          _zig("ar"), f"macosx_{MACOS_MIN.replace('.', '_')}_arm64"),
    "windows-amd64": Target("windows-amd64", "win32", (_WINDOWS_CXX,), (mingw_tool("ar"),), "win_amd64"),
}


def compiler_version(target: Target) -> str:
    """The compiler's identity for the core's cache key (Zig's own version names its Clang and libc++)."""
    command = [*target.cxx[:3], "version"] if target.platform == "darwin" else [target.cxx[0], "--version"]
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        hint = "pip install ziglang" if target.platform == "darwin" else "python -m build_support.mingw_ucrt (as root)"
        raise RuntimeError(f"{target.name}: the compiler {' '.join(command)} does not run ({error}): {hint}") from None


def pyenv_include(version: str) -> Path:
    """CPython 3.X's headers from pyenv ($PYENV_ROOT, else ~/.pyenv): the newest 3.X.N installed."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted((p / "include" / f"python{version}" for p in root.glob(f"{version}.*")
                    if re.fullmatch(rf"{re.escape(version)}\.\d+", p.name)),
                   key=lambda p: int(p.parent.parent.name.split(".")[2]))
    found = [p for p in found if (p / "Python.h").is_file()]
    if not found:
        raise RuntimeError(f"no CPython {version} headers under {root} (pyenv install {version})")
    return found[-1]


def debian_include(version: str, out: Path) -> Path:
    """CPython 3.X's headers from Debian's libpython3.X-dev, for a version pyenv has none of here (3.14):
    tools/foreign_python.py's package, checked against its release's index; only its platform-independent
    headers are used (Debian's pyconfig.h lies in another folder, and is replaced anyway)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import foreign_python  # noqa: E402  (which release packages the version's headers)
    from build_support.ale_cache import cache_root

    if version not in foreign_python.VERSIONS:
        raise RuntimeError(f"no CPython {version} headers: neither pyenv's nor a Debian package named for them")
    deb = foreign_python.download_deb(*foreign_python.VERSIONS[version], cache_root() / "downloads")
    unpacked = out / f"deb-{version}"
    if not (unpacked / "usr" / "include" / f"python{version}" / "Python.h").is_file():
        shutil.rmtree(unpacked, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    return unpacked / "usr" / "include" / f"python{version}"


def headers_of(version: str, out: Path) -> Path:
    """pyenv's CPython 3.X headers, else Debian's (debian_include)."""
    try:
        return pyenv_include(version)
    except RuntimeError:
        return debian_include(version, out)


# What CPython's public headers (3.10-3.14, Include/ less internal/) read from pyconfig.h, by target. A
# C++ check below holds the sizes to the target's own types, so a wrong one stops the build. Left out:
# Py_DEBUG, Py_REF_DEBUG, Py_TRACE_REFS (a release build's objects have no debug fields), Py_GIL_DISABLED
# (3.13's free-threaded build, another ABI with its own tag, cp313t), Py_STATS, the sanitizers' macros;
# HAVE_* of functions the headers only declare wrappers for (clock_gettime, fork, readlink, realpath):
# declarations, not layout.
_COMMON = {"SIZEOF_INT": 4, "SIZEOF_LONG_LONG": 8, "SIZEOF_SIZE_T": 8, "SIZEOF_VOID_P": 8, "SIZEOF_TIME_T": 8,
           "SIZEOF_SHORT": 2, "SIZEOF_FLOAT": 4, "SIZEOF_DOUBLE": 8, "SIZEOF_UINTPTR_T": 8,
           "DOUBLE_IS_LITTLE_ENDIAN_IEEE754": 1, "WITH_DOC_STRINGS": 1, "WITH_PYMALLOC": 1,
           "HAVE_SYS_TYPES_H": 1, "HAVE_SYS_STAT_H": 1, "HAVE_WCHAR_H": 1, "HAVE_ERRNO_H": 1, "HAVE_STDDEF_H": 1}
# LP64, POSIX. pymacconfig.h (included after pyconfig.h on __APPLE__) sets SIZEOF_LONG, SIZEOF_SIZE_T,
# SIZEOF_VOID_P, ALIGNOF_MAX_ALIGN_T and the endianness from the compiler's own macros again.
_DARWIN = {"SIZEOF_LONG": 8, "SIZEOF_WCHAR_T": 4, "SIZEOF_PID_T": 4, "SIZEOF_PTHREAD_T": 8, "ALIGNOF_MAX_ALIGN_T": 8,
           "HAVE_SSIZE_T": 1, "HAVE_UNISTD_H": 1, "HAVE_SYS_TIME_H": 1, "HAVE_SYS_SELECT_H": 1, "HAVE_PTHREAD_H": 1,
           "HAVE_CLOCK_GETTIME": 1, "HAVE_FORK": 1, "HAVE_READLINK": 1, "HAVE_REALPATH": 1}
# LLP64, as CPython's own PC/pyconfig.h: the Windows branches (MS_WINDOWS), Python's API imported from
# pythonXY.dll (Py_ENABLE_SHARED with HAVE_DECLSPEC_DLL: __declspec(dllimport)), Windows' TLS keys
# (NT_THREADS). Py_ssize_t is MinGW's ssize_t, a 64-bit signed integer as CPython's __int64. SIZEOF_PID_T
# left undefined (PC/pyconfig.h's choice): it only picks the PyLong_FromPid macros.
_WIN32 = {"MS_WIN32": 1, "MS_WIN64": 1, "MS_WINDOWS": 1, "NT_THREADS": 1, "HAVE_DECLSPEC_DLL": 1,
          "Py_ENABLE_SHARED": 1, "SIZEOF_LONG": 4, "SIZEOF_WCHAR_T": 2, "ALIGNOF_MAX_ALIGN_T": 8, "HAVE_SSIZE_T": 1}
_SIZE_CHECKS = {"SIZEOF_INT": "int", "SIZEOF_LONG": "long", "SIZEOF_LONG_LONG": "long long",
                "SIZEOF_SIZE_T": "size_t", "SIZEOF_VOID_P": "void*", "SIZEOF_WCHAR_T": "wchar_t",
                "SIZEOF_TIME_T": "time_t", "SIZEOF_SHORT": "short", "SIZEOF_UINTPTR_T": "uintptr_t"}


def pyconfig_h(target: Target, version: str) -> str:
    values = {**_COMMON, **(_DARWIN if target.platform == "darwin" else _WIN32)}
    if tuple(map(int, version.split("."))) >= (3, 13):
        values["WITH_MIMALLOC"] = 1  # 3.13's default build on both (PyMemAllocatorName's members)
    lines = [f"/* pyconfig.h for CPython {version} on {target.name}, written by build_support/cross_targets.py */",
             "#ifndef Py_PYCONFIG_H", "#define Py_PYCONFIG_H",
             *(f"#define {name} {value}" for name, value in sorted(values.items())),
             "#ifdef __cplusplus", "#include <cstddef>", "#include <cstdint>", "#include <ctime>",
             *(f'static_assert(sizeof({c_type}) == {name}, "{name}");' for name, c_type in _SIZE_CHECKS.items()),
             "#endif", "#endif", ""]
    return "\n".join(lines)


def python_headers(target: Target, version: str, out: Path) -> Path:
    """A copy of CPython 3.X's headers with the target's pyconfig.h: Python.h includes "pyconfig.h"
    from its own folder first, so the Linux one cannot just be shadowed by an earlier -I."""
    include = out / f"python{version}"
    text = pyconfig_h(target, version)
    if not (include / "pyconfig.h").is_file() or (include / "pyconfig.h").read_text() != text:
        shutil.rmtree(include, ignore_errors=True)
        shutil.copytree(headers_of(version, out), include, ignore=shutil.ignore_patterns("pyconfig.h"))
        (include / "pyconfig.h").write_text(text)
    return include


def macos_zlib_stub(symbols: list, out: Path) -> Path:
    """A TAPI text stub of macOS's /usr/lib/libz.1.dylib naming the zlib functions ALE's core calls:
    the link records the dylib (two-level namespace) without Apple's SDK. libz.1.dylib's compatibility
    version is 1.0.0 on every macOS release."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("--- !tapi-tbd\ntbd-version: 4\ntargets: [ arm64-macos ]\n"
                   "install-name: '/usr/lib/libz.1.dylib'\ncurrent-version: 1.2.12\ncompatibility-version: 1.0.0\n"
                   f"exports:\n  - targets: [ arm64-macos ]\n    symbols: [ {', '.join(sorted(symbols))} ]\n...\n")
    return out


def zlib_symbols(core: Path) -> list:
    """The zlib functions ALE's core (an archive) leaves undefined, by Mach-O name (_gzopen, ...)."""
    nm = os.environ.get("LLVM_NM", "llvm-nm")  # Zig has no nm; Debian's llvm package has it
    listing = subprocess.run([nm, "-u", str(core)], capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in listing.splitlines() if line.strip() and not line.endswith(":")}
    zlib = sorted(n for n in names if re.fullmatch(r"_(gz\w+|crc32\w*|adler32\w*|inflate\w*|deflate\w*|"
                                                   r"compress\w*|uncompress\w*|zlibVersion|zError)", n))
    if not zlib:
        raise RuntimeError(f"no zlib symbol undefined in {core}: ALE's core without zlib?")
    return zlib


def python_data_symbols(include: Path) -> set:
    """Every PyAPI_DATA name the headers declare (the import library marks them DATA: no code thunk)."""
    pattern = re.compile(r"PyAPI_DATA\((?:[^()]|\([^()]*\))*\)\s*\(?\s*\*?\s*(\w+)")
    return {m for header in include.rglob("*.h") for m in pattern.findall(header.read_text(errors="replace"))}


def make_import_library(objects: list, version: str, include: Path, out: Path) -> Path:
    """An import library of pythonXY.dll with exactly the Python symbols the objects import (they are
    compiled with __declspec(dllimport): each is an undefined __imp_NAME; a function whose address a
    static initialiser takes is a plain NAME, the import library's thunk), made with dlltool from a .def
    file, so no CPython binary is needed."""
    listing = subprocess.run([mingw_tool("nm"), "-u", *map(str, objects)], capture_output=True, text=True,
                             check=True).stdout
    names = sorted({m.group(1) for m in re.finditer(r"\s(?:__imp_)?(_?Py\w+)$", listing, re.MULTILINE)})
    data = python_data_symbols(include)
    dll = f"python{version.replace('.', '')}.dll"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{dll[:-4]}.def").write_text(f"LIBRARY {dll}\nEXPORTS\n" +
                                         "".join(f"{n}{' DATA' if n in data else ''}\n" for n in names))
    library = out / f"lib{dll[:-4]}.dll.a"
    subprocess.run([mingw_tool("dlltool"), "-d", str(out / f"{dll[:-4]}.def"), "-D", dll, "-l", str(library)],
                   check=True)
    return library


def link_command(target: Target, objects: list, core: Path, work: Path, output: Path, version: str,
                 include: Path) -> list:
    """The extension's link. macOS: a Mach-O image whose Python symbols resolve at load time. Zig's
    linker (0.15.2 and 0.17.1) crashes on -bundle with -undefined dynamic_lookup, so it is an MH_DYLIB
    (-shared), as every PyO3/maturin extension is: CPython's importer dlopen()s either. Windows: a DLL
    importing pythonXY.dll, the C and C++ runtimes' MinGW parts linked in statically. The dylib's own
    name is @rpath/NAME (as maturin names its), not this machine's build path."""
    if target.platform == "darwin":
        stub = macos_zlib_stub(zlib_symbols(core), work / "libz.tbd")
        return [*target.cxx, "-shared", "-undefined", "dynamic_lookup", f"-Wl,-install_name,@rpath/{output.name}",
                *map(str, objects), str(core), str(stub), "-o", str(output)]
    python_lib = make_import_library(objects, version, include, work / f"import-{version}")
    return [*target.cxx, "-shared", "-s", "-static", "-static-libgcc", "-static-libstdc++", *map(str, objects),
            str(core), "-lz", str(python_lib), "-o", str(output)]


def main() -> None:
    """`python -m build_support.cross_targets flags TARGET` (the compiler command and the engine's
    flags, one per line) or `headers TARGET 3.X DIR` (writes Python's headers for the target under DIR
    and prints their folder)."""
    what, target = sys.argv[1], TARGETS[sys.argv[2]]
    if what == "flags":
        print("\n".join([*target.cxx, *target.engine_flags()]))
    else:
        print(python_headers(target, sys.argv[3], Path(sys.argv[4])))


if __name__ == "__main__":
    main()
