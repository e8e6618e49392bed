// Contract of the sparse triangular solve kernels (the solves of an incomplete LU in the natural
// order): reference (the oracle), cpu and cuda with identical signatures, and an unqualified
// function that dispatches on the backend.
//
// A factor is a CSR matrix holding the strictly lower (lower = true) or strictly upper part of a
// triangular matrix T = D^-1 (I + F) in the sense of the update
//     x_i = (b_i - sum_{k in row i} f_ik x_{col_k}) * d_i,
// d_i = inverse_diagonal[i] (1 when inverse_diagonal is null), rows in increasing order for a
// lower factor, in decreasing order for an upper one. Precondition: every column of row i is
// < i (lower) or > i (upper); the cuda kernel does not wait for an entry that breaks it.
#pragma once

#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::triangular {

/// An n x n factor (strict part) on the backend.
struct FactorView {
  index_t n = 0;
  const index_t* row_ptr = nullptr;  // n + 1
  const index_t* col_idx = nullptr;
  const double* values = nullptr;
};

#define KRYFLOW_TRIANGULAR_DECLARATIONS                                                         \
  /** Solves with one factor (file comment) from b into x (n entries each, distinct arrays).    \
      The host backends go row by row. cuda runs the synchronization-free algorithm of Liu,     \
      Li, Hou and Vinter (Euro-Par 2016): one launch, rows handed out to warps in solve order   \
      (an atomic counter), a warp per row whose lanes wait on a ready flag of each column's row \
      before reading x there, then a warp sum; no level analysis and no launch per level, the   \
      critical path set by the longest dependency chain. ready holds n + 1 unsigned integers    \
      on the backend (the flags and the counter; cleared on the queue before the launch, so it  \
      can be recorded into a launch graph). Nothing waits for the device. */                    \
  void solve(const Backend& backend, const FactorView& factor, bool lower,                      \
             const double* inverse_diagonal, const double* b, double* x, unsigned int* ready);

/// Dispatch.
KRYFLOW_TRIANGULAR_DECLARATIONS

namespace reference {
KRYFLOW_TRIANGULAR_DECLARATIONS
}
namespace cpu {
KRYFLOW_TRIANGULAR_DECLARATIONS
}
namespace cuda {
KRYFLOW_TRIANGULAR_DECLARATIONS
}

#undef KRYFLOW_TRIANGULAR_DECLARATIONS

}  // namespace kryflow::kernels::triangular
