#!/usr/bin/env bash
# Benchmark switches compared in one GPU call, after bench/h100_session.sh has built: for each
# setting of SWEEP (settings separated by ';', each a list of VAR=value, '-' for none), Minimod's
# case end to end on KERNELS at SHAPES, and with NCU=1 Nsight Compute's DRAM bytes and time of the
# inner kernel and the layer's (one line each, bench/h100_probe.sh's summary).
#   SWEEP='-;MINIMOD_TMA_HINTS=1;MINIMOD_TMA_PROMOTION=128' bash bench/h100_sweep.sh
# A token of a setting that starts with -- goes to minimod_bench instead (--set=key=value).
# Environment: KERNELS (default semi_tma:64x32x64,semi_tma:64x32x128), SHAPES (default 1000),
# STEPS (default 100), PROPAGATOR (default acoustic_iso), NCU=1, NCU_SPEC (default semi_tma:64x32x128),
# NCU_KERNELS (the kernels' names, a regex; default semi_tma_iso|pml_stream), NCU_SHAPE (default 1000).
set -uo pipefail
out=${OUT:-/tmp}
bench=build/bench/minimod_bench
kernels=${KERNELS:-semi_tma:64x32x64,semi_tma:64x32x128}
IFS=';' read -ra settings <<< "${SWEEP:--}"
n=0
for setting in "${settings[@]}"; do
  n=$((n + 1))
  vars=() args=()
  if [ "$setting" != "-" ]; then
    read -ra tokens <<< "$setting"
    for t in "${tokens[@]}"; do
      case $t in --set=*) args+=(--set "${t#--set=}") ;; *) vars+=("$t") ;; esac
    done
  fi
  echo "== [$n] ${setting}"
  env "${vars[@]}" $bench --backend cuda --propagator "${PROPAGATOR:-acoustic_iso}" --kernels "$kernels" \
    --shapes "${SHAPES:-1000}" --steps "${STEPS:-100}" "${args[@]}" 2>&1 | tee "$out/sweep-$n.log" | grep '^|' | grep -v -- '---\|propagator'
  if [ "${NCU:-0}" = 1 ] && command -v ncu > /dev/null; then
    metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
    names=${NCU_KERNELS:-semi_tma_iso|pml_stream}
    env "${vars[@]}" ncu --kernel-name regex:"$names" --launch-skip 2 --launch-count 2 --metrics $metrics \
      $bench --backend cuda --propagator "${PROPAGATOR:-acoustic_iso}" --kernels "${NCU_SPEC:-semi_tma:64x32x128}" \
      --shapes "${NCU_SHAPE:-1000}" --steps 3 --warmup 1 > "$out/sweep-ncu-$n.log" 2>&1
    awk -v names="$names" '$0 ~ "(" names ").*\\(" && !/Metric/ {match($0, names); name=substr($0, RSTART, RLENGTH)}
         $1 ~ /__/ && NF >= 2 {v[$1]=$NF; u[$1]=$(NF-1)}
         $1 == "lts__t_sector_hit_rate.pct" {printf "  ncu %-13s t=%s%s rd=%s%s wr=%s%s l2hit=%s%%\n", name,
           v["gpu__time_duration.sum"], u["gpu__time_duration.sum"], v["dram__bytes_read.sum"], u["dram__bytes_read.sum"],
           v["dram__bytes_write.sum"], u["dram__bytes_write.sum"], v["lts__t_sector_hit_rate.pct"]}' "$out/sweep-ncu-$n.log"
  fi
done
