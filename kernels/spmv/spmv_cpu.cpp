// OpenMP CSR kernels that add in exactly the order of the cuda kernels (spmv.hpp, file comment).
//
// Ordinary rows are summed in stored order, the reference order, so they need no emulation.
// Long rows and the fused x·y follow the cuda reduction trees, emulated with
// kernels/backend/reduction_emulation.hpp; the emulated blocks run in parallel, and the result
// does not depend on the OpenMP thread count or schedule. Regions run serially below the work
// threshold of kernels/backend/parallel.hpp (work: stored entries). Every kernel is one template on
// the stored value type (double or float, converted to double before use).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/blas/blas.hpp"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::cpu {
namespace {

using size_type = std::int64_t;
using parallel::for_each;
constexpr int kThreads = kRowBlockThreads;
static_assert(kThreads == kReductionThreads, "block_sum emulation is for 256 threads");

enum class Mode { product, residual, diagonal };

inline index_t row_length(const CsrView& a, index_t i) {
  return a.row_ptr[i + 1] - a.row_ptr[i];
}

/// The work measure of the parallel regions: stored entries.
inline size_type stored_entries(const CsrView& a) {
  return a.num_rows > 0 ? a.row_ptr[a.num_rows] : 0;
}

/// An ordinary row in stored order: sum = 0; sum = sum + a_ik x_k (or + a_ii for the diagonal).
template <Mode kMode, class Value, class X>
inline double row_sum(const CsrView& a, const Value* values, index_t i, const X& x) {
  double sum = 0.0;
  const index_t end = a.row_ptr[i + 1];
  for (index_t k = a.row_ptr[i]; k < end; ++k) {
    const double value = static_cast<double>(values[k]);
    if constexpr (kMode == Mode::diagonal) {
      if (a.col_idx[k] == i) sum = sum + value;
    } else {
      sum = sum + value * x[a.col_idx[k]];
    }
  }
  return sum;
}

/// v_k = s_k u_k + c w_k (or u_k + c w_k), computed when read, as the cuda kernels do.
struct CombinationValues {
  const Combination* v;
  double c;
  double operator[](index_t k) const {
    const double su = v->scale != nullptr ? v->scale[k] * v->u[k] : v->u[k];
    return su + c * v->w[k];
  }
};

/// The long rows (more than a.tile entries), written to y (b - sum for the residual): chunk
/// sums by emulated blocks, then each row's chunk sums by an emulated grid sum.
template <Mode kMode, class Value, class X>
void long_rows(const Backend& backend, const CsrView& a, const Value* values, const X& x,
               const double* b, double* y) {
  if (a.num_long_rows == 0) return;
  std::vector<double> chunk_sums(static_cast<std::size_t>(a.num_chunks));
  const size_type long_entries = static_cast<size_type>(a.num_chunks) * kLongRowChunk;
  for_each(backend, long_entries, a.num_chunks, [&](size_type c) {
    const index_t slot = a.chunk_long_row[c];
    const index_t row = a.long_rows[slot];
    const size_type begin =
        a.row_ptr[row] + static_cast<size_type>(c - a.long_row_chunks[slot]) * kLongRowChunk;
    const size_type end = std::min<size_type>(a.row_ptr[row + 1], begin + kLongRowChunk);
    // Lane l of the cuda block adds entries begin + l, begin + l + 256, ... in order.
    std::array<double, kThreads> lanes{};
    for (size_type k = begin; k < end; ++k) {
      double& lane = lanes[(k - begin) % kThreads];
      const double value = static_cast<double>(values[k]);
      if constexpr (kMode == Mode::diagonal) {
        if (a.col_idx[k] == row) lane = lane + value;
      } else {
        lane = lane + value * x[a.col_idx[k]];
      }
    }
    chunk_sums[static_cast<std::size_t>(c)] = emulation::block_sum(lanes.data());
  });
  for_each(backend, a.num_chunks, a.num_long_rows, [&](size_type s) {
    const index_t first = a.long_row_chunks[s];
    const double sum =
        emulation::ordered_sum(chunk_sums.data() + first, a.long_row_chunks[s + 1] - first);
    const index_t row = a.long_rows[s];
    y[row] = kMode == Mode::residual ? b[row] - sum : sum;
  });
}

/// Ordinary rows (long rows are left to long_rows), in dynamic chunks of rows.
template <Mode kMode, class Value, class X>
void ordinary_rows(const Backend& backend, const CsrView& a, const Value* values, const X& x,
                   const double* b, double* y) {
  for_each(backend, stored_entries(a), a.num_rows, [&](size_type row) {
    const auto i = static_cast<index_t>(row);
    if (row_length(a, i) > a.tile) return;
    const double sum = row_sum<kMode>(a, values, i, x);
    y[i] = kMode == Mode::residual ? b[i] - sum : sum;
  });
}

/// The terms of the fused inner products: x_i y_i (input), else with[k][i] y_i (with[k][i]
/// with[k][i] where squared[k]), or y_i y_i where with[k] is null; the order of the cuda
/// kernels' terms.
struct DotTerms {
  int count = 1;
  const double* with[kMaxFusedDots] = {};
  bool squared[kMaxFusedDots] = {};
  bool input = false;
};

/// y = A x and the dots: long rows first, then the row blocks, each adding its terms by
/// block_sum (with many row blocks: strided, each of the strided sums adding its row blocks'
/// terms lane by lane first, spmv.hpp); result[k] by an emulated grid sum of the block sums.
template <class Value, class X>
void spmv_dots(const Backend& backend, const CsrView& a, const Value* values, const X& xp,
               double* yp, const DotTerms& dots, double* result) {
  long_rows<Mode::product>(backend, a, values, xp, nullptr, yp);
  const index_t strided = strided_blocks(a.num_row_blocks, a.tile);
  const index_t sums = strided > 0 ? strided : a.num_row_blocks;
  const auto count = static_cast<std::size_t>(sums);
  std::vector<double> block_sums(kMaxFusedDots * count);
  for_each(backend, stored_entries(a), sums, [&](size_type b) {
    std::array<std::array<double, kThreads>, kMaxFusedDots> lanes{};
    for (size_type g = b; g < a.num_row_blocks; g += sums) {
      const index_t first = a.row_blocks[g];
      const index_t rows = a.row_blocks[g + 1] - first;
      for (index_t j = 0; j < kThreads; ++j) {
        const index_t i = first + j;
        if (j < rows && row_length(a, i) <= a.tile)
          yp[i] = row_sum<Mode::product>(a, values, i, xp);
        for (int k = 0; k < dots.count; ++k) {
          double term = 0.0;
          if (j < rows) {
            const double w = dots.input ? xp[i] : dots.with[k] != nullptr ? dots.with[k][i] : yp[i];
            term = dots.squared[k] ? w * w : w * yp[i];
          }
          double& lane = lanes[k][static_cast<std::size_t>(j)];
          lane = strided > 0 ? lane + term : term;  // the cuda kernels' 0 + t(b) + t(b + G) ...
        }
      }
    }
    for (int k = 0; k < dots.count; ++k) {
      block_sums[k * count + static_cast<std::size_t>(b)] = emulation::block_sum(lanes[k].data());
    }
  });
  for (int k = 0; k < dots.count; ++k) {
    result[k] = emulation::ordered_sum(block_sums.data() + k * count, sums);
  }
}

}  // namespace

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  visit_values(a, [&](const auto* values) {
    long_rows<Mode::product>(backend, a, values, x.data(), nullptr, y.data());
    ordinary_rows<Mode::product>(backend, a, values, x.data(), nullptr, y.data());
  });
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  visit_values(a, [&](const auto* values) {
    long_rows<Mode::residual>(backend, a, values, x.data(), b.data(), r.data());
    ordinary_rows<Mode::residual>(backend, a, values, x.data(), b.data(), r.data());
  });
}

