"""The AArch64 wheels' cross build (build_support/linux_cross.py): this machine's CPython, pointed at
the target's sysconfig data, names extensions and wheels as an aarch64 CPython does, and finds the
target's headers, whose pyconfig.h differs from the host's only where aarch64's configure differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def test_target_pyconfig_changes_only_aarch64s_lines():
    host = (Path(linux_cross.host_info()["include"]) / "pyconfig.h").read_text()
    target = linux_cross.target_pyconfig(host)
    changed = [(a, b) for a, b in zip(host.splitlines(), target.splitlines()) if a != b]
    assert len(host.splitlines()) == len(target.splitlines())
    assert {b for _, b in changed} <= {"/* #undef HAVE_GCC_ASM_FOR_X64 */", "/* #undef HAVE_GCC_ASM_FOR_X87 */",
                                       "#define HAVE_USABLE_WCHAR_T 1", "#define PY_SUPPORT_TIER 2"}
    assert "#define HAVE_USABLE_WCHAR_T 1" in target and "#define HAVE_GCC_ASM_FOR_X87" not in target
