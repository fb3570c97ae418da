#!/usr/bin/env bash
# One session on the 2xH200 machine for the distributed results (issue #4): build, the gpu tests
# (including 2 ranks on 2 GPUs through NCCL, gmem bitwise), 2 ranks with the fastest families and
# the host transport, then weak scaling at 1000^3 per GPU along x, y and z (NCCL) and along x with
# the host transport, along x, y and z. Run from the repo root; logs under $OUT.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) OUT=/tmp/out bash bench/h200x2_mpi.sh [tests|scaling|all]
# (two calls fit the 10-minute limit per command: `tests` builds; `scaling` reuses the build)
set -uo pipefail
phase=${1:-all}
out=${OUT:-/tmp}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
if [[ $phase != scaling ]]; then
nvidia-smi topo -m | head -4
cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -i nccl "$out/configure.log"
cmake --build build -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -v '^ptxas\|bytes stack' "$out/build.log" | tail -40; exit 1; }
echo "== gpu tests"
ctest --test-dir build -L gpu --output-on-failure > "$out/gpu-tests.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$out/gpu-tests.log" | tail -8
echo "== 2 ranks, other families and the host transport"
for spec in "semi auto" "streaming auto" "gmem host" "semi host"; do
  set -- $spec
  MINIMOD_TEST_BACKEND=cuda MINIMOD_TEST_KERNEL=$1 MINIMOD_TEST_TRANSPORT=$2 \
    mpirun -np 2 --bind-to none build/tests/mpi_rank_tests --gtest_filter='PmlKinds/*' \
    > "$out/mpi-$1-$2.log" 2>&1
  echo "kernel $1 transport $2: exit $? $(grep -c '\[       OK \]' "$out/mpi-$1-$2.log") ok, $(grep -c 'Failure' "$out/mpi-$1-$2.log") failures"
  grep -A3 Failure "$out/mpi-$1-$2.log" | head -8
done
fi
if [[ $phase != tests ]]; then
echo "== weak scaling"
export MINIMOD_AUTOTUNE_CACHE=$out/autotune.tsv
RANKS="1 2" AXES="x y z" STEPS=${STEPS:-300} OUT_DIR=$out/ws-nccl bash bench/weak_scaling.sh 2>&1 | grep -A8 "^axis"
RANKS="1 2" AXES="x y z" STEPS=${STEPS:-300} OUT_DIR=$out/ws-host EXTRA_SET="--set execution.transport=host" \
  bash bench/weak_scaling.sh 2>&1 | grep -A8 "^axis"
fi
