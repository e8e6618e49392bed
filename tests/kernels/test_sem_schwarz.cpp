// Overlapping Schwarz on element patches with fast-diagonalization local solves: exact on one
// affine element, the local solve against a dense solve of the separable patch problem built
// independently, the backend against the reference, float32 patches' float locals with the bits
// of double ones, additive Schwarz symmetric, and the Chebyshev-accelerated Schwarz smoothers in
// p-multigrid (iterations bounded as the mesh is refined, every solve checked by its true
// residual).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/sem/gll.hpp"
#include "kryflow/sem/p_multigrid.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/sem/schwarz.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

std::vector<double> random_free(const SemPoissonOperator& A, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(A.num_rows()));
  for (std::size_t g = 0; g < v.size(); ++g) v[g] = A.dirichlet()[g] ? 0.0 : uniform(rng);
  return v;
}

using test::dot;
using test::max_abs;

std::vector<double> apply(const LinearOperator& M, const Backend& backend,
                          const std::vector<double>& x) {
  const Vector xv = Vector::from_host(backend, x);
  Vector y(backend, x.size());
  M.apply(xv, y);
  return y.to_host();
}

/// One element, an affine box [0, 1] x [0, 2] x [0, 0.5] with Dirichlet faces: the patch is the
/// element, its separable problem is the element's operator on its interior points, so both
/// Schwarz methods invert A exactly.
TEST(SemSchwarz, ExactOnOneAffineElement) {
  const Backend backend = test::backend_under_test();
  std::vector<double> vertices(24);
  for (int v = 0; v < 8; ++v) {
    vertices[v * 3 + 0] = (v & 1) ? 1.0 : 0.0;
    vertices[v * 3 + 1] = (v & 2) ? 2.0 : 0.0;
    vertices[v * 3 + 2] = (v & 4) ? 0.5 : 0.0;
  }
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int order : {2, 5, 7}) {
    const SemPoissonOperator A(backend, 1, vertices, order);
    const std::vector<double> u = random_free(A, seed + order);
    const std::vector<double> Au = apply(A, backend, u);
    for (auto method :
         {SchwarzPreconditioner::Method::additive, SchwarzPreconditioner::Method::restricted}) {
      SchwarzPreconditioner M(method);
      M.setup(A);
      const std::vector<double> z = apply(M, backend, Au);
      double error = 0.0;
      for (std::size_t g = 0; g < u.size(); ++g) error = std::max(error, std::abs(z[g] - u[g]));
      EXPECT_LT(error, 1e-10 * max_abs(u)) << M.name() << " p = " << order;
    }
  }
}

/// The coordinates of global point g.
std::array<double, 3> point(const SemPoissonOperator& A, std::int64_t g) {
  const auto& x = A.coordinates();
  return {x[3 * g], x[3 * g + 1], x[3 * g + 2]};
}

