#!/usr/bin/env bash
# Every source of the engine (native/**/*.cpp: core, env, frames, python, xla) compiled, syntax only,
# for macOS arm64 (Zig's Clang and libc++) and Windows x86-64 (MinGW-w64 GCC), with -Wall -Wextra
# -Werror: a POSIX-only call, a Linux-only header or a new warning on either fails it. No ALE core is
# compiled, nothing is linked or run (build_support/cross_wheel.py builds the wheels).
#   bash tests/native/compile_platforms.sh [macos-arm64|windows-amd64 ...]
# Needs: python with pybind11 and ziglang (pip install pybind11 ziglang), g++-mingw-w64-x86-64-posix
# (Windows' syntax and warnings by Debian bookworm's MinGW-w64 GCC 12, msvcrt's headers: CROSS_CXX names
# another; the UCRT toolchain's build and Wine run are tests/native/cross_windows.sh's, in the deep tier),
# CPython's headers from pyenv (PYVER, default 3.12; build_support/cross_targets.py writes the target's
# pyconfig.h). The XLA targets compile in full where jaxlib's headers are found, as in setup.py.
# JOBS (default 2) compiles at once.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python}
pyver=${PYVER:-3.12}
jobs=${JOBS:-2}
if [ $# -gt 0 ]; then targets=("$@"); else targets=(macos-arm64 windows-amd64); fi
export CROSS_CXX=${CROSS_CXX:-x86_64-w64-mingw32-g++-posix}
start=$SECONDS
out=build/compile-platforms
mkdir -p "$out"
mapfile -t ale < <($python -m build_support.ale_core includes "$out/ale-generated")
pybind=$($python -c "import pybind11; print(pybind11.get_include())")
xla=$($python -c "from build_support.link_inputs import xla_ffi_include; print(xla_ffi_include() or '')" | tail -n 1)
xla_flags=() xla_state=off
if [ -n "$xla" ] && [ -d "$xla" ]; then xla_flags=(-DSB3_ALE_VEC_XLA_FFI=1 -isystem "$xla") xla_state="on ($xla)"; fi
mapfile -t sources < <(find native -name '*.cpp' | sort)
status=0
for target in "${targets[@]}"; do
  t0=$SECONDS
  mapfile -t command < <($python -m build_support.cross_targets flags "$target")
  include=$($python -m build_support.cross_targets headers "$target" "$pyver" "$out/$target")
  # Zig's driver cannot stop after the syntax (it renames an object out of its cache, and -o /dev/null
  # leaves it in the current folder): Clang compiles objects into $out there, at -O0, as Clang's
  # warnings come from its front end, the same at any -O.
  mode=(-fsyntax-only) objects=
  if [ "$target" = macos-arm64 ]; then mode=(-O0 -c) objects=$out/$target/obj; mkdir -p "$objects"; fi
  export objects
  flags=("${command[@]}" "${mode[@]}" -Werror -DSB3_ALE_VEC_ALE_VERSION='"check"'
         -DSB3_ALE_VEC_ALE_PATCHES='"check"' -I native
         -isystem "${ale[0]}" -isystem "${ale[1]}" -isystem "$include" -isystem "$pybind" "${xla_flags[@]}")
  echo "== $target: ${#sources[@]} files, CPython $pyver's headers, XLA FFI $xla_state: ${command[*]}"
  if printf '%s\n' "${sources[@]}" | xargs -P "$jobs" -I{} sh -c \
    '"$@" {} ${objects:+-o "$objects/$(echo {} | tr / _).o"} || { echo "FAILED: {}"; exit 255; }' _ "${flags[@]}"
  then echo "== $target: all ${#sources[@]} compiled in $((SECONDS - t0)) s"
  else echo "== $target: FAILED"; status=1
  fi
done
echo "== done in $((SECONDS - start)) s"
exit $status
