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

/// What the update of entry ii of block row I reads besides the products (b, its old x, the
/// saved product, its row of D_I^-1), loaded before the products so that on a device their
/// latency overlaps the products' loads.
template <int kB>
struct EntryInputs {
  double b = 0.0;
  double x = 0.0;
  double saved = 0.0;
  double inverse[kB];  // row ii of D_I^-1 (unused without an inverse)
};

template <int kB, class W>
KRYFLOW_HOST_DEVICE EntryInputs<kB> load_entry(const SweepUpdate& u, const SweepVectors& v,
                                               const W* inverse, index_t I, int ii) {
  EntryInputs<kB> in;
  const std::int64_t i = std::int64_t{I} * kB + ii;
  if (u.beta != 0.0) {
    const std::int64_t row = v.b_map != nullptr ? v.b_map[I] : I;
    in.b = v.b[row * kB + ii];
  }
  if (u.alpha != 0.0 || u.gamma != 0.0) in.x = v.x[i];
  if (v.other_in != nullptr) in.saved = v.other_in[i];
  if (inverse != nullptr) {
    for (int c = 0; c < kB; ++c) in.inverse[c] = static_cast<double>(inverse[i * kB + c]);
  }
  return in;
}

/// t_I[ii] from p = p_I[ii] and q = q_I[ii], left to right: beta b + gamma x - p - q.
template <int kB>
KRYFLOW_HOST_DEVICE double entry_t(const SweepUpdate& u, const EntryInputs<kB>& in, double p,
                                   double q) {
  double t = 0.0;
  if (u.beta != 0.0) t = u.beta == 1.0 ? in.b : u.beta * in.b;
  if (u.gamma != 0.0) t = t + u.gamma * in.x;
  t = t - p;
  return t - q;
}

/// The new x_I[ii] from block row I's t (kB entries): alpha x + omega (D_I^-1 t)[ii] (sum over
/// c in order; t[ii] without an inverse).
template <int kB>
KRYFLOW_HOST_DEVICE double entry_x(const SweepUpdate& u, const EntryInputs<kB>& in,
                                   bool has_inverse, const double* t, int ii) {
  double s = 0.0;
  if (has_inverse) {
    for (int c = 0; c < kB; ++c) s = s + in.inverse[c] * t[c];
  } else {
    s = t[ii];
  }
  const double update = u.omega == 1.0 ? s : u.omega * s;
  return u.alpha == 0.0 ? update : u.alpha * in.x + update;
}

/// The writes of triangular_sweep for entry ii of block row I: x, product_out (p), x_out.
template <int kB>
KRYFLOW_HOST_DEVICE void store_entry(const SweepVectors& v, index_t I, int ii, double x, double p) {
  const std::int64_t i = std::int64_t{I} * kB + ii;
  v.x[i] = x;
  if (v.product_out != nullptr) v.product_out[i] = p;
  if (v.x_out != nullptr) v.x_out[std::int64_t{v.out_map[I]} * kB + ii] = x;
}

/// acc[ii] += row ii of the blocks of `part`'s block row I times x, block by block, column by
/// column (the reference's order).
template <int kB, class V>
KRYFLOW_HOST_DEVICE void add_row_products(const BsrView<V>& part, index_t I, const double* x,
                                          double* acc) {
  for (index_t k = part.row_ptr[I]; k < part.row_ptr[I + 1]; ++k) {
    const V* block = part.values + static_cast<std::int64_t>(k) * kB * kB;
    const double* xj = x + static_cast<std::int64_t>(part.col_idx[k]) * kB;
    for (int ii = 0; ii < kB; ++ii) {
      for (int c = 0; c < kB; ++c) {
        acc[ii] = acc[ii] + static_cast<double>(block[ii * kB + c]) * xj[c];
      }
    }
  }
}

