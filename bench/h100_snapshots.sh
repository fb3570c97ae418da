#!/usr/bin/env bash
# H100 session for issue #3's snapshot goal and a kernel-time profile of Minimod's 1000^3 case:
# build, gpu tests, then 512^3 / 1000 steps with and without a stride-2 snapshot every 50 steps
# (twice each, alternating), then nsys kernel statistics of 100 steps at 1000^3 when nsys exists.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) OUT=/tmp/out bash bench/h100_snapshots.sh
set -uo pipefail
out=${OUT:-/tmp}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 &&
  cmake --build build -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -v '^ptxas\|bytes stack' "$out/build.log" | tail -30; exit 1; }
ctest --test-dir build -L gpu --output-on-failure > "$out/gpu-tests.log" 2>&1
grep -E "tests passed|\*\*\*Failed" "$out/gpu-tests.log" | tail -5
snap() {  # every kernel
  build/minimod --config configs/minimod-benchmark.yaml --set 'grid.shape=[512,512,512]' \
    --set 'source.position=[5120,5120,5120]' --set time.steps=1000 --set execution.kernel="$2" \
    --set output.file=${SNAP_DIR:-/tmp}/snap$1.h5 --set output.overwrite=true --set output.final_wavefield=false \
    --set output.snapshots.every=$1 --set 'output.snapshots.stride=[2,2,2]' --quiet | grep summary
}
for rep in 1 2; do for every in 0 50; do snap $every semi:64x8x64; done; done
echo "== the same into /dev/shm (memory, not disk)"
for every in 0 50; do SNAP_DIR=/dev/shm snap $every semi:64x8x64; done
rm -f /dev/shm/snap*.h5 /dev/shm/snap*.xmf
if command -v nsys >/dev/null; then
  nsys profile -o "$out/prof" --force-overwrite true build/minimod --config configs/minimod-benchmark.yaml \
    --set 'grid.shape=[1000,1000,1000]' --set 'source.position=[10000,10000,10000]' --set time.steps=100 \
    --set execution.kernel=semi:64x8x64 --set output.file=/tmp/p.h5 --set output.overwrite=true --quiet > /dev/null 2>&1
  nsys stats --report cuda_gpu_kern_sum --format csv "$out/prof.nsys-rep" 2>/dev/null | cut -d, -f1-4,9 | head -14
  rm -f "$out/prof.nsys-rep" "$out/prof.sqlite"
else
  echo "no nsys"
fi
