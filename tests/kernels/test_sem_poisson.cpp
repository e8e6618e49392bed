// The matrix-free SEM Poisson operator: symmetric, positive definite with the Dirichlet mask,
// exact on linear functions of affine meshes, reference and backend bit for bit, and spectral
// convergence of CG to a manufactured solution on a deformed box.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

/// An n^3 box of [0,1]^3 (test::unit_cube_box; amplitude 0: affine elements).
std::vector<double> unit_box(int n, double amplitude) {
  return test::unit_cube_box(n, n, n, amplitude);
}

double dot_host(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> apply_host(const SemPoissonOperator& A, const std::vector<double>& x) {
  const Backend& backend = A.backend();
  const Vector xv = Vector::from_host(backend, x);
  Vector yv(backend, x.size());
  A.apply(xv, yv);
  return yv.to_host();
}

/// The backend under test and, in the host test executable, the reference backend too.
std::vector<Backend> backends_with_reference() {
  std::vector<Backend> backends = {test::backend_under_test()};
#ifndef KRYFLOW_TEST_BACKEND_IS_CUDA
  backends.push_back(Backend::reference());
#endif
  return backends;
}

TEST(SemPoisson, SymmetricAndPositiveDefiniteOnADeformedMesh) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  for (int p : {2, 5}) {
    SCOPED_TRACE(p);
    const std::vector<double> vertices = test::hex_box_vertices(3, 2, 2);
    const SemPoissonOperator A(backend, 12, vertices, p);
    const auto n = static_cast<std::size_t>(A.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + static_cast<std::uint64_t>(p));
    const std::vector<double> y = test::random_vector(n, seed + 7 + static_cast<std::uint64_t>(p));
    const std::vector<double> Ax = apply_host(A, x);
    const std::vector<double> Ay = apply_host(A, y);
    const double xAy = dot_host(x, Ay);
    const double yAx = dot_host(y, Ax);
    EXPECT_NEAR(xAy, yAx, 1e-12 * (std::abs(xAy) + dot_host(x, Ax)));
    EXPECT_GT(dot_host(x, Ax), 0.0);
    EXPECT_GT(dot_host(y, Ay), 0.0);
  }
}

TEST(SemPoisson, LinearFunctionsAreInTheKernelOnAffineMeshes) {
  // Without a Dirichlet mask, A u = 0 at interior points for u linear in x, y, z (the weak
  // Laplacian of a linear function has only boundary terms; GLL quadrature is exact here).
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator A(backend, 27, unit_box(3, 0.0), 4, /*dirichlet_boundary=*/false);
  const auto n = static_cast<std::size_t>(A.num_rows());
  std::vector<double> u(n);
  const std::vector<double>& X = A.coordinates();
  for (std::size_t g = 0; g < n; ++g)
    u[g] = 1.0 + 2.0 * X[3 * g] - X[3 * g + 1] + 0.5 * X[3 * g + 2];
  const std::vector<double> Au = apply_host(A, u);
  const std::vector<double> scale = apply_host(A, test::random_vector(n, 3));
  double largest = 0.0;
  for (double s : scale) largest = std::max(largest, std::abs(s));
  const std::vector<char>& boundary = A.numbering().on_boundary;
  int interior_nonzero = 0;
  int boundary_nonzero = 0;
  for (std::size_t g = 0; g < n; ++g) {
    if (boundary[g] != 0) {
      if (std::abs(Au[g]) > 1e-8 * largest) ++boundary_nonzero;
    } else if (std::abs(Au[g]) > 1e-11 * largest) {
      ++interior_nonzero;
    }
  }
  EXPECT_EQ(interior_nonzero, 0);
  EXPECT_GT(boundary_nonzero, 0);  // the flux through the boundary is there
}

TEST(SemPoisson, BackendMatchesReferenceBitForBit) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::hex_box_vertices(2, 3, 2);
  const SemPoissonOperator reference(Backend::reference(), 12, vertices, 6);
  SemPoissonOptions options;
  options.assembly = SemAssembly::sorted;  // the deterministic one
  // A kernel that reads the stored metric terms (the automatic one at p = 6 is vertex_lines,
  // which recomputes them: within 1e-12, EveryKernelAndAssemblyMatchesReference).
  options.element_kernel = SemElementKernel::staged;
  const SemPoissonOperator A(test::backend_under_test(), 12, vertices, 6, options);
  const std::vector<double> x = test::random_vector(static_cast<std::size_t>(A.num_rows()), seed);
  EXPECT_EQ(apply_host(A, x), apply_host(reference, x));
}

