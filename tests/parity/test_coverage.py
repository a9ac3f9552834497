"""The matrices' coverage, as a manifest (issue 55: matrices by coverage, not by repetition).

The parity matrices against SB3's, Gymnasium's and ale-py's own pipelines are read from their tests'
parametrizations (nothing here runs an env) into pairs: each ROM with each front-end (front-end,
preset, reference), each option value with each front-end and with each ROM, and each two option
values run together. tests/coverage_pairs.txt holds the set a change may add to and never shrink, each pair
with the tier that covers it: "core" where a case outside the deep tier covers it (every run), else "deep"
(`bash .ci/deep`). `python tests/parity/test_coverage.py --write` rewrites it from the tests as they are (after adding
cases, or after moving cases to the deep tier on purpose).
"""

from __future__ import annotations

import importlib
import itertools
import sys
from pathlib import Path

import pytest
ParameterSet = type(pytest.param())  # what pytest.param(...) makes: pytest names no public class for it

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)

MANIFEST = Path(__file__).resolve().parents[1] / "coverage_pairs.txt"

# Each matrix test: (module, function) -> (front-end, preset, reference).
SB3 = ("sb3", "sb3", "make_atari_env")
GYM = ("gymnasium", "gymnasium", "AtariPreprocessing")
ALE = ("ale", "ale", "ale_py.AtariVectorEnv")
MATRICES = {
    ("test_parity", "test_options_pairwise"): SB3,
    ("test_parity", "test_reset_mid_run"): SB3,
    ("test_parity", "test_sticky_actions"): SB3,
    ("test_parity", "test_frame_skip_and_screen_size"): SB3,
    ("test_parity", "test_taller_screens"): SB3,
    ("test_every_rom", "test_every_rom_on_the_sb3_and_gymnasium_presets"): SB3,
    ("test_every_rom", "test_every_rom_on_the_sb3_and_gymnasium_presets#gymnasium"): GYM,
    ("test_reset_ahead", "test_every_rom_with_sticky_actions_equals_ale_py_and_swaps_where_allowed"): ALE,
    ("test_reset_ahead", "test_non_default_modes_and_difficulties_equal_gymnasium"): GYM,
    ("test_gymnasium", "test_default_preset_equals_gymnasium"): GYM,
    ("test_gymnasium", "test_terminal_on_life_loss"): GYM,
    ("test_gymnasium", "test_taller_screens_equal_gymnasium"): GYM,
    ("test_presets", "test_sb3_front_end_with_the_gymnasium_preset_equals_dummy_vec_env_over_gymnasiums_chain"):
        ("sb3", "gymnasium", "AtariPreprocessing"),
    ("test_presets", "test_sb3_front_end_with_the_ale_preset_equals_ale_pys_vector_env"): ("sb3", "ale", "ale_py.AtariVectorEnv"),
    ("test_presets", "test_gymnasium_front_end_with_the_ale_preset_equals_ale_pys_vector_env"):
        ("gymnasium", "ale", "ale_py.AtariVectorEnv"),
    ("test_presets", "test_gymnasium_front_end_with_the_sb3_preset_equals_sync_vector_env_over_atari_wrapper"):
        ("gymnasium", "sb3", "AtariWrapper"),
}
# Options a test sets in its body rather than its parameters (the every-ROM runs' sticky actions).
FIXED = {("test_reset_ahead", "test_every_rom_with_sticky_actions_equals_ale_py_and_swaps_where_allowed"):
         {"repeat_action_probability": 0.25},
         ("test_reset_ahead", "test_non_default_modes_and_difficulties_equal_gymnasium"):
         {"mode": "last", "repeat_action_probability": 0.25}}


def _deep(marks) -> bool:
    marks = marks if isinstance(marks, (list, tuple)) else [marks]
    return any(getattr(mark, "name", None) == "deep" for mark in marks)


def _cases(function, module_deep: bool = False) -> list[tuple[dict, bool]]:
    """Every case of a parametrized test as ({argument: value}, deep): the product of its parametrize marks,
    deep where the module, the function or one of the case's pytest.param(...) marks it `deep`."""
    axes, marks = [], getattr(function, "pytestmark", [])
    for mark in marks:
        if mark.name != "parametrize":
            continue
        names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else list(mark.args[0])
        axis = []
        for v in mark.args[1]:
            if isinstance(v, ParameterSet):  # pytest.param(...): its values, always a tuple, and its marks
                axis.append((dict(zip(names, v.values)), _deep(v.marks)))
            else:
                axis.append((dict(zip(names, v if len(names) > 1 else (v,))), False))
        axes.append(axis)
    deep = module_deep or _deep(marks)
    return [(dict(kv for part, _ in combo for kv in part.items()), deep or any(d for _, d in combo))
            for combo in itertools.product(*axes)]


def _options(case: dict) -> dict:
    """A case's options: its dicts of settings flattened, its other arguments but the ROM as they are."""
    options = {}
    for name, value in case.items():
        if isinstance(value, dict):
            options.update(value)
        elif name not in ("game", "games"):
            options[name] = value
    return options


def pairs(modules: dict | None = None) -> dict[str, str]:
    """The covered pairs, each "A | B" (A and B sorted), with the tier that covers it: "core" or "deep"."""
    covered: dict[str, str] = {}
    for (module_name, key), front in MATRICES.items():
        module = (modules or {}).get(module_name) or importlib.import_module(module_name)
        function = getattr(module, key.split("#")[0])
        where = "front-end={}/preset={}/reference={}".format(*front)
        for case, deep in _cases(function, _deep(getattr(module, "pytestmark", []))):
            options = {**FIXED.get((module_name, key), {}), **_options(case)}
            values = [f"{k}={v!r}" for k, v in sorted(options.items())]
            found = [" | ".join(sorted((where, item))) for item in [f"rom={case['game']}"] * ("game" in case) + values]
            if "game" in case:
                found += [" | ".join(sorted((f"rom={case['game']}", v))) for v in values]
            found += [" | ".join(sorted(p)) for p in itertools.combinations(values, 2)]
            for pair in found:
                covered[pair] = "core" if not deep or covered.get(pair) == "core" else "deep"
    return covered


def manifest() -> dict[str, str]:
    """tests/coverage_pairs.txt: "TIER  A | B" a line."""
    lines = [line.split("  ", 1) for line in MANIFEST.read_text().splitlines()]
    assert all(len(line) == 2 and line[0] in ("core", "deep") for line in lines), "a line not 'core|deep  A | B'"
    return {pair: tier for tier, pair in lines}


def test_the_matrices_cover_every_pair_of_the_manifest_in_its_tier():
    now, before = pairs(), manifest()
    dropped = sorted(before.keys() - now.keys())
    assert not dropped, f"{len(dropped)} covered pairs dropped (tests/coverage_pairs.txt), e.g. {dropped[:5]}"
    # A pair leaves the core tier only on purpose: `python tests/parity/test_coverage.py --write` shows it in the diff.
    demoted = sorted(p for p, tier in before.items() if tier == "core" and now[p] == "deep")
    assert not demoted, f"{len(demoted)} pairs covered only by the deep tier now, e.g. {demoted[:5]}"
    assert len(now) >= len(before) > 0


if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]  # the matrices, the helpers
    if sys.argv[1:] == ["--write"]:
        MANIFEST.write_text("".join(f"{tier}  {p}\n" for p, tier in sorted(pairs().items())))
    covered = pairs()
    print(len(covered), "pairs covered,", sum(t == "core" for t in covered.values()), "of them in the core tier;",
          len(MANIFEST.read_text().splitlines()), "in", MANIFEST.name)
