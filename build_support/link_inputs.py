"""What the engine is built and linked with besides ALE's core and our sources: zlib (ALE reads ROMs
with it) and XLA's FFI headers (native/xla/), each found where the platform keeps it."""

import importlib.util
import os
from pathlib import Path


def zlib_dirs() -> tuple:
    """ALE reads ROMs with zlib. Linux and macOS have it; on Windows (no system zlib) the build takes
    it from SB3_ALE_VEC_ZLIB_ROOT (a folder with include/zlib.h and lib/zlib.lib, e.g. vcpkg's
    x64-windows-static-md tree): (include dirs, library dirs)."""
    root = os.environ.get("SB3_ALE_VEC_ZLIB_ROOT")
    if not root:
        return [], []
    return [str(Path(root) / "include")], [str(Path(root) / "lib")]


def portable() -> bool:
    """SB3_ALE_VEC_PORTABLE=1 (the wheel command in docs/building.md): an extension that needs nothing
    its target machines may lack. Linux: zlib linked in (libz.so.1 is on manylinux's list of system
    libraries, but not every machine has it), libstdc++ linked in, glibc's symbols bound as its floor
    release had them (build_support/glibc_floor.py)."""
    return os.environ.get("SB3_ALE_VEC_PORTABLE", "0") != "0"


def zlib_link_args(msvc: bool) -> list:
    """ALE reads ROMs with zlib (see zlib_dirs): the system's, or with SB3_ALE_VEC_PORTABLE=1 a PIC
    libz.a linked into the extension, its symbols hidden."""
    if msvc:
        return [*(f"/LIBPATH:{d}" for d in zlib_dirs()[1]), "zlib.lib"]
    if not portable():
        return ["-lz"]
    return ["-Wl,-Bstatic", "-lz", "-Wl,-Bdynamic", "-Wl,--exclude-libs,libz.a"]


def xla_ffi_include() -> str | None:
    """jaxlib's copy of XLA's FFI headers (header-only; jaxlib is a build requirement, pinned in
    pyproject.toml), for native/xla/xla_ffi.cpp. Found without importing jaxlib. None, with a note, when
    jaxlib is missing (a build without isolation) or SB3_ALE_VEC_XLA=0: the engine is then built
    without the XLA targets and xla() says so."""
    if os.environ.get("SB3_ALE_VEC_XLA", "1") == "0":
        return None
    spec = importlib.util.find_spec("jaxlib")
    for location in (spec.submodule_search_locations or []) if spec else []:
        include = Path(location) / "include"
        if (include / "xla" / "ffi" / "api" / "ffi.h").is_file():
            return str(include)
    print("note: jaxlib (a build requirement) is not installed here: building without the XLA FFI targets")
    return None
