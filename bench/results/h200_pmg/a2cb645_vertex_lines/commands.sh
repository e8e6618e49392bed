export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli kryflow_bench_sem" KRYFLOW_STEPS="none" bash scripts/device_run.sh $OUT/r > $OUT/r/build.txt 2>&1
tail -3 $OUT/r/build.txt
b=build-device/bench/kryflow_bench_sem
for v in 0 12 16; do
  KRYFLOW_LINES_MINBLOCKS=$v timeout 100 $b --orders 7 --kershaw-orders 7 --arithmetic float64,float32 > $OUT/r/bench_sem_mb$v.txt 2>&1
  echo "== minblocks $v"; grep -E "vertex" $OUT/r/bench_sem_mb$v.txt | grep atomic
done
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
$K --repeat 3 > $OUT/r/kershaw_vertex.txt 2>&1
for v in 0 12; do KRYFLOW_LINES_MINBLOCKS=$v $K --repeat 3 --element-kernel vertex_lines > $OUT/r/kershaw_lines_mb$v.txt 2>&1; done
grep -E "solve  |time to sol|repeated|their|status|_smoothing|kernel" $OUT/r/kershaw_*.txt | cut -c1-170
export KRYFLOW_DATA_DIR=$PWD/.data
KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|^test_amg_solvers_cuda$|cli_sem" KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli" timeout 280 bash scripts/device_run.sh $OUT/r/t > $OUT/r/tests.txt 2>&1
tail -6 $OUT/r/tests.txt
