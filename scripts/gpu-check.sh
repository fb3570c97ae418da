#!/usr/bin/env bash
# GPU machine check: build with CUDA for sm_90, run the GPU tests (CUDA equals the CPU reference),
# then the CPU tests, then the benchmark; end with a short summary. Do not run install-deps here:
# the GPU image has CUDA 13, CMake 4, Ninja, OpenMPI, HDF5, yaml-cpp and GoogleTest, no registry.
#   bash scripts/gpu-check.sh [--gpu-only]
# Environment:
#   BENCH_KERNELS  families to benchmark, comma-separated (default: every `cuda` family that
#                  `minimod --list-kernels` prints)
#   BENCH_SHAPES   default 512,1000          BENCH_STEPS  default 100
#   BUILD_DIR      default build             JOBS         default: number of cores
#   OUT            if set, everything is also written to $OUT/gpu-check.log
# Exit status: non-zero if the build, a GPU test, a CPU test or the benchmark fails (the benchmark
# runs even when tests fail).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

gpu_only=0
for arg in "$@"; do
  case "$arg" in
    --gpu-only) gpu_only=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option '$arg' (--gpu-only)" >&2; exit 2 ;;
  esac
done

build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 8)}
bench_shapes=${BENCH_SHAPES:-512,1000}
bench_steps=${BENCH_STEPS:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Counts from a ctest log: "N% tests passed, F tests failed out of T" and skipped tests.
ctest_counts() {  # log -> "total passed failed skipped"
  # ctest prints "100% tests passed out of T" or "N% tests passed, F tests failed out of T".
  local log=$1 total failed skipped
  total=$(sed -n 's/.*tests passed.* out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
  skipped=$(grep -c -- '\*\*\*Skipped\|Not Run (Disabled)' "$log" || true)
  total=${total:-0}
  failed=${failed:-0}
  echo "$total $((total - failed - skipped)) $failed $skipped"
}

main() {
  local status=0
  echo "== gpu-check $(date -u '+%Y-%m-%dT%H:%M:%SZ') on $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  else
    echo "gpu-check: warning: nvidia-smi not found"
  fi
  command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -2
  cmake --version | head -1

  echo "== configure and build ($build_dir, $jobs jobs)"
  if ! cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES=90 -DMINIMOD_NATIVE=ON; then
    echo "gpu-check: FAILED: configure"; return 1
  fi
  if ! grep -q '^CMAKE_CUDA_COMPILER:.*nvcc' "$build_dir/CMakeCache.txt"; then
    echo "gpu-check: FAILED: CMake found no CUDA compiler (is nvcc on PATH?)"; return 1
  fi
  # Filter ptxas' per-kernel chatter (-Xptxas=-v) out of the terminal; keep it in a file.
  if ! cmake --build "$build_dir" -j "$jobs" > "$tmp/build.log" 2>&1; then
    grep -v '^ptxas info\|^    [0-9]* bytes stack frame' "$tmp/build.log" | tail -60
    echo "gpu-check: FAILED: build"; return 1
  fi
  grep -v '^ptxas info\|^    [0-9]* bytes stack frame\|^\[[0-9]*/[0-9]*\]' "$tmp/build.log" | tail -20
  grep -i 'spill stores' "$tmp/build.log" | grep -v ' 0 bytes spill stores' | sort | uniq -c | head -5
  "$build_dir/minimod" --version

  echo "== GPU tests (ctest -L gpu)"
  ctest --test-dir "$build_dir" -L gpu --output-on-failure --no-tests=error 2>&1 | tee "$tmp/gpu.log"
  local gpu_rc=${PIPESTATUS[0]}
  read -r gpu_total gpu_pass gpu_fail gpu_skip < <(ctest_counts "$tmp/gpu.log")
  if [[ $gpu_rc -ne 0 ]]; then status=1; fi
  if [[ $gpu_skip -gt 0 ]]; then
    echo "gpu-check: warning: $gpu_skip GPU tests were skipped (is a GPU visible?)"
  fi
  if [[ $gpu_pass -eq 0 ]]; then
    echo "gpu-check: FAILED: no GPU test passed"; status=1
  fi

  local cpu_summary="not run (--gpu-only)"
  if [[ $gpu_only -eq 0 ]]; then
    echo "== other tests (ctest -LE gpu)"
    ctest --test-dir "$build_dir" -LE gpu --output-on-failure -j8 2>&1 | tee "$tmp/cpu.log"
    local cpu_rc=${PIPESTATUS[0]}
    read -r cpu_total cpu_pass cpu_fail cpu_skip < <(ctest_counts "$tmp/cpu.log")
    cpu_summary="$cpu_pass passed, $cpu_fail failed, $cpu_skip skipped of $cpu_total"
    [[ $cpu_rc -eq 0 ]] || { status=1; cpu_summary+=" (ctest exit $cpu_rc)"; }
  fi

  echo "== benchmark"
  local kernels=${BENCH_KERNELS:-}
  if [[ -z "$kernels" ]]; then
    kernels=$("$build_dir/minimod" --list-kernels | awk '$1 == "cuda" { print $2 }' | paste -sd, -)
  fi
  local bench_rc=0
  if [[ -z "$kernels" ]]; then
    echo "gpu-check: FAILED: minimod --list-kernels lists no cuda kernel family"
    bench_rc=1
  else
    local cmd=("$build_dir/bench/minimod_bench" --backend cuda --kernels "$kernels"
               --shapes "$bench_shapes" --steps "$bench_steps")
    echo "${cmd[*]}"
    "${cmd[@]}" 2>&1 | tee "$tmp/bench.log"
    bench_rc=${PIPESTATUS[0]}
  fi
  [[ $bench_rc -eq 0 ]] || status=1

  echo
  echo "== summary"
  echo "gpu tests:   $gpu_pass passed, $gpu_fail failed, $gpu_skip skipped of $gpu_total$([[ $gpu_rc -ne 0 ]] && echo " (ctest exit $gpu_rc)")"
  echo "other tests: $cpu_summary"
  echo "benchmark:   kernels $kernels, shapes $bench_shapes, $bench_steps steps$([[ $bench_rc -ne 0 ]] && echo " -- FAILED (exit $bench_rc)")"
  grep '^#\|^|' "$tmp/bench.log" 2>/dev/null || true
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)"
  return $status
}

if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  main 2>&1 | tee "$OUT/gpu-check.log"
  exit "${PIPESTATUS[0]}"
else
  main
fi
