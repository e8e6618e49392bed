// OpenMP CSR kernels: static row partition; the fused dot sums fixed blocks of rows in order.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::cpu {
namespace {

inline double row_product(const CsrView& a, index_t row, const double* x) {
  double sum = 0.0;
  const index_t end = a.row_ptr[row + 1];
  for (index_t k = a.row_ptr[row]; k < end; ++k) sum += a.values[k] * x[a.col_idx[k]];
  return sum;
}

}  // namespace

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  const double* xp = x.data();
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (index_t i = 0; i < a.num_rows; ++i) y[i] = row_product(a, i, xp);
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  const double* xp = x.data();
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (index_t i = 0; i < a.num_rows; ++i) r[i] = b[i] - row_product(a, i, xp);
}

double csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x,
                    Span<double> y) {
  const std::int64_t block = static_cast<std::int64_t>(blas::kReductionBlock);
  const std::int64_t num_blocks = (a.num_rows + block - 1) / block;
  std::vector<double> partial(static_cast<std::size_t>(num_blocks));
  const double* xp = x.data();
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (std::int64_t b = 0; b < num_blocks; ++b) {
    double sum = 0.0;
    const std::int64_t end = std::min<std::int64_t>(a.num_rows, (b + 1) * block);
    for (std::int64_t i = b * block; i < end; ++i) {
      const double yi = row_product(a, static_cast<index_t>(i), xp);
      y[i] = yi;
      sum += xp[i] * yi;
    }
    partial[static_cast<std::size_t>(b)] = sum;
  }
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (index_t i = 0; i < a.num_rows; ++i) {
    double sum = 0.0;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (a.col_idx[k] == i) sum += a.values[k];
    }
    d[i] = sum;
  }
}

}  // namespace kryflow::kernels::spmv::cpu
