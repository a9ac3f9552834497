"""Headers for a CPython version this machine has no interpreter of, for tools/wheels.py's Linux x86-64 wheels.

CPython 3.14 cannot be had here as an interpreter: Debian's archive (the only source of CPython reachable
besides PyPI) serves no python3.14 source tarball, and sid's binaries need glibc 2.38. So its wheel is built
as build_support/linux_cross.py builds AArch64's: this machine's newest CPython runs setup.py, told the
target's sysconfig (_PYTHON_SYSCONFIGDATA_NAME: extension suffix and SOABI, so `cp314` in the file's and the
wheel's tags) and given the target's headers: Debian sid's libpython3.14-dev, downloaded from the archive and
checked against its Packages index. The compiler flags stay the host CPython's, as in every other Linux
wheel. Only C-level headers differ between versions for an extension; setup.py's Python code is the same
on every version. tools/debian_roots.py then runs the wheel in a sid root under Debian's own CPython 3.14."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_root_setup import MIRROR, fetch_verified, index_stanza  # noqa: E402

VERSIONS = {"3.14": ("sid", "libpython3.14-dev")}  # version -> (release, package with its headers)
HOST = "3.13"  # the CPython that runs setup.py for them


def download_deb(suite: str, package: str, out: Path) -> Path:
    stanza = index_stanza(suite, "binary-amd64/Packages.xz", package)
    fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line)
    return fetch_verified(f"{MIRROR}/{fields['Filename']}", out / Path(fields["Filename"]).name, fields["SHA256"])


def sysconfig_module(host: dict, host_version: str, version: str, include: Path) -> str:
    """The host's build-time variables with its version's names made the target's."""
    old, new = host_version.replace(".", ""), version.replace(".", "")

    def target(value):
        if not isinstance(value, str):
            return value
        return value.replace(f"cpython-{old}", f"cpython-{new}").replace(f"python{host_version}", f"python{version}")

    variables = {key: target(value) for key, value in host.items()}
    variables.update(INCLUDEPY=str(include), CONFINCLUDEPY=str(include), VERSION=version, py_version_nodot=new,
                     py_version_short=version)
    return f"build_time_vars = {variables!r}\n"


def write_target(host_python: Path, version: str, out: Path, cache: Path) -> dict:
    """The target's headers and sysconfig data module in `out`, and the environment that points setup.py
    at them; `host_python` is the build venv's interpreter (of HOST)."""
    suite, package = VERSIONS[version]
    deb = download_deb(suite, package, cache / "downloads")
    unpacked = out / "deb"
    shutil.rmtree(out, ignore_errors=True)
    unpacked.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    include = out / "include"
    shutil.copytree(unpacked / "usr" / "include" / f"python{version}", include)
    # Debian's pyconfig.h there only picks the architecture's; the one beside Python.h is that one.
    shutil.copy(unpacked / "usr" / "include" / "x86_64-linux-gnu" / f"python{version}" / "pyconfig.h",
                include / "pyconfig.h")
    info = json.loads(subprocess.run([str(host_python), "-c", "import json, sysconfig; print(json.dumps("
                                      "{k: v for k, v in sysconfig.get_config_vars().items() "
                                      "if isinstance(v, (str, int))}))"],
                                     check=True, capture_output=True, text=True).stdout)
    abiflags = info.get("ABIFLAGS", "")
    name = f"_sysconfigdata_{abiflags}_linux_x86_64-linux-gnu"
    (out / f"{name}.py").write_text(sysconfig_module(info, HOST, version, include))
    # setuptools names its build folders by the running CPython's tag: the host's objects must not be reused.
    tag = f"linux-x86_64-cpython-{version.replace('.', '')}"
    (out / "setup.cfg").write_text(f"[build]\nbuild_temp = build/temp.{tag}\nbuild_lib = build/lib.{tag}\n")
    # The headers reach the extension as INCLUDEPY; no CPPFLAGS, so ALE's core's cache key stays the host's.
    return {"_PYTHON_SYSCONFIGDATA_NAME": name, "PYTHONPATH": str(out), "DIST_EXTRA_CONFIG": str(out / "setup.cfg")}


def build_options(version: str) -> list:
    """python -m build's options that tag the wheel for the target (the ABI tag follows SOABI already)."""
    return [f"-C--build-option=--python-tag=cp{version.replace('.', '')}"]
