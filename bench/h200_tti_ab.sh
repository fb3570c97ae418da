#!/usr/bin/env bash
# One GPU call that compares two versions of the sources in the same call (session 34): build the
# tree as it is (A), then with the files under $VARIANT (a folder holding files at their paths in
# the repository, copied over them) as B; the gpu tests on B; the bench on both at 1000^3 with an
# 8-point layer, A B A B, sponge and CPML (the bench's medium: one tilted axis, the constant-axis
# form); then, with PROFILE=1, Nsight Compute's view of one inner launch of each at 512^3 (the
# stalls per SASS instruction) and the SASS of the TTI tensor kernels. Everything but the bench
# logs comes back in $OUT/all.tar.gz.
# Run on the GPU machine from the repo root; logs go to $OUT.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) VARIANT=ab/unroll bash bench/h200_tti_ab.sh
# Environment: VARIANT (none: A alone); TEST_REGEX (B's gpu tests, default ConstantAxis; none: no
# tests); SPONGE_KERNELS (default swic_split_tma:32x8x256), CPML_KERNELS (default
# swic_split_tma:32x8x512); ROUNDS (A B pairs per layer, default 2); PROFILE=1; PROFILE_KERNEL
# (default the sponge's first kernel).
set -uo pipefail
out=${OUT:-/tmp}
[ -z "${VARIANT:-}" ] || [ -d "$VARIANT" ] || { echo "VARIANT: no folder '$VARIANT'"; exit 2; }
variants=A; [ -n "${VARIANT:-}" ] && variants="A B"
. bench/build_sm90.sh
sass_of() {  # the SASS of the TTI tensor kernels of binary $1 into $out/sass-$2.txt.gz
  command -v cuobjdump > /dev/null || return 0
  cuobjdump -sass "$1" 2> /dev/null | awk '/Function :/ {keep = ($0 ~ /swic_tti_tensor/)} keep' | gzip > "$out/sass-$2.txt.gz"
}
regs_of() { grep -B1 -A2 "swic_tti_tensorILi[0-9]*ELi[0-9]*ENS[0-9_]*AxisSums" "$1" | grep -E "Used|spill" | sort | uniq -c; }
mkdir -p /tmp/ab
cp build/bench/minimod_bench /tmp/ab/bench-A
echo "A registers:"; regs_of "$out/build.log"
sass_of /tmp/ab/bench-A A
if [ -n "${VARIANT:-}" ]; then
(cd "$VARIANT" && find . -type f) | while read -r f; do cp "$VARIANT/$f" "$f" && echo "B: ${f#./}"; done
cmake --build build -j16 > "$out/build-B.log" 2>&1 || { tail -40 "$out/build-B.log"; exit 1; }
cp build/bench/minimod_bench /tmp/ab/bench-B
echo "B registers:"; regs_of "$out/build-B.log"
sass_of /tmp/ab/bench-B B
fi
echo "builds: $(( $(date +%s) - start )) s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${VARIANT:-}" ] && [ "${TEST_REGEX:-ConstantAxis}" != none ]; then
  OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j8 -R "${TEST_REGEX:-ConstantAxis}" --output-on-failure > "$out/ctest-B.log" 2>&1
  grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$out/ctest-B.log" | sed "s/^/B: /"
  echo "tests: $(( $(date +%s) - start )) s"
fi
sponge=${SPONGE_KERNELS:-swic_split_tma:32x8x256}
cpml=${CPML_KERNELS:-swic_split_tma:32x8x512}
for round in $(seq "${ROUNDS:-2}"); do
  for layer in sponge cpml; do
    kernels=$sponge; [ $layer = cpml ] && kernels=$cpml
    for v in $variants; do
      /usr/bin/time -f "$v $layer host peak %M KB" /tmp/ab/bench-$v --propagator acoustic_tti --backend cuda --shapes 1000 \
        --steps 20 --set boundary.pml.tti=$layer --set boundary.pml.width=8 --kernels "$kernels" 2>&1 |
        tee -a "$out/bench-$v-$layer.log" | grep -E '^\| acoustic|host peak' | sed "s/^/$v round $round: /"
    done
  done
done
echo "bench: $(( $(date +%s) - start )) s"
if [ "${PROFILE:-0}" = 1 ]; then
  for v in $variants; do
    ncu --clock-control none --kernel-name regex:swic_tti_tensor --launch-skip 3 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy -f -o /tmp/ab/prof-$v \
      /tmp/ab/bench-$v --propagator acoustic_tti --backend cuda --shapes 512 --steps 4 --warmup 2 \
      --set boundary.pml.tti=sponge --set boundary.pml.width=8 --kernels "${PROFILE_KERNEL:-${sponge%%,*}}" > "$out/ncu-$v.log" 2>&1
    ncu -i /tmp/ab/prof-$v.ncu-rep --page source --csv --print-source sass 2> /dev/null | gzip > "$out/stall-$v.csv.gz"
    ncu -i /tmp/ab/prof-$v.ncu-rep --page details > "$out/details-$v.txt" 2>&1
    ncu -i /tmp/ab/prof-$v.ncu-rep --page raw --csv > "$out/raw-$v.csv" 2>&1
    echo "$v:"; grep -E "Duration|Issue Slots Busy|Executed Instructions  |L2 Cache Throughput|L1/TEX Cache Throughput|Warp Cycles Per Issued|No Eligible" \
      "$out/details-$v.txt" | head -12
  done
  echo "profiles: $(( $(date +%s) - start )) s"
fi
# At most 8 files come back from a GPU call: everything but the bench logs in one archive.
(cd "$out" && tar czf all.tar.gz --remove-files $(ls | grep -v '^bench-') 2> /dev/null)
echo "total: $(( $(date +%s) - start )) s"
