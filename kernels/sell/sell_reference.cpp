// Reference (oracle) SELL-C-sigma kernels: one sorted position after another, plain loops.
#include <algorithm>
#include <cstdint>

#include "kernels/sell/sell.hpp"

namespace kryflow::kernels::sell::reference {
namespace {

using size_type = std::int64_t;

index_t row_length(const CsrPattern& csr, index_t i) {
  return csr.row_ptr[i + 1] - csr.row_ptr[i];
}

/// y_i = 0; y_i = y_i + double(a_ij) * x_col over the stored entries of sorted position p.
template <class T>
double row_product(const SellView<T>& a, size_type p, const double* x) {
  const size_type s = p / a.slice_height;
  const size_type base = a.slice_ptr[s] + p % a.slice_height;
  double sum = 0.0;
  for (index_t j = 0; j < a.slice_width[s]; ++j) {
    const size_type k = base + static_cast<size_type>(j) * a.slice_height;
    sum = sum + static_cast<double>(a.values[k]) * x[a.col_idx[k]];
  }
  return sum;
}

}  // namespace

void sell_layout(const Backend&, const CsrPattern& csr, int slice_height, index_t sigma,
                 index_t* permutation, index_t* slice_width, std::int64_t* slice_ptr) {
  const index_t n = csr.num_rows;
  for (index_t i = 0; i < n; ++i) permutation[i] = i;
  if (sigma > 1) {
    for (size_type first = 0; first < n; first += sigma) {
      const size_type last = std::min<size_type>(n, first + sigma);
      std::stable_sort(permutation + first, permutation + last, [&](index_t u, index_t v) {
        return row_length(csr, u) > row_length(csr, v);
      });
    }
  }
  const size_type num_slices = (static_cast<size_type>(n) + slice_height - 1) / slice_height;
  slice_ptr[0] = 0;
  for (size_type s = 0; s < num_slices; ++s) {
    index_t width = 0;
    const size_type end = std::min<size_type>(n, (s + 1) * slice_height);
    for (size_type p = s * slice_height; p < end; ++p) {
      width = std::max(width, row_length(csr, permutation[p]));
    }
    slice_width[s] = width;
    slice_ptr[s + 1] = slice_ptr[s] + static_cast<size_type>(slice_height) * width;
  }
}

template <class T>
void sell_fill(const Backend&, const SellView<T>& a, const CsrPattern& csr,
               const double* csr_values, index_t* col_idx, T* values) {
  const size_type positions = static_cast<size_type>(a.num_slices) * a.slice_height;
  for (size_type p = 0; p < positions; ++p) {
    const size_type s = p / a.slice_height;
    const size_type base = a.slice_ptr[s] + p % a.slice_height;
    index_t begin = 0;
    index_t length = 0;
    index_t pad_col = 0;
    if (p < a.num_rows) {
      const index_t i = a.permutation[p];
      begin = csr.row_ptr[i];
      length = csr.row_ptr[i + 1] - begin;
      if (length > 0 && col_idx != nullptr) pad_col = csr.col_idx[begin + length - 1];
    }
    for (index_t j = 0; j < a.slice_width[s]; ++j) {
      const size_type k = base + static_cast<size_type>(j) * a.slice_height;
      const bool stored = j < length;
      if (col_idx != nullptr) col_idx[k] = stored ? csr.col_idx[begin + j] : pad_col;
      values[k] = stored ? static_cast<T>(csr_values[begin + j]) : T(0);
    }
  }
}

template <class T>
void sell_gather(const Backend&, const SellView<T>& a, const CsrPattern& csr, index_t* csr_col_idx,
                 double* csr_values) {
  for (size_type p = 0; p < a.num_rows; ++p) {
    const size_type s = p / a.slice_height;
    const size_type base = a.slice_ptr[s] + p % a.slice_height;
    const index_t i = a.permutation[p];
    const index_t begin = csr.row_ptr[i];
    for (index_t j = 0; j < csr.row_ptr[i + 1] - begin; ++j) {
      const size_type k = base + static_cast<size_type>(j) * a.slice_height;
      csr_col_idx[begin + j] = a.col_idx[k];
      csr_values[begin + j] = static_cast<double>(a.values[k]);
    }
  }
}

template <class T>
void sell_spmv(const Backend&, const SellView<T>& a, Span<const double> x, Span<double> y) {
  for (size_type p = 0; p < a.num_rows; ++p) y[a.permutation[p]] = row_product(a, p, x.data());
}

template <class T>
void sell_residual(const Backend&, const SellView<T>& a, Span<const double> b, Span<const double> x,
                   Span<double> r) {
  for (size_type p = 0; p < a.num_rows; ++p) {
    const index_t i = a.permutation[p];
    r[i] = b[i] - row_product(a, p, x.data());
  }
}

template <class T>
void sell_spmv_dot(const Backend& backend, const SellView<T>& a, Span<const double> x,
                   Span<double> y, double* result) {
  reference::sell_spmv(backend, a, x, y);
  double sum = 0.0;
  for (index_t i = 0; i < a.num_rows; ++i) sum += x[i] * y[i];
  *result = sum;
}

template <class T>
void sell_diagonal(const Backend&, const SellView<T>& a, Span<double> d) {
  for (size_type p = 0; p < a.num_rows; ++p) {
    const size_type s = p / a.slice_height;
    const size_type base = a.slice_ptr[s] + p % a.slice_height;
    const index_t i = a.permutation[p];
    double sum = 0.0;
    for (index_t j = 0; j < a.slice_width[s]; ++j) {
      const size_type k = base + static_cast<size_type>(j) * a.slice_height;
      if (a.col_idx[k] == i) sum = sum + static_cast<double>(a.values[k]);
    }
    d[i] = sum;
  }
}

#define KRYFLOW_SELL_INSTANTIATE(T)                                                                \
  template void sell_fill<T>(const Backend&, const SellView<T>&, const CsrPattern&, const double*, \
                             index_t*, T*);                                                        \
  template void sell_gather<T>(const Backend&, const SellView<T>&, const CsrPattern&, index_t*,    \
                               double*);                                                           \
  template void sell_spmv<T>(const Backend&, const SellView<T>&, Span<const double>,               \
                             Span<double>);                                                        \
  template void sell_residual<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<const double>, Span<double>);                                \
  template void sell_spmv_dot<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<double>, double*);                                           \
  template void sell_diagonal<T>(const Backend&, const SellView<T>&, Span<double>);
KRYFLOW_SELL_INSTANTIATE(double)
KRYFLOW_SELL_INSTANTIATE(float)
#undef KRYFLOW_SELL_INSTANTIATE

}  // namespace kryflow::kernels::sell::reference
