#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds kryflow for sm_90, runs every test (GPU tests
# included), the benchmarks and the CLI on the corpus, and prints a short summary table last.
#
#   scripts/device_run.sh [results-dir]
#
# Environment: KRYFLOW_DATA_DIR (matrix corpus; default .data if present, else ../shared/data);
# KRYFLOW_BUILD_TARGETS, the targets to build (default all); KRYFLOW_STEPS, the steps to run (default "tests krylov amg ainv sequence relaxation cli session bench
# formats sem pmg"; amg_corpus: the SPD corpus part of amg alone; relaxation is sweeps,
# block_presets and ilu, which can be picked alone; KRYFLOW_SWEEP_BLOCK_SIZES limits the sweeps'
# block sizes, default 1,...,8);
# KRYFLOW_TESTS_REGEX, a ctest -R pattern that limits the tests step (default: every test).
# KRYFLOW_AMG_PROBLEMS, the amg step's problems (default p7:100,p7:200,p7:300,p27:200).
# KRYFLOW_SEQUENCE_N, _EVERY, _SPEED: the sequence step's grid (64), rebuild interval (10), drift (0.02).
# python: the Python package against the installed build, its tests (CuPy included) and CuPy
# 3D Poisson against the CLI (KRYFLOW_PYTHON_N, default 200; not in the default steps).
# sem_float: the operator's float against double element arithmetic (kryflow_bench_sem), not in
# the default steps.
# pmg_kershaw: the Kershaw mesh with the p-multigrid presets and Chebyshev degrees (not in the
# default steps; KRYFLOW_KERSHAW_VARIANTS=quick: the presets and the vertex patches' variants).
# KRYFLOW_PMG_PRESETS: the pmg step's presets (default "sem_pmg_cheby_jacobi sem_pmg_schwarz
# sem_pmg_vertex_patch");
# KRYFLOW_PMG_MESHES=quick: Kershaw and the boxes up to 32^3 only.
# profile_sem: the kernels' time in one Kershaw solve with sem_pmg_schwarz (nsys, kernel
# summary) and the warp states (ncu) of the p = 7 vertex kernel, the float local solves and the
# Schwarz sums; not in the default steps.
# Offline machines: Debian packages of the dependencies placed in .deps/debs are unpacked into
# .deps/root and used when the system lacks them.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
results=${1:-${OUT:-$root/build-device/results}}
mkdir -p "$results"
build=$root/build-device
log=$results/device_log.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }

if [[ -z "${KRYFLOW_DATA_DIR:-}" ]]; then
  if [[ -d $root/.data ]]; then export KRYFLOW_DATA_DIR=$root/.data; else export KRYFLOW_DATA_DIR=$root/../shared/data; fi
fi
export PATH=/usr/local/cuda/bin:$PATH
commit=${KRYFLOW_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export KRYFLOW_COMMIT=$commit

cmake_args=(-DCMAKE_BUILD_TYPE=Release -DKRYFLOW_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
if [[ -d .deps/debs ]] && ! [[ -f /usr/include/nlohmann/json.hpp && -f /usr/include/gtest/gtest.h ]]; then
  mkdir -p .deps/root
  for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
  prefix=$root/.deps/root/usr
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INCLUDE_PATH="$prefix/include")
  if ! [[ -f /usr/include/zlib.h ]]; then
    libz=$(ldconfig -p | awk '/libz\.so\.1 /{print $NF; exit}')
    cmake_args+=(-DZLIB_INCLUDE_DIR="$prefix/include" -DZLIB_LIBRARY="${libz:-$prefix/lib/x86_64-linux-gnu/libz.a}")
  fi
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

say "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$log"
say "commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ), nvcc $(nvcc --version | tail -1), $(cmake --version | head -1), $(g++ --version | head -1)"

say "== build"
cmake -S "$root" -B "$build" "${generator[@]}" "${cmake_args[@]}" >>"$log" 2>&1 || { tail -40 "$log"; exit 1; }
# KRYFLOW_BUILD_TARGETS: build only these targets (e.g. "test_kernels_cuda kryflow_cli").
cmake --build "$build" -j "$(nproc)" ${KRYFLOW_BUILD_TARGETS:+--target $KRYFLOW_BUILD_TARGETS} >>"$log" 2>&1 ||
  { grep -E "error|Error" "$log" | head -40; exit 1; }

steps=" ${KRYFLOW_STEPS:-tests krylov amg ainv sequence relaxation cli session bench formats sem pmg} "
want() { [[ $steps == *" $1 "* ]]; }
test_summary="(tests not run)"

if want tests; then
say "== tests (all labels)"
# Eight test processes at once: give each an eighth of the cores, or the cpu backend's OpenMP
# threads oversubscribe the machine and spin (a 2 s test then takes minutes).
OMP_NUM_THREADS=$(( $(nproc) / 8 > 0 ? $(nproc) / 8 : 1 )) \
  ctest --test-dir "$build" --output-on-failure -j 8 --timeout 600 \
  ${KRYFLOW_TESTS_REGEX:+-R "$KRYFLOW_TESTS_REGEX"} 2>&1 | tee "$results/ctest.txt" | tail -30
test_summary=$(grep -E "tests passed|tests failed" "$results/ctest.txt" | tail -1)
fi

# One Markdown row of a `kryflow solve --report json` file: json_row NAME PRESET FILE.
json_row() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
name, preset, path = sys.argv[1:4]
try:
    r = json.load(open(path))
    print(f"| {name} | {preset} | {r['iterations']} | {r['status']} | {r['true_relative_residual']:.2e} | "
          f"{r['setup_seconds']:.4f} | {r['solve_seconds']:.4f} | {r['setup_seconds'] + r['solve_seconds']:.4f} |")
except Exception as e:
    print(f"| {name} | {preset} | (no JSON report: {e}) | | | | | |")
PY
}

kryflow=$build/apps/kryflow/kryflow
if want krylov; then
say "== Krylov iterations: PCG and pipelined CG on 3D Poisson, small corpus systems (graphs, check windows)"
"$build/bench/kryflow_bench_krylov" --sizes "${KRYFLOW_KRYLOV_SIZES:-100,200,300}" --data "$KRYFLOW_DATA_DIR" \
  --json "$results/bench_krylov.json" 2>&1 | tee "$results/bench_krylov.txt" | tail -40
