"""Build the AArch64 Linux wheels on an x86-64 machine: this machine's CPython of each version runs
setup.py, the cross compiler (Debian's aarch64-linux-gnu-g++) compiles and links, and Python is told
that it builds for aarch64 the way cross builds of CPython itself are: a sysconfig data module of the
target (_PYTHON_SYSCONFIGDATA_NAME: extension suffix, SOABI, multiarch) and its platform
(_PYTHON_HOST_PLATFORM: the wheel's tag).

Python's headers are the same C for every architecture but pyconfig.h, which configure writes. Debian's
own x86-64 and aarch64 builds of CPython 3.11 differ there in four lines only, none of which changes
the ABI an extension sees: HAVE_GCC_ASM_FOR_X64 and HAVE_GCC_ASM_FOR_X87 (x87 control-word helpers
for CPython's own float parsing), HAVE_USABLE_WCHAR_T (wchar_t is unsigned on AArch64; it only
documents Py_UNICODE) and PY_SUPPORT_TIER. So the target's headers are the host's copied with those
four lines set as aarch64's configure sets them."""

import shutil
import sysconfig
from pathlib import Path

TRIPLET = "aarch64-linux-gnu"
PYCONFIG_AARCH64 = {
    "HAVE_GCC_ASM_FOR_X64": None,
    "HAVE_GCC_ASM_FOR_X87": None,
    "HAVE_USABLE_WCHAR_T": "1",
    "PY_SUPPORT_TIER": "2",
}


def target_pyconfig(text: str) -> str:
    lines = []
    for line in text.splitlines():
        words = line.replace("/*", " ").replace("*/", " ").split()
        name = words[1] if len(words) >= 2 and words[0] in ("#define", "#undef") else None
        if name in PYCONFIG_AARCH64:
            value = PYCONFIG_AARCH64[name]
            line = f"#define {name} {value}" if value is not None else f"/* #undef {name} */"
        lines.append(line)
    return "\n".join(lines) + "\n"


def sysconfig_module(host: dict, include: Path) -> str:
    """The host's build-time variables with x86-64's names made aarch64's."""
    def target(value):
        if not isinstance(value, str):
            return value
        return (value.replace("x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu")
                .replace("x86_64-linux-gnu", TRIPLET).replace("x86_64", "aarch64"))

    variables = {key: target(value) for key, value in host.items()}
    variables.update(INCLUDEPY=str(include), CONFINCLUDEPY=str(include), CC=f"{TRIPLET}-gcc",
                     CXX=f"{TRIPLET}-g++", LDSHARED=f"{TRIPLET}-gcc -shared",
                     LDCXXSHARED=f"{TRIPLET}-g++ -shared")
    return f"build_time_vars = {variables!r}\n"


def write_target(python_info: dict, out: Path) -> dict:
    """For a host CPython's `python_info` (sysconfig.get_config_vars() and its include folder, as
    `host_info()` prints them), the target's headers and sysconfig data module in `out`, and the
    environment that points setup.py at them."""
    include = out / "include"
    shutil.rmtree(include, ignore_errors=True)
    shutil.copytree(python_info["include"], include)
    (include / "pyconfig.h").write_text(target_pyconfig((include / "pyconfig.h").read_text()))
    abiflags = python_info["vars"].get("ABIFLAGS", "")
    name = f"_sysconfigdata_{abiflags}_linux_{TRIPLET}"
    (out / f"{name}.py").write_text(sysconfig_module(python_info["vars"], include))
    return {
        "_PYTHON_SYSCONFIGDATA_NAME": name, "_PYTHON_HOST_PLATFORM": "linux-aarch64",
        "PYTHONPATH": str(out), "CC": f"{TRIPLET}-gcc", "CXX": f"{TRIPLET}-g++",
        "LDSHARED": f"{TRIPLET}-gcc -shared", "LDCXXSHARED": f"{TRIPLET}-g++ -shared",
        # Python.h and the pyconfig.h beside it found here before the host's (CPPFLAGS come first).
        "CPPFLAGS": f"-I{include}",
        # The profile-guided build would run an AArch64 trainer here.
        "SB3_ALE_VEC_PGO": "0",
    }


def host_info() -> dict:
    return {"vars": {k: v for k, v in sysconfig.get_config_vars().items() if isinstance(v, (str, int))},
            "include": sysconfig.get_paths()["include"]}


if __name__ == "__main__":  # run by the host CPython of the wheel's version (tools/wheels.py)
    import json
    print(json.dumps(host_info()))
