"""The Debian roots that tools/debian_roots.py runs the Linux wheels in, made with debootstrap and cached.

A root is a minimal Debian of one release (`debootstrap --variant=minbase`), entered with chroot; /proc,
/dev and /sys are the host's. Its CPythons are Debian's packages where the release has them; where it has
none of a version (bullseye has no 3.10+), one is built inside from a newer release's source package (its
upstream tarball, checked against the archive's sha256) and the compilers are purged again afterwards, so
that no root has a compiler when the wheels are installed. An arm64 root's programs run under qemu-user,
and its missing CPythons are cross-compiled in the amd64 root of its release (tools/debian_root_arm64.py).
Each step leaves a marker in the root, so a second run does only what is missing."""

import contextlib
import fcntl
import hashlib
import lzma
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import debian_root_arm64

MIRROR = "http://deb.debian.org/debian"
started = time.monotonic()

# Each root: its release and architecture, the packages it gets, and its CPythons (version: interpreter
# inside the root). `build` names CPythons built inside: version -> (release whose source package gives
# it, package name); `cross` the same for arm64, cross-compiled in the amd64 root named `cross_in`.
BULLSEYE_LIBRARIES = ["ca-certificates", "libssl1.1", "libffi7", "zlib1g", "libbz2-1.0", "liblzma5", "libsqlite3-0",
                      "libreadline8", "libncursesw6", "libuuid1", "libgdbm6"]
SID_PACKAGES = ["ca-certificates", "python3.13", "python3.13-venv", "python3.14", "python3.14-venv"]
SID_PYTHONS = {"3.13": "/usr/bin/python3.13", "3.14": "/usr/bin/python3.14"}
ROOTS = {
    "bullseye": {"suite": "bullseye", "arch": "amd64", "packages": BULLSEYE_LIBRARIES,
                 "pythons": {"3.11": "/opt/python3.11/bin/python3.11", "3.13": "/opt/python3.13/bin/python3.13"},
                 "build": {"3.11": ("bookworm", "python3.11"), "3.13": ("trixie", "python3.13")}},
    "sid": {"suite": "sid", "arch": "amd64", "packages": SID_PACKAGES, "pythons": SID_PYTHONS, "build": {}},
    "bullseye-arm64": {"suite": "bullseye", "arch": "arm64", "packages": BULLSEYE_LIBRARIES,
                       "pythons": {"3.11": "/opt/python3.11/bin/python3.11"}, "build": {},
                       "cross": {"3.11": ("bookworm", "python3.11")}, "cross_in": "bullseye"},
    "sid-arm64": {"suite": "sid", "arch": "arm64", "packages": SID_PACKAGES, "pythons": SID_PYTHONS, "build": {}},
}
# What a CPython's configure needs for the modules pip and the tests use (ssl, ctypes, zlib, lzma, ...).
CPYTHON_BUILD_DEPS = ["build-essential", "libssl-dev", "zlib1g-dev", "libffi-dev", "libbz2-dev", "liblzma-dev",
                      "libsqlite3-dev", "libreadline-dev", "libncursesw5-dev", "uuid-dev", "libgdbm-dev"]
COMPILERS = ("cc", "gcc", "c++", "g++", "clang")
HOST_CA_BUNDLE, ROOT_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/host-ca-bundle.crt"


def say(text: str) -> None:
    print(f"[{time.monotonic() - started:6.0f} s] {text}", flush=True)


def cache_dir(cache: Path | None = None) -> Path:
    return Path(cache) if cache else Path.home() / ".cache" / "sb3-ale-vec"


def root_path(name: str, cache: Path | None = None) -> Path:
    return cache_dir(cache) / "roots" / f"{ROOTS[name]['suite']}-{ROOTS[name]['arch']}"


