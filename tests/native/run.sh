#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp): the thread pool and the engine on a real ROM,
# built against ALE's core and run without Python, optionally under a sanitizer:
#   bash tests/native/run.sh [address|thread] [NAME_FILTER]
# It runs `setup.py build_ext --inplace` with the same SB3_ALE_VEC_SANITIZE first (a no-op when
# built), which provides ALE's core from the build cache, its headers and the engine's objects.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kind=${1:-}
cd "$root"
mkdir -p build
SB3_ALE_VEC_SANITIZE=$kind python setup.py -q build_ext --inplace > build/native-tests-build.log 2>&1 \
  || { tail -n 40 build/native-tests-build.log; exit 1; }
temp=$(dirname "$(ls -t build/temp.*/ale-core-path.txt | head -n 1)")
core=$(cat "$temp/ale-core-path.txt")
mapfile -t includes < <(python -m build_support.ale_core includes "$temp/ale-generated")
flags=$(python -m build_support.native_flags "$kind")
# The engine's objects as the build above compiled them for the extensions (the same flags, written
# once in build_support/native_flags.py; no python/ or xla/: no Python here): only the tests compile here.
objects=()
for source in native/*.cpp native/core/*.cpp native/env/*.cpp native/frames/*.cpp; do
  objects+=("$temp/${source%.cpp}.o")
done
out=build/native_tests${kind:+_$kind}
echo "== building $out ($flags)"
# shellcheck disable=SC2086
g++ $flags -I native -isystem "${includes[0]}" -isystem "${includes[1]}" tests/native/*.cpp "${objects[@]}" "$core" -lz -pthread -o "$out"
rom=$(python -c "from ale_py import roms; print(roms.get_rom_path('breakout'))")
echo "== running $out"
"$out" "$rom" "${2:-}"
