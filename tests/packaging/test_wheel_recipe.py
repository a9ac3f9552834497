"""One recipe for the release wheels: what tools/wheels.py builds here against what pyproject.toml's
[tool.cibuildwheel] has a real runner build, each side's settings read from the code that applies them
(tools/wheels.py's environment; setup.py's flags and links under each side's environment; the cross
builds' targets and link commands; build_support/wheel_recipe.py's reading of pyproject.toml). Where the
two must differ, wheel_recipe_differences.py (beside this file) says why; a difference not listed there,
or listed with other values, fails. cibuildwheel's own option reader must read pyproject.toml as
build_support/wheel_recipe.py does."""

from __future__ import annotations

import dataclasses
import os
import platform as host_platform
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
from build_support import cross_targets, glibc_floor, linux_cross, native_flags, wheel_recipe  # noqa: E402
from build_support.link_inputs import portable, zlib_link_args  # noqa: E402
import wheel_checks  # noqa: E402
import wheels  # noqa: E402

from wheel_recipe_differences import DIFFERENCES  # noqa: E402  (beside this file)

BUILD_VARIABLES = ("SB3_ALE_VEC_PORTABLE", "SB3_ALE_VEC_PGO", "SB3_ALE_VEC_ZLIB_ROOT")
OS_OF = {"linux": "linux", "macos": "darwin", "windows": "win32"}


@contextmanager
def environ(env: dict):
    """os.environ as a build with `env` sees it (the build's own variables only from `env`)."""
    saved = dict(os.environ)
    for name in BUILD_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def pybind11_flags(system: str) -> list:
    """The compile flags pybind11's Pybind11Extension (cxx_std=17, as setup.py's) adds on `system`."""
    import pybind11.setup_helpers as helpers

    saved = helpers.WIN, helpers.MACOS, helpers.STD_TMPL
    helpers.WIN, helpers.MACOS = system == "win32", system == "darwin"
    helpers.STD_TMPL = "/std:c++{}" if helpers.WIN else "-std=c++{}"
    try:
        with environ({"MACOSX_DEPLOYMENT_TARGET": "13.0"}):  # no -mmacosx-version-min of its own then
            return helpers.Pybind11Extension("x", [], cxx_std=17).extra_compile_args
    finally:
        helpers.WIN, helpers.MACOS, helpers.STD_TMPL = saved


def setup_py(env: dict, system: str, compiler: str) -> dict:
    """What setup.py compiles and links with under `env` on `system` with `compiler` ("gcc", "clang",
    "msvc"), by its own functions (Python's own compile flags, which setuptools adds, left out)."""
    msvc = compiler == "msvc"
    with environ(env):
        floor = portable() and system == "linux"  # setup.py's BuildExt.glibc_floor()
        zlib = zlib_link_args(msvc)
        link = [*zlib, *native_flags.hide_static_libs(system), *(glibc_floor.link_args(Path("s")) if floor else [])]
    pgo = env.get("SB3_ALE_VEC_PGO", "1") != "0" and not msvc  # build_support/pgo.py: GCC, or Clang
    facts = {"core flags": " ".join(native_flags.core_flags(msvc, system)),
             "engine flags": " ".join([*pybind11_flags(system), *native_flags.engine_flags(msvc)]),
             "zlib": ("inside (a static zlib.lib from SB3_ALE_VEC_ZLIB_ROOT)" if msvc else
                      "inside (libz.a)" if "-Bstatic" in zlib else "the system's libz, dynamic"),
             "C++ runtime": "libstdc++ inside" if "-static-libstdc++" in link else "the compiler's, dynamic",
             "profile-guided": f"yes ({compiler}, trained on ale-py's ROMs)" if pgo else "no"}
    if system == "linux":
        facts["static libraries' symbols"] = "hidden" if "-Wl,--exclude-libs,ALL" in link else "exported"
        facts["glibc floor"] = glibc_floor.FLOOR if floor else None  # None: the building machine's glibc
    return facts


def flat_env(env: dict) -> dict:
    return {f"environment {name}": value for name, value in env.items()}


