#!/usr/bin/env bash
# Weak scaling of the distributed app: a fixed subdomain per rank, 1..N ranks, the domain grown along
# one axis at a time (one series per axis; the 1-rank run is shared by all series). Writes
# weak_scaling.csv, README.md and weak_scaling.png to $OUT_DIR. On the GPU machine (any directory):
#   NGPUS=2 bash bench/weak_scaling.sh
#   RANKS="1 2 4" AXES=x PER_RANK=512,512,512 KERNEL=semi EXTRA_SET="--set execution.transport=host" bash bench/weak_scaling.sh
# Env: MINIMOD_BIN, NGPUS (2) or RANKS, PER_RANK (1000,1000,1000), AXES ("x y z"), BACKEND (cuda),
# KERNEL (auto), STEPS (200), MPIRUN_ARGS, EXTRA_SET, OVERSUBSCRIBE=1, OUT_DIR, MINIMOD_COMMIT.
set -euo pipefail

die() { echo "weak_scaling.sh: error: $*" >&2; exit 1; }
# Resolve user paths against the caller's directory before moving to the repository root.
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
bin=$(abspath "${MINIMOD_BIN:-build/minimod}")
out_dir=$(abspath "${OUT_DIR:-bench/results/weak-scaling-$(date +%Y%m%d-%H%M)}")
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ -x $bin ]] || die "'$bin' does not exist or is not executable: build the app first (cmake --build build) or set MINIMOD_BIN"
command -v mpirun >/dev/null || die "mpirun not found on PATH (apt install openmpi-bin)"
csv=$out_dir/weak_scaling.csv
[[ -e $csv ]] && die "'$csv' already exists: choose another OUT_DIR"

read -r -a ranks <<<"${RANKS:-$(seq -s ' ' 1 "${NGPUS:-2}")}"
mapfile -t ranks < <(printf '%s\n' "${ranks[@]}" | sort -nu)
for n in "${ranks[@]}"; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "RANKS/NGPUS: '$n' is not a positive integer"; done
IFS=', ' read -r -a per_rank <<<"${PER_RANK:-1000,1000,1000}"
[[ ${#per_rank[@]} -eq 3 && "${per_rank[*]}" =~ ^[1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*$ ]] \
  || die "PER_RANK must be three extents like 1000,1000,1000, got '${PER_RANK}'"
read -r -a axes <<<"${AXES:-x y z}"
for a in "${axes[@]}"; do [[ $a == [xyz] ]] || die "AXES: '$a' is not one of x y z"; done

# --bind-to none: each rank drives its own GPU plus host threads for staging and output; OpenMPI's
# default core binding would squeeze those onto one core.
mpi_opts=(--bind-to none)
[[ $(id -u) == 0 ]] && mpi_opts+=(--allow-run-as-root)
[[ ${OVERSUBSCRIBE:-0} == 1 ]] && mpi_opts+=(--oversubscribe)
read -r -a more <<<"${MPIRUN_ARGS:-}"; mpi_opts+=("${more[@]}")
read -r -a extra_set <<<"${EXTRA_SET:-}"  # split on blanks only: no globbing of [..] values

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weak_scaling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out_dir/logs"
echo "axis,ranks,decomposition,shape,kernel,transport,step_ms,gpts_per_s,gpts_per_s_per_rank,interior_ms,shell_ms,exchange_exposed_ms,efficiency" >"$csv"
: >"$out_dir/commands.txt"

# Quote for copy-paste (brackets would glob in an interactive shell).
show() { local a s=; for a in "$@"; do [[ $a =~ ^[A-Za-z0-9_./=:,+-]+$ ]] && s+="$a " || s+="'$a' "; done; echo "${s% }"; }

# run N AXIS: one mpirun; leaves the summary line's key=value pairs in $summary.
run() {
  local n=$1 axis=$2 i k shape=() dec=(1 1 1) pos=()
  case $axis in x) k=0 ;; y) k=1 ;; z) k=2 ;; esac
  for i in 0 1 2; do shape[i]=${per_rank[i]}; done
  shape[k]=$(( per_rank[k] * n )); dec[k]=$n
  for i in 0 1 2; do pos[i]=$(( shape[i] * 20 / 2 )); done  # dx = 20 m in minimod-benchmark.yaml
  local log=$out_dir/logs/run_${n}_${axis}
  local cmd=(mpirun -np "$n" "${mpi_opts[@]}" "$bin" --config configs/minimod-benchmark.yaml --quiet
    --set "grid.shape=[${shape[0]},${shape[1]},${shape[2]}]"
    --set "source.position=[${pos[0]},${pos[1]},${pos[2]}]"
    --set "execution.decomposition=[${dec[0]},${dec[1]},${dec[2]}]"
    --set "execution.backend=${BACKEND:-cuda}" --set "execution.kernel=${KERNEL:-auto}"
    --set "time.steps=${STEPS:-200}" --set "output.file=$tmp/run_${n}_${axis}.h5"
    --set output.overwrite=true --set output.final_wavefield=false "${extra_set[@]}")
  show "${cmd[@]}" | tee -a "$out_dir/commands.txt"
  if ! "${cmd[@]}" >"$log.out" 2>"$log.err"; then
    echo "weak_scaling.sh: error: run with $n rank(s) along $axis failed; last lines of $log.err:" >&2
    tail -n 30 "$log.err" >&2
    exit 1
  fi
  summary=$(grep -m1 '^summary ' "$log.out") || die "no 'summary ' line on stdout of the run with $n rank(s) along $axis (see $log.out)"
}

