#!/usr/bin/env bash
# Probes for one GPU call (after bench/h100_session.sh has built): end-to-end timings under the
# benchmark switches, and Nsight Compute's DRAM bytes and times per kernel launch (the inner
# kernel by chunk length, the PML kernel one launch per slab). Logs go to $OUT when set.
#   bash bench/h100_probe.sh
# Environment: PROBE_KERNELS (end to end), NCU_SPECS (inner kernel specs for ncu), SHAPE (1000).
set -uo pipefail
out=${OUT:-/tmp}
shape=${SHAPE:-1000}
bench=build/bench/minimod_bench
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
# One line per profiled launch: kernel, then the metrics in order.
summarise() {
  awk '/(semi_tma_iso|pml_stream).*\(/ && !/Metric/ {match($0, /(semi_tma_iso|pml_stream)/); name=substr($0, RSTART, RLENGTH)}
       NF >= 2 && $1 ~ /__/ {v[$1]=$NF; u[$1]=(NF >= 3 ? $(NF-1) : "")}
       $1 == "sm__warps_active.avg.pct_of_peak_sustained_active" {
         printf "%-14s t=%s%s rd=%s%s wr=%s%s dram=%s%% l2hit=%s%% l2=%s%% warps=%s%% grid=%s regs=%s\n", name,
           v["gpu__time_duration.sum"], u["gpu__time_duration.sum"], v["dram__bytes_read.sum"], u["dram__bytes_read.sum"],
           v["dram__bytes_write.sum"], u["dram__bytes_write.sum"], v["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
           v["lts__t_sector_hit_rate.pct"], v["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
           v["sm__warps_active.avg.pct_of_peak_sustained_active"], v["launch__grid_size"], v["launch__registers_per_thread"]}' "$1"
}
echo "== end to end, $shape, switches"
for mb in 1 2; do
  MINIMOD_TMA_MINBLOCKS=$mb $bench --backend cuda --kernels "${PROBE_KERNELS:-semi_tma:64x32x32,semi_tma:64x32x64,semi_tma:64x32x128}" \
    --shapes "$shape" --steps 100 2>&1 | grep '^|' | grep -v -- '---\|kernel' | sed "s/^/tma_minblocks=$mb /"
done
for pmb in 5 6; do
  MINIMOD_PML_MINBLOCKS=$pmb $bench --backend cuda --kernels semi_tma:64x32x32 --shapes "$shape" --steps 100 2>&1 |
    grep '^|' | grep -v -- '---\|kernel' | sed "s/^/pml_minblocks=$pmb /"
done
if command -v ncu > /dev/null; then
  echo "== ncu: inner kernel by spec ($shape)"
  for spec in ${NCU_SPECS:-semi_tma:64x32x32 semi_tma:64x32x128 semi_tma:64x32x1000}; do
    for mb in 1 2; do
      MINIMOD_TMA_MINBLOCKS=$mb ncu --kernel-name regex:semi_tma_iso --launch-skip 2 --launch-count 1 --metrics $metrics \
        $bench --backend cuda --kernels "$spec" --shapes "$shape" --steps 3 --warmup 1 > "$out/ncu-$mb-${spec//:/_}.log" 2>&1
      echo "$spec minblocks=$mb: $(summarise "$out/ncu-$mb-${spec//:/_}.log")"
    done
  done
  echo "== ncu: PML, one launch per slab ($shape)"
  for pmb in 1 6; do
    MINIMOD_PML_PER_SLAB=1 MINIMOD_PML_MINBLOCKS=$pmb ncu --kernel-name regex:pml_stream --launch-skip 6 --launch-count 6 --metrics $metrics \
      $bench --backend cuda --kernels semi_tma:64x32x32 --shapes "$shape" --steps 3 --warmup 1 > "$out/ncu-pml-$pmb.log" 2>&1
    echo "pml minblocks=$pmb:"; summarise "$out/ncu-pml-$pmb.log"
  done
fi
