#!/usr/bin/env bash
# The 16-thread figures (docs/benchmarks.md) on a machine with many cores and no network: Python 3.12,
# so everything travels as cp312 wheels in .whl/ (ignored by git).
#
#   bash tools/device_bench.sh prepare OLD_TREE   # here: the wheels of this tree and of the tree to compare
#   bash tools/device_bench.sh run                # there, with this tree and .whl/ copied over; results in $OUT
#   OLD=OLD_TREE bash tools/device_bench.sh run 2 0.1   # here, a dry run (this venv's build, OLD_TREE as --old)
#
# `run [THREADS] [SCALE]` measures, each phase bounded so that what ran is kept: the side-by-side
# table (Breakout, Pong, N = 16, 64, resets ahead on and inline, SB3's front-end, the --old build,
# ale-py, both act() limits), then the loops users run (bench.loops: tight, idle:1, busy:1), then
# `bench --ppo` on the GPU. Outputs go to $OUT (default /tmp/device_bench).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-run}

if [ "$what" = prepare ]; then
  old=${2:?the tree to compare with, e.g. a worktree of the previous release}
  py=${PY312:-$HOME/.pyenv/versions/3.12.1/bin/python}
  rm -rf .whl/new .whl/old && mkdir -p .whl/new .whl/old
  exclude=$(git rev-parse --git-path info/exclude); mkdir -p "$(dirname "$exclude")"
  grep -qx '/.whl/' "$exclude" 2>/dev/null || echo /.whl/ >> "$exclude"
  # ale-py pinned as pyproject pins it; the device image has numpy, torch, cloudpickle, opencv, pandas.
  ale=$(grep -o '"ale-py==[^"]*"' pyproject.toml | head -1 | tr -d '"')
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
    "$ale" gymnasium stable-baselines3 farama-notifications || exit 1
  "$py" -m pip wheel -q --no-deps -w .whl/new . && "$py" -m pip wheel -q --no-deps -w .whl/old "$old" || exit 1
  du -sh .whl
  exit 0
fi

threads=${2:-16} scale=${3:-1}
if [ -n "${OUT:-}" ]; then  # there (OUT given: the folder the results go to): install the carried wheels
  pip() { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir "$@"; }
  pip --target /tmp/site .whl/*.whl .whl/new/*.whl && pip --target /tmp/old .whl/old/*.whl || exit 1
  export PYTHONPATH=/tmp/site
  old=/tmp/old
else
  old=${OLD:?the tree to compare with: OLD=TREE} OUT=/tmp/device_bench
fi
mkdir -p "$OUT"
old=$(cd "$old" && pwd)
export PYTHONUNBUFFERED=1
cd /tmp  # not the source tree, whose sb3_ale_vec/ would shadow the installed package
lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\)"
python3 -c "import sb3_ale_vec, ale_py, torch; print(sb3_ale_vec.__file__, ale_py.__version__, torch.__version__, torch.cuda.is_available())"
num() { python3 -c "x = max($2, round($1 * $scale, 1)); print(int(x) if x == int(x) else x)"; }
SECONDS=0
timeout 170 python3 -m sb3_ale_vec.bench --game breakout,pong --num-envs 16,64 --threads "$threads" \
  --repeats "$(num 5 2)" --seconds "$(num 1.5 0.2)" --old "$old" \
  --peers "sb3_ale_vec,sb3_ale_vec inline,sb3_ale_vec sb3,ale_py,act() this build,act() ale-py" \
  2>&1 | grep -v measuring | tee "$OUT/table.txt"
pkill -9 -f sb3_ale_vec.bench; echo "== the table done at $SECONDS s"
timeout 250 python3 -m sb3_ale_vec.bench.loops --loops tight,idle:1,busy:1 --num-envs 16,64 \
  --threads "$threads" --old "$old" --rounds 3 --frames "$(num 8000 500)" 2>&1 | tee "$OUT/loops.txt"
pkill -9 -f sb3_ale_vec.bench; echo "== the loops done at $SECONDS s"
device=$(python3 -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')")
timeout 100 python3 -m sb3_ale_vec.bench --ppo 4096 --game breakout --num-envs 16 --repeats 1 \
  --device "$device" 2>&1 | tee "$OUT/ppo.txt"
echo "== bench --ppo done at $SECONDS s"
