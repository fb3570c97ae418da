#!/usr/bin/env bash
# Nsight Compute per launch, one line each (time, DRAM bytes read/written, DRAM and L2 throughput,
# L2 hit rate, warps, registers, issue activity), for one GPU call after bench/h100_session.sh
# has built: the inner kernel of each spec in PROBE_SPECS, then Minimod's layer (pml_stream) one
# launch per slab (MINIMOD_PML_PER_SLAB=1). Logs go to $OUT when set.
#   bash bench/h100_probe.sh
# Environment: PROBE_SPECS (default semi_tma:64x32x64), SHAPE (default 1000), PROBE_PAIRS (two-step
# specs, e.g. temporal_tma:32x24x128), PROBE_CLOCK_SPECS (kernels run end to end while the SM clock
# is sampled), PROBE_STALL_SPEC / _KERNEL / _SHAPE / _SKIP / _ARGS (stalls per SASS
# instruction), PROBE_SASS (a regex of kernel names to disassemble), PROBE_SKIP_SLABS=1.
set -uo pipefail
out=${OUT:-/tmp}
shape=${SHAPE:-1000}
bench=build/bench/minimod_bench
metrics=smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
# One line per profiled launch: kernel, then the metrics in order.
summarise() {
  awk '/(semi_tma_iso|temporal_tma_iso|pml_stream).*\(/ && !/Metric/ {match($0, /(semi_tma_iso|temporal_tma_iso|pml_stream)/); name=substr($0, RSTART, RLENGTH)}
       NF >= 2 && $1 ~ /__/ {v[$1]=$NF; u[$1]=(NF >= 3 ? $(NF-1) : "")}
       $1 == "smsp__issue_active.avg.pct_of_peak_sustained_active" {
         printf "%-14s t=%s%s rd=%s%s wr=%s%s dram=%s%% l2hit=%s%% l2=%s%% warps=%s%% grid=%s regs=%s issue=%s%%\n", name,
           v["gpu__time_duration.sum"], u["gpu__time_duration.sum"], v["dram__bytes_read.sum"], u["dram__bytes_read.sum"],
           v["dram__bytes_write.sum"], u["dram__bytes_write.sum"], v["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
           v["lts__t_sector_hit_rate.pct"], v["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
           v["sm__warps_active.avg.pct_of_peak_sustained_active"], v["launch__grid_size"], v["launch__registers_per_thread"], v["smsp__issue_active.avg.pct_of_peak_sustained_active"]}' "$1"
}
prof() {  # label, kernel regex, launches to skip, launches to profile, then minimod_bench's arguments
  local label=$1 re=$2 skip=$3 count=$4; shift 4
  ncu --kernel-name regex:"$re" --launch-skip "$skip" --launch-count "$count" --metrics $metrics \
    $bench --backend cuda --shapes "$shape" --steps 3 --warmup 1 "$@" > "$out/ncu-$label.log" 2>&1
  echo "-- $label"; summarise "$out/ncu-$label.log"
}
command -v ncu > /dev/null || { echo "no ncu on this machine"; exit 1; }
echo "== ncu ($shape)"
for spec in ${PROBE_SPECS-semi_tma:64x32x64}; do
  prof "inner-${spec//:/_}" semi_tma_iso 2 1 --kernels "$spec"
done
[ "${PROBE_SKIP_SLABS:-0}" = 1 ] || MINIMOD_PML_PER_SLAB=1 prof pml-per-slab pml_stream 6 6 --kernels semi_tma:64x32x64
# A two-step family: its pair kernel and the layer's launches around it (one pair: the slabs of
# u^{n+1}, the pair kernel, the slabs of u^{n+2}), one launch per slab.
for spec in ${PROBE_PAIRS:-}; do
  MINIMOD_PML_PER_SLAB=1 prof "pair-${spec//:/_}" "temporal_tma_iso|pml_stream" 13 13 --kernels "$spec"
done
# Warp stalls per SASS instruction of one kernel (PROBE_STALL_KERNEL regex, PROBE_STALL_SPEC, at
# PROBE_STALL_SHAPE, default 512; PROBE_STALL_ARGS more minimod_bench arguments, e.g.
# `--propagator acoustic_tti`): $OUT/stall-<label>.csv.gz, and the stall reasons summed.
if [ -n "${PROBE_STALL_SPEC:-}" ]; then
  label=${PROBE_STALL_SPEC//:/_}
  ncu --kernel-name regex:"${PROBE_STALL_KERNEL:-temporal_tma_iso}" --launch-skip "${PROBE_STALL_SKIP:-1}" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy -f -o /tmp/stall \
    $bench --backend cuda --shapes "${PROBE_STALL_SHAPE:-512}" --steps 3 --warmup 1 --kernels "$PROBE_STALL_SPEC" \
    ${PROBE_STALL_ARGS:-} > "$out/ncu-stall-$label.log" 2>&1
  ncu -i /tmp/stall.ncu-rep --page source --csv --print-source sass 2> /dev/null | gzip > "$out/stall-$label.csv.gz"
  ncu -i /tmp/stall.ncu-rep --page details 2> /dev/null | grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|Registers|Duration" | head -40
fi
# The SASS of the kernels matching PROBE_SASS (cuobjdump over the bench binary): $OUT/sass.txt.gz.
if [ -n "${PROBE_SASS:-}" ] && command -v cuobjdump > /dev/null; then
  cuobjdump -sass "$bench" 2> /dev/null | awk -v re="$PROBE_SASS" '/Function :/ {keep = ($0 ~ re)} keep' | gzip > "$out/sass.txt.gz"
  echo "sass: $(zcat "$out/sass.txt.gz" | grep -c 'Function :') functions"
fi
# The SM clock and power while Minimod's case runs end to end (not under the profiler).
if [ -n "${PROBE_CLOCK_SPECS:-}" ]; then
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$out/clocks.log" &
  smi=$!
  $bench --backend cuda --shapes "$shape" --steps 300 --kernels "$PROBE_CLOCK_SPECS" 2>&1 | grep '^|'
  kill $smi
  echo "-- SM clock (MHz) while it ran: $(awk -F, '{gsub(/ MHz/, "", $1); if ($1 + 0 > 1000) print $1 + 0}' "$out/clocks.log" | sort -n | uniq -c | sort -rn | head -5 | tr '\n' ' ')"
fi
