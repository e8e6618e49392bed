export KRYFLOW_COMMIT=2f01923
mkdir -p $OUT/r
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests pmg" KRYFLOW_PMG_PRESETS="sem_pmg_schwarz" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
for i in 1 2 3; do $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/kershaw_sem_pmg_schwarz_run$i.txt 2>&1; done
$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 -p solver.preconditioner.chebyshev_degree=2 -p solver.preconditioner.coarse_levels_chebyshev_degree=4 > $OUT/r/kershaw_deg2_coarse4.txt 2>&1
$k sem --backend cuda --box 64,64,64 --deform 0.05 --order 7 --preset sem_pmg_cheby_jacobi --copy-bytes 0 > $OUT/r/box64_cheby_jacobi.txt 2>&1
sed -n '/== summary/,$p' $OUT/r/stdout.txt | head -40
grep -E "solve  |time to sol|status" $OUT/r/*.txt | cut -c1-160
cd $OUT && tar czf all.tgz r && rm -rf r
