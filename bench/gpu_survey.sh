#!/usr/bin/env bash
# Surveys on the GPU (docs/config.md, shots): configs/survey.yaml's 9 shots on the CUDA backend by
# one process, then by two processes sharing the GPU (execution.shot_groups: 2), compared bit for
# bit with each other and with one-shot runs of shots 0 and 8; then a TTI survey of 4 shots at
# SHAPE on one propagator (model shared) against the same with an isotropic zone around the source
# (each shot builds its model and propagator): the set-up a shot costs. Prints a table last.
#   BUILD_DIR=build OUT=/tmp/x bash bench/gpu_survey.sh      (minimod built with CUDA)
#   SHAPE=[1000,1000,1000] DURATION=0.2 ...: the TTI line at another size and length
#   BACKEND=cpu EXTRA="--set grid.shape=[201,61,61] --set time.duration=0.2" SHAPE=[126,40,40] TTI_KERNEL=auto ...  (a quick CPU try)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
build=${BUILD_DIR:-build}
out=${OUT:-/tmp}/survey
shape=${SHAPE:-[400,320,300]}
mm=$build/minimod
rm -rf "$out" && mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
py=${PYTHON:-python3}
status=0

# One-shot configs (shots replaced by the shot's position) and the TTI survey, written by Python.
$py - "$out" <<'PY' || exit 1
import re, sys
out = sys.argv[1]
survey = open("configs/survey.yaml").read()
for shot, x in ((0, 200), (8, 1800)):
    one = re.sub(r"\nshots:\n  - line: [^\n]*\n", "\n", survey)
    one = one.replace("frequency: 10                 # Hz, peak; the shots give the position",
                      f"frequency: 10\n  position: [{x}, 500, 20]")
    assert "\nshots:" not in one and "position: [" in one
    open(f"{out}/one-{shot}.yaml", "w").write(one)
tti = open("configs/tti.yaml").read()
tti = re.sub(r"\n  position: [^\n]*\n", "\nshots:\n  - line: {start: [400, 500, 37.5], end: [1600, 500, 37.5], count: 4}\n", tti)
tti = re.sub(r"\n  snapshots: [^\n]*", "", tti)
assert "shots:" in tti
open(f"{out}/tti-line.yaml", "w").write(tti)
PY

run() {  # name, command...: the command's stdout and stderr into $out/name.log
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  [ $rc -eq 0 ] || { status=1; tail -20 "$out/$name.log"; }
}
cuda="--set execution.backend=${BACKEND:-cuda} ${EXTRA:-}"  # EXTRA: more --set for the 9-shot survey
run survey-one $mm --config configs/survey.yaml $cuda --set output.file="$out/one/line.h5"
run survey-two mpirun -np 2 $mm --config configs/survey.yaml $cuda --set execution.shot_groups=2 \
    --set output.file="$out/two/line.h5"
run single-0 $mm --config "$out/one-0.yaml" $cuda --set output.file="$out/single/line-0000.h5"
run single-8 $mm --config "$out/one-8.yaml" $cuda --set output.file="$out/single/line-0008.h5"
run resume $mm --config configs/survey.yaml $cuda --set output.file="$out/one/line.h5"
for zone in 0 50; do
  run tti-zone$zone $mm --config "$out/tti-line.yaml" --set execution.backend=${BACKEND:-cuda} --set "grid.shape=$shape" --set time.duration=${DURATION:-0.4} \
      --set model.isotropic_radius=$zone --set execution.kernel=${TTI_KERNEL:-swic_split_tma} --set output.file="$out/tti$zone/line.h5"
done

$py - "$out" <<'PY' || status=1
import re, sys, h5py, numpy as np
out = sys.argv[1]
def traces(path):
    with h5py.File(path, "r") as f:
        return f["/seismograms/p"][...]
ok = True
for s in range(9):
    a, b = traces(f"{out}/one/line-{s:04d}.h5"), traces(f"{out}/two/line-{s:04d}.h5")
    same = np.array_equal(a, b) and np.abs(a).max() > 0
    ok &= same
    print(f"shot {s}: one group == two groups sharing the GPU: {same} (peak {np.abs(a).max():.3g})")
for s in (0, 8):
    same = np.array_equal(traces(f"{out}/one/line-{s:04d}.h5"), traces(f"{out}/single/line-{s:04d}.h5"))
    ok &= same
    print(f"shot {s}: survey == one-shot run: {same}")
resumed = open(f"{out}/resume.log").read()
ok &= "run=0 skipped=9" in resumed
print("resume:", re.search(r"survey [^\n]*", resumed).group(0))
print("\n| run | survey line (stdout) |\n|---|---|")
for name in ("survey-one", "survey-two", "tti-zone0", "tti-zone50"):
    log = open(f"{out}/{name}.log").read()
    line = re.search(r"survey shots=[^\n]*", log)
    print(f"| {name} | {line.group(0) if line else 'none'} |")
print("\n| TTI run | shots | survey s | sum of shots' time loops s | set-up a shot s | GPts/s of each shot |\n|---|---|---|---|---|---|")
for zone in (0, 50):
    log = open(f"{out}/tti-zone{zone}.log").read()
    loops = [float(x) for x in re.findall(r"summary [^\n]* seconds=([0-9.]+)", log)]
    gpts = re.findall(r"gpts_per_s=([0-9.]+)", log)
    total = float(re.search(r"survey [^\n]* seconds=([0-9.]+)", log).group(1))
    n = len(loops)
    label = "model shared (one propagator, reset)" if zone == 0 else "isotropic zone 50 m (each shot anew)"
    print(f"| {label} | {n} | {total:.2f} | {sum(loops):.2f} | {(total - sum(loops)) / max(n, 1):.2f} | {', '.join(gpts)} |")
sys.exit(0 if ok else 1)
PY
exit $status
