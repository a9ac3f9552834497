#!/usr/bin/env bash
# Build the engine with AddressSanitizer + UndefinedBehaviorSanitizer, then with ThreadSanitizer,
# each in a scratch copy of the repo, and run the engine's own tests against each build: its C++
# tests (tests/native/, no Python), then its Python tests.
# Python itself is not instrumented: the sanitizer runtime (and libstdc++, for ASan's exception
# interceptors) is preloaded. Any report fails the run (halt_on_error).
# ALE's core comes from the per-user build cache (see setup.py), keyed on the sanitizer flags: a
# warm cache builds only native/ here; a fresh machine builds the core's instrumented part once per
# sanitizer. ALE's emulator, which both leave uninstrumented, is the release core's (the install's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
libstdcxx=$(g++ -print-file-name=libstdc++.so)

run() {  # run KIND PRELOAD PYTEST-ARGS...
  local kind=$1 preload=$2
  shift 2
  local dir
  dir=$(mktemp -d)
  cp -r "$root"/setup.py "$root"/pyproject.toml "$root"/README.md "$root"/build_support "$root"/native \
    "$root"/sb3_ale_vec "$root"/tests "$dir"/
  rm -f "$dir"/sb3_ale_vec/*.so
  # Each phase's seconds and CPU-seconds (CI's time map, docs/building.md).
  local TIMEFORMAT="== building with SB3_ALE_VEC_SANITIZE=$kind: %R s, %U + %S CPU-s"
  echo "== building with SB3_ALE_VEC_SANITIZE=$kind"
  time (cd "$dir" && SB3_ALE_VEC_SANITIZE=$kind python setup.py -q build_ext --inplace > build.log 2>&1) ||
    { tail -n 50 "$dir/build.log"; return 1; }
  TIMEFORMAT="== the engine's C++ tests under $kind (the tests' build and run): %R s, %U + %S CPU-s"
  time bash "$dir/tests/native/run.sh" "$kind"
  TIMEFORMAT="== the $kind build's Python tests: %R s, %U + %S CPU-s"
  time (cd "$dir" && PYTHONPATH="$dir" LD_PRELOAD="$preload" \
    python -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup "$@")
  rm -rf "$dir"
}

# setup.py is run directly here: it needs the build requirements that pip's isolated build had.
python -m pip install -q "setuptools>=77" wheel "pybind11>=2.12"

export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"
export SB3_ALE_VEC_SOAK_STEPS=1500  # the soak's thread-count replay matters here, not its length

# `sanitize.sh` (CI): the Python tests' quick tier and the slow tests marked `sanitizers`; `sanitize.sh
# all`: the whole slow tier too (an hour).
tier="(not slow or sanitizers) and"
[[ "${1:-}" == "all" ]] && tier=""
# The two builds run at once, each into its own log (printed when both are done): the TSan half is
# short since its build leaves ALE's emulator uninstrumented, and one after the other the ASan tests
# left a core idle. A failing half fails the run.
logs=$(mktemp -d)
# The release core before the halves (from the cache where the install built it): both take ALE's emulator
# from it, and at once they would each build it.
TIMEFORMAT="== the release core, whose emulator both builds link: %R s, %U + %S CPU-s"
time (cd "$root" && python setup.py -q build_clib --build-temp "$logs/release" --build-clib "$logs/release" \
  > "$logs/release.log" 2>&1) || { tail -n 50 "$logs/release.log"; exit 1; }
# ASan + UBSan: every engine test file (markers, see pyproject.toml).
run address "$(g++ -print-file-name=libasan.so) $libstdcxx" \
  tests/contract/test_vec_env.py tests/parity/test_frame_stack.py tests/unit/test_properties.py \
  tests/concurrency/test_reliability.py tests/parity/test_gymnasium.py tests/parity/test_ale_vector.py \
  tests/parity/test_presets.py tests/unit/test_native_units.py tests/parity/test_ale_patches.py \
  tests/concurrency/test_threading.py tests/concurrency/test_chaos.py tests/unit/test_engine_fuzz.py \
  tests/concurrency/test_lifetime.py -m "$tier not nosan" \
  > "$logs/address" 2>&1 &
asan=$!
# TSan: the tests whose work crosses threads (batches, failures, close, thread counts, ALE's shared
# colour-averaging tables).
run thread "$(g++ -print-file-name=libtsan.so) $libstdcxx" \
  tests/concurrency/test_reliability.py tests/contract/test_vec_env.py tests/parity/test_gymnasium.py \
  tests/parity/test_ale_patches.py tests/concurrency/test_threading.py tests/concurrency/test_chaos.py \
  tests/unit/test_engine_fuzz.py tests/concurrency/test_lifetime.py -m "$tier tsan and not nosan" \
  > "$logs/thread" 2>&1 &
tsan=$!
status=0
wait "$asan" || status=$?
wait "$tsan" || status=$?
cat "$logs/address" "$logs/thread"
rm -rf "$logs"
exit "$status"
