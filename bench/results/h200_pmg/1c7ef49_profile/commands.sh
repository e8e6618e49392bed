# NVIDIA H200, commit 1c7ef49: the GPU tests, two Kershaw solves, every kernel's duration in
# launch order (ncu, one Kershaw run, whole process) and ncu sections of the Schwarz sums.
mkdir -p $OUT/r
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
for i in 1 2; do $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/kershaw_run$i.txt 2>&1; done
timeout 200 ncu --metrics gpu__time_duration.sum --csv --graph-profiling node $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/ncu_all.csv 2>$OUT/r/ncu_all.err
gzip $OUT/r/ncu_all.csv
timeout 150 ncu --kernel-name-base demangled --kernel-name "regex:fdm_kernel<float, 10|assemble_kernel<float>" \
  --launch-count 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats --section LaunchStats \
  $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/ncu_fdm.txt 2>&1