void csr_chebyshev_step(const Backend& backend, const CsrView& a, Span<const double> b,
                        Span<const double> x, Span<const double> dinv, double alpha, double beta,
                        Span<double> d, Span<double> y) {
  cpu::csr_residual(backend, a, b, x, y);
  blas::cpu::chebyshev_step_update(backend, dinv, x, alpha, beta, d, y);
}

void csr_chebyshev_first_steps(const Backend& backend, const CsrView& a, Span<const double> b,
                               Span<const double> dinv, double alpha0, double alpha, double beta,
                               Span<double> d, Span<double> y) {
  for_each(backend, a.num_rows, a.num_rows,
           [&](size_type i) { d[i] = alpha0 * (dinv[i] * b[i]); });  // x_1 = d_0
  cpu::csr_residual(backend, a, b, d, y);
  for_each(backend, a.num_rows, a.num_rows, [&](size_type i) {
    const double x1 = d[i];
    const double z = dinv[i] * y[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * x1;
    y[i] = d[i] + x1;
  });
}

void csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                  double* result) {
  DotTerms dots;
  dots.input = true;
  if (a.num_rows == 0) {
    *result = 0.0;
    return;
  }
  visit_values(a, [&](const auto* values) {
    spmv_dots(backend, a, values, x.data(), y.data(), dots, result);
  });
}

