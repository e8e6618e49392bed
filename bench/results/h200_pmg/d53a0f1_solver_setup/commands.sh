# NVIDIA H200, commit d53a0f1 (the lines4 runs: an uncommitted variant of kernels/sem/schwarz_cuda.cu with
# fdm_kernel<float, 10, float, 4>, four lines a thread, chosen by KRYFLOW_FDM_LINES=4; not kept).
export KRYFLOW_COMMIT=d53a0f1
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
tail -4 $OUT/r/stdout.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
for i in 1 2; do $K --repeat 4 > $OUT/r/kershaw_run$i.txt 2>&1; done
$K --repeat 3 --cold-solve > $OUT/r/kershaw_cold.txt 2>&1
CUDA_MODULE_LOADING=EAGER $K --repeat 3 --cold-solve > $OUT/r/kershaw_cold_eager.txt 2>&1
$k sem --backend cuda --box 64,64,64 --deform 0.05 --order 7 --preset sem_pmg_cheby_jacobi --copy-bytes 0 --repeat 3 > $OUT/r/box64_cheby_jacobi.txt 2>&1
$k sem --backend cuda --box 64,64,64 --deform 0.05 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 --repeat 3 > $OUT/r/box64_schwarz.txt 2>&1
grep -E "setup  |solve  |time to sol|repeated|status" $OUT/r/kershaw*.txt $OUT/r/box64*.txt | cut -c1-200
KRYFLOW_FDM_LINES=4 build-device/tests/test_kernels_cuda --gtest_filter='SemSchwarz.*:PMultigrid.*' > $OUT/r/lines4_tests.txt 2>&1; tail -3 $OUT/r/lines4_tests.txt
for i in 1 2; do KRYFLOW_FDM_LINES=4 $K --repeat 4 > $OUT/r/kershaw_lines4_run$i.txt 2>&1; done
grep -E "solve  |time to sol|repeated|status|_smoothing" $OUT/r/kershaw_lines4*.txt $OUT/r/kershaw_run1.txt | cut -c1-200
