// Shared helpers of the test suite: the backend under test, random data, the corpus folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::test {

/// The backend this test executable checks against the reference: set at compile time by
/// KRYFLOW_TEST_BACKEND ("cpu" or "cuda"). Creating it throws when no device is present, so a
/// GPU test without a GPU fails; it never skips.
Backend backend_under_test();

/// The corpus folder: $KRYFLOW_DATA_DIR, else the configured default. Calls ADD_FAILURE with a
/// message saying how to set it (and returns an empty path) when it does not exist.
std::filesystem::path data_dir();
/// data_dir() / relative; fails the test when the file is missing.
std::filesystem::path data_file(const std::string& relative);
/// The Nek meshes of the corpus, relative to data_dir()/meshes/nek without ".re2.gz"
/// ("nek_bp5/bp5", ...).
const std::vector<std::string>& nek_corpus_meshes();
/// The corpus mesh `name` (an entry of nek_corpus_meshes()): data_file of its .re2.gz.
std::filesystem::path nek_mesh_file(const std::string& name);

/// Uniform random doubles in [-1, -0.1] u [0.1, 1] (never zero), from a fresh seed per call
/// unless `seed` is given.
std::vector<double> random_vector(std::size_t n, std::uint64_t seed = 0);

/// A random square or rectangular sparse matrix with skewed row lengths: empty rows, rows of
/// up to `max_row_length` entries, and (when long_row) one row with about half the columns.
CooMatrix random_sparse(index_t num_rows, index_t num_cols, index_t max_row_length, bool long_row,
                        std::uint64_t seed = 0);

/// max_i |a_i - b_i| / max(1, max_i |b_i|).
double relative_max_difference(const std::vector<double>& a, const std::vector<double>& b);

/// Corner coordinates of an nx x ny x nz box of unit hexahedra (8 x 3 doubles per element,
/// corners in lexicographic order v = i + 2 j + 4 k), every vertex moved by a small smooth
/// bump so that no two points share a coordinate by accident.
std::vector<double> hex_box_vertices(int nx, int ny, int nz);

/// Corner coordinates of an nx x ny x nz box of [0,1]^3 (as hex_box_vertices) whose interior
/// vertices move by amplitude / max(nx, ny, nz) sin(pi x) sin(pi y) sin(pi z) along (1, -1, 1):
/// the boundary stays on the cube's faces; amplitude 0 gives affine elements.
std::vector<double> unit_cube_box(int nx, int ny, int nz, double amplitude);

/// Relabels each element's corners (8 x 3 doubles per element, as hex_box_vertices) by a
/// random symmetry of the cube, an axis permutation with reflections: the same geometry seen
/// from another reference orientation. `proper`: rotations only (no mirror images), so the
/// elements keep a positive Jacobian and an operator can be built on them.
void reorient_hex_elements(std::vector<double>& vertices, std::uint64_t seed, bool proper = false);

/// sum_i a_i b_i and max_i |a_i| of host vectors.
double dot(const std::vector<double>& a, const std::vector<double>& b);
double max_abs(const std::vector<double>& a);

/// A fresh seed (from std::random_device), printed through SCOPED_TRACE by callers;
/// KRYFLOW_TEST_SEED (decimal) replays a printed seed instead.
std::uint64_t fresh_seed();

}  // namespace kryflow::test

namespace kryflow::test {

/// ||b - A x||_2 / ||b||_2 computed on the host from the triplets, independently of any kernel.
double true_relative_residual(const CooMatrix& A, const std::vector<double>& x,
                              const std::vector<double>& b);

}  // namespace kryflow::test

namespace kryflow::test {

/// A LinearOperator that only forwards apply(x, y) to a CsrMatrix (which must outlive it): its
/// other operations are LinearOperator's unfused defaults, the oracle of the fused ones.
class ApplyOnlyOperator final : public LinearOperator {
 public:
  explicit ApplyOnlyOperator(const CsrMatrix& A) : A_(A) {}
  index_t num_rows() const override { return A_.num_rows(); }
  index_t num_cols() const override { return A_.num_cols(); }
  const Backend& backend() const override { return A_.backend(); }
  void apply(const Vector& x, Vector& y) const override { A_.apply(x, y); }
  using LinearOperator::apply;

 private:
  const CsrMatrix& A_;
};

}  // namespace kryflow::test
