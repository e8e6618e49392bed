// Multiplicative Schwarz on vertex patches: the patches are the 2 x 2 x 2 elements around the
// interior vertices in any element orientation, colored so that patches of one color share no
// point; one step is exact on one affine patch; the forward and backward sweeps are adjoint;
// the backend agrees with the reference; the per-patch damping keeps the sweeps convergent on
// Kershaw meshes; meshes without patches for every unknown are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/sem/schwarz.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

using test::dot;
using test::max_abs;

std::array<double, 3> point(const SemPoissonOperator& A, std::int64_t g) {
  const auto& x = A.coordinates();
  return {x[3 * g], x[3 * g + 1], x[3 * g + 2]};
}

VertexPatchSmoother::Parameters in(Precision precision) {
  VertexPatchSmoother::Parameters p;
  p.precision = precision;
  return p;
}

/// The corners of an nx x ny x nz box of affine elements with the given plane positions.
std::vector<double> graded_box(const std::vector<double>& xs, const std::vector<double>& ys,
                               const std::vector<double>& zs) {
  std::vector<double> vertices;
  for (std::size_t k = 0; k + 1 < zs.size(); ++k) {
    for (std::size_t j = 0; j + 1 < ys.size(); ++j) {
      for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
        for (int v = 0; v < 8; ++v) {
          vertices.push_back(xs[i + (v & 1)]);
          vertices.push_back(ys[j + ((v >> 1) & 1)]);
          vertices.push_back(zs[k + ((v >> 2) & 1)]);
        }
      }
    }
  }
  return vertices;
}

/// One smoothing step from x on the backend: the new x.
std::vector<double> smooth(const Smoother& S, const Backend& backend, const std::vector<double>& b,
                           const std::vector<double>* x0) {
  const Vector bv = Vector::from_host(backend, b);
  Vector x = x0 != nullptr ? Vector::from_host(backend, *x0) : Vector(backend, b.size());
  S.smooth(bv, x, x0 == nullptr);
  return x.to_host();
}

/// A box of nx x ny x nz elements under the Kershaw map with eps = 0.3.
HexMesh kershaw_box(int nx, int ny, int nz) {
  BoxOptions kershaw;
  kershaw.kershaw_epsilon = 0.3;
  return box_mesh(nx, ny, nz, kershaw);
}

/// |x'My - y'Mx| / (|x| |My|) for M = `second` after `first`, each one step (the first from 0),
/// on random x and y of A's rows.
double asymmetry(const Smoother& first, const Smoother& second, const Backend& backend,
                 std::size_t n, std::uint64_t seed) {
  const std::vector<double> x = test::random_vector(n, seed), y = test::random_vector(n, seed + 1);
  auto M = [&](const std::vector<double>& b) {
    const std::vector<double> half = smooth(first, backend, b, nullptr);
    return smooth(second, backend, b, &half);
  };
  const std::vector<double> Mx = M(x), My = M(y);
  return std::abs(dot(x, My) - dot(y, Mx)) / std::sqrt(dot(x, x) * dot(My, My));
}

