export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli kryflow_bench_sem" KRYFLOW_STEPS="none" bash scripts/device_run.sh $OUT/r/build > $OUT/r/build.txt 2>&1
tail -3 $OUT/r/build.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
$K --repeat 3 > $OUT/r/kershaw_auto.txt 2>&1
KRYFLOW_FDM_MINBLOCKS=8 $K --repeat 3 > $OUT/r/kershaw_auto_fdm8.txt 2>&1
$K --repeat 3 --element-kernel vertex > $OUT/r/kershaw_vertex.txt 2>&1
$K --repeat 3 > $OUT/r/kershaw_auto2.txt 2>&1
grep -E "kernels  |solve  |time to sol|repeated|_smoothing" $OUT/r/kershaw_*.txt | cut -c1-170
export KRYFLOW_DATA_DIR=$PWD/.data
KRYFLOW_STEPS="tests pmg" KRYFLOW_PMG_PRESETS="sem_pmg_schwarz sem_pmg_cheby_jacobi" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|^test_amg_solvers_cuda$|cli_sem" KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli kryflow_bench_sem" timeout 330 bash scripts/device_run.sh $OUT/r/run > $OUT/r/run.txt 2>&1
grep -E "tests passed|tests failed|Failed|\*\*\*" $OUT/r/run.txt | head; tail -42 $OUT/r/run.txt | cut -c1-200