def here(target: str, work: Path) -> dict:
    """What `python tools/wheels.py --target TARGET` builds by."""
    versions = [v for t, v in wheels.build_jobs((target,), wheels.PYTHONS)]
    facts = {"CPython": " ".join(versions)}
    if target.startswith("linux"):
        env = wheels.linux_env(target, linux_cross.host_info(), work)
        facts.update(flat_env({k: v for k, v in env.items() if k not in ("PYTHONPATH", "CPPFLAGS")}))
        facts.update(setup_py(env, "linux", "gcc"))
        if facts["glibc floor"] is None:
            facts["glibc floor"] = host_platform.libc_ver()[1]
        facts["compiler"] = env.get("CXX", "this machine's g++")
        facts["tag"] = f"manylinux_{wheel_recipe.glibc_floor().replace('.', '_')} or older (auditwheel's)"
        facts["repair"] = " ".join(wheel_recipe.repair_command(Path("WHEEL"), Path("DIST")))  # what it runs
        _, command = wheel_checks.wheel_tests()
        qemu = f"tests/native/aarch64_wheel.sh under qemu (CPython {', '.join(wheel_checks.ARM64_VERSIONS)})"
        facts["tests"] = "python " + " ".join(command) if target == "linux-x86_64" else qemu
        return facts
    chosen = cross_targets.TARGETS[target]
    link = cross_link(chosen, work)
    facts.update({"core flags": " ".join(chosen.core_flags()), "engine flags": " ".join(chosen.engine_flags()),
                  "compiler": " ".join("python" if part == sys.executable else part for part in chosen.cxx),
                  "profile-guided": "no", "tag": chosen.tag, "repair": "none (build_support/wheel_files.py)",
                  "tests": "none (inspected: nothing here runs them)"})
    if chosen.platform == "darwin":
        facts["deployment target"] = cross_targets.MACOS_MIN
        facts["zlib"] = "the system's libz, dynamic" if any(a.endswith("libz.tbd") for a in link) else "?"
        facts["C++ runtime"] = "libc++ inside (Zig's)"
        facts["image"] = "MH_DYLIB" if "-shared" in link else "MH_BUNDLE"
    else:
        static = "-static" in link and "-static-libstdc++" in link
        facts["zlib"] = "inside (libz.a)" if static and "-lz" in link else "?"
        facts["C++ runtime"] = "libstdc++, libgcc and winpthreads inside" if static else "?"
        facts["C runtime"] = "UCRT" if "ucrt" in chosen.cxx[0] else "msvcrt.dll"
    return facts


def cross_link(target, work: Path) -> list:
    """The cross build's link command for one object, with the helpers that read built files stubbed."""
    saved = cross_targets.zlib_symbols, cross_targets.make_import_library
    cross_targets.zlib_symbols = lambda core: ["_gzopen"]
    cross_targets.make_import_library = lambda objects, version, include, out: out / "libpython.dll.a"
    try:
        return [str(a) for a in cross_targets.link_command(target, [work / "a.o"], work / "libale_core.a", work,
                                                           work / "out", "3.12", work)]
    finally:
        cross_targets.zlib_symbols, cross_targets.make_import_library = saved


def runner(target: str) -> dict:
    """What cibuildwheel on a real runner builds by, from pyproject.toml (build_support/wheel_recipe.py)."""
    system = wheel_recipe.TARGETS[target][0]
    options = wheel_recipe.config(system)
    env = wheel_recipe.environment(target)
    facts = {"CPython": " ".join(f"3.{name.split('-')[0][3:]}" for name in wheel_recipe.identifiers(target))}
    facts.update(flat_env(env))
    facts.update(setup_py(env, OS_OF[system], {"linux": "gcc", "macos": "clang"}.get(system, "msvc")))
    facts["tests"] = options["test-command"]
    if system == "linux":
        image = wheel_recipe.glibc_floor()
        facts["glibc floor"] = facts["glibc floor"] or image
        facts["compiler"] = f"the manylinux_{image.replace('.', '_')} image's g++ (gcc-toolset)"
        facts["tag"] = f"manylinux_{image.replace('.', '_')} or older (auditwheel's)"
        facts["repair"] = " ".join(shlex.split(options["repair-wheel-command"].format(wheel="WHEEL", dest_dir="DIST")))
        facts["before-all"] = options.get("before-all", "")
    elif system == "macos":
        facts["deployment target"] = env.get("MACOSX_DEPLOYMENT_TARGET", "cibuildwheel's default")
        facts["tag"] = f"macosx_{facts['deployment target'].replace('.', '_')}_arm64"
        facts["compiler"] = "Xcode's clang++"
        facts["C++ runtime"] = "the system's libc++, dynamic"
        facts["image"] = "MH_BUNDLE"  # setuptools links -bundle on macOS
        facts["repair"] = options.get("repair-wheel-command", "delocate-wheel (cibuildwheel's default)")
    else:
        facts.update({"compiler": "MSVC", "tag": "win_amd64", "C runtime": "UCRT",
                      "C++ runtime": "MSVC's msvcp140.dll, dynamic",
                      "repair": options.get("repair-wheel-command", "delvewheel repair (cibuildwheel's default)"),
                      "before-all": options.get("before-all", "")})
    return facts


