export KRYFLOW_COMMIT=$(cat .ab/commit)
mkdir -p $OUT/r
trap 'cd $OUT && tar czf all.tgz r && rm -rf r' EXIT
KRYFLOW_BUILD_TARGETS="test_kernels_cuda kryflow_cli kryflow_bench_sem" KRYFLOW_STEPS="none" bash scripts/device_run.sh $OUT/r > $OUT/r/build.txt 2>&1
tail -3 $OUT/r/build.txt
export KRYFLOW_DATA_DIR=$PWD/.data
timeout 200 build-device/tests/test_kernels_cuda --gtest_filter='SemPoisson*' > $OUT/r/test_sem_poisson.txt 2>&1; tail -3 $OUT/r/test_sem_poisson.txt
b=build-device/bench/kryflow_bench_sem
KRYFLOW_LINES_MINBLOCKS=0 timeout 150 $b --orders 3,5,7,9 --kershaw-orders 7 --arithmetic float64,float32 --json $OUT/r/bench_sem_mb0.json > $OUT/r/bench_sem_mb0.txt 2>&1
echo "== minblocks 0"; grep -E "vertex|shared" $OUT/r/bench_sem_mb0.txt | grep atomic
for v in 12 16; do
  KRYFLOW_LINES_MINBLOCKS=$v timeout 100 $b --orders 7 --kershaw-orders 7 --arithmetic float64,float32 > $OUT/r/bench_sem_mb$v.txt 2>&1
  echo "== minblocks $v"; grep -E "vertex_lines" $OUT/r/bench_sem_mb$v.txt | grep atomic
done
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
K="$k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0"
$K --repeat 3 > $OUT/r/kershaw_vertex.txt 2>&1
for v in 0 12 16; do KRYFLOW_LINES_MINBLOCKS=$v $K --repeat 3 --element-kernel vertex_lines > $OUT/r/kershaw_lines_mb$v.txt 2>&1; done
grep -E "solve  |time to sol|repeated|_smoothing|residual  " $OUT/r/kershaw_*.txt | cut -c1-170