/// Every cuda element kernel and assembly (on the host backends the options are ignored) on
/// deformed elements, masked and unmasked: sorted assembly gives the reference's
/// bits, atomic assembly agrees within 1e-14 relative (its sums are added in another order),
/// the vertex and vertex_lines kernels within 1e-12 (their metric terms are recomputed in another
/// order).
TEST(SemPoisson, EveryKernelAndAssemblyMatchesReference) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::hex_box_vertices(3, 2, 2);
  for (int p : {1, 2, 3, 5, 7, 9, 10, 11, 15}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    const SemPoissonOperator reference(Backend::reference(), 12, vertices, p);
    const auto n = static_cast<std::size_t>(reference.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + static_cast<std::uint64_t>(p));
    const std::vector<double> expected = apply_host(reference, x);
    const Vector xr = Vector::from_host(Backend::reference(), x);
    Vector yr(Backend::reference(), n);
    reference.apply_unmasked(xr, yr);
    const std::vector<double> expected_unmasked = yr.to_host();
    // The host backends ignore the kernel options: one combination is enough there.
    const bool device = test::backend_under_test().is_device();
    for (SemElementKernel kernel :
         {SemElementKernel::shared, SemElementKernel::layered, SemElementKernel::staged,
          SemElementKernel::pipelined, SemElementKernel::vertex, SemElementKernel::vertex_lines}) {
      if ((kernel == SemElementKernel::shared || kernel == SemElementKernel::vertex_lines) &&
          p > 9) {
        continue;
      }
      if (!device && kernel != SemElementKernel::layered) continue;
      for (SemAssembly assembly : {SemAssembly::sorted, SemAssembly::atomic}) {
        if (!device && assembly != SemAssembly::sorted) continue;
        SCOPED_TRACE(std::string(to_string(kernel)) + ", " + to_string(assembly));
        SemPoissonOptions options;
        options.element_kernel = kernel;
        options.assembly = assembly;
        const SemPoissonOperator A(test::backend_under_test(), 12, vertices, p, options);
        const Vector xv = Vector::from_host(A.backend(), x);
        Vector yv(A.backend(), n);
        A.apply(xv, yv);
        const std::vector<double> y = yv.to_host();
        A.apply_unmasked(xv, yv);
        const std::vector<double> y_unmasked = yv.to_host();
        const bool recomputed =
            A.backend().is_device() &&
            (kernel == SemElementKernel::vertex || kernel == SemElementKernel::vertex_lines);
        const bool exact =
            (assembly == SemAssembly::sorted || !A.backend().is_device()) && !recomputed;
        if (recomputed) {
          EXPECT_LT(test::relative_max_difference(y, expected), 1e-12);
          EXPECT_LT(test::relative_max_difference(y_unmasked, expected_unmasked), 1e-12);
          // Not the stored factors' bits: the terms are recomputed.
        } else if (exact) {
          EXPECT_EQ(y, expected);
          EXPECT_EQ(y_unmasked, expected_unmasked);
        } else {
          EXPECT_LT(test::relative_max_difference(y, expected), 1e-14);
          EXPECT_LT(test::relative_max_difference(y_unmasked, expected_unmasked), 1e-14);
        }
      }
    }
  }
}

/// Calls check(A, p, ordered) for the operator on a deformed 3 x 2 x 2 box at p = 3 and 7 with
/// each of `kernels`, both assemblies and each of `arithmetics` (the host backends: layered and
/// sorted only); `ordered` when its assembly sums in a fixed order (bit-for-bit comparisons).
template <class Check>
void for_each_operator_variant(std::initializer_list<SemElementKernel> kernels,
                               std::initializer_list<Precision> arithmetics, Check&& check) {
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.15);
  const bool device = test::backend_under_test().is_device();
  for (int p : {3, 7}) {
    for (SemElementKernel kernel : kernels) {
      if (!device && kernel != SemElementKernel::layered) continue;
      for (SemAssembly assembly : {SemAssembly::sorted, SemAssembly::atomic}) {
        if (!device && assembly != SemAssembly::sorted) continue;
        for (Precision arithmetic : arithmetics) {
          SCOPED_TRACE("p = " + std::to_string(p) + ", " + to_string(kernel) + ", " +
                       to_string(assembly) + ", " + std::string(to_string(arithmetic)));
          SemPoissonOptions options;
          options.element_kernel = kernel;
          options.assembly = assembly;
          options.arithmetic = arithmetic;
          const SemPoissonOperator A(test::backend_under_test(), 12, vertices, p, options);
          check(A, p, assembly == SemAssembly::sorted || !device);
        }
      }
    }
  }
}

/// got equals want bit for bit where the assembly sums in a fixed order, else to rounding.
void expect_assembled_equal(const std::vector<double>& got, const std::vector<double>& want,
                            bool ordered) {
  if (ordered) {
    EXPECT_EQ(got, want);
  } else {
    EXPECT_LT(test::relative_max_difference(got, want), 1e-13);
  }
}

/// y = alpha A x + y added by the assembly itself (apply with beta = 1) equals A x into a
/// separate vector followed by axpby: bit for bit with sorted assembly and on the host
/// backends, to rounding with the cuda atomic assembly; y + alpha x exactly at Dirichlet
/// points.
TEST(SemPoisson, AccumulatingApplicationEqualsProductThenAxpby) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  for_each_operator_variant(
      {SemElementKernel::shared, SemElementKernel::layered, SemElementKernel::staged,
       SemElementKernel::pipelined, SemElementKernel::vertex, SemElementKernel::vertex_lines},
      {Precision::float64}, [&](const SemPoissonOperator& A, int p, bool ordered) {
        const auto n = static_cast<std::size_t>(A.num_rows());
        const std::vector<double> x = test::random_vector(n, seed + 10 * p);
        const std::vector<double> y0 = test::random_vector(n, seed + 10 * p + 1);
        const Vector xv = Vector::from_host(A.backend(), x);
        Vector y = Vector::from_host(A.backend(), y0);
        A.apply(-0.75, xv, 1.0, y);
        Vector product(A.backend(), n);
        A.apply(xv, product);
        Vector expected = Vector::from_host(A.backend(), y0);
        axpby(-0.75, product, 1.0, expected);
        const std::vector<double> got = y.to_host();
        expect_assembled_equal(got, expected.to_host(), ordered);
        for (std::size_t g = 0; g < n; ++g) {
          if (A.dirichlet()[g]) ASSERT_EQ(got[g], -0.75 * x[g] + y0[g]) << "point " << g;
        }
        EXPECT_THROW(A.apply(-0.75, y, 1.0, y), InvalidInput);
      });
}

