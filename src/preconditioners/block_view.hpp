// Internal: a CsrMatrix or BsrMatrix as the BsrView of the block relaxation kernels (a CSR
// matrix is a BSR matrix of 1 x 1 blocks), for the coloring, block Jacobi and multicolor
// Gauss-Seidel.
#pragma once

#include <string>

#include "kernels/bsr/bsr.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::detail {

/// The blocks of a square CsrMatrix (B = 1) or BsrMatrix, values in either precision.
struct BlockMatrix {
  int block_size = 1;
  index_t num_block_rows = 0;
  std::int64_t num_blocks = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_idx = nullptr;
  const double* values64 = nullptr;  // exactly one of the two is set when there are blocks
  const float* values32 = nullptr;
  const Backend* backend = nullptr;

  kernels::sparse_setup::PatternView pattern() const {
    return {num_block_rows, num_block_rows, row_ptr, col_idx};
  }
  /// Calls f(BsrView<double>) or f(BsrView<float>) by the stored precision.
  template <class F>
  decltype(auto) visit(F&& f) const {
    const std::int64_t value_bytes =
        num_blocks * block_size * block_size * (values32 != nullptr ? 4 : 8);
    auto make = [&](auto* values) {
      using V = std::remove_const_t<std::remove_pointer_t<decltype(values)>>;
      kernels::bsr::BsrView<V> view;
      view.num_block_rows = num_block_rows;
      view.num_block_cols = num_block_rows;
      view.block_size = block_size;
      view.num_blocks = num_blocks;
      view.row_ptr = row_ptr;
      view.col_idx = col_idx;
      view.values = values;
      view.stream_values = value_bytes > kernels::bsr::kStreamValuesBytes;
      return view;
    };
    if (values32 != nullptr) return f(make(values32));
    return f(make(values64));
  }
};

/// A as blocks; NotSupported naming `who` when A is neither a CsrMatrix nor a BsrMatrix,
/// DimensionMismatch when it is not square.
inline BlockMatrix block_matrix_of(const LinearOperator& A, const std::string& who) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch(who + " needs a square matrix, got " + std::to_string(A.num_rows()) +
                            " x " + std::to_string(A.num_cols()));
  }
  BlockMatrix m;
  m.backend = &A.backend();
  if (const auto* csr = dynamic_cast<const CsrMatrix*>(&A)) {
    m.num_block_rows = csr->num_rows();
    m.num_blocks = static_cast<std::int64_t>(csr->col_idx().size());
    m.row_ptr = csr->row_ptr().span().data();
    m.col_idx = csr->col_idx().span().data();
    if (csr->precision() == Precision::float32) {
      m.values32 = csr->values_float32().span().data();
    } else {
      m.values64 = csr->values().span().data();
    }
    return m;
  }
  if (const auto* bsr = dynamic_cast<const BsrMatrix*>(&A)) {
    m.block_size = bsr->block_size();
    m.num_block_rows = bsr->num_block_rows();
    m.num_blocks = bsr->num_blocks();
    m.row_ptr = bsr->block_row_ptr().span().data();
    m.col_idx = bsr->block_col_idx().span().data();
    if (bsr->precision() == Precision::float32) {
      m.values32 = bsr->values_float32().span().data();
    } else {
      m.values64 = bsr->values_float64().span().data();
    }
    return m;
  }
  throw NotSupported(who + " needs the matrix entries: pass a CsrMatrix or a BsrMatrix");
}

/// The inverses of A's diagonal blocks, stored in one of the two arrays by precision.
struct InverseBlocks {
  Array<double> float64;
  Array<float> float32;
};

/// Inverts m's diagonal blocks on its backend into `out` (replacing it). Throws InvalidInput
/// "<who>: the diagonal block of block row <I> (1-based) is singular, not stored or not finite"
/// (for B = 1 "row" and "entry"), NotSupported for B > 8. When m is a reordered copy, `order`
/// (its block row p is block row order[p] of the input) names the input's block row.
void invert_diagonal_blocks(const BlockMatrix& m, Precision precision, InverseBlocks& out,
                            const std::string& who, const Array<index_t>* order = nullptr);

}  // namespace kryflow::detail
