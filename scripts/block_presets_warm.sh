#!/usr/bin/env bash
# The block and nonsymmetric corpus in one process per matrix (kryflow_bench_presets): BiCGStab
# with Jacobi, block Jacobi, multicolor Gauss-Seidel (both colorings, symmetric and forward),
# multicolor ILU(0) and DILU, cold and warm medians of setup and solve, the file's b.
#
#   scripts/block_presets_warm.sh BUILD_DIR DATA_DIR RESULTS_DIR
set -uo pipefail
build=$1 data=$2 results=$3
mkdir -p "$results"
bench=$build/bench/kryflow_bench_presets
m=$data/matrices
common="solver.max_iterations=20000,solver.stagnation_window=5000"
runs=(
  --run "jacobi=bicgstab_jacobi,$common"
  --run "block_jacobi=bicgstab_block_jacobi,$common"
  --run "mcgs=bicgstab_mcgs,$common"
  --run "mcsgs=bicgstab_mcsgs,$common"
  --run "mcsgs_forward=bicgstab_mcsgs,$common,solver.preconditioner.direction=forward"
  --run "mcsgs_jpl=bicgstab_mcsgs,$common,solver.preconditioner.coloring=jones_plassmann_luby"
  --run "mcsgs_greedy=bicgstab_mcsgs,$common,solver.preconditioner.coloring=greedy"
  --run "mcsgs_jpl_forward=bicgstab_mcsgs,$common,solver.preconditioner.coloring=jones_plassmann_luby,solver.preconditioner.direction=forward"
  --run "mcsgs_greedy_forward=bicgstab_mcsgs,$common,solver.preconditioner.coloring=greedy,solver.preconditioner.direction=forward"
  --run "mcsgs_greedy_forward_f32=bicgstab_mcsgs,$common,solver.preconditioner.coloring=greedy,solver.preconditioner.direction=forward,solver.preconditioner.inverse_precision=float32"
  --run "ilu0_greedy=bicgstab_block_jacobi,$common,solver.preconditioner.type=ilu0,solver.preconditioner.coloring=greedy"
  --run "dilu_greedy=bicgstab_block_jacobi,$common,solver.preconditioner.type=dilu,solver.preconditioner.coloring=greedy"
)
for f in fvens/2dcyl1/2dcyl1 petsc_ex19/ex19_cavity_33 petsc_ex19/ex19_cavity_129 petsc_ex19/ex19_cavity_257; do
  name=$(basename $f)
  "$bench" --matrix "$m/$f.mtx.gz" --rhs "$m/${f}_b.mtx.gz" --format bsr --block-size 4 --repeats 5 \
    --json "$results/presets_$name.json" "${runs[@]}" 2>&1 | tee "$results/presets_$name.txt"
done
"$bench" --matrix "$m/suitesparse/airfoil_2d/airfoil_2d.mtx.gz" --format csr --repeats 5 \
  --json "$results/presets_airfoil_2d.json" "${runs[@]:0:2}" "${runs[@]:6:16}" 2>&1 | tee "$results/presets_airfoil_2d.txt"
