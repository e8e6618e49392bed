// Host triplets (coordinate format): what readers and generators produce before compression.
#pragma once

#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// A sparse num_rows x num_cols matrix as host triplets (row_idx[k], col_idx[k], values[k]),
/// 0-based, in any order; duplicates are allowed (they are summed on conversion to CSR). A plain
/// aggregate: nothing is validated here; CsrMatrix::from_coo checks the indices (InvalidInput
/// when one is out of range or the three arrays differ in length).
struct CooMatrix {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::vector<index_t> row_idx;
  std::vector<index_t> col_idx;
  std::vector<double> values;

  /// Stored triplets (duplicates counted), taken as values.size().
  std::size_t num_entries() const noexcept { return values.size(); }
  /// Reserves room for `n` triplets in all three arrays (std::bad_alloc when it cannot).
  void reserve(std::size_t n) {
    row_idx.reserve(n);
    col_idx.reserve(n);
    values.reserve(n);
  }
  /// Appends one triplet; no range check (std::bad_alloc when the arrays cannot grow).
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
/// entry of row and column `row` is removed except the diagonal, which becomes the sum of the
/// stored (row, row) entries, or 1 when that sum is 0 or none is stored; when `b` is not null,
/// b[row] is set to 0. The solution then has x[row] = 0, and the other equations lose only the
/// terms a_ij x_row = 0. Symmetry and definiteness (on the complement of the constants) are
/// kept, including the sign of a negative definite A. Entries may be in any order; the order of
/// the kept entries is preserved and the diagonal is appended last.
///
/// Shapes: A square (num_rows == num_cols), row_idx, col_idx and values of equal length;
/// `b` null or of length A.num_rows.
/// Errors (checked before anything is modified, so on a throw A and b are unchanged):
/// InvalidInput when A is not square, `row` is outside 0..num_rows-1 or the triplet arrays
/// differ in length; DimensionMismatch (an InvalidInput) when b's length is not A.num_rows;
/// std::bad_alloc only if room for one more entry cannot be reserved.
void pin_unknown(CooMatrix& A, std::vector<double>* b, index_t row);

}  // namespace kryflow
