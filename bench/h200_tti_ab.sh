#!/usr/bin/env bash
# One GPU call that compares versions of the sources in the same call (session 34; several
# variants since session 35): build the tree as it is (A), then, for each folder named in VARIANT
# (space-separated; each holds files at their paths in the repository), the tree with that
# folder's files copied over A's (B, C, ... in order; A's files are put back after each); the gpu
# tests on each variant; the bench on every binary at 1000^3 with an 8-point layer, A B C A B C,
# sponge and CPML (the bench's medium: one tilted axis, the constant-axis form); the SASS
# opcode counts of the constant-axis inner kernel of each; then, with PROFILE=1, Nsight Compute's
# view of one inner launch of each at 512^3 (the stalls per SASS instruction). The bench's table
# lines come back in $OUT/summary.txt, everything else in $OUT/all.tar.gz. Variant folders are
# made here from patches with bench/variant_folder.sh (bench/variants/ keeps the unmeasured ones).
# Run on the GPU machine from the repo root; logs go to $OUT.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) VARIANT="ab/pairs ab/trims" bash bench/h200_tti_ab.sh
# Environment: VARIANT (none: A alone); TEST_REGEX (the variants' gpu tests, default ConstantAxis;
# none: no tests); SPONGE_KERNELS (default swic_split_tma:32x8x256), CPML_KERNELS (default
# swic_split_tma:32x8x512); ROUNDS (rounds over the binaries per layer, default 2); PROFILE=1;
# PROFILE_KERNEL (default the sponge's first kernel); LAYERS (default "sponge cpml"); BENCH_ENVS
# (space-separated environments each bench run is repeated under, "-" for none, variables joined
# by commas, e.g. "- MINIMOD_TTI_PASS2_THREADS=64 MINIMOD_TTI_ONE_RUN=1,MINIMOD_TTI_PASS2_THREADS=64";
# default "-"): a binary that does not know a variable runs as without it.
set -uo pipefail
out=${OUT:-/tmp}
names=(A); folders=("")
letters=(B C D E F G H)
for f in ${VARIANT:-}; do
  [ -d "$f" ] || { echo "VARIANT: no folder '$f'"; exit 2; }
  folders+=("$f"); names+=("${letters[${#names[@]}-1]}")
done
. bench/build_sm90.sh
sass_of() {  # the SASS of the TTI tensor kernels of binary $1 into $out/sass-$2.txt.gz, and the inner kernel's opcode counts
  command -v cuobjdump > /dev/null || return 0
  cuobjdump -sass "$1" 2> /dev/null | awk '/Function :/ {keep = ($0 ~ /swic_tti_tensor/)} keep' | gzip > "$out/sass-$2.txt.gz"
  zcat "$out/sass-$2.txt.gz" | awk '/Function :/ {keep = ($0 ~ /swic_tti_tensorILi32ELi8ENS[0-9_]*8AxisSums/)} keep && /\/\*[0-9a-f]+\*\// {
      op = $2; if (op ~ /^@/) op = $3; sub(/\..*/, "", op); sub(/;$/, "", op); n[op]++; total++ }
    END { printf "%d:", total; for (o in n) if (n[o] >= 8) printf " %s %d", o, n[o]; print "" }' | sed "s/^/$2 inner SASS /"
}
regs_of() { grep -B1 -A2 "swic_tti_tensorILi[0-9]*ELi[0-9]*ENS[0-9_]*AxisSums" "$1" | grep -E "Used|spill" | sort | uniq -c; }
mkdir -p /tmp/ab
cp build/bench/minimod_bench /tmp/ab/bench-A
echo "A registers:"; regs_of "$out/build.log"
sass_of /tmp/ab/bench-A A
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for n in $(seq 1 $((${#names[@]} - 1))); do
  v=${names[$n]} dir=${folders[$n]}
  files=$(cd "$dir" && find . -type f | sed 's|^\./||')
  rm -rf /tmp/ab/orig; mkdir -p /tmp/ab/orig
  for f in $files; do
    mkdir -p "/tmp/ab/orig/$(dirname "$f")"; [ -f "$f" ] && cp "$f" "/tmp/ab/orig/$f"; cp "$dir/$f" "$f"; echo "$v: $f"
  done
  cmake --build build -j16 > "$out/build-$v.log" 2>&1 || { tail -40 "$out/build-$v.log"; exit 1; }
  cp build/bench/minimod_bench /tmp/ab/bench-$v
  echo "$v registers:"; regs_of "$out/build-$v.log"
  sass_of /tmp/ab/bench-$v $v
  if [ "${TEST_REGEX:-ConstantAxis}" != none ]; then
    OMP_NUM_THREADS=2 ctest --test-dir build -L gpu -j8 -R "${TEST_REGEX:-ConstantAxis}" --output-on-failure > "$out/ctest-$v.log" 2>&1
    grep -hE "tests passed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$out/ctest-$v.log" | sed "s/^/$v: /"
  fi
  for f in $files; do if [ -f "/tmp/ab/orig/$f" ]; then cp "/tmp/ab/orig/$f" "$f"; else rm -f "$f"; fi; done  # A again
  echo "$v: $(( $(date +%s) - start )) s"
done
sponge=${SPONGE_KERNELS:-swic_split_tma:32x8x256}
cpml=${CPML_KERNELS:-swic_split_tma:32x8x512}
for round in $(seq "${ROUNDS:-2}"); do
  for layer in ${LAYERS:-sponge cpml}; do
    kernels=$sponge; [ $layer = cpml ] && kernels=$cpml
    for v in "${names[@]}"; do
      for e in ${BENCH_ENVS:--}; do
        vars=(); [ "$e" != - ] && IFS=, read -r -a vars <<< "$e"
        env "${vars[@]}" /usr/bin/time -f "$v $layer host peak %M KB" /tmp/ab/bench-$v --propagator acoustic_tti --backend cuda \
          --shapes 1000 --steps 20 --set boundary.pml.tti=$layer --set boundary.pml.width=8 --kernels "$kernels" 2>&1 |
          tee -a "$out/bench-$v-$layer.log" | grep -E '^\| acoustic|host peak' | sed "s/^/$v ${e#-} round $round: /" |
          tee -a "$out/summary.txt"
      done
    done
  done
done
echo "bench: $(( $(date +%s) - start )) s"
if [ "${PROFILE:-0}" = 1 ]; then
  for v in "${names[@]}"; do
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
# At most 8 files come back from a GPU call: everything but the bench's table lines in one archive.
(cd "$out" && tar czf all.tar.gz --remove-files $(ls | grep -v '^summary.txt$') 2> /dev/null)
echo "total: $(( $(date +%s) - start )) s"
