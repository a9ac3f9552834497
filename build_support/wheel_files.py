"""A wheel assembled from parts built elsewhere (build_support/cross_wheel.py): the pure-Python package
as setuptools puts it in a wheel, the extension modules, and a .dist-info whose METADATA setuptools
itself writes (its PEP 517 metadata hook, which compiles nothing), with WHEEL and RECORD (PEP 427)."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_files() -> list:
    """What setuptools puts in the wheel: the packages pyproject.toml lists, each folder's .py files and
    its package data (include-package-data: MANIFEST.in's *.py *.yml *.csv under sb3_ale_vec), git's
    tracked files only, as a clean clone's sdist holds."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    folders = {pkg.replace(".", "/") for pkg in packages}
    tracked = subprocess.run(["git", "ls-files", "sb3_ale_vec"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    return sorted(p for p in tracked if str(Path(p).parent) in folders and Path(p).suffix in (".py", ".yml", ".csv"))


def dist_info(work: Path) -> Path:
    """setuptools' own .dist-info for this project (METADATA, top_level.txt, licenses/), from its
    prepare_metadata_for_build_wheel hook, which reads setup.py and pyproject.toml and builds nothing."""
    out = Path(tempfile.mkdtemp(dir=work, prefix="metadata-"))
    code = ("import sys; from setuptools import build_meta; "
            "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))")
    name = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.split()[-1]
    return out / name


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(out: Path, tag: str, extensions: dict, work: Path) -> Path:
    """out/NAME-VERSION-TAG.whl from the package, `extensions` ({path in the wheel: built file}) and
    setuptools' metadata. tag: cp312-cp312-macosx_13_0_arm64."""
    info = dist_info(work)
    distribution, version = info.name[:-len(".dist-info")].split("-")
    files = {p: (ROOT / p).read_bytes() for p in package_files()}
    files.update({name: Path(built).read_bytes() for name, built in extensions.items()})
    for path in sorted(p for p in info.rglob("*") if p.is_file() and p.name not in ("WHEEL", "RECORD")):
        files[f"{info.name}/{path.relative_to(info).as_posix()}"] = path.read_bytes()
    files[f"{info.name}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: build_support.cross_wheel\n"
                                   f"Root-Is-Purelib: false\nTag: {tag}\n\n").encode()
    record = f"{info.name}/RECORD"
    lines = [_record_line(name, data) for name, data in files.items()] + [f"{record},,"]
    files[record] = ("\n".join(lines) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{distribution}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            entry.external_attr = (0o755 if name.endswith((".so", ".pyd")) else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return wheel


def check_wheel(wheel: Path) -> list:
    """Each RECORD line's hash and size against the archive's member: the problems found (none: [])."""
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        listed = set()
        for line in archive.read(record).decode().splitlines():
            name, digest, _ = line.rsplit(",", 2)
            listed.add(name)
            if name != record and _record_line(name, archive.read(name)) != line:
                problems.append(f"{name}: hash or size differs from RECORD")
        problems += [f"{n}: not in RECORD" for n in sorted(names - listed)]
    return problems
