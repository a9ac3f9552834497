"""ALE's C++ sources for the build: the pinned ale-py sdist, checked against its sha256 and unpacked
once into the per-user cache (see ale_cache.py). Only the build step calls this: setuptools asking
for metadata or an sdist never downloads anything."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from .ale_cache import cache_root, publish_dir

# One entry per ale-py release we can build from: the sdist's URL on PyPI, its sha256 (as PyPI
# lists it), and a digest of the C++ files under src/ale, which checks an unpacked folder too.
SDISTS = {
    "0.12.1": (
        "https://files.pythonhosted.org/packages/3e/e8/e69da8a5fb5feafa9fffb32ed8c2b306b7571b77faf779f61e4eb53304ec/ale_py-0.12.1.tar.gz",
        "c503d574c5983e1063b451201ccb779d935919c0f6bf116fb0f4f8aa4c86d249",
        "1ef23a6fc000a48bed07c0ce2f17171d7b6389f3d9468d563db320c9203e9faf",
    ),
}
CXX_SUFFIXES = {".c", ".cpp", ".cxx", ".h", ".hpp", ".hxx", ".in"}


class AleSourceError(RuntimeError):
    pass


def pinned(version: str) -> tuple:
    if version not in SDISTS:
        raise AleSourceError(f"no pinned sdist URL and sha256 for ale-py {version}: add them to "
                             f"build_support/ale_source.py (PyPI lists both)")
    return SDISTS[version]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(root: Path) -> str:
    """Digest of the C++ sources and headers under <root>/src/ale: what the compiler reads."""
    digest = hashlib.sha256()
    ale = root / "src" / "ale"
    for path in sorted(p for p in ale.rglob("*") if p.is_file() and p.suffix in CXX_SUFFIXES):
        digest.update(path.relative_to(ale).as_posix().encode() + b"\0")
        digest.update(bytes.fromhex(file_sha256(path)))
    return digest.hexdigest()


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    if hasattr(tarfile, "data_filter"):  # Python 3.8.17+, 3.9.17+, 3.10.12+, 3.11.4+, 3.12+
        tar.extractall(dest, filter="data")
        return
    # Older patch releases have no filter: refuse what "data" would refuse. The archive's hash was
    # checked already, so this only guards against a wrong pin.
    base = dest.resolve()
    for member in tar.getmembers():
        target = (base / member.name).resolve()
        if not (member.isfile() or member.isdir()) or os.path.commonpath([base, target]) != str(base):
            raise AleSourceError(f"refusing to unpack {member.name!r}")
    tar.extractall(dest)


def _download(url: str, sha256: str, dest: Path) -> None:
    """Download to a temporary name, check, then rename: a concurrent build never sees half a file."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=120) as response:
            shutil.copyfileobj(response, out)
        got = file_sha256(Path(tmp))
        if got != sha256:
            raise AleSourceError(f"{url} has sha256 {got}, expected {sha256}")
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _offline_hint(version: str, url: str) -> str:
    return (f"Fetch it elsewhere (`pip download --no-deps --no-binary :all: ale-py=={version}` or {url}) "
            f"and set SB3_ALE_VEC_ALE_SOURCE to the .tar.gz or to its unpacked folder.")


def sdist_tarball(version: str) -> Path:
    """The pinned ale-py sdist itself (its tests/ included), downloaded once and checked."""
    url, sdist_sha, _ = pinned(version)
    tarball = cache_root() / "downloads" / url.rsplit("/", 1)[1]
    if not tarball.is_file():
        _download(url, sdist_sha, tarball)
    got = file_sha256(tarball)
    if got != sdist_sha:
        raise AleSourceError(f"{tarball} has sha256 {got}, expected {sdist_sha} (ale-py {version})")
    return tarball


def ale_source_dir(version: str) -> Path:
    """The unpacked, verified ale-py sdist in the cache; fetched or copied there on first use.

    SB3_ALE_VEC_ALE_SOURCE (a .tar.gz or an unpacked folder) replaces the download, for offline
    builds; it is checked against the same pins."""
    url, sdist_sha, tree_sha = pinned(version)
    final = cache_root() / "ale-source" / f"ale_py-{version}-{sdist_sha[:12]}"
    if (final / "src" / "ale" / "ale_interface.cpp").is_file():
        return final
    override = os.environ.get("SB3_ALE_VEC_ALE_SOURCE")
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=".unpack-"))
    try:
        if override and Path(override).is_dir():
            got = tree_sha256(Path(override))
            if got != tree_sha:
                raise AleSourceError(f"SB3_ALE_VEC_ALE_SOURCE={override}: its src/ale differs from ale-py "
                                     f"{version}'s sdist (digest {got}, expected {tree_sha})")
            shutil.copytree(Path(override) / "src" / "ale", staging / "src" / "ale")
        else:
            tarball = Path(override) if override else cache_root() / "downloads" / url.rsplit("/", 1)[1]
            if not tarball.is_file():
                if override:
                    raise AleSourceError(f"SB3_ALE_VEC_ALE_SOURCE={override}: no such file or folder")
                print(f"downloading ale-py {version}'s source distribution from {url}")
                try:
                    _download(url, sdist_sha, tarball)
                except OSError as error:
                    raise AleSourceError(f"could not download {url}: {error}\n"
                                         + _offline_hint(version, url)) from error
            got = file_sha256(tarball)
            if got != sdist_sha:
                raise AleSourceError(f"{tarball} has sha256 {got}, expected {sdist_sha} (ale-py {version})")
            with tarfile.open(tarball) as tar:
                _extract(tar, staging)
            shutil.move(str(staging / f"ale_py-{version}" / "src"), str(staging / "src"))
            shutil.rmtree(staging / f"ale_py-{version}")
        publish_dir(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final