/// On an affine box whose elements have every orientation, the patches are the interior
/// vertices' 2 x 2 x 2 elements: the box center is the vertex, each box axis runs along one
/// fixed direction through the whole patch, the box's inner (2p - 1)^3 points are distinct
/// unknowns and its boundary layer has none; the 8 lattice colors hold patches with no common
/// point, and every unknown lies in some patch.
TEST(VertexPatch, PatchesAreTheElementsAroundInteriorVerticesInEveryOrientation) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<double> vertices = test::unit_cube_box(4, 3, 3, 0.0);
  test::reorient_hex_elements(vertices, seed, /*proper=*/true);
  const int order = 3, M = 2 * order + 1;
  const SemPoissonOperator A(Backend::reference(), 36, vertices, order);
  const VertexPatchSmoother::Patches patches = VertexPatchSmoother::build_patches(A);
  ASSERT_EQ(patches.box, M);
  EXPECT_TRUE(patches.lattice_colors);
  ASSERT_EQ(patches.color_offsets.size(), 9u);
  const std::int64_t count = patches.color_offsets.back();
  EXPECT_EQ(count, 3 * 2 * 2);  // the interior vertices
  const std::int64_t M3 = std::int64_t{M} * M * M;
  auto at = [M](int i, int j, int k) { return (std::int64_t{k} * M + j) * M + i; };
  std::vector<int> covered(static_cast<std::size_t>(A.num_rows()), 0);
  for (int c = 0; c < 8; ++c) {
    std::set<index_t> color_points;
    for (std::int64_t q = patches.color_offsets[c]; q < patches.color_offsets[c + 1]; ++q) {
      const index_t* box = patches.box_to_global.data() + q * M3;
      const auto center = point(A, patches.vertex[q]);
      EXPECT_EQ(box[at(order, order, order)], patches.vertex[q]);
      std::set<index_t> own;
      for (int k = 0; k < M; ++k) {
        for (int j = 0; j < M; ++j) {
          for (int i = 0; i < M; ++i) {
            const index_t g = box[at(i, j, k)];
            const bool inner = i > 0 && j > 0 && k > 0 && i < M - 1 && j < M - 1 && k < M - 1;
            if (!inner) {
              EXPECT_EQ(g, -1);
              continue;
            }
            ASSERT_GE(g, 0);
            EXPECT_TRUE(own.insert(g).second) << "point twice in patch " << q;
            EXPECT_TRUE(color_points.insert(g).second) << "point in two patches of color " << c;
            ++covered[g];
            // Within the 2 x 2 x 2 elements (h = 1/4 or 1/3) around the vertex.
            const auto x = point(A, g);
            for (int d = 0; d < 3; ++d) EXPECT_LE(std::abs(x[d] - center[d]), 1.0 / 3 + 1e-12);
          }
        }
      }
      // Each box axis is one direction: consecutive points differ along it, positively.
      for (int a = 0; a < 3; ++a) {
        std::array<int, 3> step{0, 0, 0};
        step[a] = 1;
        const auto x1 = point(A, box[at(order + step[0], order + step[1], order + step[2])]);
        std::array<double, 3> u{};
        for (int d = 0; d < 3; ++d) u[d] = x1[d] - center[d];
        for (int k = 1; k + step[2] < M - 1; ++k) {
          for (int j = 1; j + step[1] < M - 1; ++j) {
            for (int i = 1; i + step[0] < M - 1; ++i) {
              const auto xa = point(A, box[at(i, j, k)]);
              const auto xb = point(A, box[at(i + step[0], j + step[1], k + step[2])]);
              std::array<double, 3> w{};
              for (int d = 0; d < 3; ++d) w[d] = xb[d] - xa[d];
              const double cross = std::abs(u[1] * w[2] - u[2] * w[1]) +
                                   std::abs(u[2] * w[0] - u[0] * w[2]) +
                                   std::abs(u[0] * w[1] - u[1] * w[0]);
              EXPECT_LT(cross, 1e-12);
              EXPECT_GT(u[0] * w[0] + u[1] * w[1] + u[2] * w[2], 0.0);
            }
          }
        }
      }
    }
  }
  for (std::int64_t g = 0; g < A.num_rows(); ++g) {
    if (A.dirichlet()[g] == 0) EXPECT_GE(covered[g], 1) << "global point " << g;
  }
}

