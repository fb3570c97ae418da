#!/usr/bin/env bash
# Installs minimod's build, test and plotting dependencies with apt (Debian 12 / Ubuntu).
# Idempotent: only missing packages are installed, and `apt-get update` runs only when something
# is missing, so a second run takes well under a second. Uses sudo only when not root.
# Not for the GPU machine (no package registry there): its image already has everything.
set -euo pipefail

packages=(
  cmake ninja-build g++
  libopenmpi-dev openmpi-bin
  slurm-wlm munge                 # the srun test starts a private Slurm (tests/mpi/srun_test.sh)
  libhdf5-dev libyaml-cpp-dev libgtest-dev
  python3-h5py python3-matplotlib python3-numpy
  python3-segyio                  # tools/export_segy.py (SEG-Y export) and its test
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  # Not Debian/Ubuntu: we cannot install, but a prepared machine may still build.
  for tool in cmake ninja c++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "install-deps: no apt on this system and '$tool' is missing; install the equivalents of:" >&2
      echo "  ${packages[*]}" >&2
      exit 1
    fi
  done
  echo "install-deps: no apt on this system; assuming the dependencies are installed" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing packages and not root, and sudo is not available; as root run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