fi

if want amg; then
say "== AMG: PCG with the pcg_amg preset on 3D Poisson (cuda, b = 1): setup phases, re-setup, solve, memory, finest R (A P) against cuSPARSE SpGEMM"
"$build/bench/kryflow_bench_amg" --backend cuda --problems "${KRYFLOW_AMG_PROBLEMS:-p7:100,p7:200,p7:300,p27:200}" \
  --json "$results/bench_amg.json" 2>&1 | tee "$results/amg_table.txt" | tail -20
say "== AMG: PCG with the pcg_sa preset (smoothed aggregation) on the same problems"
"$build/bench/kryflow_bench_amg" --backend cuda --preset pcg_sa --problems "${KRYFLOW_AMG_PROBLEMS:-p7:100,p7:200,p7:300,p27:200}" \
  --json "$results/bench_amg_sa.json" 2>&1 | tee "$results/amg_sa_table.txt" | tail -20
say "== AMG: pcg_amg with aggressive coarsening of the finest level (aggressive_levels = 1, multi-pass interpolation)"
"$build/bench/kryflow_bench_amg" --backend cuda --preset pcg_amg -p solver.preconditioner.aggressive_levels=1 \
  --problems "${KRYFLOW_AMG_PROBLEMS:-p7:100,p7:200,p7:300,p27:200}" \
  --json "$results/bench_amg_aggressive.json" 2>&1 | tee "$results/amg_aggressive_table.txt" | tail -20
fi

if want amg || want amg_corpus; then
say "== AMG on the SPD corpus, warm (kryflow_bench_amg --matrix): pcg_amg and pcg_sa against pcg_jacobi, b = A x*"
spd_matrices=(--matrix "ex10hs=$KRYFLOW_DATA_DIR/matrices/suitesparse/ex10hs/ex10hs.mtx.gz"
  --matrix "openfoam_p_23325=$KRYFLOW_DATA_DIR/matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz@1")
: >"$results/amg_corpus_warm.txt"
for preset in pcg_amg pcg_sa; do
  "$build/bench/kryflow_bench_amg" --backend cuda --preset $preset "${spd_matrices[@]}" --repeats 5 --no-galerkin \
    --json "$results/bench_amg_corpus_${preset}.json" 2>&1 | tee -a "$results/amg_corpus_warm.txt" | tail -6
done
say "== AMG on the SPD corpus, one cold process each: pcg_amg and pcg_sa against pcg_jacobi (cuda, kryflow solve, relative tolerance 1e-8)"
amg_corpus=$results/amg_corpus.txt
echo "| matrix | preset | iterations | status | true residual | setup s | solve s | setup + solve s |" >"$amg_corpus"
echo "|---|---|---|---|---|---|---|---|" >>"$amg_corpus"
spd_corpus() {  # name args...
  local name=$1; shift
  for preset in pcg_amg pcg_sa pcg_jacobi; do
    "$kryflow" solve --backend cuda --report json --preset $preset -p solver.relative_tolerance=1e-8 \
      -p solver.max_iterations=30000 -p solver.stagnation_window=5000 "$@" \
      >"$results/amg_corpus_${name}_${preset}.json" 2>>"$log"
    json_row "$name" "$preset" "$results/amg_corpus_${name}_${preset}.json" >>"$amg_corpus"
  done
}
spd_corpus ex10hs -A "$KRYFLOW_DATA_DIR/matrices/suitesparse/ex10hs/ex10hs.mtx.gz"
spd_corpus openfoam_p_23325 -A "$KRYFLOW_DATA_DIR/matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz" --pin-unknown 1
cat "$amg_corpus" | tee -a "$log"
fi

m=$KRYFLOW_DATA_DIR/matrices
block_table=$results/block_presets.txt
if want ainv; then
say "== PCG-AINV and PCG-FSAI against PCG-Jacobi (kryflow_bench_ainv): ex10hs and the pinned OpenFOAM pressure matrix (b = A x*), 3D Poisson 200^3 (b = 1)"
m=$KRYFLOW_DATA_DIR/matrices
"$build/bench/kryflow_bench_ainv" --backend cuda --repeats 3 \
  --matrix "ex10hs=$m/suitesparse/ex10hs/ex10hs.mtx.gz" \
  --matrix "openfoam_p_23325=$m/openfoam/pressure_23325/openfoam_p_23325.mtx.gz@1" \
  --json "$results/bench_ainv_corpus.json" 2>&1 | tee "$results/ainv_table.txt"
"$build/bench/kryflow_bench_ainv" --backend cuda --repeats 1 --problems "${KRYFLOW_AINV_PROBLEMS:-p7:200}" \
  --json "$results/bench_ainv_poisson.json" 2>&1 | tail -n +3 | tee -a "$results/ainv_table.txt"
say "== PCG-FSAI with G on A's own pattern (pattern_power = 1) at 3D Poisson 200^3"
"$build/bench/kryflow_bench_ainv" --backend cuda --repeats 1 --problems "${KRYFLOW_AINV_PROBLEMS:-p7:200}" \
  --methods fsai --fsai solver.preconditioner.pattern_power=1 \
  --json "$results/bench_ainv_poisson_fsai1.json" 2>&1 | grep -E "fsai|jacobi" | tee -a "$results/ainv_table.txt"
