#!/usr/bin/env bash
# One GPU call for the TTI CPML layer on CUDA: build for sm_90, the TTI gpu tests (every family
# and the CPML layer against the CPU reference), the sponge against the CPML at 512^3 and 1000^3
# on the chosen kernel, and Nsight Compute's view of the layer's kernels at 512^3 (one step).
# Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_tti_cpml.sh
# Environment: KERNEL (default swic_split_tma:32x16x64), SHAPES (default 512,1000), SKIP_TESTS=1,
# GPU_TESTS (a ctest -R regex for the gpu-labelled tests; default all),
# SKIP_NCU=1, MPI=1 (configs/tti.yaml with the CPML on the GPU, one process and 2 ranks sharing
# the GPU: the seismograms compared), SKIP_MPI=1 (no distributed test), BENCH_KERNELS (the bench's
# kernels; default KERNEL), BENCH_SET (more --set for the bench, separated by spaces, e.g.
# "model.theta.constant=0 boundary.pml.width=8": VTI, an 8-point layer; Nsight Compute's run takes
# them too).
set -uo pipefail
out=${OUT:-/tmp}
kernel=${KERNEL:-swic_split_tma:32x16x64}
. bench/build_sm90.sh
grep -A2 "cpml" "$out/build.log" | grep -E "Used|spill" | sort | uniq -c
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # Every gpu-labelled test (host emulations left to CI), then the CPML's CPU tests.
  OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j8 -E "Autotune|GpuMemory|Emulation" -R "${GPU_TESTS:-.}" \
    --output-on-failure > "$out/ctest-gpu.log" 2>&1
  OMP_NUM_THREADS=4 ctest --test-dir build -R "TtiCpml|TtiLayer.Cpml" -j4 --output-on-failure > "$out/ctest-tti.log" 2>&1
  # Distributed TTI on the GPU with the chosen family (its own CPML launch where it has one): 2
  # ranks sharing the GPU, every decomposition against one rank.
  [ "${SKIP_MPI:-0}" = 1 ] ||
    MINIMOD_TEST_BACKEND=cuda MINIMOD_TEST_KERNEL="$kernel" OMP_NUM_THREADS=4 OMPI_ALLOW_RUN_AS_ROOT=1 \
      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --bind-to none build/tests/mpi_rank_tests \
      --gtest_filter='FreeFaces/*:CpmlFreeFaces/*' > "$out/mpi-tti-kernel.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$out/ctest-gpu.log"
  grep -hsE "PASSED|FAILED  \]" "$out/mpi-tti-kernel.log" | sort | uniq -c | sed "s/^/$kernel distributed TTI: /"
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Skipped" "$out/ctest-tti.log"
  echo "tests: $(( $(date +%s) - start )) s"
fi
bench_kernels=${BENCH_KERNELS:-$kernel}
extra=()
for setting in ${BENCH_SET:-}; do extra+=(--set "$setting"); done
echo "== acoustic_tti, $bench_kernels: sponge and CPML layer ${BENCH_SET:-}"
build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$bench_kernels" --shapes "${SHAPES:-512,1000}" \
  --steps 20 --set boundary.pml.tti=sponge "${extra[@]}" 2>&1 | tee "$out/bench-sponge.log" | grep '^|' | sed "s/^/sponge /"
build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$bench_kernels" --shapes "${SHAPES:-512,1000}" \
  --steps 20 --set boundary.pml.tti=cpml "${extra[@]}" 2>&1 | tee "$out/bench-cpml.log" | grep '^|' | sed "s/^/cpml /"
if [ "${SKIP_NCU:-0}" != 1 ] && command -v ncu > /dev/null; then
  echo "== ncu, the CPML layer's kernels (512^3, one step: six slabs each)"
  ncu --kernel-name regex:"tti_cpml|tti|streaming" --launch-skip 13 --launch-count 13 \
    --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
    build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$kernel" --shapes 512 --steps 3 \
    --set boundary.pml.tti=cpml "${extra[@]}" > "$out/ncu-cpml.log" 2>&1
  # kernel, grid, duration, DRAM %, SM %, occupancy: one line a launch
  awk '/^  [^ ].*\(.*Context/ { if (name) print name, d, dram, sm, occ; name = $1; sub(/.*::/, "", name); sub(/\(.*/, "", name); d = dram = sm = occ = "" }
       /^    Duration/ { d = $(NF) $(NF-1) } /^    DRAM Throughput/ { dram = "dram=" $NF "%" }
       /^    Compute \(SM\) Throughput/ { sm = "sm=" $NF "%" } /Achieved Occupancy/ { occ = "occ=" $NF "%" }
       END { if (name) print name, d, dram, sm, occ }' "$out/ncu-cpml.log"
fi
if [ "${MPI:-0}" = 1 ]; then
  echo "== configs/tti.yaml, CPML, cuda $kernel: one process and mpirun -n 2 (one GPU)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=4
  set_cpml=(--set boundary.pml.tti=cpml --set execution.backend=cuda --set "execution.kernel=${kernel%%:*}")
  build/minimod --config configs/tti.yaml "${set_cpml[@]}" --set output.file="$out/tti-1.h5" 2>&1 | tail -2
  mpirun -n 2 --bind-to none build/minimod --config configs/tti.yaml "${set_cpml[@]}" \
    --set output.file="$out/tti-2.h5" 2>&1 | tail -2
  python3 -c "
import h5py, numpy as np, sys
a, b = (h5py.File(sys.argv[i])['/seismograms/p'][()] for i in (1, 2))
print('seismograms p: max |1 rank - 2 ranks| / max |1 rank| = %.3g (max %.3g)' % (np.abs(a - b).max() / np.abs(a).max(), np.abs(a).max()))
" "$out/tti-1.h5" "$out/tti-2.h5"
fi
echo "total: $(( $(date +%s) - start )) s"
