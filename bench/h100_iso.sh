#!/usr/bin/env bash
# One GPU session for the acoustic-isotropic results in bench/results/: build, gpu tests, the
# family table on Minimod's case, the inner-region-only table (no PML), kernel: auto, and the
# snapshot overhead. Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_iso.sh
set -uo pipefail
out=${OUT:-/tmp}
kernels=${BENCH_KERNELS:-gmem,streaming:32x16x64,streaming:32x16x256,semi:64x8x64,semi:64x8x256,semi_sync:64x8x256,swic:32x8x64,swic:32x8x256}
BENCH_KERNELS=$kernels BENCH_SHAPES=${BENCH_SHAPES:-512,1000,1200x800x600} BENCH_STEPS=100 \
  JOBS=16 bash scripts/gpu-check.sh --gpu-only 2>&1 | grep -v '^\[' > "$out/gpu-check.log"
tail -60 "$out/gpu-check.log"
echo "== inner region only (no PML: source.frequency=1000 gives Minimod's ndamp = 0)"
build/bench/minimod_bench --backend cuda --kernels "$kernels" --shapes 1000 --steps 100 \
  --set source.frequency=1000 2>&1 | tee "$out/inner-only.log"
echo "== kernel: auto"
MINIMOD_AUTOTUNE_CACHE=$out/autotune.tsv build/minimod --config configs/minimod-benchmark.yaml \
  --set 'grid.shape=[1000,1000,1000]' --set 'source.position=[10000,10000,10000]' \
  --set time.steps=300 --set execution.kernel=auto --set output.file=/tmp/auto.h5 \
  --set output.overwrite=true --set output.final_wavefield=false 2>&1 | tee "$out/auto.log" | grep -v '^step'
echo "== snapshots (512^3, stride 2, every 50 steps) vs none"
for every in 0 50; do
  build/minimod --config configs/minimod-benchmark.yaml --set 'grid.shape=[512,512,512]' \
    --set 'source.position=[5120,5120,5120]' --set time.steps=1000 --set execution.kernel=${SNAP_KERNEL:-semi:64x8x64} \
    --set output.file=/tmp/snap$every.h5 --set output.overwrite=true --set output.final_wavefield=false \
    --set output.snapshots.every=$every --set 'output.snapshots.stride=[2,2,2]' --quiet 2>&1 | tee -a "$out/snapshots.log"
done
