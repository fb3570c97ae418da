#!/usr/bin/env bash
# One GPU call: Nsight Compute's view of swic_split_tma's constant-axis kernel (session 30).
# Build for sm_90, then (1) every section of one launch of the inner kernel (sponge, 8-point
# layer, 512^3: the same blocks as 1000^3, a quarter of the set-up) and (2) the durations of one
# step's launches at 1000^3 with the 8-point CPML. Clocks are left alone (--clock-control none).
# Run on the GPU machine from the repo root; reports and text go to $OUT.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h200_tti_profile.sh
# Environment: TILE (default 32x8x64), KERNEL_REGEX (default swic_tti_tensor), SKIP_BUILD=1,
# SKIP_STEP=1 (no (2)), SKIP_FULL=1 (no (1)); FULL_LAYER (sponge or cpml, default sponge),
# FULL_SKIP / FULL_COUNT (launches of KERNEL_REGEX skipped and profiled in (1), default 3 / 1),
# STEP_WIDTH (the layer's points in (2), default 8), STEP_BYTES=1 ((2) as each launch's duration and
# DRAM bytes read and written instead of the SpeedOfLight section).
set -uo pipefail
out=${OUT:-/tmp}
tile=${TILE:-32x8x64}
if [ "${SKIP_BUILD:-0}" != 1 ]; then . bench/build_sm90.sh; else start=$(date +%s); fi
bench=(build/bench/minimod_bench --propagator acoustic_tti --backend cuda --kernels swic_split_tma:$tile --warmup 2)
if [ "${SKIP_FULL:-0}" != 1 ]; then
ncu --clock-control none --set full -k "regex:${KERNEL_REGEX:-swic_tti_tensor}" --launch-skip "${FULL_SKIP:-3}" \
  --launch-count "${FULL_COUNT:-1}" -o "$out/axis-sponge" "${bench[@]}" --shapes 512 --steps 4 \
  --set boundary.pml.tti="${FULL_LAYER:-sponge}" \
  --set boundary.pml.width=8 > "$out/ncu-full.log" 2>&1
tail -3 "$out/ncu-full.log"
ncu -i "$out/axis-sponge.ncu-rep" --page details > "$out/axis-sponge-details.txt" 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|Registers Per|Shared Memory Configuration|Warp Cycles Per Issued|No Eligible|Executed Instructions  " \
  "$out/axis-sponge-details.txt" | head -30
ncu -i "$out/axis-sponge.ncu-rep" --page raw --csv > "$out/axis-sponge-raw.csv" 2>&1
echo "full profile: $(( $(date +%s) - start )) s"
fi
[ "${SKIP_STEP:-0}" = 1 ] && exit 0
if [ "${STEP_BYTES:-0}" = 1 ]; then
  # Each launch's duration and DRAM bytes (read, written): what the layer's launches move.
  ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --launch-skip 20 --launch-count 60 "${bench[@]}" --shapes 1000 --steps 4 --set boundary.pml.tti=cpml \
    --set boundary.pml.width="${STEP_WIDTH:-8}" > "$out/ncu-cpml-bytes.log" 2>&1
  awk '/^  [^ ]/ {name = substr($1, 1, 60)} /gpu__time_duration.sum|dram__bytes_read.sum|dram__bytes_write.sum/ {print name, $1, $(NF-1), $NF}' \
    "$out/ncu-cpml-bytes.log" | head -200
else
ncu --clock-control none --section SpeedOfLight --launch-skip 20 --launch-count 60 \
  "${bench[@]}" --shapes 1000 --steps 4 --set boundary.pml.tti=cpml --set boundary.pml.width="${STEP_WIDTH:-8}" > "$out/ncu-cpml-step.log" 2>&1
awk '/^  [^ ]/ {name = substr($1, 1, 60)} /Duration/ {print name, $NF, $(NF-1)}' "$out/ncu-cpml-step.log" | head -60
fi
echo "total: $(( $(date +%s) - start )) s"
