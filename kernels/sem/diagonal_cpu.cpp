// OpenMP local diagonal of the SEM Poisson operator: elements split among threads, each point
// computed in the reference's order of operations (diagonal.hpp), so the bits are the same.
// Serial below the work threshold of kernels/backend/parallel.hpp (work: the metric terms).
#include <cstdint>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/diagonal.hpp"

namespace kryflow::kernels::sem::cpu {

void poisson_local_diagonal(const Backend& backend, const PoissonView& a,
                            DiagonalVariant /*variant*/, Span<double> d_local) {
  const int N = a.n;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const double* D = a.derivative;
  double* out = d_local.data();
  parallel::for_each(backend, 6 * a.num_elements * n3, a.num_elements, [&](std::int64_t e) {
    const double* g11 = a.g + e * 6 * n3;
    const double* g12 = g11 + n3;
    const double* g13 = g11 + 2 * n3;
    const double* g22 = g11 + 3 * n3;
    const double* g23 = g11 + 4 * n3;
    const double* g33 = g11 + 5 * n3;
    double* d_e = out + e * n3;
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        const std::int64_t line = (static_cast<std::int64_t>(k) * N + j) * N;
        for (int i = 0; i < N; ++i) {
          double d = 0.0;
          for (int m = 0; m < N; ++m) {
            const double dmi = D[m * N + i];
            const double dmj = D[m * N + j];
            const double dmk = D[m * N + k];
            d = d + g11[line + m] * dmi * dmi;
            d = d + g22[(static_cast<std::int64_t>(k) * N + m) * N + i] * dmj * dmj;
            d = d + g33[(static_cast<std::int64_t>(m) * N + j) * N + i] * dmk * dmk;
          }
          const double di = D[i * N + i];
          const double dj = D[j * N + j];
          const double dk = D[k * N + k];
          const std::int64_t q = line + i;
          d = d + 2.0 * (g12[q] * di * dj + g13[q] * di * dk + g23[q] * dj * dk);
          d_e[q] = d;
        }
      }
    }
  });
}

}  // namespace kryflow::kernels::sem::cpu
