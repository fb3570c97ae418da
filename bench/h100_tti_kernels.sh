#!/usr/bin/env bash
# Where a TTI step's GPU time goes, at the SM's own clock (Nsight Systems, not Nsight Compute, which
# locks the clock lower): for the sponge and the CPML layer, minimod_bench at SHAPE (default 1000^3)
# under nsys, then each kernel's time a step (its launches' total over the warm-up and timed
# steps), largest first. Run on the GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_tti_kernels.sh
# Environment: KERNEL (default swic_split_tma:32x16x64), SHAPE, LAYERS (default "sponge cpml"),
# SKIP_BUILD=1 (build/ is already built).
set -uo pipefail
out=${OUT:-/tmp}
kernel=${KERNEL:-swic_split_tma:32x16x64}
shape=${SHAPE:-1000}
steps=10 warmup=2
if [ "${SKIP_BUILD:-0}" != 1 ]; then . bench/build_sm90.sh; else start=$(date +%s); fi
command -v nsys > /dev/null || { echo "no nsys on this machine"; exit 1; }
for layer in ${LAYERS:-sponge cpml}; do
  echo "== acoustic_tti ($layer), $kernel, $shape^3, $steps + $warmup steps under nsys"
  nsys profile -t cuda -o "$out/tti-$layer" --force-overwrite true build/bench/minimod_bench \
    --propagator acoustic_tti --backend cuda --kernels "$kernel" --shapes "$shape" --steps $steps \
    --warmup $warmup --set boundary.pml.tti="$layer" > "$out/bench-$layer.log" 2>&1
  grep '^| acoustic' "$out/bench-$layer.log"
  nsys stats --report cuda_gpu_kern_sum --format csv --output "$out/kern-$layer" "$out/tti-$layer.nsys-rep" \
    > /dev/null 2>&1
  # Kernels launched every step (instances a multiple of the step count): ms a step, launches a step.
  csv_file=$(ls "$out/kern-$layer"*.csv 2> /dev/null | head -1)
  [ -n "$csv_file" ] || { echo "nsys stats wrote no csv"; continue; }
  python3 - "$csv_file" $((steps + warmup)) <<'PY' || head -5 "$csv_file"
import csv, re, sys
rows, n = list(csv.DictReader(open(sys.argv[1]))), int(sys.argv[2])
total = 0.0
for r in rows:
    launches = int(r["Instances"])
    if launches % n:
        continue
    ms = float(r["Total Time (ns)"]) / n / 1e6
    total += ms
    name = re.sub(r"\(.*", "", r["Name"]).replace("minimod::kernels::cuda::", "").replace("(anonymous namespace)::", "")
    print("%8.3f ms  %3d launches  %s" % (ms, launches // n, name[:90]))
print("%8.3f ms  a step in all" % total)
PY
  rm -f "$out/tti-$layer.nsys-rep" "$out/tti-$layer.sqlite"
done
echo "total: $(( $(date +%s) - start )) s"