def try_lock(file) -> bool:
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def mounted(root: Path):
    """The host's /proc, /dev (with /dev/shm, which multiprocessing needs) and /sys inside the root."""
    done = []
    # One run per root at a time: another's unmount at its end would pull /dev from under this one.
    lock = (root.parent / f"{root.name}.lock").open("w")
    if not try_lock(lock):
        say(f"{root.name}: another run is using it; waiting")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        for point, how in (("proc", ["-t", "proc", "proc"]), ("sys", ["-t", "sysfs", "sys"]),
                           ("dev", ["--rbind", "/dev"])):
            target = root / point
            if not os.path.ismount(target):
                subprocess.run(["mount", *how, str(target)], check=True)
                done.append(target)
        shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")  # pip and apt reach their servers
        if Path(HOST_CA_BUNDLE).exists():  # what this machine trusts (a TLS proxy's CA, if any), trusted inside
            shutil.copy(HOST_CA_BUNDLE, root / ROOT_CA_BUNDLE.lstrip("/"))
        yield root
    finally:
        for target in reversed(done):
            subprocess.run(["umount", "-R", "-l", str(target)], check=False)
        lock.close()


def chroot(root: Path, script: str, log: Path | None = None, env: dict | None = None,
           check: bool = True) -> subprocess.CompletedProcess:
    """Runs a bash script inside the root with a clean environment; its output into `log` if given."""
    variables = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                 "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive", **(env or {})}
    if (root / ROOT_CA_BUNDLE.lstrip("/")).exists():
        variables.update(SSL_CERT_FILE=ROOT_CA_BUNDLE, PIP_CERT=ROOT_CA_BUNDLE)
    command = ["chroot", str(root), "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in variables.items()),
               "bash", "-euo", "pipefail", "-c", script]
    if log is None:
        done = subprocess.run(command, capture_output=True, text=True)
    else:
        with log.open("a") as out:
            out.write(f"\n$ {script}\n")
            out.flush()
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    if check and done.returncode:
        tail = "".join(log.read_text().splitlines(keepends=True)[-30:]) if log else done.stdout + done.stderr
        where = f"; log: {log}" if log else ""
        sys.exit(f"{tail}\nfailed in {root.name} ({done.returncode}): {script[:200]}{where}")
    return done


def index_stanza(suite: str, index: str, package: str) -> str:
    """A package's stanza in one of the release's indexes (e.g. "source/Sources.xz")."""
    data = urllib.request.urlopen(f"{MIRROR}/dists/{suite}/main/{index}", timeout=120).read()
    for stanza in lzma.decompress(data).decode().split("\n\n"):
        if f"\nPackage: {package}\n" in f"\n{stanza}\n":
            return stanza
    sys.exit(f"no package {package} in {suite}'s {index}")


def fetch_verified(url: str, path: Path, sha256: str) -> Path:
    """`url` at `path`, downloaded unless already there with that digest, and checked against it."""
    if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = urllib.request.urlopen(url, timeout=600).read()
        if hashlib.sha256(data).hexdigest() != sha256:
            sys.exit(f"{path.name}: sha256 differs from the release's index")
        path.write_bytes(data)
    return path


def source_tarball(suite: str, package: str, downloads: Path) -> Path:
    """The upstream tarball of a source package of that release, downloaded once and checked against
    the sha256 the release's Sources index gives."""
    stanza = index_stanza(suite, "source/Sources.xz", package)
    fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line[0].isspace())
    sums = stanza.split("Checksums-Sha256:\n", 1)[1].splitlines()
    digest, _, name = next(line.split() for line in sums if ".orig.tar." in line and not line.endswith(".asc"))
    say(f"{name} ({fields['Version']}, {suite})")
    return fetch_verified(f"{MIRROR}/{fields['Directory']}/{name}", downloads / name, digest)


def build_cpython(root: Path, version: str, suite: str, package: str, downloads: Path, log: Path) -> None:
    """CPython from the upstream tarball, into /opt/python<version>, with the root's own compiler."""
    tarball = source_tarball(suite, package, downloads)
    shutil.copy(tarball, root / "tmp" / tarball.name)
    say(f"{root.name}: building CPython {version} from {tarball.name} inside (minutes; log: {log})")
    chroot(root, f"apt-get install -y -q {' '.join(CPYTHON_BUILD_DEPS)}", log)
    jobs = os.cpu_count() or 2
    chroot(root, f"rm -rf /tmp/cpython && mkdir /tmp/cpython && tar xf /tmp/{tarball.name} -C /tmp/cpython "
                 f"--strip-components=1 && cd /tmp/cpython && ./configure -q --prefix=/opt/python{version} "
                 f"--with-ensurepip=install && make -s -j{jobs} && make -s altinstall && cd / && "
                 f"rm -rf /tmp/cpython /tmp/{tarball.name}", log)
    chroot(root, f"/opt/python{version}/bin/python{version} -c 'import ssl, ctypes, zlib, bz2, lzma, sqlite3'", log)


