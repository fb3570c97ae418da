#!/usr/bin/env bash
# One GPU call for a working session: build for sm_90, the gpu-labelled tests (the distributed
# TTI ones repeated, with several OpenMP threads per rank), Minimod's isotropic case and the TTI
# case on the chosen kernels, `kernel: auto` for both, and optionally an Nsight Compute profile of
# the inner and PML kernels. Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_session.sh
# Environment: ISO_KERNELS, TTI_KERNELS, SHAPES (default 1000), REPEAT_TTI_MPI (default 1),
# SKIP_TESTS=1, PROFILE=1 (ncu on a 512^3 run; PROFILE_SPEC, PROFILE_KERNELS), SKIP_AUTO=1, SKIP_UNFUSED=1,
# SKIP_CPML=1 (the CPML table, point vs streamed passes: CPML_KERNELS, CPML_SHAPES).
# SKIP_TTI=1, SKIP_ISO=1, TTI_SHAPES, PROFILE_TTI=1 (ncu on the TTI kernel; PROFILE_TTI_SPEC),
# PROFILE_TTI_SOURCE=1 (its warp-stall samples per SASS instruction, by bench/h100_probe.sh:
# $OUT/stall-<spec>.csv.gz).
# Families marked unverified are in the gpu tests and the tables but not in
# `auto` until the registry's mark is removed.
set -uo pipefail
out=${OUT:-/tmp}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
iso=${ISO_KERNELS:-semi_tma:64x32x32,semi_tma:64x32x64,semi_tma:64x32x128,semi_tma:64x32x256,temporal:32x16x1000,temporal:32x16x256}
tti=${TTI_KERNELS:-swic:32x4x64,swic_split:32x4x64}
shapes=${SHAPES:-1000}
. bench/build_sm90.sh
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # The host emulations (labelled gpu, run by CI too) are left to CI; 8 test processes share the GPU.
  # Two OpenMP threads each: 8 processes of 16 spinning threads made a 0.2 s test take 52 s.
  OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j8 -E "Autotune|GpuMemory|Emulation" --output-on-failure > "$out/ctest-gpu.log" 2>&1
  ctest --test-dir build -R "Autotune|GpuMemory" --output-on-failure > "$out/ctest-timing.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Skipped" "$out/ctest-gpu.log" "$out/ctest-timing.log"
  # Distributed TTI on CUDA, 2 and 4 ranks sharing the GPU, several OpenMP threads per rank,
  # repeated (it once differed run to run: uploads racing memsets, fixed in cb10b5e).
  for r in $(seq "${REPEAT_TTI_MPI:-1}"); do
    for np in 2 4; do
      OMP_NUM_THREADS=4 MINIMOD_TEST_BACKEND=cuda OMPI_MCA_rmaps_base_oversubscribe=1 \
        mpirun -np $np build/tests/mpi_rank_tests --gtest_filter='*TtiDistributed*' > "$out/tti-mpi-$np-$r.log" 2>&1
      echo "distributed TTI on CUDA, $np ranks, try $r: exit $? ($(grep -c '\[       OK' "$out/tti-mpi-$np-$r.log") OK)"
    done
  done
  grep -h -A6 "Failure" "$out"/tti-mpi-*.log | head -30
  echo "tests: $(( $(date +%s) - start )) s"
fi
if [ "${SKIP_ISO:-0}" != 1 ]; then
  echo "== acoustic_iso, Minimod's case"
  build/bench/minimod_bench --backend cuda --kernels "$iso" --shapes "$shapes" --steps 100 2>&1 | tee "$out/bench-iso.log" | grep '^|\|^#'
fi
if [ "${SKIP_UNFUSED:-0}" != 1 ]; then
  echo "== acoustic_iso, Minimod's case, Minimod's layer in its own kernel (MINIMOD_FUSED_LAYER=0)"
  MINIMOD_FUSED_LAYER=0 build/bench/minimod_bench --backend cuda --kernels "${UNFUSED_KERNELS:-semi_tma_fused:32x16x64}" \
    --shapes "$shapes" --steps 100 2>&1 | tee "$out/bench-iso-unfused.log" | grep '^|'