/// On an affine box mesh with elements of every orientation, each patch is its element's points
/// and, across each face with a neighbour, the neighbour's points one step in from the face: on
/// a uniform box the mirror images of the element's first interior layer; nothing beyond the
/// mesh boundary and nothing on the box's edges and corners outside the element.
TEST(SemSchwarz, PatchBoxesExtendOneLayerIntoTheNeighbours) {
  const Backend backend = Backend::reference();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<double> vertices = test::unit_cube_box(3, 3, 2, 0.0);
  test::reorient_hex_elements(vertices, seed, /*proper=*/true);
  const int order = 4, n = order + 1, N = n + 2;
  const SemPoissonOperator A(backend, 18, vertices, order, /*dirichlet_boundary=*/false);
  const SchwarzPreconditioner::Patches patches = SchwarzPreconditioner::build_patches(A);
  ASSERT_EQ(patches.n, n);
  const auto& l2g = A.numbering().local_to_global;
  int extended = 0;
  for (std::int64_t e = 0; e < 18; ++e) {
    auto own = [&](int i, int j, int k) { return l2g[((e * n + k) * n + j) * n + i]; };
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const index_t g = patches.box_to_global[((e * N + k) * N + j) * N + i];
          const std::array<int, 3> c{i - 1, j - 1, k - 1};
          int outside = 0, direction = -1;
          for (int d = 0; d < 3; ++d) {
            if (c[d] < 0 || c[d] > order) {
              ++outside;
              direction = d;
            }
          }
          if (outside == 0) {
            EXPECT_EQ(g, own(c[0], c[1], c[2]));
            continue;
          }
          if (outside > 1) {
            EXPECT_EQ(g, -1) << "element " << e << " box point " << i << " " << j << " " << k;
            continue;
          }
          std::array<int, 3> face = c, inner = c;
          face[direction] = c[direction] < 0 ? 0 : order;
          inner[direction] = c[direction] < 0 ? 1 : order - 1;
          const auto xf = point(A, own(face[0], face[1], face[2]));
          const auto xi = point(A, own(inner[0], inner[1], inner[2]));
          if (g < 0) {
            // Only beyond the mesh boundary: the face's points are all on the boundary.
            EXPECT_TRUE(A.numbering().on_boundary[own(face[0], face[1], face[2])] != 0)
                << "element " << e;
            continue;
          }
          ++extended;
          const auto xg = point(A, g);
          for (int d = 0; d < 3; ++d) EXPECT_NEAR(xg[d], 2.0 * xf[d] - xi[d], 1e-12);
        }
      }
    }
  }
  // 3 x 3 x 2 elements: 2 x 3 x 2 + 3 x 2 x 2 + 3 x 3 x 1 = 33 interior faces, each extending
  // two patches by n^2 points.
  EXPECT_EQ(extended, 33 * 2 * n * n);
}

/// Dense LU with partial pivoting: solves K x = b (K n x n, row-major) in place.
std::vector<double> dense_solve(std::vector<double> K, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(K[r * n + c]) > std::abs(K[pivot * n + c])) pivot = r;
    for (std::size_t j = 0; j < n; ++j) std::swap(K[c * n + j], K[pivot * n + j]);
    std::swap(b[c], b[pivot]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = K[r * n + c] / K[c * n + c];
      for (std::size_t j = c; j < n; ++j) K[r * n + j] -= f * K[c * n + j];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t j = c + 1; j < n; ++j) s -= K[c * n + j] * x[j];
    x[c] = s / K[c * n + c];
  }
  return x;
}