# get KEY: the value of KEY in $summary, empty when the build does not print it.
get() { local t; for t in $summary; do [[ $t == "$1="* ]] && { echo "${t#*=}"; return; }; done; echo; }

row() {  # row AXIS N: append the CSV row for $summary
  local step gp
  step=$(get step_ms); gp=$(get gpts_per_s)
  local per=; [[ -n $gp ]] && per=$(awk -v g="$gp" -v n="$2" 'BEGIN { printf "%.3f", g / n }')
  local eff=; [[ -n $step && -n $base_ms ]] && eff=$(awk -v b="$base_ms" -v s="$step" 'BEGIN { if (s > 0) printf "%.4f", b / s }')
  local dec; dec=$(get decomposition)
  echo "$1,$2,${dec//,/x},$(get shape | tr , x),$(get kernel),$(get transport),$step,$gp,$per,$(get interior_ms),$(get shell_ms),$(get exchange_exposed_ms),$eff" >>"$csv"
}

base_ms='' base_summary=''
if [[ ${ranks[0]} == 1 ]]; then
  run 1 "${axes[0]}"; base_summary=$summary; base_ms=$(get step_ms)
else
  echo "weak_scaling.sh: warning: RANKS has no 1: efficiency left empty" >&2
fi
for axis in "${axes[@]}"; do
  [[ -n $base_summary ]] && { summary=$base_summary; row "$axis" 1; }
  for n in "${ranks[@]}"; do
    [[ $n == 1 ]] && continue
    run "$n" "$axis"; row "$axis" "$n"
  done
done

# table FMT: the CSV's main columns, aligned for the terminal (text) or as markdown (md).
table() {
  awk -F, -v fmt="$1" '
    BEGIN { split("axis ranks decomposition shape kernel transport step_ms exchange_exposed_ms gpts_per_s_per_rank efficiency", want, " ") }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { for (j = 1; j in want; j++) { v = $(col[want[j]]); if (want[j] == "efficiency" && v != "") v = sprintf("%.1f%%", 100 * v); cell[NR, j] = v } }
    END {
      split("axis ranks decomp shape kernel transport step_ms exposed_ms GPts/s/rank efficiency", head, " ")
      for (j = 1; j in want; j++) { cell[1, j] = head[j]; for (r = 1; r <= NR; r++) if (length(cell[r, j]) > w[j]) w[j] = length(cell[r, j]) }
      for (r = 1; r <= NR; r++) {
        line = ""
        for (j = 1; j in want; j++) line = line (fmt == "md" ? "| " cell[r, j] " " : sprintf("%-*s  ", w[j], cell[r, j]))
        sub(/ +$/, "", line)
        print (fmt == "md" ? line " |" : line)
        if (r == 1 && fmt == "md") { line = ""; for (j = 1; j in want; j++) line = line "|---"; print line "|" }
      }
    }' "$csv"
}
echo
table text

# Debian's python3 first: a pyenv or venv python3 on PATH often lacks matplotlib.
py='' png=''
for p in /usr/bin/python3 python3; do
  command -v "$p" >/dev/null && "$p" -c 'import matplotlib, numpy' 2>/dev/null && { py=$p; break; }
done
if [[ -z $py ]]; then
  echo "weak_scaling.sh: no python3 with matplotlib: skipping the plot (apt install python3-matplotlib)"
elif "$py" tools/plot_scaling.py "$csv"; then
  png=weak_scaling.png
else
  echo "weak_scaling.sh: warning: the plot failed; the CSV and README are still written" >&2
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | awk '{ n = $1; $1 = ""; printf "%s%s x%s", sep, n, $0; sep = ", " }') || true
commit=${MINIMOD_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{
  echo "# Weak scaling: ${per_rank[0]}x${per_rank[1]}x${per_rank[2]} points per rank, split along $(IFS=,; echo "${axes[*]}")"
  echo
  echo "- GPU: ${gpu:-no GPU}"
  echo "- Commit: $commit, date $(date +%Y-%m-%d)"
  echo "- Case: \`configs/minimod-benchmark.yaml\`, source at the global centre, ${STEPS:-200} steps, backend ${BACKEND:-cuda}, kernel ${KERNEL:-auto}"
  echo "- Efficiency = step_ms with 1 rank / step_ms with N ranks (flat time per step is 100%; the goal is 97%)."
  echo "  Raw data: \`weak_scaling.csv\` (efficiency as a fraction); per-run stdout/stderr in \`logs/\`."
  echo
  echo "Commands:"
  echo
  echo '```'
  cat "$out_dir/commands.txt"
  echo '```'
  echo
  table md
  if [[ -n $png ]]; then printf '\n![weak scaling](%s)\n' "$png"; fi
} >"$out_dir/README.md"
echo "wrote $csv and $out_dir/README.md"
