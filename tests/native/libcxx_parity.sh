#!/usr/bin/env bash
# The ale-py drop-in (AtariVectorEnv) built with Clang and LLVM's libc++ on Linux, against the Linux
# ale-py wheel (built with libstdc++): its no-op draws must still be libstdc++'s
# (native/env/uniform_int.hpp), so its first frames equal ale-py's. Copies the working tree to
# $LIBCXX_TREE (default /tmp/libcxx-tree; the editable build here is left alone), builds the
# extension there (ALE's core too, once, into the build cache under its own key), counts the pixels
# of Breakout's and Pong's reset frames that differ from ale-py's over 20 seeds, then runs
# tests/parity/test_ale_vector.py and ale-py's own suite (tests/contract/test_ale_py_suite.py) on that build.
#   bash tests/native/libcxx_parity.sh [PYTEST_ARGS...]    (default: -m "not slow")
# CHAIN_ALE_REV=<commit> builds native/env/chain_ale.cpp as of that commit instead: the commit
# before uniform_int.hpp shows what libc++'s own distribution gives.
# Needs: the project's venv active (ale-py, pytest), clang, libc++-dev, libc++abi-dev. JOBS
# (default 2) compiles in parallel.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree=${LIBCXX_TREE:-/tmp/libcxx-tree}
jobs=${JOBS:-2}
start=$SECONDS
echo '#include <string>
int main() { return std::string("x").size() == 1 ? 0 : 1; }' | clang++ -x c++ - -stdlib=libc++ -o /dev/null 2> /dev/null \
  || { echo "libcxx_parity.sh: clang++ -stdlib=libc++ cannot link: install clang, libc++-dev and libc++abi-dev"; exit 1; }

mkdir -p "$tree"
# Stamped now (-m): a file put back older than the one it replaces (CHAIN_ALE_REV's) is still rebuilt.
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xmf - -C "$tree"
if [ -n "${CHAIN_ALE_REV:-}" ]; then
  (cd "$root" && git show "$CHAIN_ALE_REV:native/env/chain_ale.cpp") > "$tree/native/env/chain_ale.cpp"
  echo "== native/env/chain_ale.cpp as of $CHAIN_ALE_REV"
fi
cd "$tree"
echo "== building the extension in $tree with clang++ -stdlib=libc++"
# setuptools compiles C++ with CXX (CXXFLAGS, not CFLAGS) and links C++ with LDCXXSHARED, which
# CXX does not replace: libc++ goes on both. No XLA targets, no profile.
libcxx="clang++ -stdlib=libc++"
CC=clang CXX=$libcxx LDSHARED="$libcxx -shared" LDCXXSHARED="$libcxx -shared" SB3_ALE_VEC_PGO=0 SB3_ALE_VEC_XLA=0 \
  SB3_ALE_VEC_JOBS=$jobs python setup.py -q build_ext --inplace > build-libcxx.log 2>&1 \
  || { tail -n 40 build-libcxx.log; exit 1; }
extension=$(ls sb3_ale_vec/_engine*.so)
# Every object built against libc++: none may name libstdc++'s types (std::__cxx11::, std::thread::_State).
if nm -u "$extension" | grep -q -e __cxx11 -e _ZTINSt6thread6_StateE || ! ldd "$extension" | grep -q libc++; then
  echo "libcxx_parity.sh: $extension is not built against libc++ alone (see $tree/build-libcxx.log)"; exit 1
fi
echo "== built $extension in $((SECONDS - start)) s (links $(ldd "$extension" | grep -o 'libc++[^ ]*' | head -n 1))"

export PYTHONPATH=$tree${PYTHONPATH:+:$PYTHONPATH}
python - <<'EOF'
import numpy as np
import sb3_ale_vec
from ale_py.vector_env import AtariVectorEnv as Reference

assert sb3_ale_vec.__file__.startswith(__import__("os").getcwd()), sb3_ale_vec.__file__
for game in ("breakout", "pong"):
    differing, resets = [], 0
    for seed in range(20):
        ref, ours = Reference(game, 2), sb3_ale_vec.AtariVectorEnv(game, 2)
        try:
            a, b = ref.reset(seed=seed)[0], ours.reset(seed=seed)[0]
        finally:
            ref.close()
            ours.close()
        differing.append(int((a != b).sum()))
        resets += len(a)
    print(f"== {game}: reset frames of {resets} envs (seeds 0-19), pixels differing from ale-py's: "
          f"{sum(differing)} in all, {sum(d > 0 for d in differing)} of 20 seeds differ")
EOF
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-m "not slow")
files=(tests/parity/test_ale_vector.py tests/contract/test_ale_py_suite.py)
echo "== pytest ${args[*]} ${files[*]}"
status=0
python -m pytest -q -p no:cacheprovider "${args[@]}" "${files[@]}" || status=$?
echo "== done in $((SECONDS - start)) s"
exit $status
