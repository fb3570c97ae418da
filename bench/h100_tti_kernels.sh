#!/usr/bin/env bash
# Where a TTI step's GPU time goes, launch by launch: minimod_bench at SHAPE (default 1000^3) for
# the sponge and the CPML layer under Nsight Compute with the SM clock left free
# (--clock-control none: the bench's own clock, where ncu's default locks it at 1.59 GHz) and one
# metric (gpu__time_duration), so the durations are those of a bench step, the launches
# serialised. One warm-up and one timed step: the set-up kernels, then each step's launches (grid
# size tells a layer's slabs apart), then the step's sum. The image has ncu, not nsys. Run on the
# GPU machine from the repo root; logs go to $OUT when set.
#   MINIMOD_COMMIT=$(git rev-parse --short HEAD) bash bench/h100_tti_kernels.sh
# Environment: KERNEL (default swic_split_tma:32x16x64), SHAPE, LAYERS (default "cpml sponge"),
# SKIP_BUILD=1 (build/ is already built).
set -uo pipefail
out=${OUT:-/tmp}
kernel=${KERNEL:-swic_split_tma:32x16x64}
shape=${SHAPE:-1000}
if [ "${SKIP_BUILD:-0}" != 1 ]; then . bench/build_sm90.sh; else start=$(date +%s); fi
command -v ncu > /dev/null || { echo "no ncu on this machine"; exit 1; }
for layer in ${LAYERS:-cpml sponge}; do
  echo "== acoustic_tti ($layer), $kernel, $shape^3: ms a launch"
  ncu --clock-control none --metrics gpu__time_duration.sum --csv build/bench/minimod_bench \
    --propagator acoustic_tti --backend cuda --kernels "$kernel" --shapes "$shape" --steps 1 --warmup 1 \
    --set boundary.pml.tti="$layer" > "$out/ncu-$layer.csv" 2> "$out/ncu-$layer.err" ||
    { echo "ncu failed:"; tail -5 "$out/ncu-$layer.err"; continue; }
  # The launches after the first inject_nodes (the warm-up step's end) up to the second: one step.
  python3 - "$out/ncu-$layer.csv" <<'PY'
import csv, re, sys
header, total, seen = None, 0.0, 0
for row in csv.reader(open(sys.argv[1])):
    if "Kernel Name" in row:
        header = row
        continue
    if header is None or len(row) != len(header):
        continue
    r = dict(zip(header, row))
    name = re.sub(r"\(.*", "", r["Kernel Name"]).replace("void ", "").replace("unnamed>::", "")
    name = re.sub(r"^(\w+::)+", "", name)
    ns = float(r["Metric Value"].replace(",", "")) * {"ns": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}.get(r["Metric Unit"], 1)
    if seen == 1:
        print("%8.3f ms  %-40s grid %s" % (ns / 1e6, name[:40], r.get("Grid Size", "")))
        total += ns / 1e6
    if "inject_nodes" in name:
        seen += 1
print("%8.3f ms  the step" % total)
PY
done
echo "total: $(( $(date +%s) - start )) s"
