// The per-block formulas of hybrid Gauss-Seidel (kernels/smoothers/smoothers.hpp), shared by the
// cpu and cuda kernels, which differ only in how blocks are distributed (OpenMP chunks, one
// device thread per block). Host and device code (KRYFLOW_HOST_DEVICE): the order of every sum is
// the reference's, so both give its bits.
#pragma once

#include <math.h>

#include <cstdint>

#include "kernels/backend/host_device.hpp"
#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::hybrid {

/// Rows [first, end) of one block.
struct Block {
  index_t first = 0;
  index_t end = 0;
  KRYFLOW_HOST_DEVICE bool holds(index_t j) const { return j >= first && j < end; }
};

/// Blocks of block_rows rows (the last one may be shorter) over n rows.
KRYFLOW_HOST_DEVICE inline std::int64_t block_count(index_t n, index_t block_rows) {
  return (std::int64_t{n} + block_rows - 1) / block_rows;
}

/// Block g (< block_count) of n rows.
KRYFLOW_HOST_DEVICE inline Block block(std::int64_t g, index_t n, index_t block_rows) {
  const std::int64_t first = g * block_rows;
  const std::int64_t end = n - first > block_rows ? first + block_rows : std::int64_t{n};
  return {static_cast<index_t>(first), static_cast<index_t>(end)};
}

/// The block of row i.
KRYFLOW_HOST_DEVICE inline Block block_of_row(index_t i, index_t n, index_t block_rows) {
  return block(i / block_rows, n, block_rows);
}

/// -1 when row i stores a negative diagonal entry, else +1: the sign the l1 terms take, so that
/// a negative definite A (e.g. a finite-volume pressure matrix as assembled) gets the l1
/// diagonal of -A negated.
template <class Value>
KRYFLOW_HOST_DEVICE inline double diagonal_sign(const PatternView& a, const Value* values,
                                                index_t i) {
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    if (a.col_idx[k] == i) return static_cast<double>(values[k]) < 0.0 ? -1.0 : 1.0;
  }
  return 1.0;
}

/// l1_row_norms' d_i: s sum_j |a_ij| from 0 in stored order, s = diagonal_sign.
template <class Value>
KRYFLOW_HOST_DEVICE inline double l1_row_norm(const PatternView& a, const Value* values,
                                              index_t i) {
  const double s = diagonal_sign(a, values, i);
  double sum = 0.0;
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    sum += s * fabs(static_cast<double>(values[k]));
  }
  return sum;
}

/// d_i of hybrid_diagonal: from 0 in stored order, a_ii, and s |a_ij| off the block with l1
/// (s = diagonal_sign).
template <class Value>
KRYFLOW_HOST_DEVICE inline double diagonal(const PatternView& a, const Value* values, index_t i,
                                           Block own, bool l1) {
  const double s = l1 ? diagonal_sign(a, values, i) : 1.0;
  double sum = 0.0;
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    const index_t j = a.col_idx[k];
    if (j == i) {
      sum += static_cast<double>(values[k]);
    } else if (l1 && !own.holds(j)) {
      sum += s * fabs(static_cast<double>(values[k]));
    }
  }
  return sum;
}

/// Sweeps the rows of `own` in order (forward) or reverse order, as hybrid_gauss_seidel's row
/// formulas: x_j of the block's rows (the newest), x_start_j of the others.
template <class Value>
KRYFLOW_HOST_DEVICE inline void sweep(const PatternView& a, const Value* values, Block own, bool l1,
                                      const double* inverse_diagonal, const double* b, double* x,
                                      const double* x_start, bool forward) {
  const index_t rows = own.end - own.first;
  for (index_t step = 0; step < rows; ++step) {
    const index_t i = forward ? own.first + step : own.end - 1 - step;
    if (l1) {
      double y = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const index_t j = a.col_idx[k];
        y += static_cast<double>(values[k]) * (own.holds(j) ? x[j] : x_start[j]);
      }
      x[i] = x[i] + inverse_diagonal[i] * (b[i] - y);
    } else {
      double sum = b[i];
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const index_t j = a.col_idx[k];
        if (j != i) sum -= static_cast<double>(values[k]) * (own.holds(j) ? x[j] : x_start[j]);
      }
      x[i] = sum * inverse_diagonal[i];
    }
  }
}

}  // namespace kryflow::kernels::smoothers::hybrid
