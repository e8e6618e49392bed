// Reference SEM Poisson operator: the oracle, one element and one point at a time.
#include <vector>

#include "kernels/sem/poisson_element.hpp"

namespace kryflow::kernels::sem::reference {

void poisson_prepare(const Backend& /*backend*/, const PoissonView& /*a*/) {}

void poisson_apply(const Backend& /*backend*/, const PoissonView& a, Span<const double> x,
                   Span<double> y) {
  const std::int64_t n3 = static_cast<std::int64_t>(a.n) * a.n * a.n;
  for (std::int64_t l = 0; l < a.num_elements * n3; ++l) detail::gather_point(a, x.data(), l);
  if (a.float_arithmetic) {
    std::vector<float> work(static_cast<std::size_t>(detail::element_work_size<float>(a.n)));
    for (std::int64_t e = 0; e < a.num_elements; ++e) detail::element_laplacian(a, e, work.data());
  } else {
    std::vector<double> work(static_cast<std::size_t>(3 * n3));
    for (std::int64_t e = 0; e < a.num_elements; ++e) detail::element_laplacian(a, e, work.data());
  }
  for (std::int64_t g = 0; g < a.num_global; ++g) detail::assemble_point(a, x.data(), y.data(), g);
}

void poisson_assemble_diagonal(const Backend& /*backend*/, const PoissonView& a,
                               Span<const double> d_local, double masked_value, Span<double> y) {
  for (std::int64_t g = 0; g < a.num_global; ++g) {
    detail::assemble_diagonal_point(a, d_local.data(), masked_value, y.data(), g);
  }
}

}  // namespace kryflow::kernels::sem::reference