/// r = b - A x in one assembly pass (SemPoissonOperator::residual, b read where r is written)
/// equals the product then axpby: bit for bit where the assembly has a fixed order, to rounding
/// with the cuda atomic assembly; b - x exactly at Dirichlet points; b may be r or x itself; r's
/// old values are never read.
TEST(SemPoisson, ResidualEqualsProductThenAxpby) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  for_each_operator_variant(
      {SemElementKernel::shared, SemElementKernel::layered, SemElementKernel::vertex,
       SemElementKernel::vertex_lines},
      {Precision::float64, Precision::float32},
      [&](const SemPoissonOperator& A, int p, bool ordered) {
        const auto n = static_cast<std::size_t>(A.num_rows());
        const std::vector<double> x = test::random_vector(n, seed + 10 * p);
        const std::vector<double> b = test::random_vector(n, seed + 10 * p + 1);
        const Vector xv = Vector::from_host(A.backend(), x);
        const Vector bv = Vector::from_host(A.backend(), b);
        Vector r = Vector::from_host(A.backend(), std::vector<double>(n, std::nan("")));
        A.residual(bv, xv, r);
        Vector in_place = Vector::from_host(A.backend(), b);
        A.residual(in_place, xv, in_place);
        Vector expected(A.backend(), n);
        A.apply(xv, expected);
        axpby(1.0, bv, -1.0, expected);
        const std::vector<double> want = expected.to_host();
        for (const std::vector<double>& got : {r.to_host(), in_place.to_host()}) {
          expect_assembled_equal(got, want, ordered);
          for (std::size_t g = 0; g < n; ++g) {
            if (A.dirichlet()[g]) ASSERT_EQ(got[g], b[g] - x[g]) << "point " << g;
          }
        }
        EXPECT_THROW(A.residual(bv, r, r), InvalidInput);
        // b may be x itself: x - A x.
        Vector same(A.backend(), n);
        A.residual(xv, xv, same);
        Vector x_minus_ax(A.backend(), n);
        A.apply(xv, x_minus_ax);
        axpby(1.0, xv, -1.0, x_minus_ax);
        expect_assembled_equal(same.to_host(), x_minus_ax.to_host(), ordered);
      });
}

/// max_g |a_g - b_g| / max_g |b_g|.
double relative_inf_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t g = 0; g < a.size(); ++g) {
    difference = std::max(difference, std::abs(a[g] - b[g]));
    scale = std::max(scale, std::abs(b[g]));
  }
  return difference / scale;
}

/// The products a float-arithmetic operator gives on x: masked, unmasked, and accumulated
/// (y0 - 0.75 A x through apply with beta = 1).
struct Products {
  std::vector<double> masked, unmasked, accumulated;
};

Products products(const SemPoissonOperator& A, const std::vector<double>& x,
                  const std::vector<double>& y0) {
  const Vector xv = Vector::from_host(A.backend(), x);
  Vector yv(A.backend(), x.size());
  Products result;
  A.apply(xv, yv);
  result.masked = yv.to_host();
  A.apply_unmasked(xv, yv);
  result.unmasked = yv.to_host();
  Vector accumulated = Vector::from_host(A.backend(), y0);
  A.apply(-0.75, xv, 1.0, accumulated);
  result.accumulated = accumulated.to_host();
  return result;
}

/// Float element arithmetic (SemPoissonOptions::arithmetic float32) against the double
/// reference on a deformed mesh, p = 1..7 and 11, masked, unmasked and accumulated, on every
/// cuda element kernel and assembly (the host backends have one loop each): within
/// 1e-5 ||A x||_inf. The bound: each entry of A x sums about 6 N + 9 rounded float products
/// (two contractions of N terms, the 3-term fluxes) of x, D and G rounded to float, so its error
/// is at most about (6 N + 12) u sum |terms| with u = 6e-8: 4e-6 sum |terms| at N = 8, and for
/// a random x sum |terms| is a few ||A x||_inf. Measured on the host: 2e-8 (p = 1) to 3e-7
/// (p = 11); the cuda vertex kernel adds the float rounding of its recomputed metric terms, a
/// few u each. The products are not the double ones (the arithmetic is float), and Dirichlet
/// rows are the identity exactly.
TEST(SemPoisson, FloatArithmeticAgreesWithDoubleToFloatRounding) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::hex_box_vertices(3, 2, 2);
  const bool device = test::backend_under_test().is_device();
  for (int p : {1, 2, 3, 4, 5, 6, 7, 11}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    const SemPoissonOperator reference(Backend::reference(), 12, vertices, p);
    const auto n = static_cast<std::size_t>(reference.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + static_cast<std::uint64_t>(p));
    const std::vector<double> y0 =
        test::random_vector(n, seed + 100 + static_cast<std::uint64_t>(p));
    const Products expected = products(reference, x, y0);
    for (const Backend& backend : backends_with_reference()) {
      for (SemElementKernel kernel : {SemElementKernel::shared, SemElementKernel::layered,
                                      SemElementKernel::staged, SemElementKernel::pipelined,
                                      SemElementKernel::vertex, SemElementKernel::vertex_lines}) {
        if ((kernel == SemElementKernel::shared || kernel == SemElementKernel::vertex_lines) &&
            p > 9) {
          continue;
        }
        if (!device && kernel != SemElementKernel::layered) continue;
        for (SemAssembly assembly : {SemAssembly::sorted, SemAssembly::atomic}) {
          if (!device && assembly != SemAssembly::sorted) continue;
          SCOPED_TRACE(backend.name() + ", " + to_string(kernel) + ", " + to_string(assembly));
          SemPoissonOptions options;
          options.element_kernel = kernel;
          options.assembly = assembly;
          options.arithmetic = Precision::float32;
          const SemPoissonOperator A(backend, 12, vertices, p, options);
          const Products got = products(A, x, y0);
          const double masked = relative_inf_difference(got.masked, expected.masked);
          const double unmasked = relative_inf_difference(got.unmasked, expected.unmasked);
          const double accumulated = relative_inf_difference(got.accumulated, expected.accumulated);
          EXPECT_LT(masked, 1e-5);
          EXPECT_LT(unmasked, 1e-5);
          EXPECT_LT(accumulated, 1e-5);
          EXPECT_GT(masked, 1e-12);  // float arithmetic, not double's
          for (std::size_t g = 0; g < n; ++g) {
            if (A.dirichlet()[g] == 0) continue;
            ASSERT_EQ(got.masked[g], x[g]) << "point " << g;
            ASSERT_EQ(got.accumulated[g], -0.75 * x[g] + y0[g]) << "point " << g;
          }
        }
      }
    }
  }
}

