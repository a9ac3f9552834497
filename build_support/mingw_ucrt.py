"""MinGW-w64's UCRT toolchain (x86_64-w64-mingw32ucrt-g++, GCC's posix thread model), which the Windows
builds use: Debian bookworm has none, Debian sid packages it (g++-mingw-w64-ucrt64), so it is installed
into the sid root of tools/debian_root_setup.py and run there through chroot.

Each tool is a small wrapper in the build cache (.../mingw-ucrt/bin/x86_64-w64-mingw32ucrt-NAME, put on PATH
by ensure(), so a build names the tools as Debian does) that enters a private mount namespace, binds this machine's own top-level folders (/work, /root, /tmp, ...,
everything but the system's /usr, /etc, /var, ...) at their own paths inside the root and runs the root's
tool there: every path a build passes stays valid, and nothing stays mounted after the call.
zlib: sid's libz-mingw-w64-dev is built against msvcrt.dll, so Debian's zlib source (the upstream tarball,
checked against sid's Sources index) is compiled with the UCRT compiler into the root's MinGW sysroot
(/usr/x86_64-w64-mingw32ucrt/{include,lib}), where `-lz` and <zlib.h> find it as they find Debian's.
Needs root (debootstrap, chroot, mount) and debootstrap; the first call makes the root (minutes).

    python -m build_support.mingw_ucrt        # makes what is missing, prints the folder to put on PATH
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
from pathlib import Path

from build_support.ale_cache import cache_root

TRIPLET = "x86_64-w64-mingw32ucrt"
PACKAGES = ["g++-mingw-w64-ucrt64"]  # GCC, binutils and the UCRT's import libraries (mingw-w64-ucrt64-dev)
TOOLS = ("g++", "gcc", "ar", "nm", "dlltool", "objdump")
SYSROOT = f"/usr/{TRIPLET}"
# zlib's own win32/Makefile.gcc: these sources, -O3, no configure step (its zconf.h serves MinGW as shipped).
ZLIB_SOURCES = ("adler32", "compress", "crc32", "deflate", "gzclose", "gzlib", "gzread", "gzwrite", "infback",
                "inffast", "inflate", "inftrees", "trees", "uncompr", "zutil")
MARK_PACKAGES, MARK_ZLIB = "mingw-ucrt", "mingw-ucrt-zlib"
# The host's folders that stay the root's own inside: the system the root's tools are built for.
SYSTEM = ("bin", "boot", "etc", "lib", "lib32", "lib64", "libx32", "run", "sbin", "sys", "usr", "var")


COMPILER = f"{TRIPLET}-g++"  # Debian's name for it, found on PATH once ensure() ran


def bin_dir() -> Path:
    return cache_root() / "mingw-ucrt" / "bin"


def tool(name: str) -> str:
    """A wrapper's path (it exists once ensure() made the toolchain)."""
    return str(bin_dir() / f"{TRIPLET}-{name}")


ENTER = """#!/bin/sh
# Written by build_support/mingw_ucrt.py: `enter PROGRAM ARGS...` runs PROGRAM inside {root}
# with this machine's own top-level folders bound at their paths (a private mount namespace: gone after it).
[ -n "$SB3_ALE_VEC_UCRT_NS" ] || SB3_ALE_VEC_UCRT_NS=1 exec unshare --mount --propagation private "$0" "$@"
for d in /*; do
  case ${{d#/}} in {system}) continue ;; esac
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  mkdir -p "{root}$d" && mount --rbind "$d" "{root}$d" || exit 1
done
exec /usr/sbin/chroot "{root}" /usr/bin/env PATH=/usr/bin:/bin /bin/sh -c 'cd "$0" && exec "$@"' "$PWD" "$@"
"""
WRAPPER = """#!/bin/sh
# Written by build_support/mingw_ucrt.py: Debian sid's {name}, run in its root.
exec "{enter}" /usr/bin/{name} "$@"
"""