def purge_compilers(root: Path, log: Path) -> None:
    """The build's packages removed (the runtime libraries stay: installed by name, so not automatic)."""
    # The compilers by exact name: a pattern such as gcc-* would take gcc-10-base, which libgcc needs.
    chroot(root, f"apt-get purge -y -q --auto-remove {' '.join(CPYTHON_BUILD_DEPS)} make dpkg-dev libc6-dev "
                 "$(dpkg-query -W -f='${Package}\\n' | grep -E '^(gcc|g\\+\\+|cpp)(-[0-9]+)?$')", log)
    left = chroot(root, f"for c in {' '.join(COMPILERS)}; do command -v $c || true; done", check=False).stdout
    if left.strip():
        sys.exit(f"{root.name}: compilers left after the purge: {left.split()}")


def make_root(name: str, cache: Path | None = None) -> Path:
    """The root, made or completed: debootstrap, packages, CPythons built inside, compilers purged."""
    spec = ROOTS[name]
    arch = spec["arch"]
    root = root_path(name, cache)
    log = root.with_name(root.name + ".log")
    root.parent.mkdir(parents=True, exist_ok=True)
    begun = time.monotonic()
    if arch == "arm64":
        debian_root_arm64.binfmt()
    # One run makes a root at a time: two debootstraps into one folder fail each other.
    making = (root.parent / f"{root.name}.make.lock").open("w")
    if not try_lock(making):
        say(f"{root.name}: another run is making it; waiting")
        fcntl.flock(making, fcntl.LOCK_EX)
    if not root.exists():
        say(f"{root.name}: debootstrap {spec['suite']} (minutes; under qemu for arm64; log: {log})")
        partial = root.with_name(root.name + ".tmp")
        shutil.rmtree(partial, ignore_errors=True)
        with log.open("a") as out:
            subprocess.run(["debootstrap", "--variant=minbase", f"--arch={arch}", "--include=ca-certificates",
                            spec["suite"], str(partial), MIRROR], stdout=out, stderr=subprocess.STDOUT, check=True)
        partial.rename(root)
    marks = root / "var" / "lib" / "sb3-ale-vec"
    marks.mkdir(parents=True, exist_ok=True)
    with mounted(root):
        # A mirror that serves a snapshot keeps a release's Release file past its Valid-Until (sid's: a week).
        (root / "etc" / "apt" / "apt.conf.d" / "99snapshot").write_text('Acquire::Check-Valid-Until "false";\n')
        if not (marks / "packages").exists():
            say(f"{root.name}: apt-get install {' '.join(spec['packages'])}")
            chroot(root, f"apt-get update -q && apt-get install -y -q {' '.join(spec['packages'])}", log)
            (marks / "packages").touch()
        for version, (suite, package) in spec["build"].items():
            if not (marks / f"cpython-{version}").exists():
                (marks / "purged").unlink(missing_ok=True)  # its build installs the compilers again
                build_cpython(root, version, suite, package, cache_dir(cache) / "downloads", log)
                (marks / f"cpython-{version}").touch()
        if spec["build"] and not (marks / "purged").exists():
            say(f"{root.name}: purging the compilers CPython's build needed")
            purge_compilers(root, log)
            (marks / "purged").touch()
        for version, (suite, package) in spec.get("cross", {}).items():
            if not (marks / f"cpython-{version}").exists():
                amd64 = make_root(spec["cross_in"], cache)  # its CPython of the version is the build Python
                tarball = source_tarball(suite, package, cache_dir(cache) / "downloads")
                with mounted(amd64):
                    debian_root_arm64.cross_build_cpython(amd64, root, version, tarball, log)
                (marks / f"cpython-{version}").touch()
    making.close()
    say(f"{root.name}: ready ({time.monotonic() - begun:.0f} s this run)")
    return root


def python_version(root: Path, interpreter: str) -> str:
    return chroot(root, f"{interpreter} -c 'import platform; print(platform.python_version())'").stdout.strip()


def glibc_version(root: Path) -> str:
    return chroot(root, "getconf GNU_LIBC_VERSION").stdout.split()[-1]
