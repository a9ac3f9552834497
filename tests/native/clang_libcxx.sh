#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp) built with Clang and LLVM's C++ library (libc++,
# macOS's compiler and library) and run on Breakout's ROM. It runs on this Linux machine, so it
# checks the engine's code and ALE's core against another compiler's warnings and another standard
# library, not macOS's branches of native/core/platform.cpp: Linux's run here.
#   bash tests/native/clang_libcxx.sh [NAME_FILTER]
# Needs: python with this project's build requirements (build_support, ale-py for the ROMs), clang++,
# libc++-dev, libc++abi-dev, zlib (zlib1g-dev) and make. CLANG_CXX, CLANG_AR and JOBS (default 2)
# override. ALE's core: -O2, asserts off, cached (see build_with.sh); it is built with libc++ too,
# since the engine hands it std::string and other library types.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
cxx=${CLANG_CXX:-clang++}
ar=${CLANG_AR:-$(command -v llvm-ar || echo ar)}
jobs=${JOBS:-2}
start=$SECONDS
for tool in "$cxx" "$ar" make; do
  command -v "$tool" > /dev/null || { echo "clang_libcxx.sh: $tool not found (see the header of $0)"; exit 1; }
done
echo '#include <string>
int main() { return std::string("x").size() == 1 ? 0 : 1; }' | "$cxx" -x c++ - -stdlib=libc++ -o /dev/null 2> /dev/null \
  || { echo "clang_libcxx.sh: $cxx -stdlib=libc++ cannot link: install libc++-dev and libc++abi-dev"; exit 1; }

# shellcheck source=tests/native/build_with.sh
source tests/native/build_with.sh
build_native_tests clang-libcxx "$cxx" "$ar" "-std=c++17 -O2 -w -g0 -DNDEBUG -fwrapv" "-stdlib=libc++" "-pthread" ""

echo "== running $program on $rom"
run_start=$SECONDS
"$program" "$rom" "${1:-}"
echo "== ran in $((SECONDS - run_start)) s ($((SECONDS - start)) s in all)"
