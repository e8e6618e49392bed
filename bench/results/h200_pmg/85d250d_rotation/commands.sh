# NVIDIA H200, commit 85d250d: the GPU tests (test_amg_solvers_cuda too), Kershaw with --repeat 5,
# ncu sections of the p = 7 float local solves.
mkdir -p $OUT/r
KRYFLOW_BUILD_TARGETS="test_kernels_cuda test_solvers_cuda test_amg_solvers_cuda kryflow_cli" KRYFLOW_STEPS="tests" KRYFLOW_TESTS_REGEX="^test_kernels_cuda$|^test_solvers_cuda$|^test_amg_solvers_cuda$|cli_sem" bash scripts/device_run.sh $OUT/r > $OUT/r/stdout.txt 2>&1
k=build-device/apps/kryflow/kryflow; m=.data/meshes/nek/nekrs_kershaw/kershaw.re2.gz
for i in 1 2; do $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 --repeat 5 > $OUT/r/kershaw_run$i.txt 2>&1; done
timeout 150 ncu --kernel-name-base demangled --kernel-name "regex:fdm_kernel<float, (\(int\))?10" \
  --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats --section LaunchStats --section SourceCounters \
  $k sem --backend cuda --mesh $m --kershaw 0.3 --order 7 --preset sem_pmg_schwarz --copy-bytes 0 > $OUT/r/ncu_fdm.txt 2>&1
