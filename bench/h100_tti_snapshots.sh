#!/usr/bin/env bash
# Snapshot cost on the GPU, TTI and isotropic: 512^3 (mode standard, a 27-point layer), 500 steps,
# without snapshots and with a stride-2 snapshot every 50 steps (to /dev/shm, so the disk is not
# what is timed), alternating, twice each. Prints the summary lines. Assumes build/ is built.
#   TTI_KERNEL=swic_split_tma:32x16x64 ISO_KERNEL=temporal_tma:48x24x128 bash bench/h100_tti_snapshots.sh
set -uo pipefail
tti=(--set propagator=acoustic_tti --set model.epsilon.constant=0.2 --set model.delta.constant=0.1
     --set model.theta.constant=30 --set model.phi.constant=20 --set execution.kernel=${TTI_KERNEL:-swic_split_tma:32x16x64})
iso=(--set execution.kernel=${ISO_KERNEL:-temporal_tma:48x24x128})
run() {  # every, args...
  local every=$1; shift
  build/minimod --config configs/minimod-benchmark.yaml --set mode=standard --set boundary.pml.width=27 \
    --set 'grid.shape=[512,512,512]' --set 'source.position=[5120,5120,5120]' --set time.steps=500 \
    --set execution.backend=cuda --set output.file=/dev/shm/snap.h5 --set output.overwrite=true \
    --set output.final_wavefield=false --set output.snapshots.every=$every \
    --set 'output.snapshots.stride=[2,2,2]' "$@" --quiet | grep -o 'propagator=[a-z_]*\|steps=.*snapshot_flush_s=[0-9.]*' | tr '\n' ' '
  echo " (snapshots every $every)"
}
for rep in 1 2; do
  for every in 0 50; do run $every "${tti[@]}"; done
  for every in 0 50; do run $every "${iso[@]}"; done
done
rm -f /dev/shm/snap.h5 /dev/shm/snap.xmf
