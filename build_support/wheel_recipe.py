"""The release wheels' recipe where pyproject.toml's [tool.cibuildwheel] writes it, read here for
tools/wheels.py, so that what a real runner's cibuildwheel builds is what was built and checked here.

What a wheel contains is chosen by setup.py and build_support from environment variables
(SB3_ALE_VEC_PORTABLE=1: glibc's symbols at the floor, libstdc++ and zlib inside); the parts only
cibuildwheel reads are written once, in pyproject.toml, and read from there: the CPython versions, each
platform's archs, images and environment, the repair command and the test command.
tests/packaging/test_wheel_recipe.py lists where the two builds still differ, and why.

Only the subset of cibuildwheel's options this project uses is read: a table per platform over the
global one (cibuildwheel's cascade: a platform's setting replaces the global one), no `overrides`."""

from __future__ import annotations

import fnmatch
import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# tools/wheels.py's targets: cibuildwheel's platform, its arch, and the arch in an identifier.
TARGETS = {"linux-x86_64": ("linux", "x86_64", "manylinux_x86_64"),
           "linux-aarch64": ("linux", "aarch64", "manylinux_aarch64"),
           "macos-arm64": ("macos", "arm64", "macosx_arm64"),
           "windows-amd64": ("windows", "AMD64", "win_amd64")}
PLATFORM_TABLES = ("linux", "macos", "windows", "ios", "android", "pyodide")


def _tool(pyproject: Path) -> dict:
    tool = tomllib.loads(pyproject.read_text())["tool"]["cibuildwheel"]
    if "overrides" in tool:
        raise ValueError("[tool.cibuildwheel] overrides are not read by build_support/wheel_recipe.py")
    return tool


def config(platform: str, pyproject: Path = ROOT / "pyproject.toml") -> dict:
    """[tool.cibuildwheel] with [tool.cibuildwheel.PLATFORM]'s settings over it."""
    tool = _tool(pyproject)
    base = {key: value for key, value in tool.items() if key not in PLATFORM_TABLES}
    return {**base, **tool.get(platform, {})}


def environment(target: str, pyproject: Path = ROOT / "pyproject.toml") -> dict:
    """The environment cibuildwheel gives the target's build: a table of literal values (cibuildwheel
    would expand $NAME in them as bash does; tools/wheels.py passes them as written, so none may)."""
    env = config(TARGETS[target][0], pyproject).get("environment", {})
    if not isinstance(env, dict):
        raise ValueError(f"{target}: write [tool.cibuildwheel] environment as a table")
    for name, value in env.items():
        if not isinstance(value, str) or "$" in value or "`" in value:
            raise ValueError(f"{target}: environment {name}={value!r} must be a literal string")
    return dict(env)


def pythons(pyproject: Path = ROOT / "pyproject.toml") -> tuple:
    """The CPython versions `build` selects ("cp310-* cp311-*" -> ("3.10", "3.11"))."""
    selectors = config("linux", pyproject)["build"].split()
    found = [re.fullmatch(r"cp3(\d+)-\*", s) for s in selectors]
    if not all(found):
        raise ValueError(f"[tool.cibuildwheel] build: each selector must read cp3XY-*: {selectors}")
    return tuple(f"3.{m.group(1)}" for m in found)


def identifiers(target: str, pyproject: Path = ROOT / "pyproject.toml") -> list:
    """cibuildwheel's build identifiers for the target (cp310-manylinux_x86_64, ...), `skip` applied."""
    platform, arch, suffix = TARGETS[target]
    options = config(platform, pyproject)
    if arch not in options.get("archs", []):
        return []
    names = [f"cp{v.replace('.', '')}-{suffix}" for v in pythons(pyproject)]
    skip = options.get("skip", "").split()
    return [name for name in names if not any(fnmatch.fnmatch(name, pattern) for pattern in skip)]


def glibc_floor(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The glibc release of the manylinux images ("manylinux_2_28" -> "2.28"), one for both archs: no
    Linux wheel may need a newer one."""
    options = config("linux", pyproject)
    images = {options.get(f"manylinux-{arch}-image", "manylinux_2_28") for arch in ("x86_64", "aarch64")}
    floors = {re.fullmatch(r"manylinux_2_(\d+)", image) for image in images}
    if len(floors) != 1 or None in floors:
        raise ValueError(f"manylinux images {sorted(images)}: one manylinux_2_N image for both archs")
    return f"2.{floors.pop().group(1)}"


def repair_command(wheel: Path, dest_dir: Path, pyproject: Path = ROOT / "pyproject.toml") -> list:
    """[tool.cibuildwheel.linux]'s repair-wheel-command for `wheel` into `dest_dir`, as words."""
    command = config("linux", pyproject)["repair-wheel-command"]
    words = [word.replace("{wheel}", str(wheel)).replace("{dest_dir}", str(dest_dir)) for word in shlex.split(command)]
    if any("{" in word for word in words):
        raise ValueError(f"repair-wheel-command: only {{wheel}} and {{dest_dir}} are filled in here: {command}")
    return words
