// Contract of the gather-scatter u <- Q Q^T u on a local spectral-element vector (Deville,
// Fischer and Mund, High-Order Methods for Incompressible Fluid Flow, 2002, sec. 4.5.1): every
// local point that shares a global point with others receives the sum of their values.
//
// Only shared global points are visited (a point of multiplicity 1 is left as it is). Shared
// point s owns locals[offsets[s]] .. locals[offsets[s + 1] - 1], in increasing local index; its
// sum is u[l_0] + u[l_1] + ... added one at a time in that order on every backend (same bits
// on reference, cpu and cuda), then written to each of its locals. Each local index belongs to
// at most one shared point, so the cuda kernel (one thread per shared point) has no races and
// no atomics.
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// The shared points of a global numbering as the kernels see them (all on one backend).
struct GatherScatterView {
  index_t num_shared = 0;                 // global points of multiplicity > 1
  const std::int64_t* offsets = nullptr;  // num_shared + 1
  const index_t* locals = nullptr;        // offsets[num_shared] local indices
};

#define KRYFLOW_GS_DECLARATIONS \
  /** u <- Q Q^T u in place */  \
  void gather_scatter(const Backend& backend, const GatherScatterView& g, Span<double> u);

/// Dispatch.
KRYFLOW_GS_DECLARATIONS

namespace reference {
KRYFLOW_GS_DECLARATIONS
}
namespace cpu {
KRYFLOW_GS_DECLARATIONS
}
namespace cuda {
KRYFLOW_GS_DECLARATIONS
}

#undef KRYFLOW_GS_DECLARATIONS

}  // namespace kryflow::kernels::sem