fi
if [ "${SKIP_CPML:-0}" != 1 ]; then
  echo "== acoustic_iso with the CPML (mode=standard: the layer pads the model), point vs streamed CPML passes"
  for point in 1 0; do
    MINIMOD_CPML_POINT=$point build/bench/minimod_bench --backend cuda --kernels "${CPML_KERNELS:-streaming:64x8x32}" \
      --shapes "${CPML_SHAPES:-241x141x141,512}" --steps 100 --set mode=standard 2>&1 | grep '^|' | sed "s/^/point=$point /"
  done
fi
if [ "${SKIP_TTI:-0}" != 1 ]; then
  echo "== acoustic_tti"
  build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "$tti" --shapes "${TTI_SHAPES:-$shapes}" \
    --steps 20 2>&1 | tee "$out/bench-tti.log" | grep '^|\|^#'
fi
if [ "${SKIP_AUTO:-0}" != 1 ]; then
  echo "== kernel: auto, acoustic_iso 1000^3"
  MINIMOD_AUTOTUNE_CACHE= build/minimod --config configs/minimod-benchmark.yaml \
    --set 'grid.shape=[1000,1000,1000]' --set 'source.position=[10000,10000,10000]' \
    --set time.steps=300 --set execution.kernel=auto --set output.file=/tmp/auto.h5 \
    --set output.overwrite=true --set output.final_wavefield=false 2>&1 | tee "$out/auto-iso.log" | grep -i "auto\|summary"
fi
if [ "${PROFILE:-0}" = 1 ] && command -v ncu > /dev/null; then
  echo "== ncu (512^3)"
  ncu --kernel-name regex:"${PROFILE_KERNELS:-semi_tma_iso|pml_stream}" --launch-skip 4 --launch-count 2 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    build/bench/minimod_bench --backend cuda --kernels "${PROFILE_SPEC:-semi_tma:64x32x32}" --shapes 512 --steps 3 > "$out/ncu.log" 2>&1
  grep -E "^  [a-z_]+.*\(|Throughput|Duration|Busy|Achieved Occupancy|Stall|Warp Cycles|Registers|Bandwidth" "$out/ncu.log" | head -80
fi
if [ "${PROFILE_TTI:-0}" = 1 ] && command -v ncu > /dev/null; then
  echo "== ncu, TTI (512^3)"
  ncu --kernel-name regex:"swic_tti" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',dram__bytes_read.sum,dram__bytes_write.sum \
    build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels "${PROFILE_TTI_SPEC:-swic_split:32x4x64}" \
    --shapes 512 --steps 3 > "$out/ncu-tti.log" 2>&1
  grep -E "Throughput|Duration|Achieved Occupancy|Warp Cycles|Block Limit|dram__bytes" "$out/ncu-tti.log" | head -30
  echo "-- stalls (warps per issued instruction), largest first"
  grep -E "smsp__average_warps_issue_stalled_" "$out/ncu-tti.log" | awk '{print $NF, $1}' | sort -rn | head -12
fi
if [ "${PROFILE_TTI_SOURCE:-0}" = 1 ]; then
  # Warp-stall samples per SASS instruction of the TTI kernel (CSV, gzipped, in $out), by the probe.
  echo "== ncu source counters, TTI (512^3)"
  PROBE_SPECS= PROBE_SKIP_SLABS=1 PROBE_STALL_SPEC="${PROFILE_TTI_SPEC:-swic_split:32x4x64}" PROBE_STALL_KERNEL=swic_tti \
    PROBE_STALL_SKIP=2 PROBE_STALL_SHAPE=512 PROBE_STALL_ARGS="--propagator acoustic_tti" bash bench/h100_probe.sh
fi
echo "total: $(( $(date +%s) - start )) s"
