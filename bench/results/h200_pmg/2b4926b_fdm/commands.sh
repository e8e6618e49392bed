export KRYFLOW_COMMIT=$(git log -1 --format=%h 2>/dev/null)-wt
mkdir -p $OUT/r
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
tail -5 $OUT/r/stdout.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K() { local name=$1; shift; "$@" $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 $KARGS > $OUT/r/k_$name.txt 2>&1; grep -E "solve  " $OUT/r/k_$name.txt | sed "s/^/$name: /"; }
KARGS="" K preset1
KARGS="" K preset2
KARGS="" K min8_1 env KRYFLOW_FDM_MIN8=1
KARGS="" K min8_2 env KRYFLOW_FDM_MIN8=1
KARGS="-p solver.preconditioner.coarse_solver.coarse_size=2000" K cs2000
KARGS="-p solver.preconditioner.chebyshev_degree=2 -p solver.preconditioner.coarse_solver.coarse_size=2000" K deg2_cs2000
KARGS="-p solver.preconditioner.chebyshev_degree=2 -p solver.preconditioner.coarse_levels_chebyshev_degree=4 -p solver.preconditioner.coarse_solver.coarse_size=2000" K deg2_c4_cs2000
for f in preset1 min8_1; do echo "== $f"; sed -n '/level  order/,$p' $OUT/r/k_$f.txt; done
timeout 200 ncu --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active --kernel-name regex:fdm_kernel --launch-count 6 $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/ncu_fdm.txt 2>&1
grep -E "fdm_kernel|duration|registers|warps_active" $OUT/r/ncu_fdm.txt | cut -c1-150 | head -40
cd $OUT && tar czf all.tgz r && rm -rf r
