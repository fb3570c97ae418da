#!/usr/bin/env bash
# First run (README): install dependencies, build minimod, model the quickstart survey
# (configs/quickstart.yaml: three layers under a free surface, one shot, 201 receivers) and plot
# the shot gather and a wavefield snapshot.
#   bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# The Debian packages (python3-h5py, python3-matplotlib) belong to the system Python.
python=${PYTHON:-/usr/bin/python3}

bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j "$jobs" --target minimod

"$build_dir/minimod" --config configs/quickstart.yaml --set output.overwrite=true
"$python" tools/plot_gather.py out/quickstart.h5 -o out/quickstart-gather.png
"$python" tools/plot_snapshot.py out/quickstart.h5 -o out/quickstart-snapshot.png

root=$(pwd)
echo
echo "quickstart done:"
echo "  result (HDF5)     $root/out/quickstart.h5"
[[ -f out/quickstart.xmf ]] && echo "  snapshots (XDMF)  $root/out/quickstart.xmf  (open in ParaView)"
echo "  shot gather       $root/out/quickstart-gather.png"
echo "  snapshot          $root/out/quickstart-snapshot.png"
