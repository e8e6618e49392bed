// Reference local diagonal of the SEM Poisson operator, in plain loops: the oracle of the cpu
// and cuda kernels (order of operations as in diagonal.hpp).
#include <cstdint>

#include "kernels/sem/diagonal.hpp"

namespace kryflow::kernels::sem::reference {

void poisson_local_diagonal(const Backend& /*backend*/, const PoissonView& a,
                            DiagonalVariant /*variant*/, Span<double> d_local) {
  const int N = a.n;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const double* D = a.derivative;
  for (std::int64_t e = 0; e < a.num_elements; ++e) {
    const double* G = a.g + e * 6 * n3;
    auto at = [&](int c, int i, int j, int k) {
      return G[c * n3 + (static_cast<std::int64_t>(k) * N + j) * N + i];
    };
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          double d = 0.0;
          for (int m = 0; m < N; ++m) {
            d = d + at(0, m, j, k) * D[m * N + i] * D[m * N + i];
            d = d + at(3, i, m, k) * D[m * N + j] * D[m * N + j];
            d = d + at(5, i, j, m) * D[m * N + k] * D[m * N + k];
          }
          const double di = D[i * N + i];
          const double dj = D[j * N + j];
          const double dk = D[k * N + k];
          d = d + 2.0 * (at(1, i, j, k) * di * dj + at(2, i, j, k) * di * dk +
                         at(4, i, j, k) * dj * dk);
          d_local[static_cast<std::size_t>(e * n3 + (static_cast<std::int64_t>(k) * N + j) * N +
                                           i)] = d;
        }
      }
    }
  }
}

}  // namespace kryflow::kernels::sem::reference
