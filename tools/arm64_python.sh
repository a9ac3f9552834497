#!/usr/bin/env bash
# An aarch64 CPython that qemu-user runs on an x86-64 Linux machine, for the AArch64 wheels' checks
# (tests/native/aarch64_wheel.sh, tools/wheels.py --test):
#   bash tools/arm64_python.sh VERSION [DIR]
# VERSION is one Debian packages for arm64: 3.11 (Debian 12), 3.13 (Debian 13) or 3.14 (Debian sid).
# DIR defaults to the project's cache, $SB3_ALE_VEC_CACHE, else $XDG_CACHE_HOME/sb3-ale-vec, else
# ~/.cache/sb3-ale-vec, under arm64-python/VERSION. It gets DIR/root (Debian's arm64 python and the
# libraries it loads, unpacked), DIR/site (aarch64 wheels of numpy, gymnasium and the ale-py that
# pyproject.toml pins) and DIR/python, a launcher. Nothing is installed on the machine: apt runs with
# lists, cache and state of its own in DIR, arm64 as its architecture. Needs qemu-user-static, apt
# and pip; rerun, it keeps what it has (DIR/.ready marks a finished one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
V=${1:?usage: tools/arm64_python.sh VERSION [DIR]   (VERSION: 3.11, 3.13 or 3.14)}
case $V in
  3.11) suite=bookworm ;;
  3.13) suite=trixie ;;
  3.14) suite=sid ;;
  *) echo "arm64_python.sh: no Debian release packages CPython $V for arm64 (3.11, 3.13 or 3.14)" >&2; exit 2 ;;
esac
cache=${SB3_ALE_VEC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sb3-ale-vec}
D=$(realpath -m "${2:-$cache/arm64-python/$V}")
if [ -f "$D/.ready" ]; then echo "arm64 python $V ready in $D"; exit 0; fi
command -v qemu-aarch64-static > /dev/null || {
  echo "arm64_python.sh: qemu-aarch64-static is a tool this machine lacks (apt-get install qemu-user-static)" >&2
  exit 1
}
pin=$(sed -n 's/^ *"\(ale-py==[^"]*\)",$/\1/p' "$root/pyproject.toml" | head -n 1)
start=$SECONDS
say() { echo "[$((SECONDS - start)) s] $*"; }
rm -rf "$D/root" "$D/site" "$D/debs" "$D/wheels"
mkdir -p "$D/apt/lists/partial" "$D/apt/cache/archives/partial" "$D/debs" "$D/root" "$D/site" "$D/wheels"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
  > "$D/apt/sources.list"
: > "$D/apt/status"  # no installed packages: every dependency is looked up in the archive
apt=(-o "Dir::Etc::sourcelist=$D/apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$D/apt/lists"
     -o "Dir::Cache=$D/apt/cache" -o "Dir::State::status=$D/apt/status" -o APT::Architecture=arm64
     -o APT::Architectures::=arm64)
# As root apt hands downloads to its _apt user, who cannot write into a folder of root's own.
[ "$(id -u)" != 0 ] || apt+=(-o APT::Sandbox::User=root)
say "Debian $suite's arm64 package lists"
apt-get "${apt[@]}" update -qq

# The interpreter's packages and the libraries they depend on, followed from package to package:
# only libraries, so that tools the packages' scripts use (dpkg, perl) are left out. libstdc++6 is
# what ale-py's extension loads beside libc.
want=("python$V-minimal" "libpython$V-minimal" "libpython$V-stdlib" "libpython$V" libstdc++6)
frontier=("${want[@]}")
while [ ${#frontier[@]} -gt 0 ]; do
  mapfile -t frontier < <(apt-cache "${apt[@]}" depends --no-recommends --no-suggests --no-conflicts --no-breaks \
      --no-replaces --no-enhances "${frontier[@]}" \
    | sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \([^< ][^ ]*\)$/\2/p' \
    | grep -E '^(lib|zlib1g$|gcc-[0-9]+-base$)' | grep -v -E '^libperl' | sort -u \
    | grep -v -x -F -f <(printf '%s\n' "${want[@]}") || true)
  want+=("${frontier[@]}")
done
say "downloading ${#want[@]} packages: ${want[*]}"
(cd "$D/debs" && apt-get "${apt[@]}" download -qq "${want[@]}")
for deb in "$D"/debs/*.deb; do dpkg -x "$deb" "$D/root"; done
# Newer releases keep /lib's files under /usr (merged /usr): the loader asked for in /lib is found there.
[ -e "$D/root/lib" ] || ln -s usr/lib "$D/root/lib"

say "aarch64 wheels of numpy, gymnasium and $pin"
python3 -m pip download -q --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 --python-version "$V" \
  --only-binary=:all: numpy gymnasium "$pin" -d "$D/wheels" 2>&1 \
  | { grep -v "is ignored" || true; }  # a pip.conf's local index that is absent is only a warning
for w in "$D"/wheels/*.whl; do python3 -m zipfile -e "$w" "$D/site"; done
cat > "$D/python" <<EOS
#!/bin/bash
PYTHONPATH="$D/site\${PYTHONPATH:+:\$PYTHONPATH}" exec qemu-aarch64-static -L "$D/root" "$D/root/usr/bin/python$V" "\$@"
EOS
chmod +x "$D/python"
"$D/python" -c "import platform, sys, numpy, ale_py, gymnasium
print('arm64 python ready:', platform.machine(), sys.version.split()[0], 'numpy', numpy.__version__,
      'ale-py', ale_py.__version__, 'gymnasium', gymnasium.__version__)"
touch "$D/.ready"
say "done: $D/python"