/// Two 3 x 3 x 3 blocks of elements that touch along one edge only: the lattice parities cannot
/// be carried from one block to the other through faces, so the patches are colored greedily;
/// patches of one color still share no point, every unknown lies in a patch, and a forward and
/// a backward step reduce the residual.
TEST(VertexPatch, GreedyColorsWhereNoVertexLatticeSpansTheMesh) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> planes{0.0, 1.0 / 3, 2.0 / 3, 1.0};
  const std::vector<double> shifted{1.0, 4.0 / 3, 5.0 / 3, 2.0};
  std::vector<double> vertices = graded_box(planes, planes, planes);
  const std::vector<double> second = graded_box(shifted, shifted, planes);
  vertices.insert(vertices.end(), second.begin(), second.end());
  const int order = 2, M = 2 * order + 1;
  const SemPoissonOperator A(backend, 54, vertices, order);
  const VertexPatchSmoother::Patches patches = VertexPatchSmoother::build_patches(A);
  EXPECT_FALSE(patches.lattice_colors);
  EXPECT_EQ(patches.color_offsets.back(), 2 * 8);  // the interior vertices of both blocks
  const std::int64_t M3 = std::int64_t{M} * M * M;
  std::vector<int> covered(static_cast<std::size_t>(A.num_rows()), 0);
  for (std::size_t c = 0; c + 1 < patches.color_offsets.size(); ++c) {
    std::set<index_t> color_points;
    for (std::int64_t q = patches.color_offsets[c]; q < patches.color_offsets[c + 1]; ++q) {
      for (std::int64_t b = 0; b < M3; ++b) {
        const index_t g = patches.box_to_global[q * M3 + b];
        if (g < 0) continue;
        EXPECT_TRUE(color_points.insert(g).second) << "point in two patches of color " << c;
        ++covered[g];
      }
    }
  }
  for (std::int64_t g = 0; g < A.num_rows(); ++g) {
    if (A.dirichlet()[g] == 0) EXPECT_GE(covered[g], 1) << "global point " << g;
  }
  VertexPatchSmoother forward;
  forward.setup(A);
  const auto backward = forward.adjoint();
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector b = Vector::from_host(backend, test::random_vector(n, seed));
  Vector x(backend, n), r(backend, n);
  forward.smooth(b, x, true);
  backward->smooth(b, x, false);
  A.residual(b, x, r);
  EXPECT_LT(norm2(r), 0.5 * norm2(b));
}

/// 2 x 2 x 2 affine elements of unequal sizes, with Dirichlet faces: one patch holds every
/// unknown and its separable problem is the operator, so one step from x = 0 solves A x = b.
TEST(VertexPatch, OneStepIsExactOnOneAffinePatch) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<double> vertices = graded_box({0.0, 0.3, 1.0}, {0.0, 1.2, 2.0}, {0.0, 0.1, 0.5});
  test::reorient_hex_elements(vertices, seed, /*proper=*/true);
  for (int order : {2, 5, 7}) {
    SCOPED_TRACE(order);
    const SemPoissonOperator A(backend, 8, vertices, order);
    std::vector<double> u = test::random_vector(static_cast<std::size_t>(A.num_rows()), seed);
    const Vector uv = Vector::from_host(backend, u);
    Vector bv(backend, u.size());
    A.apply(uv, bv);
    VertexPatchSmoother S(in(Precision::float64));
    S.setup(A);
    EXPECT_EQ(S.num_patches(), 1);
    ASSERT_EQ(S.patch_eigenvalues().size(), 1u);
    EXPECT_NEAR(S.patch_eigenvalues()[0], 1.0, 1e-8);
    const std::vector<double> x = smooth(S, backend, bv.to_host(), nullptr);
    double error = 0.0;
    for (std::size_t g = 0; g < u.size(); ++g) error = std::max(error, std::abs(x[g] - u[g]));
    EXPECT_LT(error, 1e-9 * max_abs(u));
  }
}

/// M = one backward step after one forward step from x = 0 (the symmetric multiplicative
/// method, as a pre- and post-smoothing pair): x'My = y'Mx in float64, with the per-patch
/// damping of a deformed mesh.
TEST(VertexPatch, BackwardStepIsTheAdjointOfTheForwardStep) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const SemPoissonOperator A(backend, 36, test::unit_cube_box(4, 3, 3, 0.2), 4);
  VertexPatchSmoother forward(in(Precision::float64));
  forward.setup(A);
  const auto backward = forward.adjoint();
  EXPECT_EQ(backward->name(), "vertex_patch_schwarz(backward, float64)");
  const auto n = static_cast<std::size_t>(A.num_rows());
  EXPECT_LT(asymmetry(forward, *backward, backend, n, seed), 1e-11);
  // Not symmetric with the forward step twice.
  EXPECT_GT(asymmetry(forward, forward, backend, n, seed), 1e-8);
}

