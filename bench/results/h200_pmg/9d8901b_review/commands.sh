export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
tail -4 $OUT/r/stdout.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
for i in 1 2; do $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/kershaw_sem_pmg_schwarz_run$i.txt 2>&1; done
grep -E "solve  |time to sol|status|coarse_solve" $OUT/r/kershaw*.txt | cut -c1-160
cd $OUT && tar czf all.tgz r && rm -rf r