/// The local solve equals a dense solve of the separable patch problem, built here from the
/// GLL stiffness and mass matrices of the element and its neighbours (uniform box, h = 1/3):
/// for the centre element (every neighbour) and a corner element (three Dirichlet faces).
TEST(SemSchwarz, LocalSolveIsTheDenseSolveOfTheSeparableProblem) {
  const Backend backend = Backend::reference();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int order = 3, n = order + 1, N = n + 2;
  const double h = 1.0 / 3.0;
  const SemPoissonOperator A(backend, 27, test::unit_cube_box(3, 3, 3, 0.0), order);
  const SchwarzPreconditioner::Patches patches = SchwarzPreconditioner::build_patches(A);
  const std::vector<double> r = random_free(A, seed);
  kernels::sem::SchwarzView view;
  view.num_elements = 27;
  view.n = n;
  view.box_to_global = patches.box_to_global.data();
  view.eigenvectors = patches.eigenvectors.data();
  view.eigenvalues = patches.eigenvalues.data();
  std::vector<double> local(static_cast<std::size_t>(27 * N * N * N));
  kernels::sem::SchwarzLocals locals;
  locals.values = local.data();
  kernels::sem::schwarz_fdm_solve(backend, view, r, locals);

  const GllRule rule = gll_rule(order);
  const std::vector<double> D = derivative_matrix(rule);
  std::vector<double> K1(static_cast<std::size_t>(n * n), 0.0);  // reference stiffness
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < n; ++q) K1[i * n + j] += rule.weights[q] * D[q * n + i] * D[q * n + j];
  // 1D extended operators on a uniform mesh: element [1, n], neighbours' last two points.
  auto one_d = [&](bool left_neighbour, bool right_neighbour, std::vector<double>& A1,
                   std::vector<double>& B1, std::vector<char>& active) {
    A1.assign(static_cast<std::size_t>(N * N), 0.0);
    B1.assign(static_cast<std::size_t>(N), 0.0);
    active.assign(static_cast<std::size_t>(N), 1);
    for (int offset : {0, 1 - n, n - 1}) {  // the element, left and right neighbours
      if (offset == 1 - n && !left_neighbour) continue;
      if (offset == n - 1 && !right_neighbour) continue;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          const int bi = i + 1 + offset, bj = j + 1 + offset;
          if (bi < 0 || bi >= N || bj < 0 || bj >= N) continue;
          A1[bi * N + bj] += 2.0 / h * K1[i * n + j];
        }
        const int bi = i + 1 + offset;
        if (bi >= 0 && bi < N) B1[bi] += 0.5 * h * rule.weights[i];
      }
    }
    if (!left_neighbour) active[0] = active[1] = 0;  // Dirichlet face
    if (!right_neighbour) active[N - 1] = active[N - 2] = 0;
  };
  for (std::int64_t e : {13, 0}) {
    SCOPED_TRACE("element " + std::to_string(e));
    const bool interior = e == 13;
    std::vector<double> A1, B1;
    std::vector<char> active;
    one_d(interior, true, A1, B1, active);
    std::vector<int> index;  // active box points (every direction active)
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i)
          if (active[i] && active[j] && active[k]) index.push_back((k * N + j) * N + i);
    const std::size_t m = index.size();
    std::vector<double> K(m * m, 0.0), rhs(m);
    for (std::size_t a = 0; a < m; ++a) {
      const int ia = index[a] % N, ja = index[a] / N % N, ka = index[a] / (N * N);
      const index_t g = patches.box_to_global[e * N * N * N + index[a]];
      rhs[a] = g >= 0 ? r[g] : 0.0;
      for (std::size_t b = 0; b < m; ++b) {
        const int ib = index[b] % N, jb = index[b] / N % N, kb = index[b] / (N * N);
        const double bi = ia == ib ? B1[ia] : 0.0, bj = ja == jb ? B1[ja] : 0.0,
                     bk = ka == kb ? B1[ka] : 0.0;
        K[a * m + b] =
            bk * bj * A1[ia * N + ib] + bk * A1[ja * N + jb] * bi + A1[ka * N + kb] * bj * bi;
      }
    }
    const std::vector<double> expected = dense_solve(K, rhs);
    double error = 0.0, size = 0.0;
    for (std::size_t a = 0; a < m; ++a) {
      error = std::max(error, std::abs(local[e * N * N * N + index[a]] - expected[a]));
      size = std::max(size, std::abs(expected[a]));
    }
    EXPECT_LT(error, 1e-10 * size);
    // Box points outside the patch's active tensor points get nothing.
    for (int q = 0; q < N * N * N; ++q) {
      if (std::find(index.begin(), index.end(), q) == index.end()) {
        EXPECT_EQ(local[e * N * N * N + q], 0.0) << "box point " << q;
      }
    }
  }
}

/// Additive Schwarz is symmetric and positive definite: x'My = y'Mx, x'Mx > 0.
TEST(SemSchwarz, AdditiveIsSymmetricPositiveDefinite) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.05);
  const SemPoissonOperator A(backend, 12, vertices, 4);
  SchwarzPreconditioner M(SchwarzPreconditioner::Method::additive);
  M.setup(A);
  const std::vector<double> x = random_free(A, seed);
  const std::vector<double> y = random_free(A, seed + 1);
  const std::vector<double> Mx = apply(M, backend, x);
  const std::vector<double> My = apply(M, backend, y);
  EXPECT_NEAR(dot(x, My), dot(y, Mx), 1e-12 * std::sqrt(dot(Mx, Mx) * dot(y, y)));
  EXPECT_GT(dot(x, Mx), 0.0);
}

