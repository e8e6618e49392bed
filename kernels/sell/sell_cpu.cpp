// OpenMP SELL-C-sigma kernels: a slice per iteration, its C rows summed side by side (the SIMD
// form of Kreutzer et al. 2014: entry j of all C rows, then entry j + 1), each row in the order
// of the reference, so the products need no emulation; the fused x·y emulates the cuda tree.
// Regions run serially below the work threshold of kernels/backend/parallel.hpp (work: stored
// entries, padding included).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/sell/sell.hpp"

namespace kryflow::kernels::sell::cpu {
namespace {

using size_type = std::int64_t;
using parallel::for_each;
constexpr int kMaxSliceHeight = 128;
static_assert(kDotGroup == kReductionThreads, "block_sum emulation is for 256 threads");

enum class Mode { product, residual, diagonal };

index_t row_length(const CsrPattern& csr, index_t i) {
  return csr.row_ptr[i + 1] - csr.row_ptr[i];
}

/// The sums of slice s into sums[0 .. C-1] (positions past num_rows included, never written
/// out): sums[r] = 0; sums[r] = sums[r] + double(a) * x (or + a where col == row).
template <Mode kMode, class T>
void slice_sums(const SellView<T>& a, size_type s, const double* x, double* sums) {
  const int c = a.slice_height;
  const size_type base = a.slice_ptr[s];
  const index_t width = a.slice_width[s];
  for (int r = 0; r < c; ++r) sums[r] = 0.0;
  if constexpr (kMode == Mode::diagonal) {
    for (int r = 0; r < c; ++r) {
      const size_type p = s * c + r;
      if (p >= a.num_rows) break;
      const index_t i = a.permutation[p];
      for (index_t j = 0; j < width; ++j) {
        const size_type k = base + static_cast<size_type>(j) * c + r;
        if (a.col_idx[k] == i) sums[r] = sums[r] + static_cast<double>(a.values[k]);
      }
    }
  } else {
    for (index_t j = 0; j < width; ++j) {
      const index_t* cols = a.col_idx + base + static_cast<size_type>(j) * c;
      const T* vals = a.values + base + static_cast<size_type>(j) * c;
#pragma omp simd
      for (int r = 0; r < c; ++r) sums[r] = sums[r] + static_cast<double>(vals[r]) * x[cols[r]];
    }
  }
}

/// Writes the rows of slice s: y_i = sum, or b_i - sum for the residual.
template <Mode kMode, class T>
void write_slice(const SellView<T>& a, size_type s, const double* x, const double* b, double* y) {
  std::array<double, kMaxSliceHeight> sums;
  slice_sums<kMode>(a, s, x, sums.data());
  const size_type end = std::min<size_type>(a.num_rows, (s + 1) * a.slice_height);
  for (size_type p = s * a.slice_height; p < end; ++p) {
    const index_t i = a.permutation[p];
    const double sum = sums[static_cast<std::size_t>(p - s * a.slice_height)];
    y[i] = kMode == Mode::residual ? b[i] - sum : sum;
  }
}

/// The work measure of the parallel regions: stored entries, padding included.
template <class T>
size_type stored_entries(const SellView<T>& a) {
  return a.num_slices > 0 ? a.slice_ptr[a.num_slices] : 0;
}

template <Mode kMode, class T>
void all_slices(const Backend& backend, const SellView<T>& a, const double* x, const double* b,
                double* y) {
  for_each(backend, stored_entries(a), a.num_slices,
           [&](size_type s) { write_slice<kMode>(a, s, x, b, y); });
}

}  // namespace

void sell_layout(const Backend& backend, const CsrPattern& csr, int slice_height, index_t sigma,
                 index_t* permutation, index_t* slice_width, std::int64_t* slice_ptr) {
  const index_t n = csr.num_rows;
  const size_type window = std::max<index_t>(sigma, 1);
  const size_type num_windows = (static_cast<size_type>(n) + window - 1) / window;
  const size_type entries = n > 0 ? csr.row_ptr[n] : 0;
  for_each(backend, entries, num_windows, [&](size_type w) {
    const size_type first = w * window;
    const size_type last = std::min<size_type>(n, first + window);
    for (size_type p = first; p < last; ++p) permutation[p] = static_cast<index_t>(p);
    if (window > 1) {
      std::stable_sort(permutation + first, permutation + last, [&](index_t u, index_t v) {
        return row_length(csr, u) > row_length(csr, v);
      });
    }
  });
  const size_type num_slices = (static_cast<size_type>(n) + slice_height - 1) / slice_height;
  for_each(backend, n, num_slices, [&](size_type s) {
    index_t width = 0;
    const size_type end = std::min<size_type>(n, (s + 1) * slice_height);
    for (size_type p = s * slice_height; p < end; ++p) {
      width = std::max(width, row_length(csr, permutation[p]));
    }
    slice_width[s] = width;
  });
  slice_ptr[0] = 0;  // the scan is cheap next to the sort: sequential
  for (size_type s = 0; s < num_slices; ++s) {
    slice_ptr[s + 1] = slice_ptr[s] + static_cast<size_type>(slice_height) * slice_width[s];
  }
}

template <class T>
void sell_fill(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
               const double* csr_values, index_t* col_idx, T* values) {
  const int c = a.slice_height;
  for_each(backend, stored_entries(a), a.num_slices, [&](size_type s) {
    for (int r = 0; r < c; ++r) {
      const size_type p = static_cast<size_type>(s) * c + r;
      const size_type base = a.slice_ptr[s] + r;
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
        const size_type k = base + static_cast<size_type>(j) * c;
        const bool stored = j < length;
        if (col_idx != nullptr) col_idx[k] = stored ? csr.col_idx[begin + j] : pad_col;
        values[k] = stored ? static_cast<T>(csr_values[begin + j]) : T(0);
      }
    }
  });
}

