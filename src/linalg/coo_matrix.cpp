// Operations on host triplets.
#include "kryflow/linalg/coo_matrix.hpp"

#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow {

void pin_unknown(CooMatrix& A, std::vector<double>* b, index_t row) {
  if (A.num_rows != A.num_cols) {
    throw InvalidInput("pin_unknown needs a square matrix, got " + std::to_string(A.num_rows) +
                       " x " + std::to_string(A.num_cols));
  }
  if (row < 0 || row >= A.num_rows) {
    throw InvalidInput("pin_unknown: row " + std::to_string(row) + " (0-based) is outside 0.." +
                       std::to_string(A.num_rows - 1));
  }
  if (b != nullptr && b->size() != static_cast<std::size_t>(A.num_rows)) {
    throw DimensionMismatch("pin_unknown: b has " + std::to_string(b->size()) +
                            " entries, the matrix " + std::to_string(A.num_rows) + " rows");
  }
  if (A.row_idx.size() != A.num_entries() || A.col_idx.size() != A.num_entries()) {
    throw InvalidInput("pin_unknown: the triplet arrays differ in length");
  }
  // The one allocation (room for the diagonal) comes before any change; from here on nothing
  // throws, so on any error A and b are left as they were.
  A.reserve(A.num_entries() + 1);
  std::size_t kept = 0;
  double diagonal = 0.0;
  for (std::size_t k = 0; k < A.num_entries(); ++k) {
    if (A.row_idx[k] == row && A.col_idx[k] == row) diagonal += A.values[k];
    if (A.row_idx[k] == row || A.col_idx[k] == row) continue;
    A.row_idx[kept] = A.row_idx[k];
    A.col_idx[kept] = A.col_idx[k];
    A.values[kept] = A.values[k];
    ++kept;
  }
  A.row_idx.resize(kept);
  A.col_idx.resize(kept);
  A.values.resize(kept);
  // Keep a_ii (its sign keeps a negative definite matrix negative definite); 1 if it was 0.
  A.push_back(row, row, diagonal != 0.0 ? diagonal : 1.0);
  if (b != nullptr) (*b)[static_cast<std::size_t>(row)] = 0.0;
}

}  // namespace kryflow
