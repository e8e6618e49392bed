#!/usr/bin/env bash
# Installs kryflow's dependencies, builds it, then runs the default problem (`run`) or the tests
# (`test`: every test that needs no GPU, i.e. `ctest -LE gpu`).
#
#   ./scripts/setup.sh run    install, build, solve the built-in 3D Poisson problem
#   ./scripts/setup.sh test   install, build, run the test suite
#
# Environment: KRYFLOW_BUILD_DIR (default build/), KRYFLOW_DATA_DIR (the matrix corpus,
# default ../shared/data), KRYFLOW_SKIP_INSTALL=1 to skip apt-get.
set -euo pipefail
mode=${1:-run}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KRYFLOW_BUILD_DIR:-$root/build}
packages=(build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev nlohmann-json3-dev
          libcli11-dev zlib1g-dev libbenchmark-dev libomp-dev liblapack-dev python3 python3-dev python3-pip gfortran)

if [[ "${KRYFLOW_SKIP_INSTALL:-0}" != 1 ]] && command -v apt-get >/dev/null; then
  sudo=""
  [[ "$(id -u)" != 0 ]] && command -v sudo >/dev/null && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

# The Python package's build and test dependencies (the test python_package builds it).
if [[ "$mode" == test && "${KRYFLOW_SKIP_INSTALL:-0}" != 1 ]]; then
  python_packages=(scikit-build-core nanobind numpy scipy pytest matplotlib)
  python3 -m pip install -q "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${python_packages[@]}"
fi

# The CUDA toolkit, when present, is usually outside PATH.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${KRYFLOW_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

case "$mode" in
  run) "$build/apps/kryflow/kryflow" solve ;;
  test) ctest --test-dir "$build" -LE gpu --output-on-failure -j "$(nproc)" ;;
  *) echo "usage: $0 run|test" >&2; exit 1 ;;
esac