/// The float arithmetic is the same method on every backend: the cpu loops and, with sorted
/// assembly, the cuda shared and layered kernels (and staged and pipelined, which run as
/// layered) give the reference's float-arithmetic bits; the atomic assembly (sums in no fixed
/// order, fused multiply-adds) and the vertex kernel (metric terms recomputed in float) agree
/// with them to float rounding. Accumulating (beta = 1) equals the product then axpby.
TEST(SemPoisson, FloatArithmeticMatchesTheReferencesFloatArithmetic) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.15);
  const bool device = test::backend_under_test().is_device();
  SemPoissonOptions float_options;
  float_options.arithmetic = Precision::float32;
  for (int p : {2, 3, 7}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    const SemPoissonOperator reference(Backend::reference(), 12, vertices, p, float_options);
    const auto n = static_cast<std::size_t>(reference.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + static_cast<std::uint64_t>(p));
    const std::vector<double> y0 =
        test::random_vector(n, seed + 50 + static_cast<std::uint64_t>(p));
    const Products expected = products(reference, x, y0);
    for (SemElementKernel kernel :
         {SemElementKernel::shared, SemElementKernel::layered, SemElementKernel::staged,
          SemElementKernel::pipelined, SemElementKernel::vertex, SemElementKernel::vertex_lines}) {
      if (!device && kernel != SemElementKernel::layered) continue;
      for (SemAssembly assembly : {SemAssembly::sorted, SemAssembly::atomic}) {
        if (!device && assembly != SemAssembly::sorted) continue;
        SCOPED_TRACE(std::string(to_string(kernel)) + ", " + to_string(assembly));
        SemPoissonOptions options = float_options;
        options.element_kernel = kernel;
        options.assembly = assembly;
        const SemPoissonOperator A(test::backend_under_test(), 12, vertices, p, options);
        const Products got = products(A, x, y0);
        const auto xv = Vector::from_host(A.backend(), x);
        Vector product(A.backend(), n);
        A.apply(xv, product);
        Vector then_axpby = Vector::from_host(A.backend(), y0);
        axpby(-0.75, product, 1.0, then_axpby);
        const bool exact =
            !device || (assembly == SemAssembly::sorted && kernel != SemElementKernel::vertex &&
                        kernel != SemElementKernel::vertex_lines);
        if (exact) {
          EXPECT_EQ(got.masked, expected.masked);
          EXPECT_EQ(got.unmasked, expected.unmasked);
          EXPECT_EQ(got.accumulated, expected.accumulated);
          EXPECT_EQ(got.accumulated, then_axpby.to_host());
        } else {
          EXPECT_LT(relative_inf_difference(got.masked, expected.masked), 1e-5);
          EXPECT_LT(relative_inf_difference(got.unmasked, expected.unmasked), 1e-5);
          EXPECT_LT(relative_inf_difference(got.accumulated, expected.accumulated), 1e-5);
          EXPECT_LT(relative_inf_difference(got.accumulated, then_axpby.to_host()), 1e-13);
        }
      }
    }
  }
}