/// PCG with one-level additive Schwarz (the preconditioner alone) converges on a deformed box in
/// fewer iterations than with Jacobi, checked by the true residual.
TEST(SemSchwarz, OneLevelAdditiveSchwarzPreconditionsCg) {
  const Backend backend = test::backend_under_test();
  const std::vector<double> vertices = test::unit_cube_box(3, 3, 3, 0.1);
  const SemPoissonOperator A(backend, 27, vertices, 5);
  const std::vector<double> u = random_free(A, 7);
  const std::vector<double> bh = apply(A, backend, u);
  const Vector b = Vector::from_host(backend, bh);
  int iterations[2] = {0, 0};
  for (int schwarz : {0, 1}) {
    Vector x = Vector::constant(backend, b.size(), 0.0);
    std::unique_ptr<Preconditioner> M;
    if (schwarz == 1) {
      M = std::make_unique<SchwarzPreconditioner>(SchwarzPreconditioner::Method::additive);
    } else {
      M = std::make_unique<JacobiPreconditioner>();
    }
    M->setup(A);
    StopCriteria criteria;
    criteria.max_iterations = 2000;
    const SolveReport report = Cg(criteria).solve(A, *M, b, x);
    EXPECT_TRUE(report.converged()) << report.reason;
    const std::vector<double> ax = apply(A, backend, x.to_host());
    double r2 = 0.0;
    for (std::size_t g = 0; g < ax.size(); ++g) r2 += (bh[g] - ax[g]) * (bh[g] - ax[g]);
    EXPECT_LT(std::sqrt(r2 / dot(bh, bh)), 1e-7);
    iterations[schwarz] = report.iterations;
  }
  // Jacobi 71, additive Schwarz 33 on this mesh.
  EXPECT_LT(iterations[1] * 3, iterations[0] * 2);
}

/// The fused Chebyshev step (the updates of d and x in the sums of the local solves) has the
/// bits of apply followed by the two axpbys of Preconditioner::apply_update's default, on the
/// backend under test, for both methods and precisions, from x = 0 and from a nonzero x.
TEST(SemSchwarz, FusedUpdateHasTheBitsOfApplyAndTwoAxpbys) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const SemPoissonOperator A(backend, 12, test::unit_cube_box(3, 2, 2, 0.2), 5);
  // Nonzero at the Dirichlet points too (there z = r).
  std::vector<double> r = random_free(A, seed);
  std::vector<double> d0 = random_free(A, seed + 1);
  std::vector<double> x0 = random_free(A, seed + 2);
  for (std::size_t g = 0; g < r.size(); ++g) {
    if (A.dirichlet()[g]) {
      r[g] = 0.5;
      d0[g] = -0.25;
      x0[g] = 0.125;
    }
  }
  for (auto method :
       {SchwarzPreconditioner::Method::additive, SchwarzPreconditioner::Method::restricted}) {
    for (Precision precision : {Precision::float64, Precision::float32}) {
      SchwarzPreconditioner M(method, precision);
      M.setup(A);
      for (const bool x_is_zero : {true, false}) {
        for (const double beta : {0.0, -0.37}) {
          SCOPED_TRACE(M.name() + (x_is_zero ? ", x = 0" : ", x given") + ", beta " +
                       std::to_string(beta));
          const Vector rv = Vector::from_host(backend, r);
          Vector d = Vector::from_host(backend, d0), x = Vector::from_host(backend, x0);
          Vector d_expected = Vector::from_host(backend, d0);
          Vector x_expected = Vector::from_host(backend, x0);
          Vector z(backend, r.size());
          M.apply_update(rv, 1.7, beta, d, x, x_is_zero, z);
          M.Preconditioner::apply_update(rv, 1.7, beta, d_expected, x_expected, x_is_zero, z);
          EXPECT_TRUE(d.to_host() == d_expected.to_host());
          EXPECT_TRUE(x.to_host() == x_expected.to_host());
          EXPECT_GT(max_abs(d.to_host()), 0.0);
        }
      }
      Vector d = Vector::from_host(backend, d0);
      EXPECT_THROW(M.apply_update(d, 1.0, 0.0, d, d, false, d), InvalidInput);
    }
  }
}

