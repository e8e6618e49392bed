// Dispatch of the smoother kernels to the backend that owns the data.
#include "kernels/smoothers/smoothers.hpp"

#include "kernels/backend/dispatch.hpp"

#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::smoothers {
namespace {

/// Exactly one of values and values_f32 holds the entries (both may be null without entries).
void require_values(const MatrixView& a, const char* name) {
  const bool both = a.values != nullptr && a.values_f32 != nullptr;
  const bool has_entries = a.pattern.num_rows > 0 && a.pattern.row_ptr != nullptr;
  const bool none = has_entries && a.values == nullptr && a.values_f32 == nullptr;
  if (both || none) {
    throw InvalidInput(std::string("smoothers::") + name +
                       ": the view needs exactly one of values and values_f32, got " +
                       (both ? "both" : "neither"));
  }
}

void require_block_rows(index_t block_rows, const char* name) {
  if (block_rows < 1) {
    throw InvalidInput(std::string("smoothers::") + name + ": block_rows must be >= 1, got " +
                       std::to_string(block_rows));
  }
}

}  // namespace

void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d) {
  require_values(a, "l1_row_norms");
  KRYFLOW_DISPATCH(smoothers, l1_row_norms, backend, a, d);
}

void gauss_seidel(const Backend& backend, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  require_values(a, "gauss_seidel");
  KRYFLOW_DISPATCH(smoothers, gauss_seidel, backend, a, inverse_diagonal, b, x, direction);
}

void hybrid_diagonal(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                     Span<double> d) {
  require_values(a, "hybrid_diagonal");
  require_block_rows(block_rows, "hybrid_diagonal");
  KRYFLOW_DISPATCH(smoothers, hybrid_diagonal, backend, a, block_rows, l1, d);
}

void hybrid_gauss_seidel(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                         Span<const double> inverse_diagonal, Span<const double> b, Span<double> x,
                         Span<double> x_start, SweepDirection direction) {
  require_values(a, "hybrid_gauss_seidel");
  require_block_rows(block_rows, "hybrid_gauss_seidel");
  if (!x.empty() && x_start.data() == x.data()) {
    throw InvalidInput("smoothers::hybrid_gauss_seidel: x_start must not be x");
  }
  KRYFLOW_DISPATCH(smoothers, hybrid_gauss_seidel, backend, a, block_rows, l1, inverse_diagonal, b,
                   x, x_start, direction);
}

void cg_lanczos(const Backend& backend, const std::vector<LanczosSystem>& systems, int steps) {
  if (steps < 1) throw InvalidInput("smoothers::cg_lanczos: steps must be >= 1");
  for (const LanczosSystem& s : systems) {
    require_values(s.a, "cg_lanczos");
    const auto n = static_cast<std::size_t>(s.a.pattern.num_rows);
    if (s.dinv.size() != n || s.r.size() != n || s.p.size() != n || s.p_next.size() != n ||
        s.q.size() != n) {
      throw InvalidInput("smoothers::cg_lanczos: every vector needs " + std::to_string(n) +
                         " entries");
    }
  }
  if (systems.empty()) return;
  KRYFLOW_DISPATCH(smoothers, cg_lanczos, backend, systems, steps);
}

}  // namespace kryflow::kernels::smoothers
