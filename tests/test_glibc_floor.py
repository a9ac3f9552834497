"""The portable Linux build's link against glibc at its floor (build_support/glibc_floor.py): a
library that uses what the engine uses from C++'s runtime and glibc (threads, timed waits on the
steady clock, std::random_device, shared_ptr, stat), linked as SB3_ALE_VEC_PORTABLE=1 links the
extension, asks for no glibc symbol newer than the floor, imports nothing unversioned, and runs here,
on this machine's newer glibc. tools/wheels.py then holds each real wheel to auditwheel's tag."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from build_support import glibc_floor  # noqa: E402

# Slow: the stubs are compiled (about 2,400 functions) and linked. Linux's (the suite runs there).
pytestmark = pytest.mark.slow

USES = r"""
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>

extern "C" long uses(const char* path) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] { std::lock_guard<std::mutex> lock(m); done = true; cv.notify_one(); });
  {
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return done; })) return -1;
  }
  worker.join();
  std::unique_lock<std::mutex> lock(m);
  const auto begun = std::chrono::steady_clock::now();
  cv.wait_until(lock, begun + std::chrono::milliseconds(20));  // times out: the clock's shim
  if (std::chrono::steady_clock::now() - begun < std::chrono::milliseconds(20)) return -2;
  auto shared = std::make_shared<std::string>(std::to_string(std::random_device{}() % 10));
  struct stat info {};
  if (stat(path, &info) != 0 || stat("/nonexistent/file", &info) == 0) return -3;
  if (stat(path, &info) != 0) return -4;
  return static_cast<long>(info.st_size) + static_cast<long>(shared->size()) - 1;
}
"""


def glibc_versions(library: Path) -> list:
    text = subprocess.run(["readelf", "-V", "-W", str(library)], capture_output=True, text=True, check=True).stdout
    return sorted({v for v in re.findall(r"Name: GLIBC_([\d.]+)", text)}, key=glibc_floor.version_key)


@pytest.fixture(scope="module")
def floor_library(tmp_path_factory) -> Path:
    if shutil.which("g++") is None or shutil.which("readelf") is None:
        pytest.skip("g++ or readelf is not installed: a tool this machine lacks")
    work = tmp_path_factory.mktemp("floor")
    stubs = glibc_floor.make_stubs(["gcc"], work / "stubs")
    (work / "uses.cpp").write_text(USES)
    library = work / "uses.so"
    subprocess.run(["g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-o", str(library), str(work / "uses.cpp"),
                    str(glibc_floor.SHIMS), *glibc_floor.link_args(stubs), "-Wl,--exclude-libs,ALL"], check=True)
    return library


def test_the_link_asks_for_nothing_newer_than_the_floor(floor_library):
    versions = glibc_versions(floor_library)
    assert versions and glibc_floor.version_key(versions[-1]) <= glibc_floor.version_key(glibc_floor.FLOOR), versions
    assert glibc_floor.unversioned_imports(floor_library) == []
    needed = subprocess.run(["readelf", "-d", str(floor_library)], capture_output=True, text=True).stdout
    assert "libstdc++" not in needed and "libpthread.so.0" in needed  # C++ inside; pthread_* where 2.28 had them


def test_the_same_code_linked_plainly_needs_a_newer_glibc(floor_library, tmp_path):
    # What the stubs are for: this machine's glibc binds the same code to newer versions.
    plain = tmp_path / "plain.so"
    subprocess.run(["g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-o", str(plain), str(floor_library.with_name("uses.cpp"))],
                   check=True)
    newest = glibc_versions(plain)[-1]
    assert glibc_floor.version_key(newest) > glibc_floor.version_key(glibc_floor.FLOOR), newest


def test_the_floor_linked_library_runs_here(floor_library):
    uses = ctypes.CDLL(str(floor_library)).uses
    uses.restype = ctypes.c_long
    assert uses(str(floor_library).encode()) == floor_library.stat().st_size


def test_stubs_keep_the_default_version_the_floor_had():
    # pthread_cond_wait's default moved to 2.3.2 (the new condition variables); 2.2.5's is the old ABI.
    libc = glibc_floor.real_libc(["gcc"])[0]
    chosen = glibc_floor.floor_symbols(libc, glibc_floor.FLOOR)
    assert chosen["pthread_cond_wait"][0] == "2.3.2"
    assert "arc4random" not in chosen and "__libc_single_threaded" not in chosen
    assert glibc_floor.version_key(chosen["memcpy"][0]) <= glibc_floor.version_key(glibc_floor.FLOOR)
