"""The Windows builds' C runtime check (build_support/pe_imports.py): its import-table reader names the DLLs
binutils' objdump names, and it fails an image built by bookworm's MinGW-w64 (msvcrt.dll: a second C runtime
beside CPython's UCRT), or one that needs a MinGW DLL, while MinGW-w64's UCRT toolchain (the wheels' and
tests/native/cross_windows.sh's, build_support/mingw_ucrt.py) builds an image it passes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from build_support import mingw_ucrt, pe_imports  # noqa: E402

MSVCRT_CXX = "x86_64-w64-mingw32-g++-posix"  # Debian bookworm's MinGW-w64 (.ci/run installs it)
# What the wheels' extensions use: a thread (winpthreads), the C++ library, zlib, stdio.
SOURCE = """#include <cstdio>
#include <string>
#include <thread>
#include <zlib.h>
extern "C" __declspec(dllexport) int probe(const char* text) {
  std::string s(text); unsigned long crc = 0;
  std::thread t([&] { crc = crc32(0, reinterpret_cast<const Bytef*>(s.data()), s.size()); });
  t.join();
  return std::printf("%lu %s\\n", crc, zlibVersion());
}
"""
STATIC = ["-shared", "-s", "-static", "-static-libgcc", "-static-libstdc++"]  # cross_targets.link_command's


def build(cxx: str, tmp: Path, flags: list) -> Path:
    (tmp / "probe.cpp").write_text(SOURCE)
    out = tmp / f"probe-{len(flags)}.dll"
    subprocess.run([cxx, "-O2", str(tmp / "probe.cpp"), *flags, "-lz", "-o", str(out)], check=True, cwd=tmp)
    return out


def objdump_dlls(objdump: str, image: Path) -> list:
    text = subprocess.run([objdump, "-p", str(image)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"DLL Name: (\S+)", text)


@pytest.mark.slow
def test_msvcrt_builds_fail_the_check(tmp_path):
    if not (shutil.which(MSVCRT_CXX) and shutil.which("x86_64-w64-mingw32-objdump")):
        pytest.skip(f"{MSVCRT_CXX} is a tool this machine lacks (g++-mingw-w64-x86-64-posix)")
    static = build(MSVCRT_CXX, tmp_path, STATIC)
    dlls = pe_imports.imported_dlls(static.read_bytes())
    assert dlls == objdump_dlls("x86_64-w64-mingw32-objdump", static)
    assert pe_imports.outside_ucrt(dlls) == ["msvcrt.dll"]
    # Linked without -static: the MinGW runtime DLLs, which no Windows ships, fail it too.
    dynamic = build(MSVCRT_CXX, tmp_path, ["-shared"])
    dlls = pe_imports.imported_dlls(dynamic.read_bytes())
    assert dlls == objdump_dlls("x86_64-w64-mingw32-objdump", dynamic)
    assert {"msvcrt.dll", "libstdc++-6.dll", "zlib1.dll"} <= set(pe_imports.outside_ucrt(dlls))


def test_the_list_allows_one_cpython_and_the_ucrts_api_sets():
    ucrt = ["KERNEL32.dll", "api-ms-win-crt-heap-l1-1-0.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "python312.dll"]
    assert pe_imports.outside_ucrt(ucrt, "3.12") == []
    assert pe_imports.outside_ucrt(ucrt, "3.13") == ["python312.dll"]  # another version's DLL: another ABI
    assert pe_imports.outside_ucrt(["ucrtbase.dll", "VCRUNTIME140.dll", "api-ms-win-core-synch-l1-2-0.dll"]) == [
        "ucrtbase.dll", "VCRUNTIME140.dll", "api-ms-win-core-synch-l1-2-0.dll"]
    with pytest.raises(ValueError, match="not a PE image"):
        pe_imports.imported_dlls(b"\x7fELF" + bytes(200))


@pytest.mark.slow
@pytest.mark.deep
def test_ucrt_toolchain_builds_pass_the_check(tmp_path):
    if not shutil.which(mingw_ucrt.COMPILER) and not mingw_ucrt.ready() and os.geteuid() != 0:
        pytest.skip("the UCRT toolchain's Debian root needs root and debootstrap: a tool this machine lacks")
    folder = mingw_ucrt.ensure()
    image = build(str(Path(folder, mingw_ucrt.COMPILER)), tmp_path, STATIC)
    dlls = pe_imports.imported_dlls(image.read_bytes())
    assert dlls == objdump_dlls(str(Path(folder, f"{mingw_ucrt.TRIPLET}-objdump")), image)
    assert pe_imports.outside_ucrt(dlls) == []
    assert {"KERNEL32.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "api-ms-win-crt-stdio-l1-1-0.dll"} <= set(dlls)