/// with_arithmetic: the same operator in the other arithmetic, sharing the data: its products
/// are those of an operator built with that arithmetic (bit for bit, sorted assembly), a
/// double copy of a float operator gives the double bits back, the copy outlives the original,
/// at_order keeps the arithmetic, and kernel_description names it.
TEST(SemPoisson, WithArithmeticSharesTheOperatorInTheOtherArithmetic) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  const std::vector<double> vertices = test::hex_box_vertices(2, 2, 3);
  SemPoissonOptions options;
  options.assembly = SemAssembly::sorted;
  options.element_kernel = SemElementKernel::layered;
  const int p = 5;
  auto A = std::make_unique<SemPoissonOperator>(backend, 12, vertices, p, options);
  options.arithmetic = Precision::float32;
  const SemPoissonOperator built(backend, 12, vertices, p, options);
  const std::unique_ptr<SemPoissonOperator> F = A->with_arithmetic(Precision::float32);
  const std::unique_ptr<SemPoissonOperator> D = F->with_arithmetic(Precision::float64);
  EXPECT_EQ(A->arithmetic(), Precision::float64);
  EXPECT_EQ(F->arithmetic(), Precision::float32);
  EXPECT_EQ(D->arithmetic(), Precision::float64);
  EXPECT_EQ(F->element_kernel(), A->element_kernel());
  EXPECT_EQ(F->assembly(), A->assembly());
  EXPECT_EQ(&F->numbering(), &A->numbering());  // shared, not copied
  EXPECT_NE(F->kernel_description().find("float32 element arithmetic"), std::string::npos)
      << F->kernel_description();
  EXPECT_EQ(A->kernel_description().find("float32"), std::string::npos);
  const auto n = static_cast<std::size_t>(A->num_rows());
  const std::vector<double> x = test::random_vector(n, seed);
  const std::vector<double> double_product = apply_host(*A, x);
  A.reset();  // the copies keep the shared data
  EXPECT_EQ(apply_host(*F, x), apply_host(built, x));
  EXPECT_EQ(apply_host(*D, x), double_product);
  EXPECT_NE(apply_host(*F, x), double_product);
  Vector d_float(backend, n), d_double(backend, n);
  F->diagonal(d_float);  // the diagonal stays double
  D->diagonal(d_double);
  EXPECT_EQ(d_float.to_host(), d_double.to_host());
  const std::unique_ptr<SemPoissonOperator> lower = F->at_order(2);
  EXPECT_EQ(lower->arithmetic(), Precision::float32);
  if (backend.is_device()) {
    // In float the staged and pipelined kernels run as layered.
    F->select_kernels(SemElementKernel::staged, SemAssembly::atomic);
    EXPECT_EQ(F->element_kernel(), SemElementKernel::layered);
    D->select_kernels(SemElementKernel::staged, SemAssembly::atomic);
    EXPECT_EQ(D->element_kernel(), SemElementKernel::staged);
  }
}

TEST(SemPoisson, AutomaticKernelChoicesAreTheMeasuredFastest) {
  // H200 measurements (kryflow_bench_sem, kryflow_bench_sem_diagonal): shared element kernel
  // for p <= 3, vertex_lines for p = 4..9, vertex from p = 10 on; atomic assembly; shared
  // diagonal kernel for N = 4..10, wide otherwise.
  const std::vector<double> vertices = test::hex_box_vertices(1, 1, 1);
  const SemPoissonOperator low(test::backend_under_test(), 1, vertices, 3);
  EXPECT_EQ(low.element_kernel(), SemElementKernel::shared);
  EXPECT_EQ(low.assembly(), SemAssembly::atomic);
  EXPECT_EQ(low.diagonal_kernel(), SemDiagonalKernel::shared);
  const SemPoissonOperator second(test::backend_under_test(), 1, vertices, 2);
  EXPECT_EQ(second.diagonal_kernel(), SemDiagonalKernel::wide);
  const std::pair<int, SemElementKernel> expected[] = {{4, SemElementKernel::vertex_lines},
                                                       {5, SemElementKernel::vertex_lines},
                                                       {7, SemElementKernel::vertex_lines},
                                                       {9, SemElementKernel::vertex_lines},
                                                       {10, SemElementKernel::vertex}};
  for (const auto& [order, kernel] : expected) {
    EXPECT_EQ(SemPoissonOperator(test::backend_under_test(), 1, vertices, order).element_kernel(),
              kernel)
        << "p = " << order;
  }
  const SemPoissonOperator high(test::backend_under_test(), 1, vertices, 11);
  EXPECT_EQ(high.element_kernel(), SemElementKernel::vertex);
  EXPECT_EQ(high.diagonal_kernel(), SemDiagonalKernel::wide);
  SemPoissonOptions options;
  options.element_kernel = SemElementKernel::shared;
  EXPECT_THROW(SemPoissonOperator(test::backend_under_test(), 1, vertices, 10, options),
               NotSupported);
  EXPECT_EQ(parse_sem_element_kernel("staged"), SemElementKernel::staged);
  EXPECT_EQ(parse_sem_element_kernel("vertex"), SemElementKernel::vertex);
  EXPECT_EQ(parse_sem_element_kernel("vertex_lines"), SemElementKernel::vertex_lines);
  options.element_kernel = SemElementKernel::vertex_lines;
  EXPECT_THROW(SemPoissonOperator(test::backend_under_test(), 1, vertices, 10, options),
               NotSupported);
  EXPECT_THROW(parse_sem_assembly("scattered"), InvalidInput);
}