/// The backend's Schwarz applications agree with the reference's on a deformed box, in double
/// and in float.
TEST(SemSchwarz, BackendAgreesWithTheReference) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.2);
  // 8: more than 48 KB of shared memory in double; 10 and 14: one element per block on cuda.
  for (int order : {3, 7, 8, 10, 14}) {
    const SemPoissonOperator A(backend, 12, vertices, order);
    const SemPoissonOperator R(Backend::reference(), 12, vertices, order);
    // Nonzero at the Dirichlet points too: they pass through.
    std::vector<double> r = random_free(A, seed + order);
    for (std::size_t g = 0; g < r.size(); ++g)
      if (A.dirichlet()[g]) r[g] = 0.5;
    for (auto method :
         {SchwarzPreconditioner::Method::additive, SchwarzPreconditioner::Method::restricted}) {
      std::vector<double> zr64;
      for (Precision precision : {Precision::float64, Precision::float32}) {
        SchwarzPreconditioner M(method, precision), MR(method, precision);
        M.setup(A);
        MR.setup(R);
        const std::vector<double> z = apply(M, backend, r);
        const std::vector<double> zr = apply(MR, Backend::reference(), r);
        // float32: the local solves in float (the cuda kernel's fused multiply-adds round
        // differently from the host's).
        const double tolerance = precision == Precision::float32 ? 1e-5 : 1e-12;
        double error = 0.0;
        for (std::size_t g = 0; g < z.size(); ++g) error = std::max(error, std::abs(z[g] - zr[g]));
        EXPECT_LT(error, tolerance * max_abs(zr)) << M.name() << " p = " << order;
        for (std::size_t g = 0; g < z.size(); ++g)
          if (A.dirichlet()[g]) EXPECT_EQ(z[g], 0.5);
        if (precision == Precision::float64) {
          zr64 = zr;
        } else {
          // Float local solves stay within float rounding of the double ones.
          double difference = 0.0;
          for (std::size_t g = 0; g < z.size(); ++g)
            difference = std::max(difference, std::abs(zr[g] - zr64[g]));
          EXPECT_LT(difference, 1e-4 * max_abs(zr64));
          EXPECT_GT(difference, 0.0);
        }
      }
    }
  }
}

