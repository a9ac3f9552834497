"""The portable Linux build's link against glibc at its floor (build_support/glibc_floor.py): a
library that uses what the engine uses from C++'s runtime and glibc (threads, timed waits on the
steady clock, std::random_device, shared_ptr, stat), linked as SB3_ALE_VEC_PORTABLE=1 links the
extension, asks for no glibc symbol newer than the floor, imports nothing unversioned, and runs here,
on this machine's newer glibc. tools/wheels.py then holds each real wheel to auditwheel's tag."""

from __future__ import annotations

import ctypes
import errno
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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

# The shims' edge cases, each called through the shim the floor's link binds it to.
EDGES = r"""
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <mutex>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

extern "C" int fstat_errno(int fd) {
  struct stat info {};
  errno = 0;
  return fstat(fd, &info) == 0 ? 0 : errno;
}

// A wait on the monotonic clock until `seconds`, woken by another thread after 100 ms: what it returns.
extern "C" int far_clockwait(long long seconds) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  bool woken = false;
  pthread_mutex_lock(&mutex);
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pthread_mutex_lock(&mutex);
    woken = true;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&mutex);
  });
  const timespec far{static_cast<time_t>(seconds), 999999999};
  int result = 0;
  while (!woken && result == 0) result = pthread_cond_clockwait(&cond, &mutex, CLOCK_MONOTONIC, &far);
  pthread_mutex_unlock(&mutex);
  waker.join();
  return result;
}

// wait_until(steady_clock's last instant) with a predicate made true after 100 ms: how often it was asked.
extern "C" long far_wait_until_checks() {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  long checks = 0;
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait_until(lock, std::chrono::steady_clock::time_point::max(), [&] { ++checks; return done; });
  }
  waker.join();
  return checks;
}

// This thread's getrandom answered with `error` by a seccomp filter (and openat with EACCES if `no_open`), as
// an old container profile answers: the errno of getrandom itself, then two arc4random values in `out`.
extern "C" int entropy_without_getrandom(int error, int no_open, uint32_t* out) {
#if defined(__x86_64__)
  const uint32_t arch = AUDIT_ARCH_X86_64;
#else
  const uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<uint32_t>(error) & SECCOMP_RET_DATA)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_open ? SYS_openat : 0xffffffffu, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    return -errno;
  }
  uint32_t word = 0;
  const int refused = syscall(SYS_getrandom, &word, sizeof word, 0) < 0 ? errno : 0;
  out[0] = arc4random();
  out[1] = arc4random();
  return refused;
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
    (work / "edges.cpp").write_text(EDGES)
    library = work / "uses.so"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", str(library),
                    str(work / "uses.cpp"), str(work / "edges.cpp"), str(glibc_floor.SHIMS),
                    *glibc_floor.link_args(stubs), "-Wl,--exclude-libs,ALL"], check=True)
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
    subprocess.run(["g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-o", str(plain),
                    str(floor_library.with_name("uses.cpp"))], check=True)
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


WEAK = r"""
#include <pthread.h>
#include <unistd.h>
#pragma weak pthread_clockjoin_np
#pragma weak pthread_cancel
// Used where present, as code probing for a newer glibc's function does: 2.31's, and one 2.28 had
// (getpid: a strong reference, which makes libc needed, as any extension's do).
extern "C" int newer_join_present() {
  return pthread_clockjoin_np != nullptr && pthread_cancel != nullptr && getpid() > 0;
}
"""


def test_a_weak_reference_to_a_newer_symbol_is_named(floor_library, tmp_path):
    # Weak or not, it binds to no version: on 2.28 it is absent, on 2.31+ it binds to whatever version is there.
    (tmp_path / "weak.cpp").write_text(WEAK)
    library = tmp_path / "weak.so"
    subprocess.run(["g++", "-std=c++17", "-fPIC", "-shared", "-o", str(library), str(tmp_path / "weak.cpp"),
                    *glibc_floor.link_args(floor_library.parent / "stubs")], check=True)
    assert glibc_floor.unversioned_imports(library) == ["pthread_clockjoin_np"]


@pytest.mark.parametrize("launcher", ["env", "ccache"])
def test_stubs_made_with_a_launcher_in_cc(launcher, tmp_path, monkeypatch):
    # setup.py's compiler as distutils makes it from CC: the stubs' compiler is CC's two words, not the first.
    if shutil.which(launcher) is None:
        pytest.skip(f"{launcher} is not installed: a tool this machine lacks")
    from setuptools._distutils import ccompiler, sysconfig as distutils_sysconfig
    monkeypatch.setenv("CC", f"{launcher} gcc")
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "ccache"))
    compiler = ccompiler.new_compiler()
    distutils_sysconfig.customize_compiler(compiler)
    command = glibc_floor.compiler_command(compiler.compiler_so)
    assert command == [launcher, "gcc"]
    stubs = glibc_floor.make_stubs(command, tmp_path / "stubs")
    assert "sb3stub_0" in (stubs / "libc.so.6.c").read_text() and (stubs / "libc.so.6").is_file()
    assert glibc_floor.make_stubs(f"{launcher} gcc", tmp_path / "again") == tmp_path / "again"  # a command line

def test_fstat_of_a_negative_fd_fails_with_ebadf(floor_library):
    # -100 is AT_FDCWD: newfstatat(-100, "", AT_EMPTY_PATH) would stat the current directory.
    fstat_errno = ctypes.CDLL(str(floor_library)).fstat_errno
    assert [fstat_errno(-100), fstat_errno(-1), fstat_errno(-2)] == [errno.EBADF] * 3
    with open(floor_library, "rb") as file:
        assert fstat_errno(file.fileno()) == 0


@pytest.mark.parametrize("seconds", [2**63 // 10**9, 2**63 - 1], ids=["steady_clock max", "time_t max"])
def test_a_far_deadline_waits_until_woken(floor_library, seconds):
    # A deadline the realtime clock's nanoseconds cannot hold: the wait must still be one (no EINVAL).
    far_clockwait = ctypes.CDLL(str(floor_library)).far_clockwait
    assert far_clockwait(ctypes.c_longlong(seconds)) == 0


CHILD = """
import ctypes, sys
lib, out = ctypes.CDLL(sys.argv[1]), (ctypes.c_uint32 * 2)()
lib.far_wait_until_checks.restype = ctypes.c_long
print(eval(sys.argv[2]), *out)
"""


def in_child(library: Path, call: str) -> subprocess.CompletedProcess:
    """`call` (of `lib`, the library, and `out`, two uint32s) in a child process, printing its value and then
    `out`s: a hang is killed after 30 s and fails the test."""
    try:
        return subprocess.run([sys.executable, "-c", CHILD, str(library), call], capture_output=True, text=True,
                              timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} hung (killed after 30 s)")


def test_wait_until_steady_clocks_max_sleeps(floor_library):
    # A wait that fails at once never unlocks: libstdc++'s predicate loop asks again at 100% CPU, and the
    # thread that would make the predicate true never gets the mutex.
    child = in_child(floor_library, "lib.far_wait_until_checks()")
    assert child.returncode == 0, child.stderr
    assert int(child.stdout.split()[0]) <= 5


@pytest.mark.parametrize("error", [errno.ENOSYS, errno.EPERM], ids=["ENOSYS", "EPERM"])
def test_arc4random_without_getrandom_reads_dev_urandom(floor_library, error):
    # A seccomp filter in a child refuses getrandom, as old container profiles do: no endless retry.
    child = in_child(floor_library, f"lib.entropy_without_getrandom({error}, 0, out)")
    assert child.returncode == 0, child.stderr
    refused, first, second = map(int, child.stdout.split())
    assert refused == error  # the filter took: getrandom itself fails so
    assert first != second  # two draws of 32 random bits (equal once in 2**32 runs)


def test_arc4random_with_no_entropy_at_all_aborts_saying_why(floor_library):
    child = in_child(floor_library, f"lib.entropy_without_getrandom({errno.ENOSYS}, 1, out)")
    assert child.returncode == -signal.SIGABRT, (child.returncode, child.stdout, child.stderr)
    assert "arc4random" in child.stderr and "entropy" in child.stderr, child.stderr
