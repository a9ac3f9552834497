"""ale-py's no-op draws (native/env/uniform_int.hpp) against the real standard libraries: the C++ tests
of tests/native/test_uniform_int.cpp built with GCC and libstdc++, and with Clang and LLVM's libc++
(macOS's library, ale-py's wheel there), each reimplementation and pinned draw held to the library
the build links."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "tests" / "native" / "test_uniform_int.cpp", ROOT / "tests" / "native" / "main.cpp"]
PROBE = "#include <string>\nint main() { return std::string(\"x\").size() == 1 ? 0 : 1; }\n"

# Slow: each build compiles for about 5 s here.
pytestmark = pytest.mark.slow


def build_and_run(compiler: list, out: Path) -> str:
    program = out / "uniform_int"
    subprocess.run([*compiler, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'native'}",
                    f"-I{ROOT / 'tests' / 'native'}", *map(str, SOURCES), "-o", str(program)], check=True)
    # No ROM: the uniform_int_ tests draw from mt19937 alone.
    run = subprocess.run([str(program), "no-rom", "uniform_int_"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 tests, 0 failed checks" in run.stdout, run.stdout
    return run.stdout


def test_libcxx_draws_as_clangs_real_libcxx(tmp_path):
    if shutil.which("clang++") is None:
        pytest.skip("clang++ is not installed (Debian: clang, libc++-dev, libc++abi-dev): a tool this machine lacks")
    (tmp_path / "probe.cpp").write_text(PROBE)
    if subprocess.run(["clang++", "-stdlib=libc++", str(tmp_path / "probe.cpp"), "-o", str(tmp_path / "probe")],
                      capture_output=True).returncode != 0:
        pytest.skip("clang++ -stdlib=libc++ cannot link (Debian: libc++-dev, libc++abi-dev): a tool this machine lacks")
    out = build_and_run(["clang++", "-stdlib=libc++"], tmp_path)
    for engine in ("mt19937<uint32_t>", "mt19937<uint64_t>", "std::mt19937"):
        assert f"libc++ on {engine}: 496048 draws equal" in out, out  # draw_libcxx against libc++ itself


def test_libstdcxx_draws_as_gccs_real_libstdcxx(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed: a tool this machine lacks")
    out = build_and_run(["g++"], tmp_path)
    assert "libstdc++ on std::mt19937: 496048 draws equal" in out, out
    assert "draw_as_ale_py vs this platform's library on std::mt19937: 496048 draws equal" in out, out