/// The vertex_lines kernel performs the vertex kernel's operations in the same order: with
/// sorted assembly its products (masked, unmasked, accumulated) have the vertex kernel's bits in
/// double and in float arithmetic at every N it supports, and with atomic assembly they agree to
/// rounding. cuda only (the host backends have no element kernels to choose).
TEST(SemPoisson, VertexLinesKernelHasTheVertexKernelsBits) {
  if (!test::backend_under_test().is_device()) {
    GTEST_SKIP() << "element kernels are cuda's";
  }
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.2);
  for (int p = 1; p <= 9; ++p) {
    for (Precision arithmetic : {Precision::float64, Precision::float32}) {
      for (SemAssembly assembly : {SemAssembly::sorted, SemAssembly::atomic}) {
        SCOPED_TRACE("p = " + std::to_string(p) + ", " + std::string(to_string(arithmetic)) + ", " +
                     to_string(assembly));
        SemPoissonOptions options;
        options.arithmetic = arithmetic;
        options.assembly = assembly;
        options.element_kernel = SemElementKernel::vertex;
        const SemPoissonOperator vertex(test::backend_under_test(), 12, vertices, p, options);
        options.element_kernel = SemElementKernel::vertex_lines;
        const SemPoissonOperator lines(test::backend_under_test(), 12, vertices, p, options);
        const auto n = static_cast<std::size_t>(vertex.num_rows());
        const std::vector<double> x = test::random_vector(n, seed + 7 * p);
        const std::vector<double> y0 = test::random_vector(n, seed + 7 * p + 1);
        const Products want = products(vertex, x, y0);
        const Products got = products(lines, x, y0);
        if (assembly == SemAssembly::sorted) {
          EXPECT_EQ(got.masked, want.masked);
          EXPECT_EQ(got.unmasked, want.unmasked);
          EXPECT_EQ(got.accumulated, want.accumulated);
        } else {
          const double tolerance = arithmetic == Precision::float32 ? 1e-5 : 1e-12;
          EXPECT_LT(relative_inf_difference(got.masked, want.masked), tolerance);
          EXPECT_LT(relative_inf_difference(got.unmasked, want.unmasked), tolerance);
          EXPECT_LT(relative_inf_difference(got.accumulated, want.accumulated), tolerance);
        }
        double largest = 0.0;
        for (double value : got.masked) largest = std::max(largest, std::abs(value));
        EXPECT_GT(largest, 0.1);  // a product, not a vector left at zero
      }
    }
  }
}

/// Each N has its own range of the constant-memory derivative matrices that the vertex_lines
/// and vertex kernels read (filled at each operator's setup): operators built before and after
/// operators of other orders still apply their own D (to the reference within 1e-12).
TEST(SemPoisson, OperatorsOfSeveralOrdersKeepTheirDerivativeMatrices) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = test::unit_cube_box(3, 2, 2, 0.2);
  const int orders[] = {5, 7, 4, 9, 6, 8, 3};
  for (SemElementKernel kernel : {SemElementKernel::vertex_lines, SemElementKernel::vertex}) {
    SemPoissonOptions options;
    options.element_kernel = kernel;
    std::vector<std::unique_ptr<SemPoissonOperator>> operators;
    for (int p : orders) {
      operators.push_back(std::make_unique<SemPoissonOperator>(test::backend_under_test(), 12,
                                                               vertices, p, options));
    }
    for (std::size_t o = 0; o < operators.size(); ++o) {
      SCOPED_TRACE(std::string(to_string(kernel)) + ", p = " + std::to_string(orders[o]));
      const SemPoissonOperator reference(Backend::reference(), 12, vertices, orders[o]);
      const std::vector<double> x = test::random_vector(
          static_cast<std::size_t>(reference.num_rows()), seed + static_cast<std::uint64_t>(o));
      EXPECT_LT(
          test::relative_max_difference(apply_host(*operators[o], x), apply_host(reference, x)),
          1e-12);
    }
  }
}

TEST(SemPoisson, UnmaskedApplicationIsTheNeumannOperator) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  const std::vector<double> vertices = test::hex_box_vertices(2, 2, 2);
  const SemPoissonOperator dirichlet(backend, 8, vertices, 4);
  const SemPoissonOperator neumann(backend, 8, vertices, 4, /*dirichlet_boundary=*/false);
  const auto n = static_cast<std::size_t>(neumann.num_rows());
  const Vector x = Vector::from_host(backend, test::random_vector(n, seed));
  Vector y1(backend, n);
  Vector y2(backend, n);
  dirichlet.apply_unmasked(x, y1);
  neumann.apply(x, y2);
  EXPECT_LT(test::relative_max_difference(y1.to_host(), y2.to_host()), 1e-14);
}

TEST(SemPoisson, DirichletPointsAreSelectedByBoundaryConditionType) {
  // A 3 x 2 x 2 box whose faces at x = 0 and x = 1 are inflow ("v") and the rest outflow ("O"):
  // with dirichlet_types {"v"}, the Dirichlet points are the two planes x = 0 and x = 1.
  HexMesh mesh = box_mesh(3, 2, 2);
  for (BoundaryFace& f : mesh.fields[0]) f.type = f.face < 2 ? "v" : "O";
  const int p = 3;
  SemPoissonOptions options;
  options.dirichlet_types = {"v"};
  const SemPoissonOperator A(test::backend_under_test(), mesh, p, options);
  const std::vector<double>& X = A.coordinates();
  std::size_t masked = 0;
  for (std::size_t g = 0; g < A.dirichlet().size(); ++g) {
    if (A.dirichlet()[g] == 0) continue;
    ++masked;
    EXPECT_TRUE(std::abs(X[3 * g]) < 1e-12 || std::abs(X[3 * g] - 1.0) < 1e-12) << X[3 * g];
  }
  EXPECT_EQ(masked, std::size_t{2} * (2 * p + 1) * (2 * p + 1));
  // The default (every boundary face) and an unknown type.
  const SemPoissonOperator all(test::backend_under_test(), mesh, p);
  std::size_t boundary = 0;
  for (char c : all.dirichlet()) boundary += c != 0 ? 1 : 0;
  EXPECT_GT(boundary, masked);
  options.dirichlet_types = {"W"};
  EXPECT_THROW(SemPoissonOperator(test::backend_under_test(), mesh, p, options), InvalidInput);
}