template <class T>
void sell_gather(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
                 index_t* csr_col_idx, double* csr_values) {
  for_each(backend, stored_entries(a), a.num_rows, [&](size_type p) {
    const size_type s = p / a.slice_height;
    const size_type base = a.slice_ptr[s] + p % a.slice_height;
    const index_t i = a.permutation[p];
    const index_t begin = csr.row_ptr[i];
    for (index_t j = 0; j < csr.row_ptr[i + 1] - begin; ++j) {
      const size_type k = base + static_cast<size_type>(j) * a.slice_height;
      csr_col_idx[begin + j] = a.col_idx[k];
      csr_values[begin + j] = static_cast<double>(a.values[k]);
    }
  });
}

template <class T>
void sell_spmv(const Backend& backend, const SellView<T>& a, Span<const double> x, Span<double> y) {
  all_slices<Mode::product>(backend, a, x.data(), nullptr, y.data());
}

template <class T>
void sell_residual(const Backend& backend, const SellView<T>& a, Span<const double> b,
                   Span<const double> x, Span<double> r) {
  all_slices<Mode::residual>(backend, a, x.data(), b.data(), r.data());
}

template <class T>
double spmv_dot_value(const Backend& backend, const SellView<T>& a, Span<const double> x,
                      Span<double> y) {
  if (a.num_rows == 0) return 0.0;
  all_slices<Mode::product>(backend, a, x.data(), nullptr, y.data());
  // Group g: terms x_i y_i of sorted positions g * 256 + q, added by the emulated block_sum.
  const size_type positions = static_cast<size_type>(a.num_slices) * a.slice_height;
  const size_type groups = num_dot_groups(positions);
  std::vector<double> group_sums(static_cast<std::size_t>(groups));
  for_each(backend, positions, groups, [&](size_type g) {
    std::array<double, kDotGroup> terms{};
    const size_type first = g * kDotGroup;
    const size_type end = std::min<size_type>(a.num_rows, first + kDotGroup);
    for (size_type p = first; p < end; ++p) {
      const index_t i = a.permutation[p];
      terms[static_cast<std::size_t>(p - first)] = x[i] * y[i];
    }
    group_sums[static_cast<std::size_t>(g)] = emulation::block_sum(terms.data());
  });
  // Lane l adds group sums l, l + 256, ... in order; block_sum adds the lanes.
  static_assert(kDotGroup == kReductionThreads, "ordered_sum emulates 256 lanes");
  return emulation::ordered_sum(group_sums.data(), groups);
}

template <class T>
void sell_spmv_dot(const Backend& backend, const SellView<T>& a, Span<const double> x,
                   Span<double> y, double* result) {
  *result = spmv_dot_value(backend, a, x, y);
}

template <class T>
void sell_diagonal(const Backend& backend, const SellView<T>& a, Span<double> d) {
  all_slices<Mode::diagonal>(backend, a, nullptr, nullptr, d.data());
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

}  // namespace kryflow::kernels::sell::cpu
