#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp) built for AArch64 with a cross compiler and run
# under qemu-user on Breakout's ROM: the NEON paths (test_frames_isa.cpp compares them with the
# scalar ones) and the whole engine on an ARM build, from an x86-64 machine.
#   bash tests/native/cross_aarch64.sh [NAME_FILTER]
# Needs: python with this project's build requirements (build_support, ale-py for the ROMs),
# g++-aarch64-linux-gnu, qemu-user-static, and zlib for arm64 (zlib1g-dev:arm64, after
# `dpkg --add-architecture arm64 && apt-get update`). CROSS_CXX, CROSS_AR, QEMU and JOBS (default 2)
# override.
# ALE's core is compiled once (-O2, no profile, asserts off as in setup.py's build) into ~/.cache/sb3-ale-vec/cross-aarch64-<key>/, the
# key naming the compiler, the flags and the patched ALE sources; the engine's objects and the test
# binary go to build/cross-aarch64/ and are rebuilt as make finds them out of date.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
cxx=${CROSS_CXX:-aarch64-linux-gnu-g++}
ar=${CROSS_AR:-aarch64-linux-gnu-ar}
qemu=${QEMU:-qemu-aarch64-static}
jobs=${JOBS:-2}
out=build/cross-aarch64
start=$SECONDS
for tool in "$cxx" "$ar" "$qemu" make; do
  command -v "$tool" > /dev/null || { echo "cross_aarch64.sh: $tool not found (see the header of $0)"; exit 1; }
done
echo 'int main() { return 0; }' | "$cxx" -x c++ - -static -lz -o /dev/null 2> /dev/null \
  || { echo "cross_aarch64.sh: $cxx cannot link zlib statically: install zlib1g-dev:arm64"; exit 1; }

mkdir -p "$out"
# One description of the build: ALE's sources and include folders, and the engine's flags.
mapfile -t core_sources < <($python -m build_support.ale_core sources "$out/ale-generated")
mapfile -t includes < <($python -m build_support.ale_core includes "$out/ale-generated")
flags=$($python -m build_support.native_flags)
core_flags="-std=c++17 -O2 -w -g0 -DNDEBUG -fwrapv"  # as setup.py's (Python's CFLAGS add the last two)
key=$(printf '%s\n' "$("$cxx" --version | head -n 1)" "$core_flags" "${includes[0]}" "${core_sources[@]}" \
  | cat - "$out/ale-generated/version.hpp" | sha256sum | cut -c 1-16)
cache=$($python -c "from build_support.ale_cache import cache_root; print(cache_root())")/cross-aarch64-$key
core=$cache/libale_core.a
rom=$($python -c "from ale_py import roms; print(roms.get_rom_path('breakout'))")

# A makefile: ALE's core into the cache (objects beside it, the archive renamed into place last, so
# an interrupted build is never reused), then the engine and the tests with dependency files.
engine_sources=(native/*.cpp native/core/*.cpp native/env/*.cpp native/frames/*.cpp tests/native/*.cpp)
{
  echo "CXX := $cxx"
  echo "INCLUDES := -I native -isystem ${includes[0]} -isystem ${includes[1]}"
  if [ ! -f "$core" ]; then  # once cached, the archive alone is a prerequisite
    echo "CORE_OBJECTS :="
    for s in "${core_sources[@]}"; do
      o="$cache/obj/$(echo "${s#"${includes[0]}"/}" | tr '/' '_').o"
      echo "CORE_OBJECTS += $o"
      printf '%s: %s\n\t@mkdir -p %s\n\t$(CXX) %s $(INCLUDES) -c $< -o $@\n' "$o" "$s" "$cache/obj" "$core_flags"
    done
    printf '%s: $(CORE_OBJECTS)\n\trm -f $@.tmp\n\t%s rcs $@.tmp $^\n\tmv $@.tmp $@\n\trm -rf %s\n' \
      "$core" "$ar" "$cache/obj"
  fi
  echo "ENGINE_OBJECTS :="
  for s in "${engine_sources[@]}"; do
    o="$out/obj/${s%.cpp}.o"
    echo "ENGINE_OBJECTS += $o"
    printf '%s: %s %s\n\t@mkdir -p %s\n\t$(CXX) %s -MMD -MP $(INCLUDES) -c $< -o $@\n-include %s\n' \
      "$o" "$s" "$out/engine-flags.txt" "$(dirname "$o")" "$flags" "${o%.o}.d"
  done
  # Static: the binary needs no arm64 libraries at run time, only qemu.
  printf '%s: $(ENGINE_OBJECTS) %s\n\t$(CXX) -static $^ -lz -pthread -o $@\n' "$out/native_tests" "$core"
} > "$out/Makefile"
# The engine's objects depend on their compiler and flags too: this file changes only with them.
echo "$("$cxx" --version | head -n 1) $flags ${includes[*]}" > "$out/engine-flags.new"
if cmp -s "$out/engine-flags.new" "$out/engine-flags.txt"; then rm "$out/engine-flags.new"
else mv "$out/engine-flags.new" "$out/engine-flags.txt"; fi
if [ -f "$core" ]; then echo "== ALE's core from the cache: $core"; else echo "== building ALE's core ($core_flags) into $core"; fi
echo "== building $out/native_tests with $cxx ($flags)"
make -s -j "$jobs" -f "$out/Makefile" "$out/native_tests"
echo "== built in $((SECONDS - start)) s; running $out/native_tests under $qemu on $rom"
run_start=$SECONDS
"$qemu" "$out/native_tests" "$rom" "${1:-}"
echo "== ran in $((SECONDS - run_start)) s ($((SECONDS - start)) s in all)"