/// triangular_sweep's update of block row I in the reference's order.
template <int kB, class V, class W>
KRYFLOW_HOST_DEVICE void sweep_block_row(const BsrView<V>& part, const BsrView<V>* second,
                                         const W* inverse, index_t I, const SweepUpdate& u,
                                         const SweepVectors& v) {
  EntryInputs<kB> in[kB];
  for (int ii = 0; ii < kB; ++ii) in[ii] = load_entry<kB>(u, v, inverse, I, ii);
  double p[kB];
  double q[kB];
  for (int ii = 0; ii < kB; ++ii) p[ii] = q[ii] = 0.0;
  add_row_products<kB>(part, I, v.x, p);
  if (second != nullptr) {
    add_row_products<kB>(*second, I, v.x, q);
  } else {
    for (int ii = 0; ii < kB; ++ii) q[ii] = in[ii].saved;
  }
  double t[kB];
  for (int ii = 0; ii < kB; ++ii) t[ii] = entry_t<kB>(u, in[ii], p[ii], q[ii]);
  for (int ii = 0; ii < kB; ++ii) {
    store_entry<kB>(v, I, ii, entry_x<kB>(u, in[ii], inverse != nullptr, t, ii), p[ii]);
  }
}

/// split_lengths of block row p.
KRYFLOW_HOST_DEVICE inline void split_row_lengths(const sparse_setup::PatternView& a,
                                                  const index_t* order, const index_t* position,
                                                  index_t p, index_t* lower, index_t* upper) {
  const index_t source = order[p];
  index_t l = 0;
  index_t u = 0;
  for (index_t k = a.row_ptr[source]; k < a.row_ptr[source + 1]; ++k) {
    const index_t column = position[a.col_idx[k]];
    l += column < p ? 1 : 0;
    u += column > p ? 1 : 0;
  }
  lower[p] = l;
  upper[p] = u;
}

/// split_pattern's placement of block k of block row order[p] (of a): its rank among the
/// blocks of its part by renamed column.
KRYFLOW_HOST_DEVICE inline void split_place(const sparse_setup::PatternView& a,
                                            const index_t* order, const index_t* position,
                                            index_t p, index_t k, const index_t* lower_ptr,
                                            const index_t* upper_ptr, index_t* lower_col,
                                            index_t* upper_col, index_t* lower_source,
                                            index_t* upper_source, index_t* diagonal_source) {
  const index_t source = order[p];
  const index_t column = position[a.col_idx[k]];
  if (column == p) {
    diagonal_source[p] = k;
    return;
  }
  const bool lower = column < p;
  index_t rank = 0;
  for (index_t m = a.row_ptr[source]; m < a.row_ptr[source + 1]; ++m) {
    const index_t other = position[a.col_idx[m]];
    rank += (other < column && (lower || other > p)) ? 1 : 0;
  }
  if (lower) {
    lower_col[lower_ptr[p] + rank] = column;
    lower_source[lower_ptr[p] + rank] = k;
  } else {
    upper_col[upper_ptr[p] + rank] = column;
    upper_source[upper_ptr[p] + rank] = k;
  }
}

/// The position of block column `column` in `part`'s block row I (columns sorted), or -1.
template <class V>
KRYFLOW_HOST_DEVICE index_t find_block(const BsrView<V>& part, index_t I, index_t column) {
  index_t lo = part.row_ptr[I];
  index_t hi = part.row_ptr[I + 1];
  const index_t end = hi;
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    if (part.col_idx[mid] < column) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < end && part.col_idx[lo] == column ? lo : index_t{-1};
}

/// out = a b for kB x kB row-major blocks (sums over m in order).
template <int kB, class A, class B>
KRYFLOW_HOST_DEVICE void block_product(const A* a, const B* b, double* out) {
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int i = 0; i < kB; ++i) {
    for (int c = 0; c < kB; ++c) {
      double s = 0.0;
      for (int m = 0; m < kB; ++m) {
        s = s + static_cast<double>(a[i * kB + m]) * static_cast<double>(b[m * kB + c]);
      }
      out[i * kB + c] = s;
    }
  }
}

