#!/usr/bin/env bash
# Makes a variant folder for bench/h200_tti_ab.sh from patches, here (the GPU machine's copy of the
# tree has no git to apply them): the files the patches change, as they are once every patch is
# applied in order to the tree's HEAD, at their paths under FOLDER. The folder must travel with
# the call: put it where git neither tracks nor ignores it (ab/, say).
#   bash bench/variant_folder.sh ab/pairs bench/variants/session35-axis-weight-pairs.patch
#   bash bench/variant_folder.sh ab/trims bench/variants/session35-axis-weight-pairs.patch bench/variants/session35-output-trims.patch
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -ge 2 ] || { echo "usage: $0 FOLDER PATCH..." >&2; exit 2; }
folder=$1; shift
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" > /dev/null 2>&1 || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" HEAD
for p in "$@"; do git -C "$tree" apply "$(realpath "$p")" || { echo "$p: does not apply" >&2; exit 1; }; done
rm -rf "$folder"
git -C "$tree" diff --name-only HEAD | while read -r f; do
  mkdir -p "$folder/$(dirname "$f")"; cp "$tree/$f" "$folder/$f"; echo "$folder: $f"
done