def write_wrappers(root: Path) -> None:
    out = bin_dir()
    out.mkdir(parents=True, exist_ok=True)
    files = {out / "enter": ENTER.format(root=root, system="|".join(SYSTEM))}
    files.update({out / f"{TRIPLET}-{n}": WRAPPER.format(name=f"{TRIPLET}-{n}", enter=out / "enter") for n in TOOLS})
    for path, text in files.items():
        if not path.exists() or path.read_text() != text:
            path.with_suffix(".tmp").write_text(text)
            path.with_suffix(".tmp").chmod(0o755)
            path.with_suffix(".tmp").replace(path)


def build_zlib(setup, root: Path, log: Path) -> str:
    """zlib's library and headers into the root's MinGW sysroot; returns the tarball's name."""
    tarball = setup.source_tarball("sid", "zlib", setup.cache_dir() / "downloads")
    (root / "tmp" / tarball.name).write_bytes(tarball.read_bytes())
    objects = " ".join(f"{s}.o" for s in ZLIB_SOURCES)
    setup.chroot(root, f"rm -rf /tmp/zlib && mkdir /tmp/zlib && tar xf /tmp/{tarball.name} -C /tmp/zlib "
                       f"--strip-components=1 && cd /tmp/zlib && for s in {' '.join(ZLIB_SOURCES)}; do "
                       f"{TRIPLET}-gcc -O3 -Wall -c $s.c -o $s.o; done && {TRIPLET}-ar rcs libz.a {objects} && "
                       f"install -m 644 libz.a {SYSROOT}/lib/ && install -m 644 zlib.h zconf.h {SYSROOT}/include/ && "
                       f"cd / && rm -rf /tmp/zlib /tmp/{tarball.name}", log)
    return tarball.name


@contextlib.contextmanager
def _locked():
    """One maker at a time (two debootstraps into one folder break each other)."""
    bin_dir().parent.mkdir(parents=True, exist_ok=True)
    with (bin_dir().parent / "make.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ready() -> bool:
    """The wrappers written and the root they enter complete (its markers), without entering it."""
    root_file = bin_dir().parent / "root"
    if not root_file.is_file() or not all(Path(tool(n)).is_file() for n in TOOLS):
        return False
    marks = Path(root_file.read_text().strip()) / "var" / "lib" / "sb3-ale-vec"
    return (marks / MARK_PACKAGES).exists() and (marks / MARK_ZLIB).exists()


def ensure() -> str:
    """The toolchain on this process's PATH: a COMPILER already there (a Debian with the package installed)
    as it is, else the wrappers, the sid root, its packages and zlib made where missing. Returns its folder."""
    found = shutil.which(COMPILER)
    if found:
        return str(Path(found).parent)
    if not ready():
        make()
    os.environ["PATH"] = f"{bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}"
    return str(bin_dir())


def make() -> None:
    """The sid root (tools/debian_root_setup.py's), the packages and zlib in it, the wrappers: what is missing."""
    if os.geteuid() != 0:
        raise RuntimeError("the UCRT toolchain's Debian sid root needs root (debootstrap, chroot, mount)")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import debian_root_setup as setup  # the sid root's maker (tools/, not part of the package)

    with _locked():
        if ready():
            return
        root = setup.make_root("sid")
        marks = root / "var" / "lib" / "sb3-ale-vec"
        log = root.with_name(root.name + "-mingw-ucrt.log")
        with setup.mounted(root):
            if not (marks / MARK_PACKAGES).exists():
                setup.say(f"{root.name}: apt-get install {' '.join(PACKAGES)} (log: {log})")
                setup.chroot(root, f"apt-get update -q && apt-get install -y -q --no-install-recommends "
                                   f"{' '.join(PACKAGES)}", log)
                (marks / MARK_PACKAGES).touch()
            if not (marks / MARK_ZLIB).exists():
                setup.say(f"{root.name}: zlib for the UCRT, from Debian's source: {build_zlib(setup, root, log)}")
                (marks / MARK_ZLIB).touch()
        write_wrappers(root)
        (bin_dir().parent / "root").write_text(f"{root}\n")


if __name__ == "__main__":
    print(ensure())