/// A step from a random x on the backend under test against the reference, on a deformed and
/// a Kershaw box, in float64 and float32; the per-patch eigenvalue estimates too.
TEST(VertexPatch, BackendAgreesWithTheReference) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HexMesh mesh = kershaw_box(6, 4, 4);
  for (int order : {3, 7}) {
    for (const bool deformed : {true, false}) {
      SCOPED_TRACE(std::to_string(order) + (deformed ? " deformed" : " kershaw"));
      const std::vector<double> vertices =
          deformed ? test::unit_cube_box(4, 3, 3, 0.2) : mesh.vertices;
      const std::int64_t elements = deformed ? 36 : mesh.num_elements;
      const SemPoissonOperator A(backend, elements, vertices, order);
      const SemPoissonOperator R(Backend::reference(), elements, vertices, order);
      const auto n = static_cast<std::size_t>(A.num_rows());
      const std::vector<double> b = test::random_vector(n, seed);
      const std::vector<double> x0 = test::random_vector(n, seed + 1);
      for (Precision precision : {Precision::float64, Precision::float32}) {
        VertexPatchSmoother S(in(precision)), SR(in(precision));
        S.setup(A);
        SR.setup(R);
        ASSERT_EQ(S.num_patches(), SR.num_patches());
        const std::vector<double>& lambda = S.patch_eigenvalues();
        const std::vector<double>& lambda_r = SR.patch_eigenvalues();
        ASSERT_EQ(lambda.size(), lambda_r.size());
        ASSERT_EQ(static_cast<std::int64_t>(lambda.size()), S.num_patches());
        ASSERT_FALSE(lambda.empty());
        for (std::size_t q = 0; q < lambda.size(); ++q) {
          EXPECT_NEAR(lambda[q], lambda_r[q],
                      (precision == Precision::float32 ? 1e-3 : 1e-9) * lambda_r[q]);
        }
        const std::vector<double> x = smooth(S, backend, b, &x0);
        const std::vector<double> xr = smooth(SR, Backend::reference(), b, &x0);
        double error = 0.0;
        for (std::size_t g = 0; g < n; ++g) error = std::max(error, std::abs(x[g] - xr[g]));
        EXPECT_LT(error, (precision == Precision::float32 ? 1e-3 : 1e-10) * max_abs(xr))
            << S.name();
      }
    }
  }
}

/// On a Kershaw box the separable local problems are poor (estimated lambda_P up to about 10 at
/// p = 5): the damped steps reduce the residual at every symmetric pair of steps, where the
/// undamped ones (eigen_iterations 0) diverge (the residual grows past its start, or overflows).
TEST(VertexPatch, DampingKeepsTheStepsConvergentOnKershawMeshes) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HexMesh mesh = kershaw_box(6, 4, 4);
  const SemPoissonOperator A(backend, mesh.num_elements, mesh.vertices, 5);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector b = Vector::from_host(backend, test::random_vector(n, seed));
  for (int iterations : {10, 0}) {
    SCOPED_TRACE(iterations);
    VertexPatchSmoother::Parameters p;
    p.eigen_iterations = iterations;
    VertexPatchSmoother forward(p);
    forward.setup(A);
    const auto backward = forward.adjoint();
    if (iterations > 0) {
      const auto& lambda = forward.patch_eigenvalues();
      EXPECT_GT(*std::max_element(lambda.begin(), lambda.end()), 2.0);
    }
    Vector x(backend, n), r(backend, n);
    fill(x, 0.0);
    double last = norm2(b);
    bool decreasing = true;
    for (int step = 0; step < 6; ++step) {
      forward.smooth(b, x, false);
      backward->smooth(b, x, false);
      A.residual(b, x, r);
      const double now = norm2(r);
      decreasing = decreasing && now < last;
      last = now;
    }
    if (iterations > 0) {
      EXPECT_TRUE(decreasing);
    } else {
      EXPECT_FALSE(last <= 10.0 * norm2(b)) << last;  // grown, or overflowed to Inf or NaN
    }
  }
}