def differences(work: Path) -> dict:
    """{(target, setting): (here, runner)} wherever the two builds' settings differ."""
    found = {}
    for target in wheel_recipe.TARGETS:
        mine, theirs = here(target, work / target), runner(target)
        for key in sorted(set(mine) | set(theirs)):
            if mine.get(key) != theirs.get(key):
                found[(target, key)] = (mine.get(key), theirs.get(key))
    return found


def test_every_difference_is_listed_with_its_reason(tmp_path):
    found = differences(tmp_path)
    listed = {key: values for key, (*values, _) in DIFFERENCES.items()}
    new = {key: found[key] for key in found if key not in listed or tuple(listed[key]) != found[key]}
    gone = sorted(key for key in listed if key not in found)
    assert not new, "differences not in tests/packaging/wheel_recipe_differences.py (here, runner):\n" + \
        "\n".join(f"  {key}: {values}" for key, values in new.items())
    assert not gone, f"listed differences that are gone (remove them): {gone}"


def test_the_linux_floor_is_the_manylinux_images():
    assert glibc_floor.FLOOR == wheel_recipe.glibc_floor()
    assert wheel_recipe.environment("linux-x86_64") == wheel_recipe.environment("linux-aarch64") == \
        {"SB3_ALE_VEC_PORTABLE": "1"}


def test_cibuildwheels_own_reader_reads_the_recipe():
    """cibuildwheel's options for each of its identifiers (the environment evaluated as its builds
    evaluate it) are what build_support/wheel_recipe.py reads and the runner's facts above say."""
    cibw = pytest.importorskip("cibuildwheel.options", reason="cibuildwheel: a tool this machine lacks")
    from cibuildwheel.__main__ import get_build_identifiers
    from cibuildwheel.platforms import ALL_PLATFORM_MODULES

    arguments = dataclasses.replace(cibw.CommandLineArguments.defaults(), package_dir=ROOT,
                                    config_file=str(ROOT / "pyproject.toml"))
    repairs = {"linux": "auditwheel repair -w {dest_dir} {wheel}", "macos": "delocate-wheel ",
               "windows": "delvewheel repair "}
    for system in ("linux", "macos", "windows"):
        options = cibw.compute_options(platform=system, command_line_arguments=arguments, env={})
        found = get_build_identifiers(platform_module=ALL_PLATFORM_MODULES[system],
                                      build_selector=options.globals.build_selector,
                                      architectures=options.globals.architectures)
        targets = [t for t, (s, _, _) in wheel_recipe.TARGETS.items() if s == system]
        assert sorted(found) == sorted(i for t in targets for i in wheel_recipe.identifiers(t))
        for identifier in found:
            target = next(t for t in targets if identifier.endswith(wheel_recipe.TARGETS[t][2]))
            build, recipe = options.build_options(identifier), wheel_recipe.config(system)
            assert build.environment.as_dictionary(prev_environment={}) == wheel_recipe.environment(target)
            assert (build.test_command, build.test_requires) == (recipe["test-command"], wheel_checks.wheel_tests()[0])
            assert build.before_all == recipe.get("before-all", "")
            assert build.repair_command.startswith(repairs[system])
            if system == "linux":
                arch = wheel_recipe.TARGETS[target][1]
                image = f"/manylinux_{wheel_recipe.glibc_floor().replace('.', '_')}_{arch}@"
                assert image in build.manylinux_images[arch]
