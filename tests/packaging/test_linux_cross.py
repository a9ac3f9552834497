"""The AArch64 wheels' cross build (build_support/linux_cross.py): this machine's CPython, pointed at
the target's sysconfig data, names extensions and wheels as an aarch64 CPython does, and finds the
target's headers, whose pyconfig.h differs from the host's only where aarch64's configure differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from build_support import linux_cross  # noqa: E402

PROBE = ("import json, sysconfig; print(json.dumps([sysconfig.get_platform(), sysconfig.get_config_var('EXT_SUFFIX'), "
         "sysconfig.get_config_var('SOABI'), sysconfig.get_config_var('CC')]))")


def test_python_told_the_target_builds_for_aarch64(tmp_path):
    env = linux_cross.write_target(linux_cross.host_info(), tmp_path)
    out = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **env}, capture_output=True, text=True,
                         check=True).stdout
    platform, suffix, soabi, cc = json.loads(out)
    tag = sys.implementation.cache_tag.replace("cpython-", "")
    assert platform == "linux-aarch64"
    assert suffix == f".cpython-{tag}-aarch64-linux-gnu.so" and soabi == f"cpython-{tag}-aarch64-linux-gnu"
    assert cc == "aarch64-linux-gnu-gcc" and env["CXX"] == "aarch64-linux-gnu-g++"
    assert Path(env["CPPFLAGS"][2:], "Python.h").is_file()  # the copied headers come first


def test_target_pyconfig_is_debians_aarch64_pyconfig():
    # Debian's builds of one CPython for both machines (libpython3.X-dev, amd64 and arm64, side by side: .ci/run
    # installs them): its x86-64 header made aarch64's must be its aarch64 header, line for line.
    pairs = [(Path(str(target).replace(linux_cross.TRIPLET, "x86_64-linux-gnu")), target)
             for target in sorted(Path("/usr/include", linux_cross.TRIPLET).glob("python3.*/pyconfig.h"))]
    pairs = [(host, target) for host, target in pairs if host.is_file()]
    if not pairs:
        pytest.skip("Debian's pyconfig.h for x86-64 and aarch64 (libpython3.11-dev, :arm64): a file this machine lacks")
    for host, target in pairs:
        assert linux_cross.target_pyconfig(host.read_text()).splitlines() == target.read_text().splitlines(), target
