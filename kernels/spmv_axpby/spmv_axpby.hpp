// Contract of the scaled CSR product y = alpha A x + beta y (prolongation's x += P e, and
// LinearOperator::apply(alpha, x, beta, y) of CsrMatrix).
//
// Same layout as kernels/blas: namespaces reference, cpu and cuda, and a dispatch
// (kernels/backend/dispatch.hpp). Row i: s = 0; s = s + a_ik x_k over its stored entries in
// stored order; y_i = alpha s + beta y_i, and y is not read when beta == 0. For rows of at most
// the matrix's tile this is the sum of kernels/spmv; longer rows may differ from csr_spmv in
// the last bits. Values in double or float (kernels::spmv::CsrView); arithmetic in double.
#pragma once

#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv_axpby {

#define KRYFLOW_SPMV_AXPBY_DECLARATIONS                                             \
  /** y = alpha A x + beta y */                                                     \
  void csr_spmv_axpby(const Backend& backend, const spmv::CsrView& a, double alpha, \
                      Span<const double> x, double beta, Span<double> y);

KRYFLOW_SPMV_AXPBY_DECLARATIONS

namespace reference {
KRYFLOW_SPMV_AXPBY_DECLARATIONS
}
namespace cpu {
KRYFLOW_SPMV_AXPBY_DECLARATIONS
}
namespace cuda {
KRYFLOW_SPMV_AXPBY_DECLARATIONS
}

#undef KRYFLOW_SPMV_AXPBY_DECLARATIONS

}  // namespace kryflow::kernels::spmv_axpby
