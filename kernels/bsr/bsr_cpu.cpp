// OpenMP BSR kernels: block rows in parallel, each scalar row summed in the order of bsr.hpp
// (the reference order); the fused x·y follows the cuda group tree, emulated with
// kernels/backend/reduction_emulation.hpp, so the result does not depend on the thread count.
// The block size is a compile-time constant for B = 1..8 and a runtime value above. Regions run
// serially below the work threshold of kernels/backend/parallel.hpp (work: stored entries).
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/bsr/bsr.hpp"

namespace kryflow::kernels::bsr::cpu {
namespace {

static_assert(kGroupThreads == kReductionThreads, "block_sum emulation is for 256 threads");

using parallel::for_each;

enum class Mode { product, residual };

/// The work measure of the parallel regions: stored entries, B^2 per stored block.
template <class V>
std::int64_t stored_entries(const BsrView<V>& a) {
  return a.num_blocks * a.block_size * a.block_size;
}

/// Rows I kB .. I kB + kB - 1 (kB = 0: the runtime a.block_size): y = 0; y = y + double(a) x over
/// the blocks in stored order, then the columns; written to y (b - sum for the residual).
template <int kB, Mode kMode, class V>
inline void block_row(const BsrView<V>& a, index_t I, const double* x, const double* b, double* y) {
  const int B = kB > 0 ? kB : a.block_size;
  constexpr int kSums = kB > 0 ? kB : kMaxBlockSize;
  std::array<double, kSums> sums{};
  for (index_t k = a.row_ptr[I]; k < a.row_ptr[I + 1]; ++k) {
    const V* block = a.values + static_cast<std::int64_t>(k) * B * B;
    const double* xb = x + static_cast<std::int64_t>(a.col_idx[k]) * B;
    for (int ii = 0; ii < B; ++ii) {
      double sum = sums[ii];
      for (int c = 0; c < B; ++c) sum = sum + static_cast<double>(block[ii * B + c]) * xb[c];
      sums[ii] = sum;
    }
  }
  const std::int64_t first = static_cast<std::int64_t>(I) * B;
  for (int ii = 0; ii < B; ++ii) {
    y[first + ii] = kMode == Mode::residual ? b[first + ii] - sums[ii] : sums[ii];
  }
}

template <int kB, Mode kMode, class V>
void all_block_rows(const Backend& backend, const BsrView<V>& a, const double* x, const double* b,
                    double* y) {
  for_each(backend, stored_entries(a), a.num_block_rows,
           [&](std::int64_t I) { block_row<kB, kMode>(a, static_cast<index_t>(I), x, b, y); });
}

/// y = A x and x·y in the group order of bsr.hpp: per group an emulated block_sum of its terms,
/// then the emulated grid sum of the group sums.
template <int kB, class V>
double product_dot(const Backend& backend, const BsrView<V>& a, const double* x, double* y) {
  const int B = kB > 0 ? kB : a.block_size;
  const index_t R = group_block_rows(B);
  const index_t groups = num_groups(a.num_block_rows, B);
  double* partials = a.group_partials;
  for_each(backend, stored_entries(a), groups, [&](std::int64_t group) {
    const auto g = static_cast<index_t>(group);
    std::array<double, kGroupThreads> terms{};
    const index_t first = g * R;
    const index_t last = first + R < a.num_block_rows ? first + R : a.num_block_rows;
    for (index_t I = first; I < last; ++I) {
      block_row<kB, Mode::product>(a, I, x, nullptr, y);
      for (int ii = 0; ii < B; ++ii) {
        const std::int64_t i = static_cast<std::int64_t>(I) * B + ii;
        terms[static_cast<std::size_t>((I - first) * B + ii)] = x[i] * y[i];
      }
    }
    partials[g] = emulation::block_sum(terms.data());
  });
  return emulation::ordered_sum(partials, groups);
}

/// Calls f.template operator()<kB>() with kB = B for B = 1..8, 0 (runtime B) otherwise.
template <class F>
decltype(auto) with_block_size(int block_size, F&& f) {
  switch (block_size) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    case 5:
      return f.template operator()<5>();
    case 6:
      return f.template operator()<6>();
    case 7:
      return f.template operator()<7>();
    case 8:
      return f.template operator()<8>();
    default:
      return f.template operator()<0>();
  }
}

}  // namespace

template <class V>
void bsr_spmv(const Backend& backend, const BsrView<V>& a, Span<const double> x, Span<double> y) {
  with_block_size(a.block_size, [&]<int kB>() {
    all_block_rows<kB, Mode::product>(backend, a, x.data(), nullptr, y.data());
  });
}

template <class V>
void bsr_residual(const Backend& backend, const BsrView<V>& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  with_block_size(a.block_size, [&]<int kB>() {
    all_block_rows<kB, Mode::residual>(backend, a, x.data(), b.data(), r.data());
  });
}

template <class V>
void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Span<const double> x, Span<double> y,
                  double* result) {
  *result = a.num_block_rows == 0 ? 0.0 : with_block_size(a.block_size, [&]<int kB>() {
    return product_dot<kB>(backend, a, x.data(), y.data());
  });
}

template <class V>
void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d) {
  const int B = a.block_size;
  for_each(backend, stored_entries(a), a.num_block_rows, [&](std::int64_t block_row_index) {
    const auto I = static_cast<index_t>(block_row_index);
    const V* diagonal_block = nullptr;
    for (index_t k = a.row_ptr[I]; k < a.row_ptr[I + 1]; ++k) {
      if (a.col_idx[k] == I) diagonal_block = a.values + static_cast<std::int64_t>(k) * B * B;
    }
    for (int ii = 0; ii < B; ++ii) {
      double sum = 0.0;
      if (diagonal_block != nullptr) sum = sum + static_cast<double>(diagonal_block[ii * B + ii]);
      d[static_cast<std::size_t>(I) * B + ii] = sum;
    }
  });
}

template <class V>
void bsr_scatter_values(const Backend& backend, Span<const index_t> position,
                        Span<const double> source, Span<V> values) {
  const auto n = static_cast<std::int64_t>(position.size());
  for_each(backend, n, n, [&](std::int64_t k) {
    values[static_cast<std::size_t>(position[k])] = static_cast<V>(source[k]);
  });
}

#define KRYFLOW_BSR_INSTANTIATE(V)                                                                \
  template void bsr_spmv<V>(const Backend&, const BsrView<V>&, Span<const double>, Span<double>); \
  template void bsr_residual<V>(const Backend&, const BsrView<V>&, Span<const double>,            \
                                Span<const double>, Span<double>);                                \
  template void bsr_spmv_dot<V>(const Backend&, const BsrView<V>&, Span<const double>,            \
                                Span<double>, double*);                                           \
  template void bsr_diagonal<V>(const Backend&, const BsrView<V>&, Span<double>);                 \
  template void bsr_scatter_values<V>(const Backend&, Span<const index_t>, Span<const double>,    \
                                      Span<V>);
KRYFLOW_BSR_INSTANTIATE(double)
KRYFLOW_BSR_INSTANTIATE(float)
#undef KRYFLOW_BSR_INSTANTIATE

}  // namespace kryflow::kernels::bsr::cpu
