#!/usr/bin/env bash
# The opening of a GPU call (sourced by bench/h100_session.sh and bench/h100_tti_cpml.sh): print
# the GPU, the commit label and the sources' fingerprint, then configure and build build/ for
# sm_90 (logs in $out/cmake.log, $out/build.log); sets $start. The label is typed by hand
# (MINIMOD_COMMIT): the GPU machine's copy of the tree has no up-to-date git, so the fingerprint
# tells which commit really ran (`bash scripts/source_fingerprint.sh COMMIT` where the repository is).
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "commit ${MINIMOD_COMMIT:-unknown} sources $(bash scripts/source_fingerprint.sh) $(date -u +%FT%TZ)"
start=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DMINIMOD_COMMIT="${MINIMOD_COMMIT:-unknown}" > "$out/cmake.log" 2>&1 &&
  cmake --build build -j16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
