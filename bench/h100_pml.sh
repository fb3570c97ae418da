#!/usr/bin/env bash
# The PML kernel's effect on one H100: gpu tests, then Minimod's benchmark case with the
# streaming PML (default) and the one-thread-per-point PML (MINIMOD_PML_POINT=1) in the same call,
# and the inner region alone (no PML). Logs to $OUT when set.
set -uo pipefail
out=${OUT:-/tmp}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/cmake.log" 2>&1 &&
  cmake --build build -j16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  ctest --test-dir build -L gpu -j3 -E "Autotune|GpuMemory" > "$out/ctest-a.log" 2>&1
  ctest --test-dir build -R "Autotune|GpuMemory" -j1 > "$out/ctest-b.log" 2>&1  # timing tests alone
  grep -hE "tests passed|\*\*\*Failed" "$out/ctest-a.log" "$out/ctest-b.log"
fi
kernels=${BENCH_KERNELS:-semi:64x8x64,semi:64x8x256,swic:32x8x256}
for point in 1 0; do
  echo "== MINIMOD_PML_POINT=$point"
  MINIMOD_PML_POINT=$point build/bench/minimod_bench --backend cuda --kernels "$kernels" \
    --shapes ${BENCH_SHAPES:-1000,512,1200x800x600} --steps 100 2>&1 | tee "$out/pml-point$point.log"
done
echo "== inner region only (source.frequency=1000: Minimod's ndamp = 0)"
build/bench/minimod_bench --backend cuda --kernels "$kernels" --shapes 1000 --steps 100 \
  --set source.frequency=1000 2>&1 | tee "$out/inner-only.log"
