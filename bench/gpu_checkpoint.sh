#!/usr/bin/env bash
# Checkpoints on the GPU (docs/config.md, checkpoint): configs/tti.yaml at SHAPE on the CUDA
# backend with a snapshot every SNAP steps, unbroken, then stopped at a checkpoint
# (checkpoint.stop_at) and resumed, on one process and on two sharing the GPU; the results
# (seismograms, snapshots, final wavefield) compared bit for bit with the unbroken run. Prints the
# checkpoint's size and the time it takes to write and to read back. A table last.
#   BUILD_DIR=build OUT=/tmp/x bash bench/gpu_checkpoint.sh      (minimod built with CUDA)
#   SHAPE=[512,512,512] DURATION=0.3 STOP=150 KERNEL=swic_split_tma ...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
build=${BUILD_DIR:-build}
out=${OUT:-/tmp}/checkpoint
mm=$build/minimod
rm -rf "$out" && mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
py=${PYTHON:-python3}
status=0
set_all="--set execution.backend=${BACKEND:-cuda} --set execution.kernel=${KERNEL:-swic_split_tma} \
 --set grid.shape=${SHAPE:-[512,512,512]} --set time.duration=${DURATION:-0.3} --set output.snapshots.every=${SNAP:-50} --set output.snapshots.stride=[4,4,4] \
 --set output.final_wavefield=true --set output.overwrite=false"
run() {  # name, command...: stdout and stderr into $out/name.log; its wall time
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  echo "$rc" > "$out/$name.rc"
}
run unbroken $mm --config configs/tti.yaml $set_all --set output.file="$out/unbroken.h5"
for ranks in 1 2; do
  launch=""; [ "$ranks" -gt 1 ] && launch="mpirun -np $ranks"
  run stop-$ranks $launch $mm --config configs/tti.yaml $set_all --set output.file="$out/cut$ranks.h5" \
      --set checkpoint.stop_at=${STOP:-150}
  ls -l "$out/cut$ranks.checkpoint.h5" 2>/dev/null | awk '{ printf "checkpoint %.2f GB\n", $5 / 1e9 }'
  run resume-$ranks $launch $mm --config configs/tti.yaml $set_all --set output.file="$out/cut$ranks.h5" \
      --set checkpoint.every=0
done
$py - "$out" <<'PY' || status=1
import re, sys, h5py, numpy as np
out = sys.argv[1]
ok = True
def data(path, name):
    with h5py.File(path, "r") as f:
        return f[name][...]
for ranks in (1, 2):
    rc = [open(f"{out}/{n}-{ranks}.rc").read().strip() for n in ("stop", "resume")]
    ok &= rc == ["3", "0"]
    for name in ("/seismograms/p", "/final/p", "/snapshots/p", "/snapshots/time"):
        a, b = data(f"{out}/unbroken.h5", name), data(f"{out}/cut{ranks}.h5", name)
        same = np.array_equal(a, b) and np.abs(a).max() > 0
        ok &= same
        print(f"{ranks} rank(s): exit {rc[0]} then {rc[1]}; {name} resumed == unbroken: {same} (peak {np.abs(a).max():.3g})")
print("\n| run | summary (stdout) / checkpoint lines (stderr) |\n|---|---|")
for name in ("unbroken", "stop-1", "resume-1", "stop-2", "resume-2"):
    log = open(f"{out}/{name}.log").read()
    lines = re.findall(r"summary [^\n]*|[^\n]*checkpoint[^\n]*", log)
    for l in lines:
        l = re.sub(r" (interior|shell|exchange_exposed)_ms=\S+| snapshot_\S+| host_peak_gib=\S+", "", l)
        print(f"| {name} | {l.strip()} |")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || status=1
exit $status
