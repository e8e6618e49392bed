// Reference scaled CSR product (the oracle).
#include "kernels/spmv_axpby/spmv_axpby.hpp"

namespace kryflow::kernels::spmv_axpby::reference {

void csr_spmv_axpby(const Backend&, const spmv::CsrView& a, double alpha, Span<const double> x,
                    double beta, Span<double> y) {
  spmv::visit_values(a, [&](const auto* values) {
    for (index_t i = 0; i < a.num_rows; ++i) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        sum = sum + static_cast<double>(values[k]) * x[a.col_idx[k]];
      }
      y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
    }
  });
}

}  // namespace kryflow::kernels::spmv_axpby::reference
