#!/usr/bin/env bash
# The cpu backend against the reference backend on every corpus matrix, with another process
# keeping one core busy: `kryflow solve` wall time (and the solve phase from its JSON report) on
# the reference backend and on the cpu backend with OMP_NUM_THREADS = 1, 2 and 8, repeated,
# medians compared. The criterion: cpu / reference <= 1.5 for every matrix and thread count.
#
#   scripts/cpu_backend_check.sh [-k build/apps/kryflow/kryflow] [-r 3] [-o out_dir]
#                                [-c case,case,...] [-t "1 2 8"] [-n] [-x "extra solve options"]
#
#   -k  the kryflow binary               -r  repeats per configuration (medians are quoted)
#   -o  folder for raw.txt and table.txt  -c  cases to run (default: all, see CASES below)
#   -t  OMP_NUM_THREADS values            -n  no busy process (the idle machine)
#   -x  options added to every solve (e.g. "--copy-bytes 0" to skip the copy-bandwidth
#       measurement)
#
# The busy process is a shell loop pinned to the last core listed by the affinity mask of this
# script (taskset); kryflow itself is not pinned. Runs are interleaved (reference, then each
# thread count, then the next repeat) so a slow phase of the machine hits every configuration.
# Exit status 1 when a ratio exceeds 1.5.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kryflow=$root/build/apps/kryflow/kryflow
repeats=3
out=""
only=""
threads_list="1 2 8"
busy=1
extra=""
while getopts "k:r:o:c:t:nx:" opt; do
  case $opt in
    k) kryflow=$OPTARG ;;
    r) repeats=$OPTARG ;;
    o) out=$OPTARG ;;
    c) only=",$OPTARG," ;;
    t) threads_list=$OPTARG ;;
    n) busy=0 ;;
    x) extra=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 1 ;;
  esac
