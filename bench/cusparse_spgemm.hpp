// cuSPARSE's SpGEMM on kryflow CSR matrices, for the AMG benchmark's Galerkin product peer.
// Host-visible: including it needs no CUDA header.
#pragma once

#include <cstdint>

#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::bench {

struct GalerkinTiming {
  double seconds = 0.0;          ///< wall-clock seconds of R (A P), the device synchronized
  std::int64_t product_nnz = 0;  ///< entries of A P
  std::int64_t coarse_nnz = 0;   ///< entries of R (A P)
};

/// A_c = R (A P) by two cusparseSpGEMM products (CUSPARSE_SPGEMM_DEFAULT: work estimation,
/// compute, copy into freshly allocated CSR arrays, the structure and the values), R, A and P
/// float64 CsrMatrix on one cuda backend, on its stream; the result is freed before returning.
/// The seconds cover the whole of both products (symbolic and numeric phases, their
/// allocations), as the setup of a hierarchy needs them. Throws BackendError when a cuSPARSE
/// call fails, InvalidInput when the matrices are not on a cuda backend or their sizes do not
/// chain, NotCompiled in a build without CUDA.
GalerkinTiming cusparse_galerkin_product(const CsrMatrix& R, const CsrMatrix& A,
                                         const CsrMatrix& P);

}  // namespace kryflow::bench
