# NVIDIA H200, commit f98a430.
export KRYFLOW_COMMIT=f98a430
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
tail -4 $OUT/r/stdout.txt
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
for i in 1 2 3; do $K --repeat 4 > $OUT/r/kershaw_run$i.txt 2>&1; done
$K --report json > $OUT/r/kershaw.json 2>&1
grep -E "setup  |solve  |time to sol|repeated|status|_smoothing" $OUT/r/kershaw_run*.txt | cut -c1-200
timeout 100 ncu --kernel-name-base demangled --kernel-name "regex:restricted_assemble_kernel" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy \
  $K > $OUT/r/ncu_restricted_assemble.txt 2>&1
grep -E "Duration|Throughput|Eligible" $OUT/r/ncu_restricted_assemble.txt | head
