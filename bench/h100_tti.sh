#!/usr/bin/env bash
# One GPU session for the acoustic-TTI results in bench/results/: build, the gpu-labelled tests
# (every TTI family against the CPU reference), the family table on the TTI benchmark case
# (bench/minimod_bench.cpp --propagator acoustic_tti) and `kernel: auto`. Run on the GPU machine
# from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_tti.sh
set -uo pipefail
out=${OUT:-/tmp}
kernels=${BENCH_KERNELS:-gmem,smem:32x4x2,smem:32x8x1,semi:32x4x64,semi_sync:32x4x64,semi:32x8x64,swic:32x8x64,swic:32x4x64,swic:64x4x64,swic:16x8x64}
shapes=${BENCH_SHAPES:-512,1000}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DMINIMOD_COMMIT="${MINIMOD_COMMIT:-unknown}" > "$out/cmake.log" 2>&1 &&
  cmake --build build -j16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -A2 "_tti" "$out/build.log" | grep -E "Used|spill" | sort | uniq -c | head -20
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  ctest --test-dir build -L gpu ${CTEST_ARGS:-} --output-on-failure > "$out/ctest.log" 2>&1  # -j1: timing tests
  grep -E "tests passed|Failed|FAILED|Failure" "$out/ctest.log" | head -30
fi
echo "== TTI family table"
build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$kernels" --shapes "$shapes" \
  --steps ${BENCH_STEPS:-20} 2>&1 | tee "$out/tti-bench.log"
echo "== kernel: auto (TTI, 1000^3 grid)"
MINIMOD_AUTOTUNE_CACHE=$out/autotune.tsv build/minimod --config configs/tti.yaml \
  --set 'grid.shape=[946,946,946]' --set 'source.position=[4730,4730,4730]' --set 'grid.spacing=[10,10,10]' \
  --set boundary.pml.width=27 --set time.duration=${AUTO_DURATION:-0.05} --set execution.kernel=auto --set execution.backend=cuda \
  --set output.file=/tmp/tti-auto.h5 --set output.snapshots.every=0 --verbose 2>&1 | tee "$out/tti-auto.log" | grep -v '^step' | tail -40
