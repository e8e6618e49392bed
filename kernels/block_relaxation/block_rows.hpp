// The per-block-row formulas of the block relaxation kernels (block_relaxation.hpp), shared by
// the host kernels and the cuda inverse: the inverse of one diagonal block by LU with partial
// pivoting and the Gauss-Seidel update of one block row in the reference's order. Host and device
// code (KRYFLOW_HOST_DEVICE), templated on the block size.
#pragma once

#include <math.h>

#include <type_traits>
#include <utility>

#include "kernels/backend/host_device.hpp"
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::block_relaxation {

/// Calls f(std::integral_constant<int, B>{}) for B = block_size in 1..kMaxRelaxationBlockSize;
/// NotSupported naming `who` otherwise.
template <class F>
decltype(auto) with_block_size(int block_size, const char* who, F&& f) {
  switch (block_size) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    default:
      break;
  }
  throw NotSupported(std::string(who) + ": block size " + std::to_string(block_size) +
                     " is outside 1.." + std::to_string(kMaxRelaxationBlockSize));
}

/// The position k of block row I's diagonal block (column I), or -1 when it is not stored.
template <class V>
KRYFLOW_HOST_DEVICE index_t diagonal_block(const BsrView<V>& a, index_t I) {
  for (index_t k = a.row_ptr[I]; k < a.row_ptr[I + 1]; ++k) {
    if (a.col_idx[k] == I) return k;
  }
  return -1;
}

/// inverse (row-major kB x kB) = block^-1 by Golub-Van Loan Algorithm 3.4.1 (file comment of
/// block_relaxation.hpp); false when a pivot is zero or an entry of the inverse is not finite.
template <int kB, class V, class W>
KRYFLOW_HOST_DEVICE bool invert_block(const V* block, W* inverse) {
  double lu[kB][kB];
  int perm[kB];
  for (int i = 0; i < kB; ++i) {
    perm[i] = i;
    for (int c = 0; c < kB; ++c) lu[i][c] = static_cast<double>(block[i * kB + c]);
  }
  for (int k = 0; k < kB; ++k) {
    int p = k;
    for (int i = k + 1; i < kB; ++i) {
      if (fabs(lu[i][k]) > fabs(lu[p][k])) p = i;
    }
    if (!(lu[p][k] != 0.0)) return false;  // zero or NaN pivot
    if (p != k) {
      for (int c = 0; c < kB; ++c) {
        const double swap = lu[k][c];
        lu[k][c] = lu[p][c];
        lu[p][c] = swap;
      }
      const int swap = perm[k];
      perm[k] = perm[p];
      perm[p] = swap;
    }
    for (int i = k + 1; i < kB; ++i) {
      lu[i][k] = lu[i][k] / lu[k][k];
      for (int c = k + 1; c < kB; ++c) lu[i][c] = lu[i][c] - lu[i][k] * lu[k][c];
    }
  }
  bool finite = true;
  for (int c = 0; c < kB; ++c) {
    // L U y = P e_c: (P e_c)_i = 1 where perm[i] == c.
    double y[kB];
    for (int i = 0; i < kB; ++i) {
      double s = perm[i] == c ? 1.0 : 0.0;
      for (int j = 0; j < i; ++j) s = s - lu[i][j] * y[j];
      y[i] = s;
    }
    for (int i = kB - 1; i >= 0; --i) {
      double s = y[i];
      for (int j = i + 1; j < kB; ++j) s = s - lu[i][j] * y[j];
      y[i] = s / lu[i][i];
      finite = finite && isfinite(y[i]);
      inverse[i * kB + c] = static_cast<W>(y[i]);
    }
  }
  return finite;
}

/// out = omega inverse v for one block row (sums over c in order from 0).
template <int kB, class W>
KRYFLOW_HOST_DEVICE void apply_block(const W* inverse, double omega, const double* v, double* out) {
  for (int ii = 0; ii < kB; ++ii) {
    double s = 0.0;
    for (int c = 0; c < kB; ++c) s = s + static_cast<double>(inverse[ii * kB + c]) * v[c];
    out[ii] = omega * s;
  }
}

/// The Gauss-Seidel update of block row I in the reference's order (omega = 1 writes D_I^-1 t_I,
/// without reading the old x_I).
template <int kB, class V, class W>
KRYFLOW_HOST_DEVICE void sweep_block_row(const BsrView<V>& a, const W* inverse, index_t I,
                                         double omega, const double* b, double* x) {
  double t[kB];
  for (int ii = 0; ii < kB; ++ii) t[ii] = b[I * kB + ii];
  for (index_t k = a.row_ptr[I]; k < a.row_ptr[I + 1]; ++k) {
    const index_t J = a.col_idx[k];
    if (J == I) continue;
    const V* block = a.values + static_cast<std::int64_t>(k) * kB * kB;
    const double* xj = x + static_cast<std::int64_t>(J) * kB;
    for (int ii = 0; ii < kB; ++ii) {
      for (int c = 0; c < kB; ++c) {
        t[ii] = t[ii] - static_cast<double>(block[ii * kB + c]) * xj[c];
      }
    }
  }
  double update[kB];
  apply_block<kB>(inverse + static_cast<std::int64_t>(I) * kB * kB, omega, t, update);
  double* xi = x + static_cast<std::int64_t>(I) * kB;
  for (int ii = 0; ii < kB; ++ii) {
    xi[ii] = omega == 1.0 ? update[ii] : (1.0 - omega) * xi[ii] + update[ii];
  }
}

/// Copies block row `source` of a to position `first` of the reordered arrays, renaming the
/// block columns by `position`.
template <class V>
KRYFLOW_HOST_DEVICE void permute_block_row(const BsrView<V>& a, index_t source,
                                           const index_t* position, index_t first,
                                           std::int64_t block_entries, index_t* col_idx,
                                           V* values) {
  const index_t begin = a.row_ptr[source];
  const index_t count = a.row_ptr[source + 1] - begin;
  for (index_t k = 0; k < count; ++k) col_idx[first + k] = position[a.col_idx[begin + k]];
  const V* from = a.values + begin * block_entries;
  V* to = values + first * block_entries;
  for (std::int64_t q = 0; q < count * block_entries; ++q) to[q] = from[q];
}

}  // namespace kryflow::kernels::block_relaxation