/// DILU of block row I (file comment of block_relaxation.hpp, factor_color): D'_I = A_II -
/// sum over the lower blocks A_IJ of A_IJ D'_J^-1 A_JI (A_JI found in row J's upper part, absent
/// terms skipped, J in order), then inverse_I = D'_I^-1. False when D'_I is singular or its
/// inverse not finite. Reads the inverses of earlier colors.
template <int kB, class V, class W>
KRYFLOW_HOST_DEVICE bool dilu_row(const BsrView<V>& lower, const BsrView<V>& upper,
                                  const V* diagonal, W* inverse, index_t I) {
  constexpr int kBB = kB * kB;
  double d[kBB];
  for (int e = 0; e < kBB; ++e) d[e] = static_cast<double>(diagonal[std::int64_t{I} * kBB + e]);
  for (index_t k = lower.row_ptr[I]; k < lower.row_ptr[I + 1]; ++k) {
    const index_t J = lower.col_idx[k];
    const index_t m = find_block(upper, J, I);
    if (m < 0) continue;
    double t[kBB];
    block_product<kB>(lower.values + std::int64_t{k} * kBB, inverse + std::int64_t{J} * kBB, t);
    double p[kBB];
    block_product<kB>(t, upper.values + std::int64_t{m} * kBB, p);
    for (int e = 0; e < kBB; ++e) d[e] = d[e] - p[e];
  }
  return invert_block<kB>(d, inverse + std::int64_t{I} * kBB);
}

/// ILU(0) of block row I in place, Saad's Algorithm 10.4 (IKJ) on blocks: for each lower block
/// A_IK in increasing column order, L_IK = A_IK U_KK^-1 (stored in its place), then for each
/// block U_Kj of row K's upper part, A_Ij -= L_IK U_Kj where block (I, j) is stored (lower,
/// diagonal or upper part of row I); finally inverse_I = U_II^-1. False when U_II is singular or
/// its inverse not finite. Reads the rows and inverses of earlier colors.
template <int kB, class V, class W>
KRYFLOW_HOST_DEVICE bool ilu0_row(const BsrView<V>& lower, const BsrView<V>& upper, V* diagonal,
                                  W* inverse, index_t I) {
  constexpr int kBB = kB * kB;
  V* lower_values = const_cast<V*>(lower.values);
  V* upper_values = const_cast<V*>(upper.values);
  for (index_t k = lower.row_ptr[I]; k < lower.row_ptr[I + 1]; ++k) {
    const index_t K = lower.col_idx[k];
    double l[kBB];
    block_product<kB>(lower_values + std::int64_t{k} * kBB, inverse + std::int64_t{K} * kBB, l);
    for (int e = 0; e < kBB; ++e) lower_values[std::int64_t{k} * kBB + e] = static_cast<V>(l[e]);
    for (index_t q = upper.row_ptr[K]; q < upper.row_ptr[K + 1]; ++q) {
      const index_t j = upper.col_idx[q];
      V* target = nullptr;
      if (j < I) {
        const index_t at = find_block(lower, I, j);
        if (at >= 0) target = lower_values + std::int64_t{at} * kBB;
      } else if (j == I) {
        target = diagonal + std::int64_t{I} * kBB;
      } else {
        const index_t at = find_block(upper, I, j);
        if (at >= 0) target = upper_values + std::int64_t{at} * kBB;
      }
      if (target == nullptr) continue;
      double p[kBB];
      block_product<kB>(l, upper_values + std::int64_t{q} * kBB, p);
      for (int e = 0; e < kBB; ++e)
        target[e] = static_cast<V>(static_cast<double>(target[e]) - p[e]);
    }
  }
  return invert_block<kB>(diagonal + std::int64_t{I} * kBB, inverse + std::int64_t{I} * kBB);
}

}  // namespace kryflow::kernels::block_relaxation