done
data=${KRYFLOW_DATA_DIR:-$root/../shared/data}
m=$data/matrices
[ -x "$kryflow" ] || { echo "no kryflow binary at $kryflow" >&2; exit 1; }
[ -d "$m" ] || { echo "no corpus at $m (set KRYFLOW_DATA_DIR)" >&2; exit 1; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"
raw=$out/raw.txt
table=$out/table.txt

# name|arguments (the device_run.sh cli step, plus 2dcyl1 with GMRES and ex19_cavity_257).
CASES=(
  "ex10hs|-A $m/suitesparse/ex10hs/ex10hs.mtx.gz --preset pcg_jacobi -p solver.relative_tolerance=1e-9 -p solver.max_iterations=30000 -p solver.stagnation_window=5000"
  "openfoam_p_23325|-A $m/openfoam/pressure_23325/openfoam_p_23325.mtx.gz --preset pcg_jacobi --pin-unknown 1 -p solver.relative_tolerance=1e-9"
  "airfoil_2d|-A $m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10"
  "2dcyl1|-A $m/fvens/2dcyl1/2dcyl1.mtx.gz -b $m/fvens/2dcyl1/2dcyl1_b.mtx.gz --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10"
  "2dcyl1_gmres|-A $m/fvens/2dcyl1/2dcyl1.mtx.gz -b $m/fvens/2dcyl1/2dcyl1_b.mtx.gz --preset gmres_jacobi -p solver.relative_tolerance=1e-10"
  "ex19_cavity_33|-A $m/petsc_ex19/ex19_cavity_33.mtx.gz --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10 -p solver.max_iterations=20000"
  "ex19_cavity_129|-A $m/petsc_ex19/ex19_cavity_129.mtx.gz --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10 -p solver.max_iterations=20000"
  "ex19_cavity_257|-A $m/petsc_ex19/ex19_cavity_257.mtx.gz --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10 -p solver.max_iterations=20000"
)

busy_pid=""
stop_busy() {
  if [ -n "$busy_pid" ]; then
    kill "$busy_pid" 2>/dev/null
    wait "$busy_pid" 2>/dev/null
    busy_pid=""
  fi
}
trap stop_busy EXIT
trap 'exit 130' INT TERM
cores=$(taskset -cp $$ | sed 's/.*: //')
busy_core=$(python3 -c "import os; print(max(os.sched_getaffinity(0)))")
if [ "$busy" = 1 ]; then
  taskset -c "$busy_core" sh -c 'while :; do :; done' &
  busy_pid=$!
fi

{
  echo "# kryflow cpu backend check: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $(nproc) cores" \
       "(affinity $cores), busy process: $([ "$busy" = 1 ] && echo "pinned to core $busy_core" || echo none)"
  echo "# binary: $kryflow ($("$kryflow" --version 2>/dev/null | head -1))"
  echo "# OMP_WAIT_POLICY=${OMP_WAIT_POLICY-unset} GOMP_SPINCOUNT=${GOMP_SPINCOUNT-unset}" \
       "KMP_BLOCKTIME=${KMP_BLOCKTIME-unset}; extra solve options: ${extra:-none}"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# case backend omp_threads repeat wall_s solve_s iterations status exit"
} >"$raw"

run_one() {  # name backend threads repeat args...
  local name=$1 backend=$2 threads=$3 repeat=$4
  shift 4
  local json start stop rc
  json=$(mktemp)
  start=$EPOCHREALTIME
  if [ "$threads" = "-" ]; then
    "$kryflow" solve --backend "$backend" --report json "$@" >"$json" 2>/dev/null
  else
    OMP_NUM_THREADS=$threads "$kryflow" solve --backend "$backend" --report json "$@" >"$json" 2>/dev/null
  fi
  rc=$?
  stop=$EPOCHREALTIME
  python3 - "$json" "$name" "$backend" "$threads" "$repeat" "$start" "$stop" "$rc" >>"$raw" <<'PY'
import json, sys
path, name, backend, threads, repeat, start, stop, rc = sys.argv[1:]
try:
    r = json.load(open(path))
    solve, it, status = r.get("solve_seconds", float("nan")), r.get("iterations", -1), r.get("status", "?")
except Exception:
    solve, it, status = float("nan"), -1, "no-report"
print(f"{name} {backend} {threads} {repeat} {float(stop) - float(start):.4f} {solve:.4f} {it} {status} {rc}")
PY
  tail -n 1 "$raw" >&2
  rm -f "$json"
}

for entry in "${CASES[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then continue; fi
  for ((rep = 1; rep <= repeats; rep++)); do
    # shellcheck disable=SC2086
    run_one "$name" reference - "$rep" $args $extra
    for t in $threads_list; do
      # shellcheck disable=SC2086
      run_one "$name" cpu "$t" "$rep" $args $extra
    done
  done
done
stop_busy
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"

python3 - "$raw" "$threads_list" >"$table" <<'PY'
import statistics, sys
from collections import defaultdict
raw, threads = sys.argv[1], sys.argv[2].split()
runs = defaultdict(list)
order = []
header = [l for l in open(raw) if l.startswith("#") and "case backend" not in l]
for line in open(raw):
    if line.startswith("#"):
        continue
    name, backend, t, rep, wall, solve, it, status, rc = line.split()
    key = (name, backend, t)
    runs[key].append((float(wall), float(solve), int(it), status))
    if name not in order:
        order.append(name)
med = lambda key, i: statistics.median(r[i] for r in runs[key])
print("".join(header), end="")
print("# medians over repeats; ratio = cpu / reference (wall: whole `kryflow solve` command; solve:")
print("# the solve phase of its report); criterion ratio <= 1.5")
cols = "".join(f" | cpu t={t} wall s | ratio | solve ratio" for t in threads)
print(f"| matrix | iterations | ref wall s | ref solve s{cols} |")
print("|---|---|---|---" + "|---|---|---" * len(threads) + "|")
worst = 0.0
for name in order:
    ref = (name, "reference", "-")
    if ref not in runs:
        continue
    its = sorted({r[2] for k, v in runs.items() if k[0] == name for r in v})
    row = f"| {name} | {'/'.join(map(str, its))} | {med(ref, 0):.3f} | {med(ref, 1):.3f}"
    for t in threads:
        key = (name, "cpu", t)
        if key not in runs:
            row += " | - | - | -"
            continue
        wr, sr = med(key, 0) / med(ref, 0), med(key, 1) / med(ref, 1)
        worst = max(worst, wr, sr)
        row += f" | {med(key, 0):.3f} | {wr:.2f} | {sr:.2f}"
    print(row + " |")
bad = sorted({r[3] for v in runs.values() for r in v} - {"converged"})
print(f"\nworst ratio {worst:.2f}: {'PASS' if worst <= 1.5 else 'FAIL'} (criterion <= 1.5)"
      + (f"; statuses other than converged: {', '.join(bad)}" if bad else ""))
PY
cat "$table"
grep -q "PASS" "$table"
