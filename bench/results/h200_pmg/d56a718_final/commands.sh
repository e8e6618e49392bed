export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
export KRYFLOW_DATA_DIR=$PWD/.data
KRYFLOW_STEPS="tests sem_float" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|^test_amg_solvers_cuda$|cli_sem" KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli kryflow_bench_sem" timeout 400 bash scripts/device_run.sh $OUT/r/run > $OUT/r/run.txt 2>&1
grep -E "tests passed|tests failed|Failed" $OUT/r/run.txt | head
grep -E "vertex|shared" $OUT/r/run/bench_sem_float.txt | grep atomic | cut -c1-140
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
$K --repeat 3 > $OUT/r/kershaw_final.txt 2>&1
grep -E "kernels  |solve  |time to sol|repeated|status" $OUT/r/kershaw_final.txt | cut -c1-170
