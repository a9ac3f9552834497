#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp) built for Windows x86-64 with MinGW-w64's UCRT toolchain
# (the C runtime CPython is built on; the wheels' compiler) and run under Wine on Breakout's ROM: the
# Windows branches of native/core/platform.cpp (idle priority, affinity, thread names, no fork) and the
# whole engine as a Windows program, from a Linux machine.
#   bash tests/native/cross_windows.sh [NAME_FILTER]
# Needs: python with this project's build requirements (build_support, ale-py for the ROMs), root and
# debootstrap for the toolchain's Debian sid root (build_support/mingw_ucrt.py makes it on first use:
# g++-mingw-w64-ucrt64, zlib built for the UCRT), wine64 and make. CROSS_CXX (another MinGW-w64 g++, its
# ar beside it), WINE, JOBS (default 2) and WINEPREFIX override.
# ALE's core: -O2, asserts off, as setup.py's build but without profile guidance, cached (see
# build_with.sh). The program is linked statically: Wine needs no MinGW DLL beside it, and it must import
# only KERNEL32.dll and the UCRT's API sets (build_support/pe_imports.py), or the run fails before Wine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
if [ -z "${CROSS_CXX:-}" ]; then  # the toolchain made where missing (minutes, once), and put on PATH
  PATH=$($python -m build_support.mingw_ucrt | tail -n 1):$PATH
fi
cxx=${CROSS_CXX:-x86_64-w64-mingw32ucrt-g++}
ar=${CROSS_AR:-$(echo "$cxx" | sed -E 's/g\+\+(-posix)?$/ar/')}
wine=${WINE:-$(command -v wine64 || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || echo wine)}
jobs=${JOBS:-2}
start=$SECONDS
for tool in "$cxx" "$ar" "$wine" make; do
  command -v "$tool" > /dev/null || { echo "cross_windows.sh: $tool not found (see the header of $0)"; exit 1; }
done
mkdir -p build
# (Into a file: MinGW's ld cannot write its output to /dev/null.)
echo 'int main() { return 0; }' | "$cxx" -x c++ - -static -lz -o build/mingw-zlib-check.exe 2> /dev/null \
  || { echo "cross_windows.sh: $cxx cannot link zlib statically (see the header of $0)"; exit 1; }

# shellcheck source=tests/native/build_with.sh
source tests/native/build_with.sh
# -DWIN32: ALE's DynamicLoad.cpp picks its Windows branch by WIN32, which MSVC's projects define and
# MinGW's g++ does not under -std=c++17 (only _WIN32).
build_native_tests mingw64 "$cxx" "$ar" "-std=c++17 -O2 -w -g0 -DNDEBUG -fwrapv -DWIN32" "" \
  "-static -static-libgcc -static-libstdc++" .exe

$python -m build_support.pe_imports "$program"
# Wine's Z: drive is the Unix root: the ROM's path as the Windows program sees it.
rom_windows="Z:${rom//\//\\}"
echo "== running $program under $("$wine" --version) on $rom_windows"
run_start=$SECONDS
WINEDEBUG=${WINEDEBUG:--all} "$wine" "$program" "$rom_windows" "${1:-}"
echo "== ran in $((SECONDS - run_start)) s ($((SECONDS - start)) s in all)"