say "== BiCGStab with nonsymmetric FSAI, AINV and Jacobi on the nonsymmetric corpus (kryflow solve, b = A x*, one process each)"
ns_table=$results/fsai_nonsymmetric.txt
echo "| matrix | preset | iterations | status | true residual | setup s | solve s | setup + solve s |" >"$ns_table"
echo "|---|---|---|---|---|---|---|---|" >>"$ns_table"
for spec in "airfoil_2d=$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" "2dcyl1=$m/fvens/2dcyl1/2dcyl1.mtx.gz" \
            "ex19_cavity_129=$m/petsc_ex19/ex19_cavity_129.mtx.gz" "ex19_cavity_257=$m/petsc_ex19/ex19_cavity_257.mtx.gz"; do
  name=${spec%%=*}; file=${spec#*=}
  for preset in bicgstab_fsai bicgstab_ainv bicgstab_jacobi; do
    "$kryflow" solve --backend cuda --report json --preset $preset -A "$file" -p solver.max_iterations=20000 \
      -p solver.stagnation_window=5000 >"$results/ns_${name}_${preset}.json" 2>>"$log"
    json_row "$name" "$preset" "$results/ns_${name}_${preset}.json" >>"$ns_table"
  done
done
cat "$ns_table" | tee -a "$log"
say "== the same, warm (kryflow_bench_ainv --bicgstab: medians of 3 setups and solves in one process)"
"$build/bench/kryflow_bench_ainv" --backend cuda --repeats 3 --bicgstab \
  --matrix "airfoil_2d=$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --matrix "2dcyl1=$m/fvens/2dcyl1/2dcyl1.mtx.gz" \
  --matrix "ex19_cavity_129=$m/petsc_ex19/ex19_cavity_129.mtx.gz" --matrix "ex19_cavity_257=$m/petsc_ex19/ex19_cavity_257.mtx.gz" \
  --json "$results/bench_fsai_nonsymmetric.json" 2>&1 | tee -a "$ns_table"
fi

if want sequence; then
say "== a drifting sequence (kryflow_bench_sequence): rebuild every system, never, every K synchronously and on a host thread"
"$build/bench/kryflow_bench_sequence" --backend cuda --n "${KRYFLOW_SEQUENCE_N:-64}" --steps 50 \
  --every "${KRYFLOW_SEQUENCE_EVERY:-10}" --speed "${KRYFLOW_SEQUENCE_SPEED:-0.02}" \
  --json "$results/bench_sequence.json" 2>&1 | tee "$results/sequence_table.txt"
say "== the same sequence with PCG-FSAI (rebuilt on the device: a value-only re-setup)"
"$build/bench/kryflow_bench_sequence" --backend cuda --n "${KRYFLOW_SEQUENCE_N:-64}" --steps 50 \
  --every "${KRYFLOW_SEQUENCE_EVERY:-10}" --speed "${KRYFLOW_SEQUENCE_SPEED:-0.02}" --preset pcg_fsai \
  --json "$results/bench_sequence_fsai.json" 2>&1 | tail -n +2 | tee -a "$results/sequence_table.txt"
fi

# relaxation = sweeps + block_presets + ilu (each also a step of its own).
if want relaxation || want sweeps; then
say "== multicolor Gauss-Seidel sweeps (kryflow_bench_relaxation): both cuda kernels per block size, against the copy bandwidth"
"$build/bench/kryflow_bench_relaxation" --backend cuda --data-dir "$KRYFLOW_DATA_DIR" \
  --block-sizes "${KRYFLOW_SWEEP_BLOCK_SIZES:-1,2,3,4,5,6,7,8}" --json "$results/bench_relaxation.json" 2>&1 | tee "$results/relaxation_table.txt" | tail -30
say "== the same for B = 4 and 5 with about 1 GiB of values"
"$build/bench/kryflow_bench_relaxation" --backend cuda --data-dir /nonexistent --block-sizes 4,5 \
  --target-mb 1024 --json "$results/bench_relaxation_1g.json" 2>&1 | tee "$results/relaxation_1g_table.txt" | tail -12
fi
if want relaxation || want block_presets; then
say "== block and nonsymmetric corpus: every block preset to 1e-8 with the file's b (kryflow solve, BSR-4, one cold process each)"
echo "| matrix | preset | backend | iterations | status | true residual | setup s | solve s | setup + solve s |" >"$block_table"
echo "|---|---|---|---|---|---|---|---|---|" >>"$block_table"
block_solve() {  # name label backend args...
  local name=$1 label=$2 backend=$3; shift 3
  local format=(--format bsr --block-size 4)
  [[ $name == airfoil_2d ]] && format=(--format csr)
  "$kryflow" solve --backend "$backend" --report json "${format[@]}" -p solver.relative_tolerance=1e-8 \
    -p solver.max_iterations=20000 -p solver.stagnation_window=5000 --copy-bytes 0 "$@" \
    >"$results/block_${name}_${label}_${backend}.json" 2>>"$log"
  python3 - "$name" "$label" "$backend" "$results/block_${name}_${label}_${backend}.json" >>"$block_table" <<'PY'
import json, sys
name, label, backend, path = sys.argv[1:5]
try:
    r = json.load(open(path))
    print(f"| {name} | {label} | {backend} | {r['iterations']} | {r['status']} | {r['true_relative_residual']:.2e} | "
          f"{r['setup_seconds']:.4f} | {r['solve_seconds']:.4f} | {r['setup_seconds'] + r['solve_seconds']:.4f} |")
except Exception as e:
    print(f"| {name} | {label} | {backend} | (no JSON report: {e}) | | | | | |")
PY
}
for f in fvens/2dcyl1/2dcyl1 petsc_ex19/ex19_cavity_33 petsc_ex19/ex19_cavity_129 petsc_ex19/ex19_cavity_257; do
  name=$(basename $f)
  for preset in bicgstab_jacobi bicgstab_block_jacobi bicgstab_mcgs bicgstab_mcsgs gmres_ilu0 fgmres_dilu gmres_ilut; do
    block_solve "$name" $preset cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset $preset
  done
  for prec in ilu0 dilu; do
    block_solve "$name" bicgstab_$prec cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_block_jacobi \
      -p solver.preconditioner.type=$prec
  done
  block_solve "$name" mcsgs_no_graphs cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.cuda_graphs=never
  block_solve "$name" mcsgs_float32_inverse cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.preconditioner.inverse_precision=float32
  block_solve "$name" mcsgs_greedy cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.preconditioner.coloring=greedy
  block_solve "$name" mcsgs_greedy_float32_inverse cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.preconditioner.coloring=greedy -p solver.preconditioner.inverse_precision=float32
  block_solve "$name" mcsgs_jpl cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.preconditioner.coloring=jones_plassmann_luby
  for prec in ilu0 dilu; do
    block_solve "$name" bicgstab_${prec}_greedy cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_block_jacobi \
      -p solver.preconditioner.type=$prec -p solver.preconditioner.coloring=greedy
  done
  block_solve "$name" gmres_ilut_sync_free cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset gmres_ilut \
    -p solver.preconditioner.solve=sync_free
  block_solve "$name" mcsgs_2_sweeps cuda -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
    -p solver.preconditioner.sweeps=2
  # Sequential (natural order) block SGS against the multicolor one: the iteration cost of the
  # coloring (host backend: one color per block row).
  if [[ $name != ex19_cavity_257 ]]; then
    block_solve "$name" sgs_natural_order cpu -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs \
      -p solver.preconditioner.coloring=natural
    block_solve "$name" bicgstab_mcsgs cpu -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset bicgstab_mcsgs
    block_solve "$name" ilu0_natural_order cpu -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset gmres_ilu0 \
      -p solver.preconditioner.coloring=natural
    block_solve "$name" gmres_ilu0 cpu -A "$m/$f.mtx.gz" -b "$m/${f}_b.mtx.gz" --preset gmres_ilu0
  fi
done
# The nonsymmetric point matrix (no file b: b = 1).
for preset in bicgstab_jacobi bicgstab_mcsgs gmres_ilu0 fgmres_dilu gmres_ilut; do
  block_solve airfoil_2d $preset cuda -A "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --preset $preset
done
block_solve airfoil_2d gmres_ilut_sync_free cuda -A "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --preset gmres_ilut \
  -p solver.preconditioner.solve=sync_free
block_solve airfoil_2d mcsgs_greedy cuda -A "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --preset bicgstab_mcsgs \
  -p solver.preconditioner.coloring=greedy
block_solve airfoil_2d mcsgs_jpl cuda -A "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --preset bicgstab_mcsgs \
  -p solver.preconditioner.coloring=jones_plassmann_luby
cat "$block_table" | tee -a "$log"
fi
if want relaxation || want ilu; then
say "== ILU solves: level-scheduled ILUT against cusparseSpSV on the same factors, multicolor ILU(0) and DILU"
"$build/bench/kryflow_bench_ilu" --backend cuda --data-dir "$KRYFLOW_DATA_DIR" \
  --json "$results/bench_ilu.json" 2>&1 | tee "$results/ilu_table.txt" | tail -12
fi

cli_table=$results/cli_table.txt
: >"$cli_table"
if want cli; then
say "== CLI on the corpus (cuda and cpu)"
run_cli() {  # name backend args...
  local name=$1 backend=$2; shift 2
  local out
  out=$("$kryflow" solve --backend "$backend" --report json "$@" 2>>"$log")
  local rc=$?
  echo "$out" >"$results/cli_${name}_${backend}.json"
  python3 - "$name" "$backend" "$rc" "$results/cli_${name}_${backend}.json" >>"$cli_table" <<'PY'
import json, sys
name, backend, rc, path = sys.argv[1:5]
try:
    r = json.load(open(path))
    s = r.get("solve", r)
    print(f"{name:18s} {backend:5s} rc={rc} it={s.get('iterations','?'):>5} "
          f"true_rel={s.get('true_relative_residual', float('nan')):.2e} "
          f"solve={s.get('solve_seconds', float('nan')):.3f}s status={s.get('status','?')}")
except Exception as e:
    print(f"{name:18s} {backend:5s} rc={rc} (no JSON report: {e})")
PY
}
for backend in cuda cpu; do
  run_cli ex10hs $backend -A "$m/suitesparse/ex10hs/ex10hs.mtx.gz" --preset pcg_jacobi -p solver.relative_tolerance=1e-9 -p solver.max_iterations=30000 -p solver.stagnation_window=5000
  run_cli openfoam_p $backend -A "$m/openfoam/pressure_23325/openfoam_p_23325.mtx.gz" --preset pcg_jacobi --pin-unknown 1 -p solver.relative_tolerance=1e-9
  run_cli openfoam_p_pipecg $backend -A "$m/openfoam/pressure_23325/openfoam_p_23325.mtx.gz" --preset pipecg_jacobi --pin-unknown 1 -p solver.relative_tolerance=1e-9
  run_cli ex10hs_pipecg $backend -A "$m/suitesparse/ex10hs/ex10hs.mtx.gz" --preset pipecg_jacobi -p solver.relative_tolerance=1e-9 -p solver.max_iterations=40000 -p solver.stagnation_window=5000
  run_cli airfoil_2d $backend -A "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10
  run_cli 2dcyl1 $backend -A "$m/fvens/2dcyl1/2dcyl1.mtx.gz" -b "$m/fvens/2dcyl1/2dcyl1_b.mtx.gz" --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10
  run_cli ex19_cavity_33 $backend -A "$m/petsc_ex19/ex19_cavity_33.mtx.gz" --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10 -p solver.max_iterations=20000
  run_cli ex19_cavity_129 $backend -A "$m/petsc_ex19/ex19_cavity_129.mtx.gz" --preset bicgstab_jacobi -p solver.relative_tolerance=1e-10 -p solver.max_iterations=20000
done
cat "$cli_table" | tee -a "$log"
fi

if want session; then
say "== CLI session"
{ echo "\$ kryflow solve"; "$kryflow" solve; echo "(exit $?)"
  echo "\$ kryflow info ex19_cavity_129.mtx.gz"; "$kryflow" info "$m/petsc_ex19/ex19_cavity_129.mtx.gz"
  echo "\$ kryflow solve -A ex19_cavity_129.mtx.gz"
  "$kryflow" solve -A "$m/petsc_ex19/ex19_cavity_129.mtx.gz"; echo "(exit $?)"
} >"$results/cli_session.txt" 2>&1
tail -n 25 "$results/cli_session.txt"
fi

if want bench; then
say "== benchmarks"
for b in "$build"/bench/kryflow_bench_*; do
  [[ -x $b ]] || continue
  name=$(basename "$b")
  [[ $name == kryflow_bench_sem* || $name == kryflow_bench_krylov || $name == kryflow_bench_amg || $name == kryflow_bench_relaxation || $name == kryflow_bench_ilu || $name == kryflow_bench_ainv || $name == kryflow_bench_sequence ]] \
    && continue  # own steps
  extra=()
  [[ $name == kryflow_bench_spmv ]] && extra=(--tiles "${KRYFLOW_SPMV_TILES:-auto,1024,2048,4096}")
  [[ $name == kryflow_bench_bsr ]] && extra=(--block-sizes 2,3,4,5,6,7,8)
  "$b" "${extra[@]}" --json "$results/${name#kryflow_}.json" 2>&1 | tee "$results/${name#kryflow_}.txt" | tail -25
done
fi

if want formats; then
say "== kryflow bench spmv: every format on the corpus and 3D Poisson 200^3 (7 and 27 points)"
corpus=()
for f in suitesparse/ex10hs/ex10hs openfoam/pressure_23325/openfoam_p_23325 suitesparse/airfoil_2d/airfoil_2d \
         fvens/2dcyl1/2dcyl1 petsc_ex19/ex19_cavity_33 petsc_ex19/ex19_cavity_129 petsc_ex19/ex19_cavity_257; do
  corpus+=(-A "$m/$f.mtx.gz")
done
"$kryflow" bench spmv --backend cuda "${corpus[@]}" --gen poisson3d:200 --gen poisson3d27:200 \
  --json "$results/spmv_formats.json" >"$results/spmv_formats.txt" 2>&1
echo "(exit $?)" >>"$results/spmv_formats.txt"
# On the host: a 1 GiB copy and 3D Poisson 200^3 (0.8 GB) outgrow a server CPU's L3.
OMP_NUM_THREADS=$(nproc) "$kryflow" bench spmv --backend cpu "${corpus[@]}" --gen poisson3d:200 \
  --copy-bytes 1073741824 --formats csr,sell,bsr --json "$results/spmv_formats_cpu.json" >"$results/spmv_formats_cpu.txt" 2>&1
echo "(exit $?)" >>"$results/spmv_formats_cpu.txt"
fi

sem_table=$results/sem_table.txt
if want sem_float; then
# The element arithmetic of the operator (float64 against float32) for every element kernel at
# p = 3..11 on boxes and on the Kershaw mesh at p = 7.
say "== SEM operator: float against double element arithmetic"
"$build/bench/kryflow_bench_sem" --orders 3,5,7,9,11 --kershaw-orders 7 --arithmetic float64,float32 \
  --json "$results/bench_sem_float.json" >"$results/bench_sem_float.txt" 2>&1
tail -40 "$results/bench_sem_float.txt" | tee -a "$log"
fi

if want sem; then
say "== spectral-element Poisson: operator and diagonal kernels, PCG on every corpus mesh at p = 7"
"$build/bench/kryflow_bench_sem" --json "$results/bench_sem.json" >"$results/bench_sem.txt" 2>&1
"$build/bench/kryflow_bench_sem_diagonal" --backend cuda --orders 7,8,9,10,11 --elements 4096,fill \
  --json "$results/bench_sem_diagonal.json" >"$results/bench_sem_diagonal.txt" 2>&1
nek=$KRYFLOW_DATA_DIR/meshes/nek
: >"$sem_table"
run_sem() {  # name precond args...
  local name=$1 precond=$2; shift 2
  local json=$results/sem_${name}_${precond}.json
  "$kryflow" sem --backend cuda --order 7 --precond "$precond" --max-iterations 20000 \
    --report json "$@" >"$json" 2>>"$log"
  local rc=$?
  python3 - "$name" "$precond" "$rc" "$json" >>"$sem_table" <<'PY'
import json, sys
name, precond, rc, path = sys.argv[1:5]
try:
    r = json.load(open(path))
    o = r["operator"]
    print(f"| {name} | {precond} | {r['mesh']['elements']} | {r['dofs']} | {r['iterations']} | "
          f"{r['status']} | {r['true_relative_residual']:.1e} | {r['max_error']:.2e} | "
          f"{r['seconds_per_iteration']*1e6:.1f} | {r['ns_per_dof_per_iteration']:.3f} | "
          f"{r['solve_seconds']:.3f} | {o['gdof_per_s']:.2f} | {o['fraction_of_copy']:.2f} | rc={rc} |")
except Exception as e:
    print(f"| {name} | {precond} | (no JSON report, rc={rc}: {e}) |")
PY
}
for precond in jacobi none; do
  run_sem kershaw_eps0.3 $precond --mesh "$nek/nekrs_kershaw/kershaw.re2.gz" --kershaw 0.3
  for m in nek_bp5/bp5 nekrs_kershaw/kershaw nek_tgv/tgv nek_turbPipe/turbPipe nekrs_ethier/ethier \
           nekrs_hemi/hemi nekrs_rbc/rbc nekrs_turbChannel/turbChannel; do
    run_sem "$(basename $m)" $precond --mesh "$nek/$m.re2.gz"
  done
  run_sem box64_deformed $precond --box 64,64,64 --deform 0.05
done
# The vertex element kernel (metric terms from the corners) on the same solves.
run_sem kershaw_eps0.3_vertex jacobi --mesh "$nek/nekrs_kershaw/kershaw.re2.gz" --kershaw 0.3 \
  --element-kernel vertex
run_sem box64_deformed_vertex jacobi --box 64,64,64 --deform 0.05 --element-kernel vertex
{ echo "| mesh | precond | elements | DoFs | iterations | status | true residual | max error | us/iteration | ns/DoF/iteration | solve s | operator GDoF/s | operator of roofline | |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"; cat "$sem_table"; } >"$sem_table.tmp" && mv "$sem_table.tmp" "$sem_table"
cat "$sem_table" | tee -a "$log"
fi

pmg_table=$results/pmg_table.txt
if want pmg; then
# KRYFLOW_PMG_PRESETS: the presets to compare (default: Chebyshev-Jacobi with PCG and
# Chebyshev-RAS with flexible CG); KRYFLOW_PMG_MESHES=quick runs Kershaw and the boxes up to 32^3 only.
pmg_presets=${KRYFLOW_PMG_PRESETS:-sem_pmg_cheby_jacobi sem_pmg_schwarz sem_pmg_vertex_patch}
say "== spectral-element Poisson with p-multigrid at p = 7: $pmg_presets"
nek=$KRYFLOW_DATA_DIR/meshes/nek
: >"$pmg_table"
run_pmg() {  # name args...
  local name=$1; shift
  local preset
  for preset in $pmg_presets; do
  local json=$results/pmg_${preset}_${name}.json
  "$kryflow" sem --backend cuda --order 7 --preset "$preset" --copy-bytes 0 --report json "$@" \
    >"$json" 2>>"$log"
  local rc=$?
  python3 - "$name" "$rc" "$json" "$preset" >>"$pmg_table" <<'PY'
import json, sys
name, rc, path, preset = sys.argv[1:5]
try:
    r = json.load(open(path))
    s = r["setup_seconds"]["preconditioner"]
    print(f"| {name} | {preset} | {r['mesh']['elements']} | {r['dofs']} | {r['iterations']} | {r['status']} | "
          f"{r['true_relative_residual']:.1e} | {r['max_error']:.2e} | "
          f"{r['seconds_per_iteration']*1e6:.0f} | {s:.3f} | {r['solve_seconds']:.4f} | "
          f"{r['ns_per_dof']['solve']:.1f} | {r['ns_per_dof']['setup_and_solve']:.1f} | rc={rc} |")
except Exception as e:
    print(f"| {name} | {preset} | (no JSON report, rc={rc}: {e}) |")
PY
  done
}
run_pmg kershaw_eps0.3 --mesh "$nek/nekrs_kershaw/kershaw.re2.gz" --kershaw 0.3
# The README's Kershaw run: the first solve after the solver's setup, and two repeated solves.
"$kryflow" sem --backend cuda --mesh "$nek/nekrs_kershaw/kershaw.re2.gz" --kershaw 0.3 --order 7 \
  --preset sem_pmg_schwarz --copy-bytes 0 --repeat 3 >"$results/kershaw_sem_pmg_schwarz.txt" 2>>"$log"
grep -E "solve  |time to solution|repeated solves" "$results/kershaw_sem_pmg_schwarz.txt" | tee -a "$log"
if [[ ${KRYFLOW_PMG_MESHES:-all} != quick ]]; then
for m in nek_bp5/bp5 nekrs_kershaw/kershaw nek_tgv/tgv nek_turbPipe/turbPipe nekrs_ethier/ethier \
         nekrs_hemi/hemi nekrs_rbc/rbc nekrs_turbChannel/turbChannel; do
  run_pmg "$(basename $m)" --mesh "$nek/$m.re2.gz"
done
fi
for n in 8 16 32; do run_pmg box${n}_deformed --box $n,$n,$n --deform 0.05; done
for n in 8 16 32; do run_pmg box${n}_kershaw0.3 --box $n,$n,$n --kershaw 0.3; done
[[ ${KRYFLOW_PMG_MESHES:-all} != quick ]] && run_pmg box64_deformed --box 64,64,64 --deform 0.05
{ echo "| mesh | preset | elements | DoFs | iterations | status | true residual | max error | us/iteration | setup s | solve s | ns/DoF solve | ns/DoF setup+solve | |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"; cat "$pmg_table"; } >"$pmg_table.tmp" && mv "$pmg_table.tmp" "$pmg_table"
cat "$pmg_table" | tee -a "$log"
fi

kershaw_table=$results/pmg_kershaw_table.txt
if want pmg_kershaw; then
# The Kershaw mesh (eps 0.3, p = 7) with each p-multigrid preset and the Schwarz smoother's
# Chebyshev degrees 1-4, FGMRES instead of flexible CG, and the text report (with the cycle
# components) of the Schwarz preset.
say "== Kershaw eps 0.3, p = 7: p-multigrid variants"
kmesh=$KRYFLOW_DATA_DIR/meshes/nek/nekrs_kershaw/kershaw.re2.gz
: >"$kershaw_table"
run_kershaw() {  # label args...
  local label=$1; shift
  local json=$results/kershaw_${label}.json
  "$kryflow" sem --backend cuda --mesh "$kmesh" --kershaw 0.3 --order 7 --copy-bytes 0 --report json "$@" \
    >"$json" 2>>"$log"
  python3 - "$label" "$json" >>"$kershaw_table" <<'PY'
import json, sys
label, path = sys.argv[1:3]
try:
    r = json.load(open(path))
    print(f"| {label} | {r['iterations']} | {r['status']} | {r['true_relative_residual']:.1e} | "
          f"{r['seconds_per_iteration']*1e3:.3f} | {r['solve_seconds']*1e3:.1f} | {r['ns_per_dof']['solve']:.1f} |")
except Exception as e:
    print(f"| {label} | (no JSON report: {e}) |")
PY
}
# KRYFLOW_KERSHAW_VARIANTS=quick: the presets only, with the vertex patches' damping bound and
# precision varied.
run_kershaw cheby_jacobi --preset sem_pmg_cheby_jacobi
run_kershaw schwarz_fcg_degree3 --preset sem_pmg_schwarz
run_kershaw vertex_patch --preset sem_pmg_vertex_patch
run_kershaw vertex_patch_fused --preset sem_pmg_vertex_patch \
  -p solver.preconditioner.vertex_patch_step=fused
run_kershaw vertex_patch_bound1.9 --preset sem_pmg_vertex_patch \
  -p solver.preconditioner.vertex_patch_damping_bound=1.9
run_kershaw vertex_patch_float64 --preset sem_pmg_vertex_patch \
  -p solver.preconditioner.schwarz_precision=float64
run_kershaw cheby_jacobi_fcg_float_cycle --preset sem_pmg_cheby_jacobi -p solver.type=fcg \
  -p solver.preconditioner.cycle_precision=float32
run_kershaw schwarz_fcg_degree3_float_cycle --preset sem_pmg_schwarz \
  -p solver.preconditioner.cycle_precision=float32
run_kershaw schwarz_fcg_degree2_float_cycle --preset sem_pmg_schwarz \
  -p solver.preconditioner.cycle_precision=float32 -p solver.preconditioner.chebyshev_degree=2
run_kershaw vertex_patch_float_cycle --preset sem_pmg_vertex_patch \
  -p solver.preconditioner.cycle_precision=float32
run_kershaw schwarz_double_cycle --preset sem_pmg_schwarz -p solver.preconditioner.cycle_precision=float64
for d in 3 4; do
  run_kershaw schwarz_fourth_kind_degree$d --preset sem_pmg_schwarz \
    -p solver.preconditioner.chebyshev_kind=fourth -p solver.preconditioner.chebyshev_degree=$d
done
run_kershaw schwarz_post_only_degree6 --preset sem_pmg_schwarz -p solver.preconditioner.pre_sweeps=0 \
  -p solver.preconditioner.chebyshev_degree=6
# The host's wait per iteration (check windows of 2 and 4) and a smaller AMG coarse hierarchy.
for w in 2 4; do
  run_kershaw schwarz_check_every$w --preset sem_pmg_schwarz -p solver.check_every=$w
done
run_kershaw schwarz_coarse_size2000 --preset sem_pmg_schwarz \
  -p solver.preconditioner.coarse_solver.coarse_size=2000
for schedule in halving_then_unit minus_two; do
  run_kershaw schwarz_$schedule --preset sem_pmg_schwarz -p solver.preconditioner.schedule=$schedule
done
run_kershaw schwarz_cycle_w --preset sem_pmg_schwarz -p solver.preconditioner.cycle=w
# Stronger coarse-grid correction: a higher Chebyshev degree below the finest level.
for d in 6 8; do
  run_kershaw schwarz_coarse_degree$d --preset sem_pmg_schwarz \
    -p solver.preconditioner.coarse_levels_chebyshev_degree=$d
  run_kershaw schwarz_cycle_w_coarse_degree$d --preset sem_pmg_schwarz -p solver.preconditioner.cycle=w \
    -p solver.preconditioner.coarse_levels_chebyshev_degree=$d
done
run_kershaw schwarz_degree2_coarse_degree4 --preset sem_pmg_schwarz \
  -p solver.preconditioner.chebyshev_degree=2 -p solver.preconditioner.coarse_levels_chebyshev_degree=4
run_kershaw schwarz_halving_then_unit_coarse_degree6 --preset sem_pmg_schwarz \
  -p solver.preconditioner.schedule=halving_then_unit -p solver.preconditioner.coarse_levels_chebyshev_degree=6
if [[ ${KRYFLOW_KERSHAW_VARIANTS:-all} != quick ]]; then
for d in 1 2 4; do
  run_kershaw schwarz_fcg_degree$d --preset sem_pmg_schwarz -p solver.preconditioner.chebyshev_degree=$d
done
run_kershaw schwarz_fcg_no_graphs --preset sem_pmg_schwarz -p solver.cuda_graphs=never
for d in 2 3; do
  run_kershaw schwarz_fgmres_degree$d --preset sem_pmg_schwarz -p solver.type=fgmres \
    -p solver.preconditioner.chebyshev_degree=$d
done
fi
for preset in sem_pmg_schwarz sem_pmg_vertex_patch; do
  "$kryflow" sem --backend cuda --mesh "$kmesh" --kershaw 0.3 --order 7 --preset $preset \
    >"$results/kershaw_$preset.txt" 2>&1
done
{ echo "| variant | iterations | status | true residual | ms/iteration | solve ms | ns/DoF solve |"
  echo "|---|---|---|---|---|---|---|"; cat "$kershaw_table"; } >"$kershaw_table.tmp" && mv "$kershaw_table.tmp" "$kershaw_table"
cat "$kershaw_table" | tee -a "$log"
fi

if want profile_sem; then
# Where a Kershaw solve spends its time, kernel by kernel, and why the operator waits.
say "== profile: Kershaw eps 0.3, p = 7, sem_pmg_schwarz (nsys kernel summary; ncu of the vertex kernel)"
kmesh=$KRYFLOW_DATA_DIR/meshes/nek/nekrs_kershaw/kershaw.re2.gz
command -v nsys >/dev/null || say "nsys not installed: no kernel summary"
command -v nsys >/dev/null && timeout 300 nsys profile -o "$build/kershaw_profile" --force-overwrite true --stats=false --cuda-graph-trace=node \
  "$kryflow" sem --backend cuda --mesh "$kmesh" --kershaw 0.3 --order 7 --preset sem_pmg_schwarz \
  --copy-bytes 0 >>"$log" 2>&1 &&
  timeout 300 nsys stats --report cuda_gpu_kern_sum --format csv "$build/kershaw_profile.nsys-rep" \
    >"$results/profile_kershaw_kernels.csv" 2>>"$log"
[[ -f $results/profile_kershaw_kernels.csv ]] &&
  head -25 "$results/profile_kershaw_kernels.csv" | cut -c1-220 | tee -a "$log"
# Without nsys: every kernel of the whole solve (setup included) timed by ncu, summed by name.
if ! command -v nsys >/dev/null; then
  timeout 400 ncu --metrics gpu__time_duration.sum --csv --graph-profiling node \
    "$kryflow" sem --backend cuda --mesh "$kmesh" --kershaw 0.3 --order 7 --preset sem_pmg_schwarz \
    --copy-bytes 0 ${KRYFLOW_PROFILE_ARGS:-} >"$results/ncu_kershaw_solve.csv" 2>>"$log"
  python3 - "$results/ncu_kershaw_solve.csv" <<'PY' | tee "$results/ncu_kershaw_kernels.txt" | tee -a "$log"
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
total = collections.defaultdict(float); count = collections.Counter()
for r in csv.DictReader(rows):
    if r.get("Metric Name") != "gpu__time_duration.sum": continue
    name = r["Kernel Name"].split("(")[0][:90]
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3,
             "msecond": 1e3}.get(r["Metric Unit"].strip(), 1.0)
    total[name] += float(r["Metric Value"].replace(",", "")) * scale; count[name] += 1
