#!/usr/bin/env bash
# Builds the Python package (bindings/python) against kryflow installed from BUILD_DIR into a
# scratch prefix, runs its tests (pytest, cpu backend) and `kryflow solve --plot`.
#   python.sh SOURCE_DIR BUILD_DIR SCRATCH DATA_DIR   (KRYFLOW_DATA_DIR overrides DATA_DIR)
# Needs python3 with pip, scikit-build-core, nanobind, numpy, scipy, pytest and matplotlib
# (scripts/setup.sh installs them); the package is built without build isolation.
set -euo pipefail
source_dir=$1 build_dir=$2 scratch=$3
export KRYFLOW_DATA_DIR=${KRYFLOW_DATA_DIR:-$4}
prefix=$scratch/prefix site=$scratch/site
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.log"

echo "== pip install (the extension against the installed kryflow)"
python3 -m pip install --no-build-isolation --no-deps --target "$site" \
  -C cmake.define.CMAKE_PREFIX_PATH="$prefix" -C build-dir="$scratch/build" \
  "$source_dir" >"$scratch/pip.log" 2>&1 || { tail -40 "$scratch/pip.log"; exit 1; }
export PYTHONPATH=$site

echo "== pytest bindings/python/tests"
(cd "$scratch" && python3 -m pytest -q -p no:cacheprovider "$source_dir/bindings/python/tests")

echo "== kryflow solve --plot"
"$build_dir/apps/kryflow/kryflow" solve --backend cpu --preset pcg_amg \
  -A "$KRYFLOW_DATA_DIR/matrices/suitesparse/ex10hs/ex10hs.mtx.gz" \
  --plot "$scratch/residual.png" | grep -E "status|solve "
head -c 8 "$scratch/residual.png" | od -An -c | grep -q "P   N   G" || {
  echo "--plot wrote no PNG" >&2
  exit 1
}
echo "residual.png: $(stat -c %s "$scratch/residual.png") bytes"
