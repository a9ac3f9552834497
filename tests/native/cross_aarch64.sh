#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp) built for AArch64 with a cross compiler and run
# under qemu-user on Breakout's ROM: the NEON paths (test_frames_isa.cpp compares them with the
# scalar ones) and the whole engine on an ARM build, from an x86-64 machine.
#   bash tests/native/cross_aarch64.sh [NAME_FILTER]
# Needs: python with this project's build requirements (build_support, ale-py for the ROMs),
# g++-aarch64-linux-gnu, qemu-user-static, and zlib for arm64 (zlib1g-dev:arm64, after
# `dpkg --add-architecture arm64 && apt-get update`). CROSS_CXX, CROSS_AR, QEMU and JOBS (default 2)
# override.
# ALE's core and the engine are built by build_with.sh (ALE's core once into the build cache as
# cross-aarch64-<key>/; the engine's objects and the test binary in build/cross-aarch64/).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
cxx=${CROSS_CXX:-aarch64-linux-gnu-g++}
ar=${CROSS_AR:-aarch64-linux-gnu-ar}
qemu=${QEMU:-qemu-aarch64-static}
jobs=${JOBS:-2}
start=$SECONDS
for tool in "$cxx" "$ar" "$qemu" make; do
  command -v "$tool" > /dev/null || { echo "cross_aarch64.sh: $tool not found (see the header of $0)"; exit 1; }
done
echo 'int main() { return 0; }' | "$cxx" -x c++ - -static -lz -o /dev/null 2> /dev/null \
  || { echo "cross_aarch64.sh: $cxx cannot link zlib statically: install zlib1g-dev:arm64"; exit 1; }

# shellcheck source=tests/native/build_with.sh
source tests/native/build_with.sh
# ALE's core as setup.py's, without profile (Python's CFLAGS add the last two); static: the program
# needs no arm64 libraries at run time, only qemu.
build_native_tests aarch64 "$cxx" "$ar" "-std=c++17 -O2 -w -g0 -DNDEBUG -fwrapv" "" "-static -pthread" ""
echo "== running $program under $qemu on $rom"
run_start=$SECONDS
"$qemu" "$program" "$rom" "${1:-}"
echo "== ran in $((SECONDS - run_start)) s ($((SECONDS - start)) s in all)"