grand = sum(total.values())
print(f"{'kernel':90s} {'calls':>6s} {'total us':>10s} {'us/call':>9s} share")
for name, t in sorted(total.items(), key=lambda kv: -kv[1])[:40]:
    print(f"{name:90s} {count[name]:6d} {t:10.1f} {t/count[name]:9.2f} {100*t/grand:5.1f}%")
print(f"all kernels: {sum(count.values())} launches, {grand:.1f} us")
PY
fi
timeout 300 ncu --kernel-name-base demangled \
  --kernel-name "regex:layered_element_kernel<\(int\)8, \(bool\)1, .*\)3, double" --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
  --section ComputeWorkloadAnalysis --section InstructionStats \
  "$build/bench/kryflow_bench_sem" --orders 7 --kershaw-orders 7 >"$results/profile_vertex_ncu.txt" 2>&1
grep -E "Duration|Stall|Issued|Occupancy|Throughput|Registers" "$results/profile_vertex_ncu.txt" | head -40 | tee -a "$log"
# The float local solves at p = 7 (N = 10) and the Schwarz sums of a Kershaw solve: why they wait.
timeout 300 ncu --kernel-name-base demangled --kernel-name "regex:fdm_kernel<float, (\\(int\\))?10|assemble_kernel<float>" \
  --launch-count 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats \
  "$kryflow" sem --backend cuda --mesh "$kmesh" --kershaw 0.3 --order 7 --preset sem_pmg_schwarz \
  --copy-bytes 0 >"$results/profile_fdm_ncu.txt" 2>&1
