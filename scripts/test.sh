#!/usr/bin/env bash
# The test command (README): install dependencies, configure (Release, Ninja, build/), build
# everything, run every test. Exits non-zero on any failure.
#   bash scripts/test.sh
# Environment: BUILD_DIR (default build), JOBS (default: number of cores, at least 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[[ "$jobs" -ge 2 ]] || jobs=2

bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
