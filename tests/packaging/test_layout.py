"""The tests' layout (CONTRIBUTING.md, "Where a test file lives"): every test file sits in one folder of a
kind that CONTRIBUTING.md lists, and no test file imports another (what files share sits in tests/)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def kinds() -> set[str]:
    guide = (ROOT / "CONTRIBUTING.md").read_text()
    section = guide.split("## Where a test file lives", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `tests/(\w+)/`", section, re.M))


def test_every_test_file_sits_in_a_folder_of_a_kind_contributing_lists():
    listed = kinds()
    assert {"unit", "parity", "native"} <= listed, listed
    test_files = [p for p in TESTS.rglob("test_*") if p.suffix in (".py", ".cpp")]
    assert not [p.name for p in test_files if p.parent == TESTS], "a test file outside the kinds' folders"
    assert {p.relative_to(TESTS).parts[0] for p in test_files} <= listed
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders == listed, folders ^ listed  # each listed folder exists, and no folder is unlisted


def test_no_test_file_imports_another():
    names = {p.stem for p in TESTS.rglob("test_*.py")}
    imports = {(p.name, alias) for p in TESTS.rglob("*.py") for node in ast.walk(ast.parse(p.read_text()))
               for alias in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                             [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
               if alias in names}
    assert not imports, imports
