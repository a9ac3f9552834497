#!/usr/bin/env bash
# An aarch64 CPython 3.13 run by qemu-user on this x86-64 machine, for testing the cp313 AArch64
# wheel (tests/native/aarch64_wheel.sh, tools/wheels.py --test): what ../shared/tools/arm64-python.sh
# makes for 3.11 from Debian 12, made from Debian 13's packages (its python3.13 and the glibc it
# needs), downloaded with a private apt list so this machine's own sources stay as they are.
#   bash tests/native/arm64_python313.sh [DIR]     (default /work/arm64py313)
# Gives DIR/python (a launcher), DIR/root (the packages unpacked) and DIR/site (aarch64 wheels of
# numpy, ale-py 0.12.1 and gymnasium). Needs qemu-user-static, and arm64 as a dpkg architecture.
set -euo pipefail
D=$(realpath -m "${1:-/work/arm64py313}")
lists=$D/apt-lists
mkdir -p "$D/debs" "$D/root" "$D/site" "$D/wheels" "$lists/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  > "$D/sources.list"
apt_private=(-o "Dir::Etc::sourcelist=$D/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$lists")
dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
apt-get "${apt_private[@]}" update -qq
cd "$D/debs"
for p in python3.13-minimal libpython3.13-minimal libpython3.13-stdlib libpython3.13 libc6 zlib1g libexpat1 \
  libffi8 libssl3t64 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1 libncursesw6 libtinfo6 libreadline8t64 \
  libstdc++6 libgcc-s1 libcrypt1 libzstd1 libmpdec4 libdb5.3t64 libgdbm6t64 libnsl2 libtirpc3t64; do
  apt-get "${apt_private[@]}" download -qq "$p:arm64" 2> /dev/null
done
for deb in *.deb; do dpkg -x "$deb" "$D/root"; done
# Debian 13's files are under /usr (merged /usr): its loader and libraries looked up in /lib must be found
# there, not in this machine's own arm64 /lib (Debian 12's older glibc).
[ -e "$D/root/lib" ] || ln -s usr/lib "$D/root/lib"
python3 -m pip download -q --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 --python-version 3.13 \
  --only-binary=:all: numpy ale-py==0.12.1 gymnasium -d "$D/wheels" 2> /dev/null
for w in "$D"/wheels/*.whl; do python3 -m zipfile -e "$w" "$D/site"; done
cat > "$D/python" <<EOS
#!/bin/bash
PYTHONPATH="$D/site\${PYTHONPATH:+:\$PYTHONPATH}" exec qemu-aarch64-static -L "$D/root" "$D/root/usr/bin/python3.13" "\$@"
EOS
chmod +x "$D/python"
"$D/python" -c "import platform, sys, numpy, ale_py; print('arm64 python ready:', platform.machine(), sys.version.split()[0], 'ale-py', ale_py.__version__)"