TEST(VertexPatch, MisuseIsAClearError) {
  const Backend backend = test::backend_under_test();
  // A Neumann boundary: the boundary points are unknowns that no interior vertex's patch holds.
  const SemPoissonOperator neumann(backend, 27, test::unit_cube_box(3, 3, 3, 0.0), 2,
                                   /*dirichlet_boundary=*/false);
  VertexPatchSmoother S;
  {
    Vector b(backend, static_cast<std::size_t>(neumann.num_rows()));
    Vector x(backend, b.size());
    EXPECT_THROW(S.smooth(b, x, true), InvalidInput);  // before setup
  }
  // The boundary points lie inside no patch: with uncovered_weight 0 that is an error naming
  // the first of them.
  VertexPatchSmoother::Parameters strict;
  strict.uncovered_weight = 0.0;
  VertexPatchSmoother S0(strict);
  try {
    S0.setup(neumann);
    ADD_FAILURE() << "no NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("lies inside no vertex patch"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)S.adjoint(), InvalidInput);
  const CsrMatrix csr = CsrMatrix::from_host(backend, 1, 1, {0, 1}, {0}, {2.0});
  EXPECT_THROW(S.setup(csr), NotSupported);
  VertexPatchSmoother::Parameters p;
  p.relaxation = 0.0;
  EXPECT_THROW(VertexPatchSmoother{p}, ConfigError);
  p = {};
  p.damping_bound = 2.0;
  EXPECT_THROW(VertexPatchSmoother{p}, ConfigError);
  p = {};
  p.eigen_iterations = -1;
  EXPECT_THROW(VertexPatchSmoother{p}, ConfigError);
  for (double w : {-0.1, 1.5}) {
    p = {};
    p.uncovered_weight = w;
    EXPECT_THROW(VertexPatchSmoother{p}, ConfigError);
  }
  const SemPoissonOperator A(backend, 27, test::unit_cube_box(3, 3, 3, 0.1), 2);
  S.setup(A);
  Vector b(backend, static_cast<std::size_t>(A.num_rows()));
  Vector shorter(backend, b.size() - 1);
  EXPECT_THROW(S.smooth(b, shorter, true), DimensionMismatch);
}

/// Unknowns inside no patch (irregular vertices, Neumann boundaries) are relaxed by damped
/// Jacobi. One element with Dirichlet boundaries has no interior vertex, so no patch: one forward
/// step from x = 0 is x = w D^-1 b at the unknowns and x = b at the Dirichlet points, D from
/// A.diagonal(); then from that x, x + w D^-1 (b - A x).
TEST(VertexPatch, UnknownsInsideNoPatchAreRelaxedByJacobi) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const SemPoissonOperator A(backend, 1, test::unit_cube_box(1, 1, 1, 0.1), 4);
  VertexPatchSmoother::Parameters parameters = in(Precision::float64);
  parameters.uncovered_weight = 0.6;
  VertexPatchSmoother S(parameters);
  S.setup(A);
  const auto n = static_cast<std::size_t>(A.num_rows());
  EXPECT_EQ(S.num_patches(), 0);
  EXPECT_EQ(S.num_uncovered(), 27);  // the 3^3 interior points of one element at p = 4
  EXPECT_EQ(S.name(), "vertex_patch_schwarz(forward, float64, 27 points by Jacobi)");
  Vector dv(backend, n);
  A.diagonal(dv);
  const std::vector<double> d = dv.to_host();
  const std::vector<double> b = test::random_vector(n, seed);
  const std::vector<double> x1 = smooth(S, backend, b, nullptr);
  const std::vector<double> dirichlet(A.dirichlet().begin(), A.dirichlet().end());
  std::vector<double> expected(n);
  for (std::size_t g = 0; g < n; ++g) expected[g] = dirichlet[g] != 0.0 ? b[g] : 0.6 * b[g] / d[g];
  for (std::size_t g = 0; g < n; ++g) EXPECT_NEAR(x1[g], expected[g], 1e-14 * max_abs(expected));
  // A second step from x1: the Jacobi update of the residual of x1.
  const std::vector<double> x2 = smooth(S, backend, b, &x1);
  Vector Ax(backend, n);
  A.apply(Vector::from_host(backend, x1), Ax);
  const std::vector<double> ax = Ax.to_host();
  for (std::size_t g = 0; g < n; ++g) {
    const double r = b[g] - ax[g];
    expected[g] = x1[g] + (dirichlet[g] != 0.0 ? r : 0.6 * r / d[g]);
  }
  for (std::size_t g = 0; g < n; ++g) EXPECT_NEAR(x2[g], expected[g], 1e-12 * max_abs(expected));
}

