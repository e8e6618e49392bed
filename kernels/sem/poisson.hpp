// Contract of the matrix-free spectral-element Poisson operator on assembled (global) vectors:
// y = M A_L-assembled M x + (I - M) x, with A_L the element Laplacians by sum factorization
// (Deville, Fischer and Mund, High-Order Methods for Incompressible Fluid Flow, 2002, sec. 4.4
// and 4.5) and M the mask of the Dirichlet points (masked rows and columns are the identity).
//
// Order of operations, the same on every backend: x_L[l] = masked(g(l)) ? 0 : x[g(l)]; per
// element, with D the GLL derivative matrix, u_r = D_r x_L, u_s = D_s x_L, u_t = D_t x_L (each
// a sum over m in increasing order), w_a = G_a1 u_r + G_a2 u_s + G_a3 u_t (left to right),
// y_L = D_r^T w_r + D_s^T w_s + D_t^T w_t (r, then s, then t, each sum in increasing m); then
// y[g] = masked(g) ? x[g] : the sum of y_L over the locals of g in increasing local index
// (with PoissonView::accumulate, y[g] = alpha * that + y[g], or + base[g] with a base).
// With PoissonView::float_arithmetic the element operations above are done in float (the
// mixed-precision operator of Kronbichler and Ljungkvist, "Multigrid for matrix-free high-order
// finite element computations on graphics processors", ACM TOPC 6(1), 2019): x_L, D and G are
// rounded to float when read, the sums and products are float ones in the same order, and each
// y_L is widened to double; the gather, the mask and the assembly sums stay in double.
// Without a mask (PoissonView::mask null) no point is masked. The cuda atomic assembly adds
// the y_L of each element into y in no fixed order (results differ in the last bits).
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// The cuda element kernel (SemElementKernel without `automatic`).
enum class ElementKernel { shared, layered, staged, pipelined, vertex, vertex_lines };
/// The cuda assembly (SemAssembly without `automatic`).
enum class Assembly { sorted, atomic };

/// The operator's data as the kernels see them (all on one backend).
struct PoissonView {
  std::int64_t num_elements = 0;
  int n = 0;  // N = p + 1 points per direction
  // N x N, D[i * N + m] = l_m'(x_i) of the N GLL points (cuda: the kernels that read D from
  // constant memory read the copy poisson_prepare made of it, which is the same for every view
  // of N points).
  const double* derivative = nullptr;
  const double* g = nullptr;  // num_elements x 6 x N^3 metric terms
  // The trilinear elements' corners (num_elements x 8 x 3, lexicographic corners) and the GLL
  // nodes and weights (N each): the cuda vertex kernel computes the metric terms from them.
  const double* vertices = nullptr;
  const double* nodes = nullptr;
  const double* weights = nullptr;
  std::int64_t num_global = 0;
  const index_t* local_to_global = nullptr;      // num_elements x N^3 (host backends)
  const std::int64_t* global_offsets = nullptr;  // num_global + 1
  const index_t* global_locals = nullptr;        // num_elements x N^3, grouped by global point
  const char* mask = nullptr;  // num_global: 1 = Dirichlet point; null: no point is masked
  // cuda: per local point its global index (bits 0-29), "writes its global point once" (bit
  // 31: the only local point of its global point, or the first of a shared Dirichlet point)
  // and "Dirichlet point" (bit 30); and the shared global points (multiplicity
  // > 1), which are global points 0 .. num_shared - 1, with their locals in increasing local
  // index.
  const std::uint32_t* local_code = nullptr;  // num_elements x N^3
  index_t num_shared = 0;
  const index_t* shared_offsets = nullptr;  // num_shared + 1
  const index_t* shared_locals = nullptr;   // shared_offsets[num_shared]
  double* local_x = nullptr;                // scratch, num_elements x N^3 (host backends)
  double* local_y = nullptr;                // scratch, num_elements x N^3
  // accumulate: y = alpha (A x) + y instead of y = A x (the bits of A x into a separate vector,
  // then axpby(alpha, A x, 1, y); cuda atomic assembly: in no fixed order, as A x).
  bool accumulate = false;
  double alpha = 1.0;
  // With accumulate, base (num_global entries; may be y itself) instead of y's old values:
  // y = alpha (A x) + base, so y = b - A x needs no separate pass over b (the cuda atomic
  // assembly copies base's shared points into y first). Null: y.
  const double* base = nullptr;
  // Element arithmetic in float (see the contract above); vectors and assembly stay double.
  bool float_arithmetic = false;
  ElementKernel element_kernel = ElementKernel::layered;  // cuda only
  Assembly assembly = Assembly::sorted;                   // cuda only
};

#define KRYFLOW_SEM_POISSON_DECLARATIONS                                                  \
  /** once per operator at setup, before poisson_apply (cuda: D into constant memory on   \
   * the backend's device; host backends: nothing) */                                     \
  void poisson_prepare(const Backend& backend, const PoissonView& a);                     \
  /** y = A x on global vectors (num_global entries each) */                              \
  void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x,  \
                     Span<double> y);                                                     \
  /** y[g] = mask[g] ? masked_value : the sum of d_local over the locals of g (increasing \
   * local index): the assembly of a local diagonal */                                    \
  void poisson_assemble_diagonal(const Backend& backend, const PoissonView& a,            \
                                 Span<const double> d_local, double masked_value, Span<double> y);

/// Dispatch.
KRYFLOW_SEM_POISSON_DECLARATIONS

namespace reference {
KRYFLOW_SEM_POISSON_DECLARATIONS
}
namespace cpu {
KRYFLOW_SEM_POISSON_DECLARATIONS
}
namespace cuda {
KRYFLOW_SEM_POISSON_DECLARATIONS
}

#undef KRYFLOW_SEM_POISSON_DECLARATIONS

}  // namespace kryflow::kernels::sem
