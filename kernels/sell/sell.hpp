// Contract of the SELL-C-sigma kernels: conversion from CSR (layout, fill, gather back) and the
// products y = A x, r = b - A x, y = A x fused with x·y, and the diagonal.
//
// Same layout as kernels/spmv: namespaces reference, cpu and cuda with identical signatures, and
// unqualified functions that dispatch on the backend. The product kernels are templated on the
// stored value type T (double or float) and instantiated for both; the cuda ones also on the
// slice height C (every value of SellMatrix::kSliceHeights). Pointers live on the backend.
//
// Order of operations (docs/decisions/002-formats-sum-like-csr.md): every row, on every backend,
// is y_i = 0; y_i = y_i + double(a_ij) * x_col over j = 0 .. slice_width - 1 in order (its
// entries in column order, then its padding, which adds +0 or -0 and changes no bits), so the
// products equal the CSR reference bit for bit. The residual is r_i = b_i - y_i; the diagonal
// sums a_ij where col == i in the same order. The x·y of sell_spmv_dot has the order of the cuda
// kernel: sorted positions are cut into groups of kDotGroup; group g's terms t_q = x_i y_i
// (i = permutation[g * kDotGroup + q]; t_q = 0 for positions past num_rows) are added by
// block_sum (kernels/backend/reduction.cuh) into p_g; then lane l adds p_l, p_{l + 256}, ... in
// order from 0 and block_sum gives x·y (the second stage of grid_sum). The cpu backend emulates
// that order, so cpu and cuda agree bit for bit; the reference adds x_i y_i for i = 0, 1, ...
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sell {

/// Threads of a cuda block of the product kernels, and sorted positions per x·y group.
inline constexpr int kDotGroup = 256;

/// A SELL-C-sigma matrix as the product kernels see it (fields as in SellMatrix).
template <class T>
struct SellView {
  index_t num_rows = 0;
  index_t num_cols = 0;
  int slice_height = 0;                     // C
  index_t num_slices = 0;                   // ceil(num_rows / C)
  const std::int64_t* slice_ptr = nullptr;  // num_slices + 1 offsets
  const index_t* slice_width = nullptr;     // num_slices
  const index_t* col_idx = nullptr;         // slice_ptr[num_slices]
  const T* values = nullptr;                // slice_ptr[num_slices]
  const index_t* permutation = nullptr;     // num_rows: original row of each sorted position
  // Scratch of the cuda x·y (one call at a time per matrix): one sum per group and a counter
  // that is 0 between calls. The cpu kernel needs none.
  double* block_partials = nullptr;  // num_dot_groups(num_slices * C)
  unsigned int* counter = nullptr;   // 1
};

/// Groups of the fused x·y for `positions` sorted positions (num_slices * C).
inline std::int64_t num_dot_groups(std::int64_t positions) {
  return (positions + kDotGroup - 1) / kDotGroup;
}

/// A CSR pattern as the conversion kernels read it (original row order).
struct CsrPattern {
  index_t num_rows = 0;
  const index_t* row_ptr = nullptr;  // num_rows + 1
  const index_t* col_idx = nullptr;  // row_ptr[num_rows]
};

#define KRYFLOW_SELL_DECLARATIONS                                                                  \
  /** Sorts rows by length (descending, stable) within windows of sigma rows into permutation      \
      (num_rows), and writes slice_width (num_slices, each slice's longest row) and slice_ptr      \
      (num_slices + 1: 0 then the running sum of C * slice_width). C and sigma are valid. */       \
  void sell_layout(const Backend& backend, const CsrPattern& csr, int slice_height, index_t sigma, \
                   index_t* permutation, index_t* slice_width, std::int64_t* slice_ptr);           \
  /** Writes the stored entries of the layout `a` from CSR arrays in original order: values        \
      rounded to T, padding as documented in SellMatrix; col_idx only when `col_idx` is not        \
      null (update_values passes null; csr.col_idx is then not read). */                           \
  template <class T>                                                                               \
  void sell_fill(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,              \
                 const double* csr_values, index_t* col_idx, T* values);                           \
  /** The inverse of sell_fill: CSR column indices and values (as double), padding dropped. */     \
  template <class T>                                                                               \
  void sell_gather(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,            \
                   index_t* csr_col_idx, double* csr_values);                                      \
  /** y = A x */                                                                                   \
  template <class T>                                                                               \
  void sell_spmv(const Backend& backend, const SellView<T>& a, Span<const double> x,               \
                 Span<double> y);                                                                  \
  /** r = b - A x */                                                                               \
  template <class T>                                                                               \
  void sell_residual(const Backend& backend, const SellView<T>& a, Span<const double> b,           \
                     Span<const double> x, Span<double> r);                                        \
  /** y = A x and x·y written to *result, an address on the backend (square A), deterministic     \
      (file comment); nothing waits for the device */                                              \
  template <class T>                                                                               \
  void sell_spmv_dot(const Backend& backend, const SellView<T>& a, Span<const double> x,           \
                     Span<double> y, double* result);                                              \
  /** d_i = sum of the stored a_ii (0 where the row stores no diagonal entry) */                   \
  template <class T>                                                                               \
  void sell_diagonal(const Backend& backend, const SellView<T>& a, Span<double> d);

/// Dispatch.
KRYFLOW_SELL_DECLARATIONS

namespace reference {
KRYFLOW_SELL_DECLARATIONS
}
namespace cpu {
KRYFLOW_SELL_DECLARATIONS
}
namespace cuda {
KRYFLOW_SELL_DECLARATIONS
}

#undef KRYFLOW_SELL_DECLARATIONS

}  // namespace kryflow::kernels::sell