/// On a mesh with irregular vertices (the Ethier-Steinman mesh of the corpus) and on a box with
/// Neumann faces, the Jacobi points are relaxed after the colors in the forward sweep and before
/// them in the backward one: backward after forward stays symmetric (x'My = y'Mx in float64).
TEST(VertexPatch, BackwardStepStaysTheAdjointWithJacobiPoints) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto path = test::nek_mesh_file("nekrs_ethier/ethier");
  ASSERT_FALSE(path.empty());
  const HexMesh mesh = read_re2(path);
  const SemPoissonOperator ethier(backend, mesh.num_elements, mesh.vertices, 3);
  // Every face Neumann: the boundary points lie in no patch (A is singular; M stays symmetric).
  const SemPoissonOperator neumann(backend, 27, test::unit_cube_box(3, 3, 3, 0.15), 3,
                                   /*dirichlet_boundary=*/false);
  for (const SemPoissonOperator* A : {&ethier, &neumann}) {
    VertexPatchSmoother forward(in(Precision::float64));
    forward.setup(*A);
    EXPECT_GT(forward.num_uncovered(), 0);
    EXPECT_GT(forward.num_patches(), 0);
    const auto backward = forward.adjoint();
    const auto n = static_cast<std::size_t>(A->num_rows());
    EXPECT_LT(asymmetry(forward, *backward, backend, n, seed), 1e-11);
  }
}

/// The fused step (each patch's residual from its 8 elements' Laplacians) against the separate
/// one (one operator application per color), forward and backward, from a random x: the same
/// x to rounding, on a deformed box, a Kershaw box and the Ethier mesh (irregular vertices,
/// Jacobi points), in float64 and float32 local solves and with the float-arithmetic operator.
TEST(VertexPatch, FusedStepEqualsTheSeparateStep) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HexMesh box = kershaw_box(4, 4, 3);
  const auto path = test::nek_mesh_file("nekrs_ethier/ethier");
  ASSERT_FALSE(path.empty());
  const HexMesh ethier = read_re2(path);
  struct Case {
    const char* name;
    std::int64_t elements;
    std::vector<double> vertices;
    int order;
  };
  const std::vector<Case> cases = {{"deformed", 36, test::unit_cube_box(4, 3, 3, 0.2), 5},
                                   {"deformed, p = 7", 18, test::unit_cube_box(3, 3, 2, 0.2), 7},
                                   {"kershaw", box.num_elements, box.vertices, 4},
                                   {"ethier", ethier.num_elements, ethier.vertices, 3}};
  for (const Case& c : cases) {
    for (Precision precision : {Precision::float64, Precision::float32}) {
      for (Precision arithmetic : {Precision::float64, Precision::float32}) {
        SCOPED_TRACE(std::string(c.name) + ", local " + std::string(to_string(precision)) +
                     ", operator " + std::string(to_string(arithmetic)));
        const SemPoissonOperator built(backend, c.elements, c.vertices, c.order);
        const std::unique_ptr<SemPoissonOperator> A = built.with_arithmetic(arithmetic);
        VertexPatchSmoother::Parameters separate = in(precision);
        VertexPatchSmoother::Parameters fused = separate;
        fused.fused = true;
        VertexPatchSmoother S(separate), F(fused);
        S.setup(*A);
        F.setup(*A);
        const auto n = static_cast<std::size_t>(A->num_rows());
        const std::vector<double> b = test::random_vector(n, seed);
        const std::vector<double> x0 = test::random_vector(n, seed + 1);
        const auto Sb = S.adjoint();
        const auto Fb = F.adjoint();
        // float local solves, or a float operator (on cuda the separate step's vertex kernel
        // forms the metric in float from the corners, the fused one rounds the stored terms).
        const double tolerance =
            precision == Precision::float32 || arithmetic == Precision::float32 ? 1e-5 : 1e-11;
        for (const bool from_zero : {false, true}) {
          const std::vector<double>* start = from_zero ? nullptr : &x0;
          const std::vector<double> hs = smooth(S, backend, b, start);
          const std::vector<double> hf = smooth(F, backend, b, start);
          const std::vector<double> xs = smooth(*Sb, backend, b, &hs);
          const std::vector<double> xf = smooth(*Fb, backend, b, &hf);
          double error = 0.0;
          for (std::size_t g = 0; g < n; ++g) error = std::max(error, std::abs(xs[g] - xf[g]));
          EXPECT_LT(error, tolerance * max_abs(xs)) << (from_zero ? "from 0" : "from x0");
        }
      }
    }
  }
}

}  // namespace
}  // namespace kryflow::sem
