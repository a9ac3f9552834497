"""The package around the engine: the sdist's contents, the checks on ALE's source, the build cache
key, and the message when a source tree without an engine shadows the installed package."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from build_support import ale_cache, ale_source, native_flags, pgo  # noqa: E402

VERSION = "0.12.1"


def test_cache_key_follows_every_input():
    base = {"ale": VERSION, "compiler_version": "g++ 12.2.0", "flags": ["-O3"], "pgo": False}
    key = ale_cache.core_key(**base)
    assert key == ale_cache.core_key(**dict(reversed(list(base.items()))))
    changed = [{"flags": ["-O3", "-fsanitize=thread"]}, {"pgo": {"frames_per_rom": 1000}},
               {"compiler_version": "g++ 13.1.0"}, {"ale": "0.12.2"}]
    keys = {ale_cache.core_key(**{**base, **change}) for change in changed}
    assert key not in keys and len(keys) == len(changed)


def test_pgo_key_says_which_compiler_trained():
    # GCC's part is what it was before Clang had a profile-guided build: GCC's cached cores stay valid.
    gcc = {"frames_per_rom": pgo.FRAMES_PER_ROM, "roms": 108, "trainer_sha256": ale_source.file_sha256(pgo.TRAINER)}
    assert pgo.key("gcc", ["rom"] * 108, native_flags.pgo_use("gcc")) == gcc
    clang = pgo.key("clang", ["rom"] * 108, native_flags.pgo_use("clang", "FILE"))
    assert clang == {**gcc, "kind": "clang-instr", "flags": native_flags.pgo_use("clang", "FILE")}
    other = pgo.key("clang", ["rom"] * 108, [*native_flags.pgo_use("clang", "FILE"), "-mllvm", "-pgso=false"])
    assert len({ale_cache.core_key(ale=VERSION, pgo=p) for p in (False, gcc, clang, other)}) == 4


@pytest.mark.parametrize("banner, word, release", [
    ("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu", "clang", (False, 14)),
    ("Apple clang version 15.0.0 (clang-1500.3.9.4)", "clang", (True, 15)),
    ("LLVM (http://llvm.org/):\n  LLVM version 16.0.6\n  Optimized build.", "LLVM", (False, 16)),
    ("Apple LLVM version 15.0.0\n  Optimized build.", "LLVM", (True, 15)),
    ("g++ (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.", "clang", None),
])
def test_llvm_release_from_a_banner(banner, word, release):
    assert pgo.llvm_release(banner, word) == release
    assert pgo.compiler_kind(banner) == ("gcc" if "Foundation" in banner else "clang" if word == "clang" else None)


def test_llvm_profdata_only_of_the_compilers_release(monkeypatch, tmp_path):
    # The raw profile's format changes between LLVM releases: an llvm-profdata of another is passed over.
    real, public = tmp_path / "llvm-16" / "bin", tmp_path / "bin"
    for folder in (real, public):
        folder.mkdir(parents=True)
    (public / "clang++-16").write_text("")  # a link to real/clang++, as Debian's /usr/bin/clang++-16 is
    (public / "llvm-profdata").write_text("")  # another release's, as Debian's /usr/bin has it
    releases = {str(public / "llvm-profdata"): (False, 14), str(real / "llvm-profdata"): (False, 16)}
    monkeypatch.setattr(pgo, "profdata_release", lambda command: releases.get(command[0]))
    def which(name, path=None):
        return str(Path(path or public) / name) if (Path(path or public) / name).exists() else None

    monkeypatch.setattr(pgo.shutil, "which", which)
    monkeypatch.setattr(pgo.os.path, "realpath", lambda path: str(real / "clang++") if "clang" in path else path)
    banner = "Debian clang version 16.0.6"
    assert pgo.llvm_profdata("clang++-16", banner) is None
    (public / "llvm-profdata-16").write_text("")
    releases[str(public / "llvm-profdata-16")] = (False, 16)
    assert pgo.llvm_profdata("clang++-16", banner) == [str(public / "llvm-profdata-16")]
    (real / "llvm-profdata").write_text("")  # beside the compiler's real file: first
    assert pgo.llvm_profdata("clang++-16", banner) == [str(real / "llvm-profdata")]


def test_cache_root_is_overridable(monkeypatch, tmp_path):
    monkeypatch.delenv("SB3_ALE_VEC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ale_cache.cache_root() == tmp_path / "xdg" / "sb3-ale-vec"
    monkeypatch.setenv("SB3_ALE_VEC_CACHE", str(tmp_path / "mine"))
    assert ale_cache.cache_root() == tmp_path / "mine"


def test_publish_file_replaces_atomically(tmp_path):
    built = tmp_path / "libx.a"
    built.write_bytes(b"new")
    final = tmp_path / "cache" / "libx.a"
    ale_cache.publish_file(built, final, {"flags": ["-O3"]})
    assert final.read_bytes() == b"new" and "-O3" in (final.parent / "inputs.json").read_text()
    assert sorted(p.name for p in final.parent.iterdir()) == ["inputs.json", "libx.a"]  # no leftovers


def test_offline_source_must_match_the_pinned_hash(monkeypatch, tmp_path):
    fake = tmp_path / f"ale_py-{VERSION}.tar.gz"
    with tarfile.open(fake, "w:gz") as tar:
        tar.addfile(tarfile.TarInfo(f"ale_py-{VERSION}/src/ale/x.cpp"), io.BytesIO())
    monkeypatch.setenv("SB3_ALE_VEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SB3_ALE_VEC_ALE_SOURCE", str(fake))
    with pytest.raises(ale_source.AleSourceError, match="sha256"):
        ale_source.ale_source_dir(VERSION)
    (tmp_path / "tree" / "src" / "ale").mkdir(parents=True)
    (tmp_path / "tree" / "src" / "ale" / "x.cpp").write_text("int x;\n")
    monkeypatch.setenv("SB3_ALE_VEC_ALE_SOURCE", str(tmp_path / "tree"))
    with pytest.raises(ale_source.AleSourceError, match="differs from ale-py"):
        ale_source.ale_source_dir(VERSION)
    assert not list((tmp_path / "cache" / "ale-source").iterdir())  # nothing half-unpacked is left


def test_offline_source_is_unpacked_into_the_cache(monkeypatch, tmp_path):
    url, sha, tree = ale_source.pinned(VERSION)
    tarball = ale_cache.cache_root() / "downloads" / url.rsplit("/", 1)[1]
    if not tarball.is_file():
        pytest.skip("no downloaded ale-py sdist in the build cache: a file this machine lacks")
    monkeypatch.setenv("SB3_ALE_VEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SB3_ALE_VEC_ALE_SOURCE", str(tarball))
    unpacked = ale_source.ale_source_dir(VERSION)
    assert (unpacked / "src" / "ale" / "ale_interface.cpp").is_file()
    assert ale_source.tree_sha256(unpacked) == tree
    monkeypatch.setenv("SB3_ALE_VEC_ALE_SOURCE", str(tmp_path / "missing"))
    assert ale_source.ale_source_dir(VERSION) == unpacked  # a cache hit reads no source at all


@pytest.mark.parametrize("has_filter", [True, False])
def test_unpacking_refuses_paths_outside(monkeypatch, tmp_path, has_filter):
    if not has_filter:  # as on Python before 3.11.4, which has no extractall(filter=...)
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("../evil.txt"), io.BytesIO())
    archive.seek(0)
    with tarfile.open(fileobj=archive) as tar, pytest.raises((ale_source.AleSourceError, tarfile.TarError)):
        ale_source._extract(tar, tmp_path / "dest")
    assert not (tmp_path / "evil.txt").exists()


def test_source_tree_without_engine_says_what_to_do(tmp_path):
    shutil.copytree(ROOT / "sb3_ale_vec", tmp_path / "sb3_ale_vec", ignore=shutil.ignore_patterns("*.so"))
    # -S: no site-packages, so no editable install finds the real engine behind the copy's back.
    result = subprocess.run([sys.executable, "-S", "-c", "import sb3_ale_vec"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "shadows the installed package" in result.stderr and "pip install -e ." in result.stderr


# native/'s layers, top to bottom: a file includes its own layer's files and those below, never above.
LAYERS = ["python", "xla", "core", "env", "frames"]


def test_native_includes_only_go_down_the_layers():
    include = re.compile(r'^#include "([^"]+)"', re.M)
    seen = set()
    for path in (ROOT / "native").rglob("*.?pp"):
        layer = path.parent.name if path.parent != ROOT / "native" else None
        for target in include.findall(path.read_text()):
            if target.startswith(("ale/", "xla/ffi/")):
                continue  # ALE's and XLA's own headers
            assert (ROOT / "native" / target).is_file(), f"{path.name}: {target} is not a path under native/"
            folder = target.split("/")[0] if "/" in target else None
            seen.add((layer, folder))
            if layer is None:
                assert folder is None, f"native/{path.name} is read by every layer and includes {target}"
            elif folder is not None:
                assert LAYERS.index(folder) >= LAYERS.index(layer), f"{layer}/{path.name} includes {target}, a layer above"
    assert {layer for layer, _ in seen} - {None} == set(LAYERS), seen  # None: native/'s own files (the config)


@pytest.mark.slow
def test_sdist_holds_only_our_sources(tmp_path):
    pytest.importorskip("build")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    (sdist,) = tmp_path.glob("sb3_ale_vec-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()]
        sources = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith("SOURCES.txt")))
        listed = sources.read().decode().split()
    for required in ("setup.py", "build_support/pgo_train.cpp", "native/core/engine.cpp", "build_support/ale_source.py",
                     "build_support/ale_patches.py"):
        assert required in names
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "native").rglob("*.?pp")} <= set(names)
    ours = [n for n in names if n != "PKG-INFO" and n != "setup.cfg" and ".egg-info/" not in n]
    assert all((ROOT / n).is_file() for n in ours), [n for n in ours if not (ROOT / n).is_file()]
    assert not [n for n in names + listed if "ale_interface" in n or "emucore" in n or n.startswith(("/", "build/"))]


def test_every_skip_for_a_missing_file_or_tool_is_one_that_ci_allows():
    # CI (SB3_ALE_VEC_NO_SKIPS=1) fails on any skip but conftest's ALLOWED_SKIPS; a skip for a missing
    # package goes through importorskip. Any other literal pytest.skip must be allowed, or a clean
    # run on a machine without that file fails falsely.
    from conftest import ALLOWED_SKIPS

    skips = [(path.name, message) for path in (ROOT / "tests").rglob("*.py")
             for message in re.findall(r'(?:pytest\.skip\(\s*|reason=)f?"([^"]*)"', path.read_text())]
    assert skips, "no pytest.skip found: the pattern is stale"
    assert not [s for s in skips if not any(allowed in s[1] for allowed in ALLOWED_SKIPS)], skips


# Tests that return early, known: each to be parametrized over the cases that exercise its path (a
# pytest.skip for "nothing to test here" would fail CI's SB3_ALE_VEC_NO_SKIPS=1 run).
EARLY_RETURNS: set[tuple[str, str]] = set()


def test_no_test_returns_early():
    # A test that returns before its asserts (a ROM without extra modes, say) passes having checked
    # nothing: its parameters should be the cases that exercise the path.
    import ast

    def returns(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                yield from ([child] if isinstance(child, ast.Return) else returns(child))

    found = {(path.name, node.name) for path in (ROOT / "tests").rglob("test_*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and any(returns(node))}
    assert found == EARLY_RETURNS, found ^ EARLY_RETURNS