/// With float32 patches the local solves' results are floats: stored as floats they are, widened,
/// the bits of the double locals, and the sums of either in double give the same z, bit for bit,
/// on the backend under test; the float32 preconditioner's z is that z. float locals need float32
/// patches.
TEST(SemSchwarz, FloatLocalsHaveTheBitsOfDoubleLocals) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.2);
  for (int order : {3, 7}) {
    const SemPoissonOperator A(backend, 12, vertices, order);
    const GlobalNumbering& numbering = A.numbering();
    const std::int64_t E = numbering.num_elements, G = numbering.num_global;
    const int n = order + 1, N = n + 2;
    const std::int64_t N3 = static_cast<std::int64_t>(N) * N * N;
    std::vector<double> r = random_free(A, seed + order);
    for (std::size_t g = 0; g < r.size(); ++g)
      if (A.dirichlet()[g]) r[g] = 0.5;
    const Vector rv = Vector::from_host(backend, r);
    const SchwarzPreconditioner::Patches patches = SchwarzPreconditioner::build_patches(A);
    const Array<index_t> box_to_global = Array<index_t>::from_host(backend, patches.box_to_global);
    const Array<float> S = Array<float>::from_host(
        backend, std::vector<float>(patches.eigenvectors.begin(), patches.eigenvectors.end()));
    const Array<float> lambda = Array<float>::from_host(
        backend, std::vector<float>(patches.eigenvalues.begin(), patches.eigenvalues.end()));
    const Array<double> S64 = Array<double>::from_host(backend, patches.eigenvectors);
    for (auto method :
         {SchwarzPreconditioner::Method::additive, SchwarzPreconditioner::Method::restricted}) {
      const bool restricted = method == SchwarzPreconditioner::Method::restricted;
      SCOPED_TRACE(std::string(restricted ? "restricted" : "additive") +
                   ", p = " + std::to_string(order));
      kernels::sem::SchwarzView view;
      view.num_elements = E;
      view.n = n;
      view.box_to_global = box_to_global.data();
      view.eigenvectors32 = S.data();
      view.eigenvalues32 = lambda.data();
      view.restricted = restricted;
      const auto size = static_cast<std::size_t>(E * (restricted ? n * n * n : N3));
      Array<double> y64(backend, size);
      Array<float> y32(backend, size);
      kernels::sem::SchwarzLocals locals64, locals32;
      locals64.values = y64.data();
      locals32.values32 = y32.data();
      kernels::sem::schwarz_fdm_solve(backend, view, rv.span(), locals64);
      kernels::sem::schwarz_fdm_solve(backend, view, rv.span(), locals32);
      const std::vector<double> h64 = y64.to_host();
      const std::vector<float> h32 = y32.to_host();
      EXPECT_TRUE(std::vector<double>(h32.begin(), h32.end()) == h64);
      EXPECT_GT(max_abs(h64), 0.0);

      // The sums on the preconditioner's lists: additive, every global point's box points in
      // increasing box index, weight 1; restricted, the operator's own lists, weight
      // 1 / multiplicity; weight 0 at the Dirichlet points.
      std::vector<double> weight(static_cast<std::size_t>(G));
      for (std::int64_t g = 0; g < G; ++g) {
        weight[g] = A.dirichlet()[g] ? 0.0 : restricted ? 1.0 / numbering.multiplicity[g] : 1.0;
      }
      std::vector<std::int64_t> offsets(static_cast<std::size_t>(G + 1), 0);
      std::vector<index_t> box_locals;
      if (!restricted) {
        for (index_t g : patches.box_to_global)
          if (g >= 0) ++offsets[g + 1];
        for (std::int64_t g = 0; g < G; ++g) offsets[g + 1] += offsets[g];
        box_locals.resize(static_cast<std::size_t>(offsets[G]));
        std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
        for (std::size_t q = 0; q < patches.box_to_global.size(); ++q) {
          const index_t g = patches.box_to_global[q];
          if (g >= 0) box_locals[next[g]++] = static_cast<index_t>(q);
        }
      }
      const Array<double> weight_array = Array<double>::from_host(backend, weight);
      const Array<std::int64_t> offsets_array = Array<std::int64_t>::from_host(backend, offsets);
      const Array<index_t> locals_array = Array<index_t>::from_host(backend, box_locals);
      kernels::sem::TransferSideView out;
      out.num_elements = E;
      out.n = n;
      out.num_global = G;
      out.weight = weight_array.data();
      out.global_offsets = restricted ? A.global_offsets().data() : offsets_array.data();
      out.global_locals = restricted ? A.global_locals().data() : locals_array.data();
      Vector z64(backend, r.size()), z32(backend, r.size());
      kernels::sem::schwarz_assemble(backend, out, locals64, rv.span(), {}, z64.span());
      kernels::sem::schwarz_assemble(backend, out, locals32, rv.span(), {}, z32.span());
      const std::vector<double> zh64 = z64.to_host();
      EXPECT_TRUE(z32.to_host() == zh64);
      double free_size = 0.0;
      for (std::int64_t g = 0; g < G; ++g)
        if (!A.dirichlet()[g]) free_size = std::max(free_size, std::abs(zh64[g]));
      EXPECT_GT(free_size, 0.0);

      SchwarzPreconditioner M(method, Precision::float32);
      M.setup(A);
      EXPECT_TRUE(apply(M, backend, r) == zh64) << M.name();

      // float locals need float32 patches, and one type of locals at a time.
      kernels::sem::SchwarzView view64 = view;
      view64.eigenvectors32 = nullptr;
      view64.eigenvalues32 = nullptr;
      view64.eigenvectors = S64.data();
      EXPECT_THROW(kernels::sem::schwarz_fdm_solve(backend, view64, rv.span(), locals32),
                   InvalidInput);
      kernels::sem::SchwarzLocals both = locals64;
      both.values32 = y32.data();
      EXPECT_THROW(kernels::sem::schwarz_fdm_solve(backend, view, rv.span(), both), InvalidInput);
      EXPECT_THROW(kernels::sem::schwarz_assemble(backend, out, both, rv.span(), {}, z64.span()),
                   InvalidInput);
      EXPECT_THROW(kernels::sem::schwarz_assemble(backend, out, kernels::sem::SchwarzLocals{},
                                                  rv.span(), {}, z64.span()),
                   InvalidInput);
    }
  }
}

