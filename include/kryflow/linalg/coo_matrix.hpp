// Host triplets (coordinate format): what readers and generators produce before compression.
#pragma once

#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// A sparse matrix as host triplets (row_idx[k], col_idx[k], values[k]), 0-based, in any order;
/// duplicates are allowed (they are summed on conversion to CSR).
struct CooMatrix {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::vector<index_t> row_idx;
  std::vector<index_t> col_idx;
  std::vector<double> values;

  std::size_t num_entries() const noexcept { return values.size(); }
  void reserve(std::size_t n) {
    row_idx.reserve(n);
    col_idx.reserve(n);
    values.reserve(n);
  }
  void push_back(index_t row, index_t col, double value) {
    row_idx.push_back(row);
    col_idx.push_back(col);
    values.push_back(value);
  }
};

}  // namespace kryflow

namespace kryflow {

/// Fixes unknown `row` (0-based) of a singular system whose null space is the constants (a
/// pure-Neumann pressure Laplacian), the way finite-volume codes set a reference cell: every
/// entry of row and column `row` is removed except the diagonal a_ii (1 when a_ii is 0) and, when
/// `b` is not null, b[row] is set to 0, so the solution has x[row] = 0. Symmetry and definiteness
/// (on the complement of the constants) are kept. Throws InvalidInput when `row` is out of range or
/// A is not square.
void pin_unknown(CooMatrix& A, std::vector<double>* b, index_t row);

}  // namespace kryflow