TEST(SemPoisson, ConjugateGradientsConvergeSpectrallyOnADeformedBox) {
  // -Laplace(u) = 3 pi^2 u for u = sin(pi x) sin(pi y) sin(pi z), u = 0 on the boundary.
  for (const Backend& backend : backends_with_reference()) {
    SCOPED_TRACE(backend.name());
    const double pi = std::numbers::pi;
    std::vector<double> errors;
    for (int p : {2, 4, 6, 8, 10}) {
      const SemPoissonOperator A(backend, 8, unit_box(2, 0.3), p);
      const auto n = static_cast<std::size_t>(A.num_rows());
      const std::vector<double>& X = A.coordinates();
      std::vector<double> b(n);
      std::vector<double> exact(n);
      for (std::size_t g = 0; g < n; ++g) {
        exact[g] =
            std::sin(pi * X[3 * g]) * std::sin(pi * X[3 * g + 1]) * std::sin(pi * X[3 * g + 2]);
        b[g] = A.dirichlet()[g] != 0 ? 0.0 : A.mass()[g] * 3.0 * pi * pi * exact[g];
      }
      StopCriteria criteria;
      criteria.relative_tolerance = 1e-12;
      criteria.max_iterations = 2000;
      IdentityPreconditioner M;
      M.setup(A);
      const Vector bv = Vector::from_host(backend, b);
      Vector xv = Vector::constant(backend, n, 0.0);
      const SolveReport report = Cg(criteria).solve(A, M, bv, xv);
      EXPECT_EQ(report.status, SolveStatus::converged) << "p = " << p << ": " << report.reason;
      const std::vector<double> x = xv.to_host();
      double error = 0.0;
      for (std::size_t g = 0; g < n; ++g) error = std::max(error, std::abs(x[g] - exact[g]));
      errors.push_back(error);
    }
    // Orders of magnitude from p = 2 to p = 10, and monotone.
    for (std::size_t q = 1; q < errors.size(); ++q) EXPECT_LT(errors[q], errors[q - 1]);
    EXPECT_LT(errors.back(), 1e-4 * errors.front()) << errors.front() << " -> " << errors.back();
    EXPECT_LT(errors.back(), 1e-6);
  }
}

TEST(SemPoisson, DiagonalEqualsTheDiagonalOfAppliedUnitVectors) {
  // A tiny deformed mesh with reoriented-free but non-affine elements: the cross terms matter.
  // Every diagonal kernel (the host backends have one loop and ignore the choice).
  for (const Backend& backend : backends_with_reference()) {
    SCOPED_TRACE(backend.name());
    for (int p : {1, 3, 5}) {
      SCOPED_TRACE(p);
      const std::vector<double> vertices =
          test::hex_box_vertices(2, 2, 2);  // p = 1: one free point
      const SemPoissonOperator A(backend, 8, vertices, p);
      const auto n = static_cast<std::size_t>(A.num_rows());
      std::vector<double> applied(n);
      for (std::size_t g = 0; g < n; ++g) {
        std::vector<double> unit(n, 0.0);
        unit[g] = 1.0;
        applied[g] = apply_host(A, unit)[g];
      }
      for (SemDiagonalKernel kernel : {SemDiagonalKernel::natural, SemDiagonalKernel::shared,
                                       SemDiagonalKernel::extended, SemDiagonalKernel::wide}) {
        SCOPED_TRACE(to_string(kernel));
        SemPoissonOptions options;
        options.diagonal_kernel = kernel;
        const SemPoissonOperator B(backend, 8, vertices, p, options);
        Vector d(backend, n);
        B.diagonal(d);
        const std::vector<double> diagonal = d.to_host();
        double worst = 0.0;
        for (std::size_t g = 0; g < n; ++g) {
          worst = std::max(worst, std::abs(diagonal[g] - applied[g]) / std::abs(applied[g]));
        }
        EXPECT_LT(worst, 1e-12);
      }
    }
  }
}

TEST(SemPoisson, NeumannFacesConvergeSpectrallyWithTheirFluxLoad) {
  // Dirichlet on the faces x = 0 and x = 1 ("v"), natural boundaries elsewhere ("O"), on a
  // deformed box; u = sin(x + 0.3) sin(y + 0.7) sin(z + 1.1), -Laplace(u) = 3 u. The flux load of
  // the Neumann faces is what makes the error fall; without it the error stays large.
  BoxOptions box;
  box.smooth_deformation = 0.05;
  HexMesh mesh = box_mesh(2, 2, 2, box);
  for (BoundaryFace& f : mesh.fields[0]) f.type = f.face < 2 ? "v" : "O";
  const std::vector<std::string> types = {"v"};
  auto exact = [](double x, double y, double z) {
    return std::sin(x + 0.3) * std::sin(y + 0.7) * std::sin(z + 1.1);
  };
  auto flux = [](const std::array<double, 3>& p) {
    const double sx = std::sin(p[0] + 0.3);
    const double sy = std::sin(p[1] + 0.7);
    const double sz = std::sin(p[2] + 1.1);
    return std::array<double, 3>{std::cos(p[0] + 0.3) * sy * sz, sx * std::cos(p[1] + 0.7) * sz,
                                 sx * sy * std::cos(p[2] + 1.1)};
  };
  const Backend backend = test::backend_under_test();
  std::vector<double> errors;
  double error_without_load = 0.0;
  for (int p : {2, 4, 6, 8}) {
    SemPoissonOptions options;
    options.dirichlet_types = types;
    const SemPoissonOperator A(backend, mesh, p, options);
    const auto n = static_cast<std::size_t>(A.num_rows());
    const std::vector<double>& X = A.coordinates();
    std::vector<double> u(n);
    std::vector<double> lifted(n, 0.0);
    for (std::size_t g = 0; g < n; ++g) {
      u[g] = exact(X[3 * g], X[3 * g + 1], X[3 * g + 2]);
      if (A.dirichlet()[g] != 0) lifted[g] = u[g];
    }
    Vector a_lifted(backend, n);
    A.apply_unmasked(Vector::from_host(backend, lifted), a_lifted);
    const std::vector<double> a_lifted_host = a_lifted.to_host();
    std::vector<double> b(n);
    for (std::size_t g = 0; g < n; ++g) {
      b[g] = A.dirichlet()[g] != 0 ? u[g] : A.mass()[g] * 3.0 * u[g] - a_lifted_host[g];
    }
    const std::vector<double> b_without_load = b;
    add_neumann_load(A, mesh, types, flux, b);
    StopCriteria criteria;
    criteria.relative_tolerance = 1e-13;
    criteria.max_iterations = 5000;
    JacobiPreconditioner M;
    M.setup(A);
    auto solve_error = [&](const std::vector<double>& rhs) {
      Vector x = Vector::constant(backend, n, 0.0);
      const SolveReport report = Cg(criteria).solve(A, M, Vector::from_host(backend, rhs), x);
      EXPECT_EQ(report.status, SolveStatus::converged) << "p = " << p << ": " << report.reason;
      const std::vector<double> xh = x.to_host();
      double error = 0.0;
      for (std::size_t g = 0; g < n; ++g) error = std::max(error, std::abs(xh[g] - u[g]));
      return error;
    };
    errors.push_back(solve_error(b));
    if (p == 8) error_without_load = solve_error(b_without_load);
  }
  for (std::size_t q = 1; q < errors.size(); ++q) EXPECT_LT(errors[q], errors[q - 1]);
  EXPECT_LT(errors.back(), 1e-8) << errors.front() << " -> " << errors.back();
  EXPECT_GT(error_without_load, 1e-3);
  // A mismatched right-hand side is refused.
  std::vector<double> wrong(3, 0.0);
  const SemPoissonOperator A(backend, mesh, 2);
  EXPECT_THROW(add_neumann_load(A, mesh, types, flux, wrong), DimensionMismatch);
}

