#!/usr/bin/env bash
# One GPU call for swic_split_tma's constant-axis form (session 29): build for sm_90, the TTI gpu
# tests, swic_split_tma on 2 ranks, then the bench at 1000^3 with an 8-point layer on the bench's
# medium (one tilted axis everywhere: the constant-axis form) and on the same medium with the tilt
# 30 deg above 10 km and 31 deg below (a varying axis: the split form), sponge and CPML; the
# table's rows name the form ("constant axis" / "varying axis").
# Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h200_tti_axis.sh
# Environment: SKIP_TESTS=1; AXIS_KERNELS (the constant-axis rows' kernels, default every
# swic_split_tma tile), SPLIT_KERNELS (the varying-axis rows', default 32x16x64; none: no such
# rows), LAYERS (default "sponge cpml"; empty: none), SPLIT_LAYERS (the varying-axis rows' layers, default
# both), CMAKE_EXTRA (more cmake settings), TEST_REGEX (the gpu tests to run, default every TTI
# one), SKIP_MPI=1, PROFILE=TILE (afterwards Nsight Compute's summary of one launch of that tile's
# inner kernel at 512^3 with the sponge: bench/h200_tti_profile.sh), AB_ENV, AB_LAYERS, AB_WIDTHS (below).
set -uo pipefail
out=${OUT:-/tmp}
if [ -n "${CMAKE_EXTRA:-}" ]; then
  cmake -S . -B build ${CMAKE_EXTRA} > "$out/cmake-extra.log" 2>&1 || { tail -20 "$out/cmake-extra.log"; exit 1; }
fi
. bench/build_sm90.sh
grep -B1 -A2 "swic_tti_tensorILi[0-9]*ELi[0-9]*ENS[0-9_]*AxisSums" "$out/build.log" | grep -E "Used|spill" | sort | uniq -c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j8 -E "Autotune|GpuMemory|Emulation" -R "${TEST_REGEX:-Tti|KernelRegistry|mpi_ranks_cuda}" \
    --output-on-failure > "$out/ctest-gpu.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$out/ctest-gpu.log"
  # swic_split_tma on 2 ranks sharing the GPU: VTI models (a constant axis) and varying ones.
  [ "${SKIP_MPI:-0}" = 1 ] || MINIMOD_TEST_BACKEND=cuda MINIMOD_TEST_KERNEL=swic_split_tma:32x16x64 OMP_NUM_THREADS=4 mpirun -n 2 --bind-to none \
    build/tests/mpi_rank_tests --gtest_filter='FreeFaces/*:CpmlFreeFaces/*:TtiCpml*' > "$out/mpi.log" 2>&1
  grep -hsE "PASSED|FAILED  \]" "$out/mpi.log" | sort | uniq -c | sed "s/^/swic_split_tma distributed: /"
  echo "tests: $(( $(date +%s) - start )) s"
fi
axis_kernels=${AXIS_KERNELS:-swic_split_tma:32x16x64,swic_split_tma:32x8x64,swic_split_tma:64x8x64,swic_split_tma:16x8x64,swic_split_tma:32x4x64}
split_kernels=${SPLIT_KERNELS:-swic_split_tma:32x16x64}
varying='model.theta={layers: [{top: 0, value: 30}, {top: 10000, value: 31}]}'
for layer in ${LAYERS-sponge cpml}; do
  common=(--propagator acoustic_tti --backend cuda --shapes 1000 --steps 20 --set boundary.pml.tti=$layer
          --set boundary.pml.width=8)
  build/bench/minimod_bench "${common[@]}" --kernels "$axis_kernels" 2>&1 | tee "$out/bench-axis-$layer.log" | grep -E '^\| acoustic|setup'
  [ "$split_kernels" = none ] || [[ " ${SPLIT_LAYERS:-sponge cpml} " != *" $layer "* ]] ||
    build/bench/minimod_bench "${common[@]}" --kernels "$split_kernels" --set "$varying" 2>&1 |
      tee "$out/bench-split-$layer.log" | grep -E '^\| acoustic|setup'
done
# AB_ENV="A=0 A=1": the layers AB_LAYERS (default the CPML) with the 8- and 27-point layers
# (AB_WIDTHS) and the first constant-axis kernel, once with each setting in the environment, in
# this call.
for layer in ${AB_LAYERS:-cpml}; do
  for width in ${AB_WIDTHS:-8 27}; do
    for setting in ${AB_ENV:-}; do
      echo "$setting:"
      env "$setting" build/bench/minimod_bench --propagator acoustic_tti --backend cuda --shapes 1000 --steps 20 \
        --set boundary.pml.tti=$layer --set boundary.pml.width=$width --kernels "${axis_kernels%%,*}" 2>&1 | grep -E '^\| acoustic|setup'
    done
  done
done
[ -z "${PROFILE:-}" ] || TILE=$PROFILE SKIP_BUILD=1 SKIP_STEP=1 bash bench/h200_tti_profile.sh
echo "total: $(( $(date +%s) - start )) s"
