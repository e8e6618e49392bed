// Dispatch of the scaled CSR product to the backend that owns the data.
#include "kernels/spmv_axpby/spmv_axpby.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::spmv_axpby {

void csr_spmv_axpby(const Backend& backend, const spmv::CsrView& a, double alpha,
                    Span<const double> x, double beta, Span<double> y) {
  KRYFLOW_DISPATCH(spmv_axpby, csr_spmv_axpby, backend, a, alpha, x, beta, y);
}

}  // namespace kryflow::kernels::spmv_axpby