/// The Chebyshev-accelerated Schwarz smoother: from x = 0 the same as from a zero x, the error
/// of A x = 0 shrinks at each smoothing step, and misuse is a clear error.
TEST(SemSchwarz, ChebyshevAcceleratedSchwarzSmooths) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const SemPoissonOperator A(backend, 27, test::unit_cube_box(3, 3, 3, 0.2), 5);
  for (auto method :
       {SchwarzPreconditioner::Method::additive, SchwarzPreconditioner::Method::restricted}) {
    PreconditionedChebyshevSmoother S(ChebyshevSmoother::Parameters{3, 30.0, 1.1, 10},
                                      std::make_unique<SchwarzPreconditioner>(method));
    EXPECT_THROW(S.smooth(Vector::constant(backend, 4, 1.0),
                          *std::make_unique<Vector>(Vector::constant(backend, 4, 0.0)), true),
                 InvalidInput);
    S.setup(A);
    EXPECT_GT(S.lambda_max(), 1.0);  // the overlap: several patches cover each point
    EXPECT_EQ(S.name(), "chebyshev(" + SchwarzPreconditioner(method).name() + ")");
    const Vector b = Vector::from_host(backend, random_free(A, seed));
    Vector x1(backend, b.size()), x2 = Vector::constant(backend, b.size(), 0.0);
    S.smooth(b, x1, true);
    S.smooth(b, x2, false);
    const std::vector<double> h1 = x1.to_host(), h2 = x2.to_host();
    double difference = 0.0;
    for (std::size_t g = 0; g < h1.size(); ++g)
      difference = std::max(difference, std::abs(h1[g] - h2[g]));
    EXPECT_LT(difference, 1e-12 * max_abs(h1));
    Vector e = Vector::from_host(backend, random_free(A, seed + 1));
    const Vector zero = Vector::constant(backend, b.size(), 0.0);
    double previous = norm2(e);
    for (int step = 0; step < 4; ++step) {
      S.smooth(zero, e, false);
      const double now = norm2(e);
      EXPECT_LT(now, 0.8 * previous) << S.name() << " step " << step;
      previous = now;
    }
  }
  EXPECT_THROW(PreconditionedChebyshevSmoother(ChebyshevSmoother::Parameters{0, 30.0, 1.1, 10},
                                               std::make_unique<SchwarzPreconditioner>()),
               ConfigError);
  EXPECT_THROW(PreconditionedChebyshevSmoother(ChebyshevSmoother::Parameters{}, nullptr),
               InvalidInput);
  SchwarzPreconditioner M;
  EXPECT_THROW(M.setup(CsrMatrix::from_coo(backend, A.at_order(1)->assembled_matrix())),
               NotSupported);
}

