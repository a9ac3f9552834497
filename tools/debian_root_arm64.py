"""What the arm64 Debian roots need beyond tools/debian_root_setup.py's: qemu-user through binfmt_misc,
and CPythons their release does not package, cross-compiled.

An arm64 root is made as an amd64 one (debootstrap, apt inside), but every program in it is run by
qemu-aarch64-static, which the kernel starts through binfmt_misc: registered with the F flag, so the
interpreter is opened once, at registration, and runs inside a chroot that lacks it. Where the release has
no CPython of a version (bullseye has none newer than 3.9), one is cross-compiled in the amd64 root of
the same release, by that release's own cross compiler (gcc-aarch64-linux-gnu, whose glibc is the
release's: this machine's would bind newer symbols) against the release's arm64 libraries (multiarch),
the amd64 root's CPython of the version being the build Python; the result is copied into the arm64
root and the cross packages are purged from the amd64 root again. Compiling under qemu was not tried: a
Python loop ran 83 times slower there and ALE's emulator 9 times, and a native CPython build takes minutes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import debian_root_setup as setup

BINFMT = Path("/proc/sys/fs/binfmt_misc")
QEMU = "/usr/bin/qemu-aarch64-static"
TRIPLET = "aarch64-linux-gnu"
# The arm64 halves of debian_root_setup.CPYTHON_BUILD_DEPS' libraries, beside the release's cross compiler.
CROSS_DEPS = ["gcc-aarch64-linux-gnu", "make", "pkg-config"] + [
    f"{p}:arm64" for p in ("libssl-dev", "zlib1g-dev", "libffi-dev", "libbz2-dev", "liblzma-dev", "libsqlite3-dev",
                           "libreadline-dev", "libncursesw5-dev", "uuid-dev", "libgdbm-dev")]
# configure's answers it cannot find by running a test program for another machine.
CROSS_ANSWERS = "ac_cv_buggy_getaddrinfo=no ac_cv_file__dev_ptmx=yes ac_cv_file__dev_ptc=no"


def binfmt() -> None:
    """qemu-aarch64 registered with binfmt_misc (mounting it and enabling Debian's entry if need be)."""
    if not Path(QEMU).exists():
        sys.exit("the arm64 roots need qemu-user-static and binfmt-support (apt-get install qemu-user-static "
                 "binfmt-support)")
    entry = BINFMT / "qemu-aarch64"
    if entry.exists() and entry.read_text().startswith("enabled"):
        return
    if not (BINFMT / "register").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)], check=True)
    setup.say("registering qemu-aarch64 with binfmt_misc (update-binfmts --enable qemu-aarch64)")
    subprocess.run(["update-binfmts", "--enable", "qemu-aarch64"], check=True)
    if "flags: PF" not in entry.read_text() and "flags: F" not in entry.read_text():
        sys.exit(f"{entry} lacks the F flag: qemu would not run inside a chroot")


def cross_compile(amd64: Path, version: str, tarball: Path, log: Path) -> Path:
    """CPython from the upstream tarball cross-compiled in the amd64 root, installed under a staging folder
    there (kept until copied, so a second run does not compile again); the folder of its /opt/python<version>."""
    build_python = f"/opt/python{version}/bin/python{version}"
    stage = f"/tmp/cross-out-{version}"
    built = amd64 / stage.lstrip("/") / f"opt/python{version}"
    if (built / ".complete").exists():
        return built
    if not (amd64 / build_python.lstrip("/")).exists():
        sys.exit(f"{amd64.name} has no {build_python} to cross-compile CPython {version} with")
    setup.say(f"cross-compiling CPython {version} in {amd64.name} (minutes; log: {log})")
    shutil.copy(tarball, amd64 / "tmp" / tarball.name)
    setup.chroot(amd64, f"dpkg --add-architecture arm64 && apt-get update -q && "
                        f"apt-get install -y -q {' '.join(CROSS_DEPS)}", log)
    jobs = os.cpu_count() or 2
    setup.chroot(amd64, f"rm -rf /tmp/cross {stage} && mkdir /tmp/cross && "
                        f"tar xf /tmp/{tarball.name} -C /tmp/cross --strip-components=1 && cd /tmp/cross && "
                        f"PKG_CONFIG_LIBDIR=/usr/lib/{TRIPLET}/pkgconfig:/usr/share/pkgconfig ./configure -q "
                        f"--build=x86_64-linux-gnu --host={TRIPLET} --prefix=/opt/python{version} "
                        f"--with-build-python={build_python} --with-ensurepip=no {CROSS_ANSWERS} && "
                        f"make -s -j{jobs} && make -s altinstall DESTDIR={stage} && cd / && "
                        f"rm -rf /tmp/cross /tmp/{tarball.name}", log)
    purge_cross(amd64, log)
    machine = subprocess.run(["file", "-L", str(built / "bin" / f"python{version}")], capture_output=True,
                             text=True).stdout
    if "aarch64" not in machine:
        sys.exit(f"the cross build gave no aarch64 interpreter: {machine}")
    (built / ".complete").touch()
    return built


def cross_build_cpython(amd64: Path, arm64: Path, version: str, tarball: Path, log: Path) -> None:
    """CPython cross-compiled in the amd64 root (cross_compile) and installed into the arm64 root's
    /opt/python<version>, its modules imported there under qemu."""
    built = cross_compile(amd64, version, tarball, log)
    target = arm64 / f"opt/python{version}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(built, target, symlinks=True)
    (target / ".complete").unlink()
    # No ensurepip: the checks' venvs are made without pip and get it from its wheel (debian_roots.check).
    setup.chroot(arm64, f"/opt/python{version}/bin/python{version} -c "
                        "'import ssl, ctypes, zlib, bz2, lzma, sqlite3, readline'", log)
    shutil.rmtree(built.parent.parent)


def purge_cross(amd64: Path, log: Path) -> None:
    """The cross compiler and every arm64 package out of the amd64 root, and arm64 with them."""
    # The arm64 copies of essential packages (libc6:arm64, ...) go too: the amd64 ones are the root's own.
    setup.chroot(amd64, "apt-get purge -y -q --allow-remove-essential --auto-remove gcc-aarch64-linux-gnu "
                        "cpp-aarch64-linux-gnu "
                        "binutils-aarch64-linux-gnu libc6-dev-arm64-cross make pkg-config "
                        "$(dpkg-query -W -f='${Package}:${Architecture}\\n' | grep ':arm64$' || true) && "
                        "dpkg --remove-architecture arm64 && apt-get update -q", log)
    left = setup.chroot(amd64, f"ls /usr/bin | grep -E '^{TRIPLET}-' || true").stdout.split()
    if left:
        sys.exit(f"{amd64.name}: cross tools left after the purge: {left}")
