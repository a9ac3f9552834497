"""The repository speaks of the project alone: no path of the machine it was built on, no folder outside the
checkout, no commit of its own history or date narrated in code (history lives in git and CHANGELOG.md)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE = (".py", ".cpp", ".hpp", ".sh", ".toml", ".cfg", ".in")
OUTSIDE = re.compile(r"\.\./shared\b|(?<![\w$}])/(?:work|root|home/\w+)/|\.library/")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def tracked() -> list[Path]:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("this repository's .git is not beside this checkout")
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    skip = {"CHANGELOG.md", Path(__file__).relative_to(ROOT).as_posix()}  # history; this file's own patterns
    return [ROOT / n for n in names.split("\0") if n and n not in skip and (ROOT / n).is_file()]


def text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # a binary file (a plot)
        return ""


def commits(tokens: set[str]) -> set[str]:
    """The tokens that name a commit of this repository."""
    if not tokens:
        return set()
    query = "".join(f"{t}^{{commit}}\n" for t in sorted(tokens))
    out = subprocess.run(["git", "cat-file", "--batch-check"], cwd=ROOT, input=query, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return {t for t, line in zip(sorted(tokens), out) if not line.endswith("missing")}


def test_no_file_names_a_folder_outside_the_checkout_or_a_machine_path():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in tracked() for n, line in enumerate(text(p).splitlines(), 1)
             if OUTSIDE.search(line)]
    assert not found, found[:10]


def test_no_code_narrates_a_commit_or_a_date():
    code = [p for p in tracked() if p.suffix in CODE or p.parent.name == ".ci"]
    dated = [f"{p.relative_to(ROOT)}:{n}" for p in code for n, line in enumerate(text(p).splitlines(), 1)
             if DATE.search(line)]
    assert not dated, dated[:10]
    tokens = {t for p in code for t in HEX.findall(text(p))}
    named = commits(tokens)
    assert not named, sorted(named)[:10]
