#!/usr/bin/env bash
# The engine's C++ tests (tests/native/test_*.cpp) built for Windows x86-64 with MinGW-w64 and run
# under Wine on Breakout's ROM: the Windows branches of native/core/platform.cpp (idle priority,
# affinity, thread names, no fork) and the whole engine as a Windows program, from a Linux machine.
#   bash tests/native/cross_windows.sh [NAME_FILTER]
# Needs: python with this project's build requirements (build_support, ale-py for the ROMs),
# g++-mingw-w64-x86-64-posix (std::thread needs the posix thread model), libz-mingw-w64-dev, wine64
# and make. CROSS_CXX, CROSS_AR, WINE, JOBS (default 2) and WINEPREFIX override.
# ALE's core is compiled once (-O2, asserts off, as setup.py's build but without profile guidance)
# into ~/.cache/sb3-ale-vec/cross-mingw64-<key>/, the key naming the compiler, the flags and the
# patched ALE sources; the engine's objects and the test program go to build/cross-mingw64/ and are
# rebuilt as make finds them out of date. The program is linked statically: Wine needs no MinGW DLL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
cxx=${CROSS_CXX:-x86_64-w64-mingw32-g++-posix}
ar=${CROSS_AR:-x86_64-w64-mingw32-ar}
wine=${WINE:-$(command -v wine64 || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || echo wine)}
jobs=${JOBS:-2}
out=build/cross-mingw64
start=$SECONDS
for tool in "$cxx" "$ar" "$wine" make; do
  command -v "$tool" > /dev/null || { echo "cross_windows.sh: $tool not found (see the header of $0)"; exit 1; }
done
mkdir -p "$out"
# (Into a file: MinGW's ld cannot write its output to /dev/null.)
echo 'int main() { return 0; }' | "$cxx" -x c++ - -static -lz -o "$out/zlib-check.exe" 2> /dev/null \
  || { echo "cross_windows.sh: $cxx cannot link zlib statically: install libz-mingw-w64-dev"; exit 1; }
# One description of the build: ALE's sources and include folders, and the engine's flags.
mapfile -t core_sources < <($python -m build_support.ale_core sources "$out/ale-generated")
mapfile -t includes < <($python -m build_support.ale_core includes "$out/ale-generated")
flags=$($python -m build_support.native_flags)
# -DWIN32: ALE's DynamicLoad.cpp picks its Windows branch by WIN32, which MSVC's projects define and
# MinGW's g++ does not under -std=c++17 (only _WIN32).
core_flags="-std=c++17 -O2 -w -g0 -DNDEBUG -fwrapv -DWIN32"
key=$(printf '%s\n' "$("$cxx" --version | head -n 1)" "$core_flags" "${includes[0]}" "${core_sources[@]}" \
  | cat - "$out/ale-generated/version.hpp" | sha256sum | cut -c 1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sb3-ale-vec/cross-mingw64-$key
core=$cache/libale_core.a
rom=$($python -c "from ale_py import roms; print(roms.get_rom_path('breakout'))")

# A makefile: ALE's core into the cache (the archive renamed into place last, so an interrupted build
# is never reused), then the engine and the tests with dependency files.
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
    printf '%s: %s\n\t@mkdir -p %s\n\t$(CXX) %s -MMD -MP $(INCLUDES) -c $< -o $@\n-include %s\n' \
      "$o" "$s" "$(dirname "$o")" "$flags" "${o%.o}.d"
  done
  printf '%s: $(ENGINE_OBJECTS) %s\n\t$(CXX) -static -static-libgcc -static-libstdc++ $^ -lz -o $@\n' \
    "$out/native_tests.exe" "$core"
} > "$out/Makefile"
if [ -f "$core" ]; then echo "== ALE's core from the cache: $core"; else echo "== building ALE's core ($core_flags) into $core"; fi
echo "== building $out/native_tests.exe with $cxx ($flags)"
make -s -j "$jobs" -f "$out/Makefile" "$out/native_tests.exe"

# Wine's Z: drive is the Unix root: the ROM's path as the Windows program sees it.
rom_windows="Z:${rom//\//\\}"
echo "== built in $((SECONDS - start)) s; running $out/native_tests.exe under $("$wine" --version) on $rom_windows"
run_start=$SECONDS
WINEDEBUG=${WINEDEBUG:--all} "$wine" "$out/native_tests.exe" "$rom_windows" "${1:-}"
echo "== ran in $((SECONDS - run_start)) s ($((SECONDS - start)) s in all)"