TEST(SemPoisson, ApplyRefusesTheSameVectorAsInputAndOutput) {
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator A(backend, 1, test::hex_box_vertices(1, 1, 1), 2);
  Vector x =
      Vector::from_host(backend, test::random_vector(static_cast<std::size_t>(A.num_rows())));
  EXPECT_THROW(A.apply(x, x), InvalidInput);
  EXPECT_THROW(A.apply_unmasked(x, x), InvalidInput);
}

TEST(SemPoisson, JacobiPreconditionedCgConvergesFaster) {
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator A(backend, 8, unit_box(2, 0.3), 7);
  const auto n = static_cast<std::size_t>(A.num_rows());
  std::vector<double> b = test::random_vector(n, 11);
  for (std::size_t g = 0; g < n; ++g) {
    if (A.dirichlet()[g] != 0) b[g] = 0.0;
  }
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-8;
  criteria.max_iterations = 2000;
  const Vector bv = Vector::from_host(backend, b);
  IdentityPreconditioner identity;
  identity.setup(A);
  JacobiPreconditioner jacobi;
  jacobi.setup(A);
  Vector x1 = Vector::constant(backend, n, 0.0);
  Vector x2 = Vector::constant(backend, n, 0.0);
  const SolveReport plain = Cg(criteria).solve(A, identity, bv, x1);
  const SolveReport preconditioned = Cg(criteria).solve(A, jacobi, bv, x2);
  ASSERT_EQ(plain.status, SolveStatus::converged) << plain.reason;
  ASSERT_EQ(preconditioned.status, SolveStatus::converged) << preconditioned.reason;
  EXPECT_LT(preconditioned.iterations, plain.iterations);
  EXPECT_LT(preconditioned.true_relative_residual(), 1e-8);
}

TEST(SemPoisson, JacobiPcgConvergesOnEveryCorpusMeshAtOrder2) {
  // Every Nek mesh of the corpus, read, numbered (conforming), Dirichlet on its boundary faces.
  const Backend backend = test::backend_under_test();
  for (const std::string& name : test::nek_corpus_meshes()) {
    SCOPED_TRACE(name);
    const auto path = test::nek_mesh_file(name);
    ASSERT_FALSE(path.empty());
    const HexMesh mesh = read_re2(path);
    const SemPoissonOperator A(backend, mesh.num_elements, mesh.vertices, 2);
    const auto n = static_cast<std::size_t>(A.num_rows());
    std::vector<double> b = test::random_vector(n, 5);
    for (std::size_t g = 0; g < n; ++g) {
      if (A.dirichlet()[g] != 0) b[g] = 0.0;
    }
    StopCriteria criteria;
    criteria.relative_tolerance = 1e-8;
    criteria.max_iterations = 5000;
    JacobiPreconditioner M;
    M.setup(A);
    const Vector bv = Vector::from_host(backend, b);
    Vector x = Vector::constant(backend, n, 0.0);
    const SolveReport report = Cg(criteria).solve(A, M, bv, x);
    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
    EXPECT_LT(report.true_relative_residual(), 1e-8);
  }
}

TEST(SemPoisson, InvertedElementIsRejectedNamingIt) {
  std::vector<double> vertices = test::hex_box_vertices(2, 1, 1);
  // Swap corners 0 and 1 of element 2: mirrored, negative Jacobian.
  for (int d = 0; d < 3; ++d) std::swap(vertices[24 + d], vertices[24 + 3 + d]);
  try {
    const SemPoissonOperator A(test::backend_under_test(), 2, vertices, 3);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("element 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kryflow::sem
