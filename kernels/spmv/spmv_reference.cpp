// Reference (oracle) CSR kernels: one row after another, entries in stored order; one template
// on the stored value type (double or float, converted to double before use).
#include "kernels/blas/blas.hpp"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::reference {
namespace {

template <class Value, class X>
double row_product(const CsrView& a, const Value* values, index_t row, const X& x) {
  double sum = 0.0;
  for (index_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k)
    sum += static_cast<double>(values[k]) * x[a.col_idx[k]];
  return sum;
}

/// v_k = s_k u_k + c w_k (or u_k + c w_k), computed when read.
struct CombinationValues {
  const Combination& v;
  double c;
  double operator[](index_t k) const {
    const double su = v.scale != nullptr ? v.scale[k] * v.u[k] : v.u[k];
    return su + c * v.w[k];
  }
};

}  // namespace

void csr_spmv(const Backend&, const CsrView& a, Span<const double> x, Span<double> y) {
  visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) y[i] = row_product(a, values, i, x);
  });
}

void csr_residual(const Backend&, const CsrView& a, Span<const double> b, Span<const double> x,
                  Span<double> r) {
  visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) r[i] = b[i] - row_product(a, values, i, x);
  });
}

void csr_chebyshev_step(const Backend& backend, const CsrView& a, Span<const double> b,
                        Span<const double> x, Span<const double> dinv, double alpha, double beta,
                        Span<double> d, Span<double> y) {
  reference::csr_residual(backend, a, b, x, y);
  blas::reference::chebyshev_step_update(backend, dinv, x, alpha, beta, d, y);
}

void csr_chebyshev_first_steps(const Backend& backend, const CsrView& a, Span<const double> b,
                               Span<const double> dinv, double alpha0, double alpha, double beta,
                               Span<double> d, Span<double> y) {
  for (index_t i = 0; i < a.num_rows; ++i) d[i] = alpha0 * (dinv[i] * b[i]);  // x_1 = d_0
  reference::csr_residual(backend, a, b, d, y);
  for (index_t i = 0; i < a.num_rows; ++i) {
    const double x1 = d[i];
    const double z = dinv[i] * y[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * x1;
    y[i] = d[i] + x1;
  }
}

void csr_spmv_dot(const Backend&, const CsrView& a, Span<const double> x, Span<double> y,
                  double* result) {
  *result = visit_values(a, [&](const auto* values) {
    double sum = 0.0;
    for (index_t i = 0; i < a.num_rows; ++i) {
      y[i] = row_product(a, values, i, x);
      sum += x[i] * y[i];
    }
    return sum;
  });
}

void csr_spmv_dots(const Backend&, const CsrView& a, Span<const double> x, Span<double> y,
                   const ProductDots& dots, double* result) {
  visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) y[i] = row_product(a, values, i, x);
  });
  for (int k = 0; k < dots.count; ++k) {
    double sum = 0.0;
    for (index_t i = 0; i < a.num_rows; ++i) {
      sum += (dots.with[k] != nullptr ? dots.with[k][i] : y[i]) * y[i];
    }
    result[k] = sum;
  }
}

int csr_spmv_combination_dot(const Backend&, const CsrView& a, const Combination& v, Span<double> y,
                             double* result, bool /*leave_partials*/) {
  const CombinationValues x{v, *v.coefficient};
  *result = visit_values(a, [&](const auto* values) {
    double sum = 0.0;
    for (index_t i = 0; i < a.num_rows; ++i) {
      y[i] = row_product(a, values, i, x);
      sum += x[i] * y[i];
    }
    return sum;
  });
  return 0;
}

int csr_spmv_shifted_dots(const Backend& backend, const CsrView& a, const ShiftedStep& v,
                          Span<double> y, double* result, bool /*leave_partials*/) {
  const double c = -(*v.numerator / *v.denominator);
  for (index_t i = 0; i < a.num_rows; ++i) {
    v.s[i] = v.u[i] + c * v.w[i];
    v.z[i] = v.scale[i] * v.s[i];
  }
  visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) y[i] = row_product(a, values, i, v.z);
  });
  (void)backend;
  double sums[3] = {0.0, 0.0, 0.0};
  for (index_t i = 0; i < a.num_rows; ++i) {
    sums[0] += v.s[i] * v.s[i];
    sums[1] += y[i] * y[i];
    sums[2] += y[i] * v.s[i];
  }
  for (int k = 0; k < 3; ++k) result[k] = sums[k];
  return 0;
}

void csr_diagonal(const Backend&, const CsrView& a, Span<double> d) {
  visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (a.col_idx[k] == i) sum += static_cast<double>(values[k]);
      }
      d[i] = sum;
    }
  });
}

}  // namespace kryflow::kernels::spmv::reference
