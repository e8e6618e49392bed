// The host pieces the fast-diagonalization Schwarz patches share (src/sem/fdm_patches.hpp).
#include "src/sem/fdm_patches.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kryflow/core/error.hpp"

extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                       double* w, double* work, const int* lwork, int* info);

namespace kryflow::sem::detail {

namespace {

/// The coordinates of element e's 8 corners (8 x 3, corner c at c * 3).
void element_corners(const SemPoissonOperator& A, std::int64_t e, double corners[24]) {
  const std::vector<double>& x = A.coordinates();
  for (int c = 0; c < 8; ++c) {
    const std::int64_t g = corner_point(A.numbering(), e, c);
    for (int d = 0; d < 3; ++d) corners[c * 3 + d] = x[3 * g + d];
  }
}

}  // namespace

std::vector<double> element_lengths(const SemPoissonOperator& A) {
  const std::int64_t E = A.numbering().num_elements;
  std::vector<double> length(static_cast<std::size_t>(E * 3));
  for (std::int64_t e = 0; e < E; ++e) {
    double corners[24];
    element_corners(A, e, corners);
    for (int d = 0; d < 3; ++d) {
      // The four edges along d start at the corners with bit d clear; u and v are the bits of
      // the other two directions d1 < d2.
      const int d1 = d == 0 ? 1 : 0;
      const int d2 = d == 2 ? 1 : 2;
      double sum = 0.0;
      for (int v = 0; v < 2; ++v) {
        for (int u = 0; u < 2; ++u) {
          const int a = (u << d1) | (v << d2);
          const int b = a | (1 << d);
          double s = 0.0;
          for (int c = 0; c < 3; ++c) {
            const double dx = corners[b * 3 + c] - corners[a * 3 + c];
            s += dx * dx;
          }
          sum += std::sqrt(s);
        }
      }
      length[e * 3 + d] = sum / 4.0;
    }
  }
  return length;
}

std::vector<double> element_metric_lengths(const SemPoissonOperator& A) {
  const int n = A.numbering().order + 1;
  const std::int64_t E = A.numbering().num_elements;
  const GllRule& rule = A.rule();
  std::vector<double> length(static_cast<std::size_t>(E * 3));
  for (std::int64_t e = 0; e < E; ++e) {
    double corners[24];
    element_corners(A, e, corners);
    double sum[3] = {0.0, 0.0, 0.0};
    double weight = 0.0;
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
          const double r[3] = {rule.nodes[i], rule.nodes[j], rule.nodes[k]};
          double J[3][3];
          trilinear_map(corners, r, nullptr, J);
          const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                             J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                             J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
          // Row d of J^-1 is (cofactor column d) / det; |J| |row d|^2 = |cofactor d|^2 / det.
          double cof[3][3];
          for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
              const int a1 = (a + 1) % 3, a2 = (a + 2) % 3, b1 = (b + 1) % 3, b2 = (b + 2) % 3;
              cof[a][b] = J[a1][b1] * J[a2][b2] - J[a1][b2] * J[a2][b1];
            }
          }
          const double w = rule.weights[i] * rule.weights[j] * rule.weights[k];
          for (int d = 0; d < 3; ++d) {
            const double row =
                cof[0][d] * cof[0][d] + cof[1][d] * cof[1][d] + cof[2][d] * cof[2][d];
            sum[d] += w * row / det;
          }
          weight += w;
        }
      }
    }
    const double g[3] = {sum[0] / weight, sum[1] / weight, sum[2] / weight};
    const double volume = 8.0 * g[0] * g[1] * g[2];
    for (int d = 0; d < 3; ++d) length[e * 3 + d] = std::sqrt(volume / (2.0 * g[d]));
  }
  return length;
}

std::vector<double> reference_stiffness(const GllRule& rule) {
  const int n = rule.order + 1;
  const std::vector<double> D = derivative_matrix(rule);
  std::vector<double> stiffness(static_cast<std::size_t>(n * n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < n; ++q)
        stiffness[i * n + j] += rule.weights[q] * D[q * n + i] * D[q * n + j];
  return stiffness;
}

void generalized_eigen(int N, const std::vector<double>& A, const std::vector<double>& B,
                       const std::vector<char>& active, double* S, double* lambda) {
  std::vector<int> index;
  for (int i = 0; i < N; ++i)
    if (active[i]) index.push_back(i);
  const int m = static_cast<int>(index.size());
  std::fill(S, S + N * N, 0.0);
  std::fill(lambda, lambda + N, 0.0);
  if (m == 0) return;
  std::vector<double> C(static_cast<std::size_t>(m * m));
  for (int a = 0; a < m; ++a) {
    for (int b = 0; b < m; ++b) {
      C[a * m + b] = A[index[a] * N + index[b]] / std::sqrt(B[index[a]] * B[index[b]]);
    }
  }
  std::vector<double> w(static_cast<std::size_t>(m));
  int lwork = -1, info = 0;
  double query = 0.0;
  dsyev_("V", "U", &m, C.data(), &m, w.data(), &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
  dsyev_("V", "U", &m, C.data(), &m, w.data(), work.data(), &lwork, &info);
  if (info != 0) {
    throw InvalidInput("Schwarz patches: the 1D eigenproblem failed (dsyev info " +
                       std::to_string(info) + ")");
  }
  // Column b of C (column-major for LAPACK) is eigenvector b of the symmetric problem.
  for (int b = 0; b < m; ++b) {
    lambda[b] = std::max(w[b], 0.0);
    for (int a = 0; a < m; ++a) {
      S[index[a] * N + b] = C[b * m + a] / std::sqrt(B[index[a]]);
    }
  }
}

}  // namespace kryflow::sem::detail
