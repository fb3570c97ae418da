#!/usr/bin/env bash
# One GPU call for the TTI CPML layer on CUDA: build for sm_90, the TTI gpu tests (every family
# and the CPML layer against the CPU reference), the sponge against the CPML at 512^3 and 1000^3
# on the chosen kernel, and Nsight Compute's view of the layer's kernels at 512^3 (one step).
# Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_tti_cpml.sh
# Environment: KERNEL (default swic_split_tma:32x8x64), SHAPES (default 512,1000), SKIP_TESTS=1,
# SKIP_NCU=1.
set -uo pipefail
out=${OUT:-/tmp}
kernel=${KERNEL:-swic_split_tma:32x8x64}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "commit ${MINIMOD_COMMIT:-unknown} sources $(bash scripts/source_fingerprint.sh) $(date -u +%FT%TZ)"
start=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DMINIMOD_COMMIT="${MINIMOD_COMMIT:-unknown}" > "$out/cmake.log" 2>&1 &&
  cmake --build build -j16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
grep -A2 "tti_cpml" "$out/build.log" | grep -E "Used" | sort | uniq -c
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  OMP_NUM_THREADS=4 ctest --test-dir build -R "CudaTti|TtiCpml|Cpml" -j4 --output-on-failure > "$out/ctest-tti.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Skipped" "$out/ctest-tti.log"
  echo "tests: $(( $(date +%s) - start )) s"
fi
echo "== acoustic_tti, $kernel: sponge and CPML layer"
for layer in sponge cpml; do
  build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$kernel" --shapes "${SHAPES:-512,1000}" \
    --steps 20 --set boundary.pml.tti=$layer 2>&1 | tee "$out/bench-$layer.log" | grep '^|' | sed "s/^/$layer /"
done
if [ "${SKIP_NCU:-0}" != 1 ] && command -v ncu > /dev/null; then
  echo "== ncu, the CPML layer's kernels (512^3, one step: six slabs each)"
  ncu --kernel-name regex:"tti_cpml|swic_split" --launch-skip 13 --launch-count 13 \
    --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
    build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$kernel" --shapes 512 --steps 3 \
    --set boundary.pml.tti=cpml > "$out/ncu-cpml.log" 2>&1
  grep -E "^  [a-zA-Z_:<>]+.*\(|^    Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Th|Achieved Occupancy" "$out/ncu-cpml.log" | head -90
fi
echo "total: $(( $(date +%s) - start )) s"
