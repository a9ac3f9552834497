"""What ALE's core is made of, written once: its source files and include folders in the patched
copy of the pinned sdist. setup.py compiles them (into the build cache); the cross builds of the C++
tests (tests/native/) list them with `python -m build_support.ale_core sources|includes GENERATED`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_DIRS = ("common", "emucore", "environment", "games", "games/supported")


def ale_version() -> str:
    """The one ale-py release pyproject.toml pins (as a dependency and as a build requirement)."""
    pins = set(re.findall(r'"ale-py==([\w.]+)"', (ROOT / "pyproject.toml").read_text()))
    if len(pins) != 1:
        raise ValueError(f"pyproject.toml must pin one ale-py release everywhere, found {sorted(pins)}")
    return pins.pop()


def core_sources(src: Path) -> list:
    """ALE's core under `src` (the patched sdist's src/): the interface and every emulator file."""
    sources = [src / "ale" / "ale_interface.cpp"]
    for sub in CORE_DIRS:
        sources += sorted((src / "ale" / sub).glob("*.c*"))
    return sources


def write_version_hpp(src: Path, generated: Path, version: str) -> None:
    """ALE's version.hpp, which its CMake build generates from version.hpp.in."""
    major, minor, patch = (version.split(".") + ["0", "0"])[:3]
    text = (src / "ale" / "version.hpp.in").read_text()
    for key, value in {"ALE_VERSION": version, "ALE_VERSION_MAJOR": major, "ALE_VERSION_MINOR": minor,
                       "ALE_VERSION_PATCH": patch, "ALE_VERSION_GIT_SHA": "sdist"}.items():
        text = text.replace(f"@{key}@", value)
    generated.mkdir(parents=True, exist_ok=True)
    if not (generated / "version.hpp").is_file() or (generated / "version.hpp").read_text() != text:
        (generated / "version.hpp").write_text(text)


def main() -> None:
    """`python -m build_support.ale_core sources|includes GENERATED_DIR`: one path per line (ALE's
    sdist is fetched, checked and patched first if this machine has not done it yet)."""
    from build_support.ale_patches import patched_source_dir

    what, generated = sys.argv[1], Path(sys.argv[2]).resolve()
    version = ale_version()
    src = patched_source_dir(version) / "src"
    write_version_hpp(src, generated, version)
    paths = core_sources(src) if what == "sources" else [src, generated]
    print("\n".join(str(p) for p in paths))


if __name__ == "__main__":
    main()
