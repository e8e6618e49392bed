export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
export KRYFLOW_DATA_DIR=$PWD/.data
KRYFLOW_BUILD_TARGETS="test_kernels_cuda" KRYFLOW_STEPS="none" bash scripts/device_run.sh $OUT/r/build > $OUT/r/build.txt 2>&1
tail -2 $OUT/r/build.txt
timeout 60 build-device/tests/test_kernels_cuda --gtest_filter='SemPoisson*' > $OUT/r/test_sem_poisson.txt 2>&1; tail -3 $OUT/r/test_sem_poisson.txt
grep -E "OperatorsOfSeveral|VertexLines" $OUT/r/test_sem_poisson.txt
timeout 50 build-device/tests/test_kernels_cuda > $OUT/r/test_kernels_cuda.txt 2>&1; tail -3 $OUT/r/test_kernels_cuda.txt
