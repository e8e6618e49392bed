# NVIDIA H200, commit 52aa1c0.
export KRYFLOW_COMMIT=52aa1c0
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|^test_amg_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
tail -4 $OUT/r/stdout.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
for i in 1 2; do $K --repeat 3 > $OUT/r/kershaw_run$i.txt 2>&1; done
KRYFLOW_DEPENDENT_LAUNCH=0 $K --repeat 3 > $OUT/r/kershaw_no_pdl.txt 2>&1
grep -E "solve  |time to sol|repeated|their|status|_smoothing|prolongation|restriction" $OUT/r/kershaw_*.txt | cut -c1-170
export KRYFLOW_DATA_DIR=$PWD/.data
(KRYFLOW_DEPENDENT_LAUNCH=0 timeout 120 build-device/tests/test_kernels_cuda --gtest_filter='Sem*:PMultigrid*' > $OUT/r/no_pdl_kernels.txt 2>&1; tail -2 $OUT/r/no_pdl_kernels.txt)
