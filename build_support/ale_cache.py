"""The per-user build cache: ALE's unpacked sources and its compiled core, so ALE is compiled once
per machine, ALE version, compiler and flags, not once per `pip install` (each of which builds in a
fresh temporary folder).

Location: $SB3_ALE_VEC_CACHE, else $XDG_CACHE_HOME/sb3-ale-vec, else ~/.cache/sb3-ale-vec.
Everything is written under a temporary name in the same folder, then renamed into place, so
concurrent builds never see a half-written entry; the last one to finish wins, with equal content.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

# Bump when the way the core is built changes in a way the key below cannot see.
CACHE_FORMAT = 1


def cache_root() -> Path:
    override = os.environ.get("SB3_ALE_VEC_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "sb3-ale-vec"


def core_key(**inputs) -> str:
    """A short digest of everything that shapes the compiled core (JSON-serialisable inputs)."""
    text = json.dumps({"format": CACHE_FORMAT, **inputs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def core_path(version: str, key: str, filename: str) -> Path:
    return cache_root() / "ale-core" / f"{version}-{key}" / filename


def publish_file(built: Path, final: Path, note: dict) -> None:
    """Copy a built library into the cache atomically, with a JSON note of what it was built from."""
    final.parent.mkdir(parents=True, exist_ok=True)
    for source, name in ((None, "inputs.json"), (built, final.name)):  # the library last
        fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{name}-")
        try:
            with os.fdopen(fd, "w") as out:
                if source is None:
                    json.dump(note, out, indent=1, sort_keys=True)
            if source is not None:
                shutil.copy2(source, tmp)
            os.replace(tmp, final.parent / name)
        finally:
            Path(tmp).unlink(missing_ok=True)


def publish_dir(staging: Path, final: Path) -> None:
    """Rename a fully written folder into place; if another build got there first, keep theirs."""
    try:
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
