#!/usr/bin/env bash
# Weak scaling of distributed TTI on two GPUs (NCCL): the benchmark's TTI case (bench/minimod_bench:
# eps 0.2, delta 0.1, tilt 30, azimuth 20, a 27-point layer added around the model) at N^3 on one
# GPU and (2N)xNxN split along x on two, for each absorbing layer in LAYERS. One summary line per
# run. On the 2-GPU machine from the repo root, after a build (bench/build_sm90.sh):
#   N=700 LAYERS="sponge cpml" bash bench/h200x2_tti_weak.sh
# Environment: KERNEL, STEPS, WIDTH (the layer's points, default 27); MINIMOD_TTI_LAYER_BESIDE
# is passed to every rank when set (docs/tti.md: the CPML layer's launches beside the inner box).
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
n=${N:-700}
kernel=${KERNEL:-swic_split_tma:32x16x64}
common=(--config configs/minimod-benchmark.yaml --quiet --set propagator=acoustic_tti --set mode=standard
  --set boundary.pml.width=${WIDTH:-27} --set model.epsilon.constant=0.2 --set model.delta.constant=0.1
  --set model.theta.constant=30 --set model.phi.constant=20 --set "time.steps=${STEPS:-100}"
  --set execution.backend=cuda --set "execution.kernel=$kernel" --set output.file=/tmp/tti-weak.h5
  --set output.overwrite=true)
for layer in ${LAYERS:-sponge cpml}; do
  build/minimod "${common[@]}" --set "boundary.pml.tti=$layer" --set "grid.shape=[$n,$n,$n]" \
    --set "source.position=[$((n * 10)),$((n * 10)),$((n * 10))]" 2>&1 | grep -E "^summary|error" | sed "s/^/$layer 1 GPU: /"
  mpirun -np 2 --bind-to none ${MINIMOD_TTI_LAYER_BESIDE:+-x MINIMOD_TTI_LAYER_BESIDE} build/minimod "${common[@]}" --set "boundary.pml.tti=$layer" \
    --set "grid.shape=[$((2 * n)),$n,$n]" --set "execution.decomposition=[2,1,1]" \
    --set "source.position=[$((n * 20)),$((n * 10)),$((n * 10))]" 2>&1 | grep -E "^summary|error" | sed "s/^/$layer 2 GPUs: /"
done