/// The fourth-kind Chebyshev smoother (Lottes 2023) on a 1D Laplacian with Jacobi: one
/// smoothing step from a random x equals the recurrence computed here on the host (d_0 =
/// 4 / (3 rho) D^-1 r_0, d_i = (2i - 1) / (2i + 3) d_{i-1} + (8i + 4) / ((2i + 3) rho) D^-1 r_i,
/// rho = 1.1 lambda_max), for degrees 1 to 4; the error of b = 0 shrinks at every step; the
/// Jacobi Chebyshev smoother rejects the fourth kind.
TEST(SemSchwarz, FourthKindChebyshevFollowsLottesRecurrence) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int n = 40;
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<double> values;
  for (int i = 0; i < n; ++i) {
    for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j) {
      col_idx.push_back(j);
      values.push_back(i == j ? 2.0 + 0.01 * i : -1.0);
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  const CsrMatrix A = CsrMatrix::from_host(backend, n, n, row_ptr, col_idx, values);
  auto multiply = [&](const std::vector<double>& x) {
    std::vector<double> y(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) y[i] += values[q] * x[col_idx[q]];
    return y;
  };
  const std::vector<double> b = test::random_vector(n, seed), x0 = test::random_vector(n, seed + 1);
  for (int degree = 1; degree <= 4; ++degree) {
    SCOPED_TRACE(degree);
    ChebyshevSmoother::Parameters p{degree, 30.0, 1.1, 10};
    p.kind = ChebyshevSmoother::Kind::fourth;
    PreconditionedChebyshevSmoother S(p, std::make_unique<JacobiPreconditioner>());
    S.setup(A);
    const double rho = 1.1 * S.lambda_max();
    std::vector<double> x = x0, r = b, d(n);
    const std::vector<double> ax = multiply(x);
    for (int i = 0; i < n; ++i) r[i] = b[i] - ax[i];
    for (int k = 0; k < degree; ++k) {
      if (k > 0) {
        const std::vector<double> ad = multiply(d);
        for (int i = 0; i < n; ++i) r[i] -= ad[i];
      }
      const double a = k == 0 ? 4.0 / (3.0 * rho) : (8.0 * k + 4.0) / ((2.0 * k + 3.0) * rho);
      const double c = k == 0 ? 0.0 : (2.0 * k - 1.0) / (2.0 * k + 3.0);
      for (int i = 0; i < n; ++i) {
        d[i] = a * r[i] / (2.0 + 0.01 * i) + c * d[i];
        x[i] += d[i];
      }
    }
    Vector xv = Vector::from_host(backend, x0);
    S.smooth(Vector::from_host(backend, b), xv, false);
    const std::vector<double> got = xv.to_host();
    double error = 0.0;
    for (int i = 0; i < n; ++i) error = std::max(error, std::abs(got[i] - x[i]));
    EXPECT_LT(error, 1e-12 * max_abs(x));
    // From x = 0: x_is_zero gives the step of an explicit zero x.
    Vector zero_given = Vector::constant(backend, n, 0.0), zero_taken(backend, n);
    S.smooth(Vector::from_host(backend, b), zero_given, false);
    S.smooth(Vector::from_host(backend, b), zero_taken, true);
    const std::vector<double> given = zero_given.to_host(), taken = zero_taken.to_host();
    double gap = 0.0;
    for (int i = 0; i < n; ++i) gap = std::max(gap, std::abs(given[i] - taken[i]));
    EXPECT_LT(gap, 1e-13 * max_abs(given));
    EXPECT_EQ(S.name(), "chebyshev4(jacobi)");
    // b = 0: the error contracts (|1 - lambda p(lambda)| < 1 on (0, rho]).
    Vector e = Vector::from_host(backend, x0);
    const Vector zero = Vector::constant(backend, n, 0.0);
    double previous = norm2(e);
    for (int step = 0; step < 3; ++step) {
      S.smooth(zero, e, false);
      EXPECT_LT(norm2(e), previous);
      previous = norm2(e);
    }
  }
  ChebyshevSmoother::Parameters fourth;
  fourth.kind = ChebyshevSmoother::Kind::fourth;
  EXPECT_THROW(ChebyshevSmoother{fourth}, ConfigError);
}

}  // namespace
}  // namespace kryflow::sem
