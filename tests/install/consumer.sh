#!/usr/bin/env bash
# Installs kryflow from BUILD_DIR into a scratch prefix, then builds and runs the examples
# against the installed tree only: examples/cpp through find_package(kryflow), the same program
# through pkg-config, examples/c through pkg-config and examples/fortran (gfortran) with the
# installed module source; each solves a corpus matrix.
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
c++ -std=c++20 -O1 "$source_dir/examples/cpp/solve_matrix.cpp" -o "$scratch/solve_matrix_pc" \
  $(pkg-config --cflags --libs kryflow) -Wl,-rpath,"$prefix/lib"
"$scratch/solve_matrix_pc" "$matrix" pcg_sa cpu

echo "== C: examples/c through pkg-config"
cc -std=c11 -Wall -Wextra -Werror -O1 "$source_dir/examples/c/solve_matrix.c" -o "$scratch/solve_matrix_c" \
  $(pkg-config --cflags --libs kryflow) -lm -Wl,-rpath,"$prefix/lib"
"$scratch/solve_matrix_c" "$matrix" pcg_amg cpu

if command -v gfortran >/dev/null; then
  echo "== Fortran: examples/fortran with the installed module source"
  mkdir -p "$scratch/fortran"
  (cd "$scratch/fortran" &&
    gfortran -c "$prefix/share/kryflow/fortran/kryflow.f90" -o kryflow_module.o &&
    gfortran -Wall "$source_dir/examples/fortran/solve_matrix.f90" kryflow_module.o \
      -L"$prefix/lib" -lkryflow -Wl,-rpath,"$prefix/lib" -o solve_matrix_f)
  "$scratch/fortran/solve_matrix_f" "$matrix" pcg_amg cpu
else
  echo "== Fortran: gfortran not found (apt-get install gfortran)" >&2
  exit 1
fi
