#!/usr/bin/env bash
# One GPU call for boundary.pml.tti_axis (session 37): build for sm_90, every gpu test
# (`ctest -L gpu -j4`; CudaTti.AVerticalLayerAxis... checks the vertical layer axis against the
# CPU reference), then the bench at 1000^3 with an 8-point CPML on the bench's medium (one tilted
# axis): the model's axis in the layer (the constant-axis form) against the vertical one (the
# varying-axis forms), and the sponge. The table's lines come last, also in $OUT/summary.txt.
# Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h200_tti_layer_axis.sh
# Environment: SKIP_TESTS=1; VERTICAL_KERNELS (default swic_split_tma:32x16x64,swic_split_tma:32x8x512).
set -uo pipefail
out=${OUT:-/tmp}
. bench/build_sm90.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j4 --output-on-failure > "$out/ctest-gpu.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$out/ctest-gpu.log"
  echo "tests: $(( $(date +%s) - start )) s"
fi
bench() {  # label, then minimod_bench arguments
  local label=$1; shift
  build/bench/minimod_bench --propagator acoustic_tti --backend cuda --shapes 1000 --steps 20 \
    --set boundary.pml.width=8 "$@" 2>&1 | tee -a "$out/bench.log" | grep -E '^\| acoustic' | sed "s/^/$label: /" | tee -a "$out/summary.txt"
}
bench "model axis" --set boundary.pml.tti=cpml --kernels swic_split_tma:32x8x512
bench "vertical axis" --set boundary.pml.tti=cpml --set boundary.pml.tti_axis=vertical \
  --kernels "${VERTICAL_KERNELS:-swic_split_tma:32x16x64,swic_split_tma:32x8x512}"
bench "sponge" --set boundary.pml.tti=sponge --kernels swic_split_tma:32x8x256
bench "model axis, 6 points" --set boundary.pml.tti=cpml --set boundary.pml.width=6 --kernels swic_split_tma:32x8x512
echo "total: $(( $(date +%s) - start )) s"
echo "== summary"; cat "$out/summary.txt"
