// OpenMP smoother kernels: l1 row norms and the hybrid diagonal row-parallel; Gauss-Seidel is the
// sequential sweep; hybrid Gauss-Seidel copies x and sweeps the blocks in parallel, in one region.
#include <cmath>
#include <cstdint>

#include "kernels/backend/parallel.hpp"
#include "kernels/smoothers/hybrid_rows.hpp"
#include "kernels/smoothers/lanczos_rows.hpp"
#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::cpu {

void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d) {
  const std::int64_t n = a.pattern.num_rows;
  with_values(a, [&](const auto* values) {
    parallel::for_each(backend, a.pattern.row_ptr[n], n, [&](std::int64_t i) {
      d[i] = hybrid::l1_row_norm(a.pattern, values, static_cast<index_t>(i));
    });
  });
}

void gauss_seidel(const Backend& backend, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  reference::gauss_seidel(backend, a, inverse_diagonal, b, x, direction);
}

void hybrid_diagonal(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                     Span<double> d) {
  const index_t n = a.pattern.num_rows;
  with_values(a, [&](const auto* values) {
    parallel::for_each(backend, a.pattern.row_ptr[n], n, [&](std::int64_t i) {
      const auto row = static_cast<index_t>(i);
      d[i] = hybrid::diagonal(a.pattern, values, row, hybrid::block_of_row(row, n, block_rows), l1);
    });
  });
}

void hybrid_gauss_seidel(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                         Span<const double> inverse_diagonal, Span<const double> b, Span<double> x,
                         Span<double> x_start, SweepDirection direction) {
  const index_t n = a.pattern.num_rows;
  const std::int64_t blocks = hybrid::block_count(n, block_rows);
  const bool forward = direction == SweepDirection::forward;
  with_values(a, [&](const auto* values) {
    const auto sweep_block = [&](std::int64_t g) {
      hybrid::sweep(a.pattern, values, hybrid::block(g, n, block_rows), l1, inverse_diagonal.data(),
                    b.data(), x.data(), x_start.data(), forward);
    };
    const int threads = parallel::threads_for(backend, a.pattern.row_ptr[n]);
    if (threads <= 1) {
      for (index_t i = 0; i < n; ++i) x_start[i] = x[i];
      for (std::int64_t g = 0; g < blocks; ++g) sweep_block(g);
      return;
    }
    // One region: the copy, its barrier, then the blocks in dynamic chunks.
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
      for (index_t i = 0; i < n; ++i) x_start[i] = x[i];
#pragma omp for schedule(dynamic, parallel::chunk_for(blocks, threads))
      for (std::int64_t g = 0; g < blocks; ++g) sweep_block(g);
    }
  });
}

void cg_lanczos(const Backend& backend, const std::vector<LanczosSystem>& systems, int steps) {
  for (const LanczosSystem& s : systems) {
    const std::int64_t work = s.a.pattern.row_ptr[s.a.pattern.num_rows];
    with_values(s.a, [&](const auto* values) {
      lanczos::steps(s.a, values, s.dinv, steps, s.r, s.p, s.p_next, s.q, s.scalars,
                     [&](std::int64_t chunks, auto&& body) {
                       parallel::for_each(backend, work, chunks, body);
                     });
    });
  }
}

}  // namespace kryflow::kernels::smoothers::cpu
