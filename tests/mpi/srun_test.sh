#!/usr/bin/env bash
# End-to-end test: `srun -n 2 minimod ...` under a real, private Slurm started by this script.
#
# usage: tests/mpi/srun_test.sh BUILD_DIR SOURCE_DIR
#
# Starts its own munged, slurmctld and slurmd (all files in a private temp dir, SLURM_CONF pointing
# there, so nothing under /etc or /run is touched), runs a shortened configs/quickstart.yaml once
# with `srun -n 2` and decomposition [2,1,1] and once serially, and checks that
#   - srun exits 0,
#   - exactly one `summary ` line is printed (only rank 0 prints) and it says ranks=2,
#   - the seismograms (/seismograms/*) of the two HDF5 files are bit-identical.
# Exit status: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE), 2 usage.
#
# Environment (for debugging):
#   SRUN_TEST_PROGRAM="prog args..."  run `srun -n 2 --overcommit prog args...` instead of minimod
#                                     and check only its exit status (e.g. an MPI hello world).
#   SRUN_TEST_KEEP=1                  keep the temp dir (configs, daemon logs, HDF5 files).
# The Slurm setup follows shared/notes/local-slurm.md (a local Slurm set up by hand), minus /etc.
set -euo pipefail

usage() { echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2; exit 2; }
skip() { echo "SKIP: $*"; exit 77; }
[[ $# -eq 2 ]] || usage
BUILD_DIR=$(cd "$1" && pwd) || usage
SOURCE_DIR=$(cd "$2" && pwd) || usage

# slurmd double-forks slurmstepd, so a finished step is reparented to PID 1; where PID 1 does not
# reap (containers, microVMs) it stays behind as a zombie. Make this shell a child subreaper
# (prctl PR_SET_CHILD_SUBREAPER, kept across exec) so that orphans come back to bash, which reaps
# them. Optional: without python3 the test still works.
if [[ -z ${SRUN_TEST_SUBREAPER:-} && -x /usr/bin/python3 ]]; then
  export SRUN_TEST_SUBREAPER=1
  exec /usr/bin/python3 -c '
import ctypes, os, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
os.execv(sys.argv[1], sys.argv[1:])' "$BASH" "$0" "$BUILD_DIR" "$SOURCE_DIR"
fi

# The daemons live in /usr/sbin, which is not on every PATH (e.g. under ctest run by a plain user).
export PATH="$PATH:/usr/sbin:/sbin"

# ---------------------------------------------------------------------------------------------
# Preconditions: skip (not fail) when this machine cannot host a private Slurm.
# ---------------------------------------------------------------------------------------------
# slurmd must run as root to launch jobs (SlurmUser=root); munged refuses keys it does not own.
[[ $(id -u) -eq 0 ]] || skip "not running as root (slurmd and SlurmUser=root need root)"
for tool in munged slurmctld slurmd srun sinfo scancel timeout; do
  command -v "$tool" >/dev/null 2>&1 || skip "'$tool' not found (install slurm-wlm munge)"
done

PROGRAM=()
if [[ -n ${SRUN_TEST_PROGRAM:-} ]]; then
  read -r -a PROGRAM <<<"$SRUN_TEST_PROGRAM"
else
  [[ -x $BUILD_DIR/minimod ]] || skip "$BUILD_DIR/minimod not built"
  [[ -f $SOURCE_DIR/configs/quickstart.yaml ]] || skip "$SOURCE_DIR/configs/quickstart.yaml missing"
  # Comparing the seismograms needs h5py (reports the largest difference) or else h5diff.
  if /usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1; then
    COMPARE=h5py
  elif command -v h5diff >/dev/null 2>&1; then
    COMPARE=h5diff
  else
    skip "neither /usr/bin/python3 with h5py nor h5diff (hdf5-tools) is available"
  fi
fi

# ---------------------------------------------------------------------------------------------
# Private work dir and cleanup. Everything the daemons write goes here; the EXIT trap stops exactly
# the processes started below and removes the dir.
# ---------------------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/minimod-srun-test.XXXXXX)   # mode 700: key, state and logs stay private
mkdir -m 700 "$WORK/munge" "$WORK/state" "$WORK/spool" "$WORK/log" "$WORK/run" "$WORK/tmpfs"
CONF=$WORK/slurm.conf
export SLURM_CONF=$CONF        # read by slurmctld/slurmd/srun/sinfo; keeps /etc/slurm out of it
MUNGE_SOCKET=$WORK/munge/munge.socket
PIDS=()                        # started daemons, in start order
T0=$SECONDS

log_tails() {   # the daemons' own logs (their stdout in log/*.out mostly repeats them)
  local f
  for f in "$WORK"/log/*.log; do
    [[ -s $f ]] || continue
    echo "---- tail of ${f#"$WORK"/} ----"
    tail -n 20 "$f"
  done
}

cleanup() {
  local rc=$? pid i stray=()
  trap - EXIT INT TERM
  set +e
  # Interrupted while waiting for srun/minimod: stop that first (srun then cancels its step).
  if [[ -n ${JOB_PID:-} ]]; then
    kill -TERM "$JOB_PID" 2>/dev/null
    wait "$JOB_PID" 2>/dev/null
  fi
  # A job step left behind (e.g. srun killed by timeout) would keep slurmstepd and the ranks alive
  # after slurmd is gone; cancel through our own controller first (SLURM_CONF is ours).
  if ((${#PIDS[@]} >= 2)) && kill -0 "${PIDS[1]}" 2>/dev/null; then
    timeout 10 scancel --quiet --user=root >/dev/null 2>&1
  fi
  # Stop the daemons in reverse start order (slurmd, slurmctld, munged): TERM, then KILL after 10 s.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PIDS[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # slurmstepd and job tasks are not our children (slurmd daemonizes them), but they inherit
  # SLURM_CONF=$CONF, a path unique to this run: use that to find any that are still around.
  # Unset it first so that the grep below does not find itself. Zombies (state Z) are skipped:
  # they have exited already and are reaped by their parent (this shell, as subreaper).
  unset SLURM_CONF
  while read -r pid; do
    [[ $pid == "$$" ]] && continue
    [[ $(ps -o stat= -p "$pid" 2>/dev/null) == Z* ]] && continue
    stray+=("$pid")
  done < <(grep -lzx "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
  if ((${#stray[@]})); then
    echo "cleanup: killing leftover processes of this Slurm:"
    ps -o pid,ppid,stat,args -p "$(IFS=,; echo "${stray[*]}")" | sed 's/^/  /'
    kill -KILL "${stray[@]}" 2>/dev/null
  fi
  if ((rc != 0 && rc != 77)); then log_tails; fi
  if [[ ${SRUN_TEST_KEEP:-0} == 1 ]]; then
    echo "kept $WORK"
  else
    rm -rf "$WORK"
  fi
  echo "srun_test: done in $((SECONDS - T0)) s (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM   # route signals through the EXIT trap

die() { echo "FAIL: $*"; exit 1; }

# Run a command in the background and wait for it: bash runs a trap only after a foreground command
# has finished, but interrupts `wait` at once, so SIGTERM/SIGINT (ctest, Ctrl-C) still clean up
# promptly. Usage: run_bg OUT ERR cmd... ; stdout to OUT, stderr to ERR, exit status in JOB_RC.
# (Redirect inside, not on the call: a trap fired during `wait` would inherit the call's redirection.)
JOB_PID=
JOB_RC=
run_bg() {
  local out=$1 err=$2
  shift 2
  "$@" >"$out" 2>"$err" &
  JOB_PID=$!
  JOB_RC=0
  wait "$JOB_PID" || JOB_RC=$?
  JOB_PID=
}

# ---------------------------------------------------------------------------------------------
# munge: own key, socket, pid, log and seed file. Run in the foreground (-F) as a background job so
# that $! is the daemon itself, not a parent that forks and exits.
# ---------------------------------------------------------------------------------------------
head -c 1024 /dev/urandom >"$WORK/munge/munge.key"
chmod 400 "$WORK/munge/munge.key"
munged -F --force --socket="$MUNGE_SOCKET" --key-file="$WORK/munge/munge.key" \
  --pid-file="$WORK/run/munged.pid" --log-file="$WORK/log/munged.log" \
  --seed-file="$WORK/munge/munged.seed" >"$WORK/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -S $MUNGE_SOCKET ]] && break; sleep 0.1; done
[[ -S $MUNGE_SOCKET ]] || skip "local Slurm could not start here: munged did not create $MUNGE_SOCKET"

# ---------------------------------------------------------------------------------------------
# slurm.conf
# ---------------------------------------------------------------------------------------------
HOST=$(hostname -s)

# Another Slurm on this machine would own the default ports 6817/6818; then move ours, and in any
# case take the first pair of ports nobody listens on.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
CTLD_PORT=6817
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then CTLD_PORT=16817; fi
while port_busy "$CTLD_PORT" || port_busy "$((CTLD_PORT + 1))"; do
  CTLD_PORT=$((CTLD_PORT + 2))
  ((CTLD_PORT < 17817)) || skip "local Slurm could not start here: no free port pair for slurmctld/slurmd"
done
SLURMD_PORT=$((CTLD_PORT + 1))

write_conf() {   # $1: MpiDefault
  cat >"$CONF" <<EOF
# Private single-node Slurm for tests/mpi/srun_test.sh; everything lives in $WORK.
ClusterName=minimodtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
# No cgroups: proctrack/linuxproc and task/none work in containers and without systemd.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=$1
ReturnToService=2
StateSaveLocation=$WORK/state
# Per-job scratch (the pmix plugin puts its spmix_appdir_* here) stays private too.
TmpFS=$WORK/tmpfs
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# Quick teardown of killed steps.
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=500 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP
EOF
}

# Choose the MPI plugin: pmix (what OpenMPI 4 uses under srun), else pmi2, else none. `srun
# --mpi=list` needs a readable config but no running daemons.
write_conf none
MPI_LIST=$(srun --mpi=list 2>&1 || true)
if grep -qw pmix <<<"$MPI_LIST"; then
  MPI_TYPE=pmix
elif grep -qw pmi2 <<<"$MPI_LIST"; then
  MPI_TYPE=pmi2
else
  MPI_TYPE=none
fi
echo "srun --mpi=list: $(tr -s '\n\t ' ' ' <<<"$MPI_LIST")"
echo "using MpiDefault=$MPI_TYPE, ports $CTLD_PORT/$SLURMD_PORT, node $HOST with $(nproc) CPUs"
write_conf "$MPI_TYPE"

# ---------------------------------------------------------------------------------------------
# slurmctld and slurmd in the foreground (-D), as background jobs, for exact PIDs.
# ---------------------------------------------------------------------------------------------
slurmctld -D -i -f "$CONF" >"$WORK/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$CONF" -N "$HOST" >"$WORK/log/slurmd.out" 2>&1 &
PIDS+=($!)

# The node starts as unknown* and turns idle once slurmd has registered.
state=
for _ in $(seq 120); do
  for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || skip "local Slurm could not start here: a daemon exited early (pid $pid)"; done
  state=$(sinfo -h -N -n "$HOST" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
[[ $state == idle ]] || skip "local Slurm could not start here: node $HOST not idle after 60 s (state '${state}')"
echo "slurm up after $((SECONDS - T0)) s: node $HOST $state"

# Ranks run as root. Direct launch by srun does not need OMPI_ALLOW_RUN_AS_ROOT (checked with
# OpenMPI 4.1.4); only mpirun refuses root without it, e.g. SRUN_TEST_PROGRAM="mpirun ...".
# One OpenMP thread per rank: the ranks share the few cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

# ---------------------------------------------------------------------------------------------
# Debug mode: any program under srun, exit status only.
# ---------------------------------------------------------------------------------------------
if ((${#PROGRAM[@]})); then
  run_bg "$WORK/program.out" "$WORK/program.err" timeout 300 srun -n 2 --overcommit "${PROGRAM[@]}"
  sed 's/^/  stdout: /' "$WORK/program.out"
  sed 's/^/  stderr: /' "$WORK/program.err"
  ((JOB_RC == 0)) || die "srun -n 2 ${PROGRAM[*]} exited $JOB_RC"
  echo "PASS: srun -n 2 ${PROGRAM[*]} exited 0"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# minimod: the quickstart survey, made small (2 s serial on 2 cores) so the test stays quick. The
# grid stays long in x so that [2,1,1] splits it with room to spare beside the PML.
# ---------------------------------------------------------------------------------------------
MINIMOD_ARGS=(
  --config "$SOURCE_DIR/configs/quickstart.yaml" --quiet
  --set execution.backend=cpu
  --set time.duration=0.3
  --set 'grid.shape=[101,61,61]'
  --set 'source.position=[500,300,20]'
  --set 'receivers[0].line.start=[0,300,10]'
  --set 'receivers[0].line.end=[1000,300,10]'
  --set 'receivers[0].line.count=101'
  --set output.overwrite=true
)

# Output is written into $WORK, which srun's tasks can reach: same machine, same user, and srun
# starts the ranks in the current directory.
run_bg "$WORK/srun.out" "$WORK/srun.err" \
  timeout 300 srun -n 2 --overcommit "$BUILD_DIR/minimod" "${MINIMOD_ARGS[@]}" \
  --set 'execution.decomposition=[2,1,1]' --set "output.file=$WORK/srun.h5"
rc=$JOB_RC
sed 's/^/  srun stdout: /' "$WORK/srun.out"
sed 's/^/  srun stderr: /' "$WORK/srun.err"

run_bg "$WORK/serial.out" "$WORK/serial.err" \
  timeout 300 "$BUILD_DIR/minimod" "${MINIMOD_ARGS[@]}" --set "output.file=$WORK/serial.h5"
rc_serial=$JOB_RC
sed 's/^/  serial stdout: /' "$WORK/serial.out"
sed 's/^/  serial stderr: /' "$WORK/serial.err"

failed=0
check() {   # $1: condition result (0 = ok), $2: what was checked
  if (($1 == 0)); then echo "PASS: $2"; else echo "FAIL: $2"; failed=1; fi
}

check "$rc" "srun -n 2 minimod exit status ($rc)"
check "$rc_serial" "serial minimod exit status ($rc_serial)"

n_summary=$(grep -c '^summary ' "$WORK/srun.out" || true)
check "$((n_summary != 1))" "srun run printed exactly one summary line (got $n_summary)"
summary=$(grep -m1 '^summary ' "$WORK/srun.out" || true)
ranks=$(grep -o ' ranks=[^ ]*' <<<"$summary" | cut -d= -f2 || true)
check "$([[ $ranks == 2 ]]; echo $?)" "srun summary says ranks=2 (got ranks=${ranks:-none})"
decomp=$(grep -o ' decomposition=[^ ]*' <<<"$summary" | cut -d= -f2 || true)
check "$([[ $decomp == 2x1x1 ]]; echo $?)" "srun summary says decomposition=2x1x1 (got ${decomp:-none})"

# Seismograms: same datasets, same shapes, bit-identical values (the results must not depend on the
# decomposition; README: receiver weights depend only on the global position).
if [[ ! -f $WORK/srun.h5 || ! -f $WORK/serial.h5 ]]; then
  check 1 "seismograms compared (missing $( [[ -f $WORK/srun.h5 ]] || echo srun.h5) $( [[ -f $WORK/serial.h5 ]] || echo serial.h5))"
elif [[ $COMPARE == h5py ]]; then
  cmp_rc=0
  /usr/bin/python3 - "$WORK/serial.h5" "$WORK/srun.h5" <<'EOF' || cmp_rc=$?
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
ga, gb = a.get("seismograms"), b.get("seismograms")
if ga is None or gb is None:
    print("FAIL: /seismograms missing in", "serial.h5" if ga is None else "srun.h5"); sys.exit(1)
names_a, names_b = sorted(ga.keys()), sorted(gb.keys())
if names_a != names_b or not names_a:
    print(f"FAIL: /seismograms datasets differ: serial {names_a} vs srun {names_b}"); sys.exit(1)
bad = 0
for n in names_a:
    x, y = ga[n][()], gb[n][()]
    if x.shape != y.shape:
        print(f"FAIL: /seismograms/{n} shape serial {x.shape} vs srun {y.shape}"); bad = 1; continue
    d = np.abs(x.astype(np.float64) - y.astype(np.float64))
    maxd = float(d.max()) if d.size else 0.0
    scale = float(np.abs(x).max()) if x.size else 0.0
    ndiff = int(np.count_nonzero(x != y))
    ok = ndiff == 0 and np.isfinite(x).all()
    print(f"{'PASS' if ok else 'FAIL'}: /seismograms/{n} {list(x.shape)} serial vs srun -n 2 [2,1,1]: "
          f"largest |difference| {maxd:.3e} (trace max |value| {scale:.3e}), {ndiff} values differ")
    bad |= not ok
sys.exit(bad)
EOF
  ((cmp_rc == 0)) || failed=1
else
  cmp_rc=0
  h5diff -r "$WORK/serial.h5" "$WORK/srun.h5" /seismograms /seismograms >"$WORK/h5diff.out" 2>&1 || cmp_rc=$?
  tail -n 5 "$WORK/h5diff.out" | sed 's/^/  h5diff: /'
  check "$cmp_rc" "h5diff /seismograms serial vs srun -n 2 [2,1,1] (exact; h5diff lists any differences)"
fi

((failed == 0)) || die "srun test failed"
echo "PASS: srun -n 2 minimod matches the serial run"
