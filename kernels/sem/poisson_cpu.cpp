// OpenMP SEM Poisson operator: points and elements split among threads, each thread with its
// own sum-factorization scratch; the same operations in the same order as the reference.
// Serial below the work threshold of kernels/backend/parallel.hpp (work: the metric terms, 6
// per local point).
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/poisson_element.hpp"

namespace kryflow::kernels::sem::cpu {

void poisson_prepare(const Backend& /*backend*/, const PoissonView& /*a*/) {}

void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x,
                   Span<double> y) {
  const std::int64_t n3 = static_cast<std::int64_t>(a.n) * a.n * a.n;
  const std::int64_t num_local = a.num_elements * n3;
  const int t = parallel::threads_for(backend, 6 * num_local);
#pragma omp parallel num_threads(t) if (t > 1)
  {
#pragma omp for schedule(dynamic, parallel::chunk_for(num_local, t))
    for (std::int64_t l = 0; l < num_local; ++l) detail::gather_point(a, x.data(), l);
    std::vector<double> work(a.float_arithmetic ? 0 : static_cast<std::size_t>(3 * n3));
    std::vector<float> work_float(
        a.float_arithmetic ? static_cast<std::size_t>(detail::element_work_size<float>(a.n)) : 0);
#pragma omp for schedule(dynamic, parallel::chunk_for(a.num_elements, t))
    for (std::int64_t e = 0; e < a.num_elements; ++e) {
      if (a.float_arithmetic) {
        detail::element_laplacian(a, e, work_float.data());
      } else {
        detail::element_laplacian(a, e, work.data());
      }
    }
#pragma omp for schedule(dynamic, parallel::chunk_for(a.num_global, t))
    for (std::int64_t g = 0; g < a.num_global; ++g) {
      detail::assemble_point(a, x.data(), y.data(), g);
    }
  }
}

void poisson_assemble_diagonal(const Backend& backend, const PoissonView& a,
                               Span<const double> d_local, double masked_value, Span<double> y) {
  const std::int64_t num_local = a.num_elements * a.n * a.n * a.n;
  parallel::for_each(backend, num_local, a.num_global, [&](std::int64_t g) {
    detail::assemble_diagonal_point(a, d_local.data(), masked_value, y.data(), g);
  });
}

}  // namespace kryflow::kernels::sem::cpu
