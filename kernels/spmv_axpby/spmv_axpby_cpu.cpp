// OpenMP scaled CSR product: rows in parallel, each row summed in stored order.
#include <cstdint>

#include "kernels/backend/parallel.hpp"
#include "kernels/spmv_axpby/spmv_axpby.hpp"

namespace kryflow::kernels::spmv_axpby::cpu {

void csr_spmv_axpby(const Backend& backend, const spmv::CsrView& a, double alpha,
                    Span<const double> x, double beta, Span<double> y) {
  spmv::visit_values(a, [&](const auto* values) {
    parallel::for_each(backend, a.nnz, a.num_rows, [&](std::int64_t i) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        sum = sum + static_cast<double>(values[k]) * x[a.col_idx[k]];
      }
      y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
    });
  });
}

}  // namespace kryflow::kernels::spmv_axpby::cpu