grep -E "fdm_kernel|assemble_kernel|Duration|Stall|Issued|Occupancy|Throughput|Registers" \
  "$results/profile_fdm_ncu.txt" | head -60 | tee -a "$log"
fi

say ""
if want python; then
say "== Python package: built against the installed tree, pytest (cpu and CuPy), CuPy 3D Poisson against kryflow solve"
cmake --install "$build" --prefix "$build/prefix" >>"$log" 2>&1
rm -rf "$build/pysite"
python3 -m pip install --no-build-isolation --no-deps --target "$build/pysite" \
  -C cmake.define.CMAKE_PREFIX_PATH="$build/prefix" -C build-dir="$build/pybuild" "$root" >>"$log" 2>&1 ||
  { say "pip install failed"; tail -30 "$log"; }
PYTHONPATH="$build/pysite" python3 -m pytest -q -p no:cacheprovider -rs "$root/bindings/python/tests" 2>&1 |
  tee "$results/pytest.txt" | tail -15
PYTHONPATH="$build/pysite" python3 "$root/bench/python_cupy_poisson.py" --n "${KRYFLOW_PYTHON_N:-200}" \
  --preset pcg_amg --kryflow "$kryflow" --json "$results/python_cupy.json" 2>&1 | tee "$results/python_cupy.txt"