void csr_spmv_dots(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                   const ProductDots& dots, double* result) {
  DotTerms terms;
  terms.count = dots.count;
  for (int k = 0; k < dots.count; ++k) terms.with[k] = dots.with[k];
  if (a.num_rows == 0) {
    for (int k = 0; k < dots.count; ++k) result[k] = 0.0;
    return;
  }
  visit_values(a, [&](const auto* values) {
    spmv_dots(backend, a, values, x.data(), y.data(), terms, result);
  });
}

int csr_spmv_combination_dot(const Backend& backend, const CsrView& a, const Combination& v,
                             Span<double> y, double* result, bool /*leave_partials*/) {
  const CombinationValues x{&v, *v.coefficient};
  DotTerms dots;
  dots.input = true;
  if (a.num_rows == 0) {
    *result = 0.0;
    return 0;
  }
  visit_values(
      a, [&](const auto* values) { spmv_dots(backend, a, values, x, y.data(), dots, result); });
  return 0;
}

int csr_spmv_shifted_dots(const Backend& backend, const CsrView& a, const ShiftedStep& v,
                          Span<double> y, double* result, bool /*leave_partials*/) {
  if (a.num_rows == 0) {
    for (int k = 0; k < 3; ++k) result[k] = 0.0;
    return 0;
  }
  // s and z first (the cuda kernel forms z_k where it gathers it, with the same operations)
  const double c = -(*v.numerator / *v.denominator);
  for_each(backend, a.num_rows, a.num_rows, [&](size_type row) {
    const auto i = static_cast<index_t>(row);
    const double si = v.u[i] + c * v.w[i];
    v.s[i] = si;
    v.z[i] = v.scale[i] * si;
  });
  DotTerms dots;
  dots.count = 3;
  dots.with[0] = v.s;  // s·s
  dots.squared[0] = true;
  dots.with[2] = v.s;  // y·s
  visit_values(a, [&](const auto* values) {
    spmv_dots(backend, a, values, static_cast<const double*>(v.z), y.data(), dots, result);
  });
  return 0;
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  visit_values(a, [&](const auto* values) {
    const double* none = nullptr;
    long_rows<Mode::diagonal>(backend, a, values, none, nullptr, d.data());
    ordinary_rows<Mode::diagonal>(backend, a, values, none, nullptr, d.data());
  });
}

}  // namespace kryflow::kernels::spmv::cpu
