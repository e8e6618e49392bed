#!/usr/bin/env bash
# Installs kryflow from BUILD_DIR into a scratch prefix, then builds and runs the example
# consumers against the installed tree only: examples/cpp through find_package(kryflow), the
# same program through pkg-config, and (when given a compiler) the C and Fortran examples.
#   consumer.sh SOURCE_DIR BUILD_DIR SCRATCH DATA_DIR   (KRYFLOW_DATA_DIR overrides DATA_DIR)
set -euo pipefail
source_dir=$1 build_dir=$2 scratch=$3
matrix=${KRYFLOW_DATA_DIR:-$4}/matrices/suitesparse/ex10hs/ex10hs.mtx.gz
prefix=$scratch/prefix
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.log"

echo "== find_package(kryflow): examples/cpp"
cmake -S "$source_dir/examples/cpp" -B "$scratch/cpp" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$scratch/cpp.log"
cmake --build "$scratch/cpp" >>"$scratch/cpp.log"
"$scratch/cpp/solve_matrix" "$matrix" pcg_amg cpu

echo "== pkg-config: the same program"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
c++ -O1 "$source_dir/examples/cpp/solve_matrix.cpp" -o "$scratch/solve_matrix_pc" \
  $(pkg-config --cflags --libs kryflow) -Wl,-rpath,"$prefix/lib"
"$scratch/solve_matrix_pc" "$matrix" pcg_sa cpu
