// Setup of the matrix-free SEM Poisson operator: numbering, geometry, assembly lists.
#include "kryflow/sem/poisson_operator.hpp"

#include <limits>
#include <string>

#include "kernels/sem/poisson.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::sem {

SemPoissonOperator::SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                                       std::span<const double> vertices, int order,
                                       bool dirichlet_boundary)
    : numbering_(number_gll_points(num_elements, vertices, order)), rule_(gll_rule(order)) {
  const int N = order + 1;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const std::int64_t num_local = num_elements * n3;
  if (num_local > std::numeric_limits<index_t>::max() ||
      numbering_.num_global > std::numeric_limits<index_t>::max()) {
    throw NotSupported("SemPoissonOperator: " + std::to_string(num_local) +
                       " local points exceed the 32-bit index range");
  }
  const GeometricFactors factors = geometric_factors(num_elements, vertices, rule_);
  const std::int64_t num_global = numbering_.num_global;

  // Assembly lists: the locals of each global point in increasing local index.
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_global + 1), 0);
  for (std::int64_t g : numbering_.local_to_global) ++offsets[static_cast<std::size_t>(g + 1)];
  for (std::int64_t g = 0; g < num_global; ++g) {
    offsets[static_cast<std::size_t>(g + 1)] += offsets[static_cast<std::size_t>(g)];
  }
  std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
  std::vector<index_t> locals(static_cast<std::size_t>(num_local));
  for (std::int64_t l = 0; l < num_local; ++l) {
    const auto g =
        static_cast<std::size_t>(numbering_.local_to_global[static_cast<std::size_t>(l)]);
    locals[static_cast<std::size_t>(next[g]++)] = static_cast<index_t>(l);
  }

  // Mass, coordinates and mask on the host.
  mass_.assign(static_cast<std::size_t>(num_global), 0.0);
  coordinates_.assign(static_cast<std::size_t>(3 * num_global), 0.0);
  for (std::int64_t e = 0; e < num_elements; ++e) {
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const std::int64_t q = (static_cast<std::int64_t>(k) * N + j) * N + i;
          const auto g = static_cast<std::size_t>(
              numbering_.local_to_global[static_cast<std::size_t>(e * n3 + q)]);
          mass_[g] += factors.mass[static_cast<std::size_t>(e * n3 + q)];
          const double r[3] = {rule_.nodes[i], rule_.nodes[j], rule_.nodes[k]};
          for (int a = 0; a < 3; ++a) {
            double x = 0.0;
            for (int v = 0; v < 8; ++v) {
              double w = 1.0;
              for (int d = 0; d < 3; ++d) w *= 0.5 * (1.0 + (((v >> d) & 1) != 0 ? r[d] : -r[d]));
              x += w * vertices[static_cast<std::size_t>(e * 24 + v * 3 + a)];
            }
            coordinates_[3 * g + static_cast<std::size_t>(a)] = x;
          }
        }
      }
    }
  }
  mask_host_.assign(static_cast<std::size_t>(num_global), 0);
  if (dirichlet_boundary) mask_host_ = numbering_.on_boundary;

  // The assembled diagonal (see diagonal()).
  const std::vector<double> D = derivative_matrix(rule_);
  diagonal_.assign(static_cast<std::size_t>(num_global), 0.0);
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const double* G = factors.g.data() + e * 6 * n3;
    auto at = [&](int c, int i, int j, int k) {
      return G[c * n3 + (static_cast<std::int64_t>(k) * N + j) * N + i];
    };
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          double d = 0.0;
          for (int m = 0; m < N; ++m) {
            d += at(0, m, j, k) * D[m * N + i] * D[m * N + i];
            d += at(3, i, m, k) * D[m * N + j] * D[m * N + j];
            d += at(5, i, j, m) * D[m * N + k] * D[m * N + k];
          }
          const double di = D[i * N + i];
          const double dj = D[j * N + j];
          const double dk = D[k * N + k];
          d += 2.0 *
               (at(1, i, j, k) * di * dj + at(2, i, j, k) * di * dk + at(4, i, j, k) * dj * dk);
          const std::int64_t q = (static_cast<std::int64_t>(k) * N + j) * N + i;
          diagonal_[static_cast<std::size_t>(
              numbering_.local_to_global[static_cast<std::size_t>(e * n3 + q)])] += d;
        }
      }
    }
  }
  for (std::int64_t g = 0; g < num_global; ++g) {
    if (mask_host_[static_cast<std::size_t>(g)] != 0) diagonal_[static_cast<std::size_t>(g)] = 1.0;
  }

  derivative_ = Array<double>::from_host(backend, derivative_matrix(rule_));
  g_ = Array<double>::from_host(backend, factors.g);
  local_to_global_ = Array<std::int64_t>::from_host(backend, numbering_.local_to_global);
  global_offsets_ = Array<std::int64_t>::from_host(backend, offsets);
  global_locals_ = Array<index_t>::from_host(backend, locals);
  mask_ = Array<char>::from_host(backend, mask_host_);
  local_x_ = Array<double>(backend, static_cast<std::size_t>(num_local));
  local_y_ = Array<double>(backend, static_cast<std::size_t>(num_local));
}

void SemPoissonOperator::apply(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "SemPoissonOperator::apply");
  kernels::sem::PoissonView view;
  view.num_elements = numbering_.num_elements;
  view.n = numbering_.order + 1;
  view.derivative = derivative_.data();
  view.g = g_.data();
  view.num_global = numbering_.num_global;
  view.local_to_global = local_to_global_.data();
  view.global_offsets = global_offsets_.data();
  view.global_locals = global_locals_.data();
  view.mask = mask_.data();
  view.local_x = local_x_.data();
  view.local_y = local_y_.data();
  kernels::sem::poisson_apply(backend(), view, x.span(), y.span());
}

void SemPoissonOperator::diagonal(Vector& d) const {
  if (d.size() != diagonal_.size()) {
    throw DimensionMismatch("SemPoissonOperator::diagonal: expected " +
                            std::to_string(diagonal_.size()) + " entries, got " +
                            std::to_string(d.size()));
  }
  if (!(d.backend() == backend())) {
    throw InvalidInput("SemPoissonOperator::diagonal: d must live on " + backend().name());
  }
  d = Vector::from_host(backend(), diagonal_);
}

double SemPoissonOperator::apply_bytes() const noexcept {
  const double num_local = static_cast<double>(numbering_.local_to_global.size());
  return 6.0 * 8.0 * num_local + 8.0 * num_local +
         16.0 * static_cast<double>(numbering_.num_global);
}

}  // namespace kryflow::sem