fi

say "================ summary ================"
say "tests: $test_summary"
grep -E "^\[  FAILED  \]|Failure$|^.*error: " "$results/ctest.txt" 2>/dev/null | sort -u | head -20
cat "$cli_table"
for t in "$results"/bench_*.txt "$results"/spmv_formats*.txt; do [[ -f $t ]] && { echo "-- $(basename "$t")"; grep -E "^\||^median|^best|^BSR on|^p = " "$t" | head -80; }; done
[[ -s $results/amg_table.txt ]] && { echo "-- PCG-AMG (cuda; kryflow_bench_amg)"; cat "$results/amg_table.txt"; }
[[ -s $results/amg_sa_table.txt ]] && { echo "-- PCG-SA (cuda; kryflow_bench_amg --preset pcg_sa)"; cat "$results/amg_sa_table.txt"; }
[[ -s $results/amg_aggressive_table.txt ]] && { echo "-- PCG-AMG, aggressive_levels = 1 (cuda)"; cat "$results/amg_aggressive_table.txt"; }
[[ -s $results/amg_corpus.txt ]] && { echo "-- PCG-AMG against PCG-Jacobi on the SPD corpus (cuda, one cold process each)"; cat "$results/amg_corpus.txt"; }
[[ -s $results/amg_corpus_warm.txt ]] && { echo "-- PCG-AMG against PCG-Jacobi on the SPD corpus (cuda, warm)"; grep -E "^(ex10hs|openfoam|  )" "$results/amg_corpus_warm.txt"; }
[[ -s $sem_table ]] && { echo "-- PCG on the spectral-element meshes, p = 7 (cuda)"; cat "$sem_table"; }
[[ -s $pmg_table ]] && { echo "-- p-multigrid presets, p = 7 (cuda)"; cat "$pmg_table"; }
[[ -s $kershaw_table ]] && { echo "-- Kershaw eps 0.3, p = 7: p-multigrid variants (cuda)"; cat "$kershaw_table"; }
[[ -s $results/relaxation_table.txt ]] && { echo "-- multicolor SGS sweeps (cuda)"; sed -n '/^multicolor SGS/,$p' "$results/relaxation_table.txt"; }
[[ -s $results/relaxation_1g_table.txt ]] && { echo "-- multicolor SGS sweeps, about 1 GiB of values (cuda)"; sed -n '/^multicolor SGS/,$p' "$results/relaxation_1g_table.txt"; }
[[ -s $results/ainv_table.txt ]] && { echo "-- PCG-AINV against PCG-Jacobi (cuda)"; cat "$results/ainv_table.txt"; }
[[ -s $results/sequence_table.txt ]] && { echo "-- drifting sequence of 50 systems (cuda)"; cat "$results/sequence_table.txt"; }
[[ -s $results/ilu_table.txt ]] && { echo "-- ILU solves (cuda)"; cat "$results/ilu_table.txt"; }
[[ -s $block_table ]] && { echo "-- block presets on the block corpus"; cat "$block_table"; }

# Few files come back from some machines: bundle the per-run outputs.
tar -czf "$results/details.tar.gz" -C "$results" $(cd "$results" && ls cli_*.json sem_*.json pmg_*.json amg_corpus_*.json block_*.json ctest.txt device_log.txt cli_table.txt cli_session.txt 2>/dev/null) \
  && (cd "$results" && rm -f cli_*.json sem_*.json pmg_*.json amg_corpus_*.json block_*.json ctest.txt device_log.txt cli_table.txt cli_session.txt)

