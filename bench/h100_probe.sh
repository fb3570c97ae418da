#!/usr/bin/env bash
# Nsight Compute per launch, one line each (time, DRAM bytes read/written, DRAM and L2 throughput,
# L2 hit rate, warps, registers, issue activity), for one GPU call after bench/h100_session.sh
# has built: the inner kernel of each spec in PROBE_SPECS, then Minimod's layer (pml_stream) one
# launch per slab (MINIMOD_PML_PER_SLAB=1). Logs go to $OUT when set.
#   bash bench/h100_probe.sh
# Environment: PROBE_SPECS (default semi_tma:64x32x64), SHAPE (default 1000).
set -uo pipefail
out=${OUT:-/tmp}
shape=${SHAPE:-1000}
bench=build/bench/minimod_bench
metrics=smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
# One line per profiled launch: kernel, then the metrics in order.
summarise() {
  awk '/(semi_tma_iso|pml_stream).*\(/ && !/Metric/ {match($0, /(semi_tma_iso|pml_stream)/); name=substr($0, RSTART, RLENGTH)}
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
for spec in ${PROBE_SPECS:-semi_tma:64x32x64}; do
  prof "inner-${spec//:/_}" semi_tma_iso 2 1 --kernels "$spec"
done
MINIMOD_PML_PER_SLAB=1 prof pml-per-slab pml_stream 6 6 --kernels semi_tma:64x32x64
