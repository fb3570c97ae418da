#!/usr/bin/env bash
# A fingerprint of the sources that make the binaries (C++/CUDA files and CMake files), to tell
# which commit a GPU run built: bench/h100_session.sh prints it beside the commit label (which
# is passed by hand, as the GPU machine's copy of the tree has no up-to-date git).
#   bash scripts/source_fingerprint.sh            the working tree
#   bash scripts/source_fingerprint.sh COMMIT     that commit (to check a result's label)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fingerprint() {  # of the tree in the current directory
  find app bench io kernels mpi physics pml tests tools CMakeLists.txt -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name 'CMakeLists.txt' \) 2>/dev/null |
    LC_ALL=C sort | while read -r f; do printf '%s\n' "$f"; cat "$f"; done | sha1sum | cut -c1-12
}
if [ $# -eq 0 ]; then
  fingerprint
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git archive "$1" | tar -x -C "$tmp"
  (cd "$tmp" && fingerprint)
fi
