// The matrix-free spectral-element Poisson operator on a conforming hexahedral mesh.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/sem/geometry.hpp"
#include "kryflow/sem/gll.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/numbering.hpp"

namespace kryflow::kernels::sem {
struct PoissonView;
}

namespace kryflow::sem {

/// The cuda kernel of the element Laplacians (the host backends have one each).
enum class SemElementKernel {
  automatic,     ///< the fastest on an H200 (measured at p = 3, 5, 7, 9 and 11): shared for
                 ///< p <= 3, vertex_lines for p = 4..9, vertex from p = 10 on
  shared,        ///< N^3 threads per element, the whole element in shared memory (N <= 10)
  layered,       ///< N^2 threads per element, each holding its t-line in registers (any N)
  staged,        ///< layered, with the element's metric terms copied into shared memory by
                 ///< asynchronous copies issued before the gather (any N)
  pipelined,     ///< layered, with the metric terms of the next 4 layers copied ahead into a
                 ///< ring of shared-memory slots (any N; shared memory independent of N^3)
  vertex,        ///< layered, with the metric terms computed from the element's 8 corners
                 ///< instead of read (any N; agrees with the others to rounding, not bit for bit)
  vertex_lines,  ///< vertex's operations register-tiled by lines: each thread owns whole r-,
                 ///< s- and t-lines in turn, so the sums are formed in registers and each line
                 ///< passes once through shared memory (N <= 10; vertex's bits)
};

/// How the cuda kernels sum the element contributions into the assembled y.
enum class SemAssembly {
  automatic,  ///< the faster measured on an H100 and an H200: atomic
  sorted,     ///< element results stored, then one thread per global point sums its locals in
              ///< increasing local index: deterministic; the host backends' bits with the
              ///< element kernels that read the stored metric terms (not vertex)
  atomic,     ///< element results added to y with atomicAdd: one pass, order not fixed
};

/// The cuda kernel of the local diagonal (the four designs of Wahlgren, "A GPU-accelerated
/// Jacobi preconditioner for high-order fluid simulations", KTH 2022, sec. 3.1).
enum class SemDiagonalKernel {
  automatic,  ///< the fastest measured on an H200: shared for N = 4..10, wide otherwise
  natural,    ///< one thread per point, one block per element (N <= 10)
  shared,     ///< natural with G11, G22, G33 of the element staged in shared memory (N <= 10)
  extended,   ///< one thread per point over consecutive points, elements not aligned to blocks
  wide,       ///< one thread per line of N points along r
};

const char* to_string(SemElementKernel kernel);
const char* to_string(SemAssembly assembly);
const char* to_string(SemDiagonalKernel kernel);
/// Parse the names above; throw InvalidInput naming the valid choices otherwise.
SemElementKernel parse_sem_element_kernel(const std::string& name);
SemAssembly parse_sem_assembly(const std::string& name);
SemDiagonalKernel parse_sem_diagonal_kernel(const std::string& name);

/// Options of SemPoissonOperator.
struct SemPoissonOptions {
  /// false leaves every point free (the pure Neumann operator, singular: for tests).
  bool dirichlet_boundary = true;
  /// With a HexMesh: the boundary-condition types (of the mesh's first field, e.g. "W", "v")
  /// whose faces are Dirichlet. Empty: every boundary face (a face of one element only), as
  /// in CEED BP5. Ignored when dirichlet_boundary is false.
  std::vector<std::string> dirichlet_types;
  SemElementKernel element_kernel = SemElementKernel::automatic;
  SemAssembly assembly = SemAssembly::automatic;
  SemDiagonalKernel diagonal_kernel = SemDiagonalKernel::automatic;
  /// The arithmetic of the element Laplacians (apply, apply_unmasked). float32: x, D and the
  /// metric terms rounded to float, the sum-factorization contractions and the fluxes in float,
  /// each element's result widened to double before the assembly; vectors, the mask, the
  /// assembly sums, diagonal() and assembled_matrix() stay in double. The mixed-precision
  /// operator of Kronbichler and Ljungkvist (ACM TOPC 6(1), 2019) for multigrid levels: the
  /// results differ from double's by about 1e-6 ||A|| ||x|| (float's unit roundoff 6e-8 times
  /// the O(N) terms of each sum), and A is symmetric only to that accuracy. On cuda the shared,
  /// layered and vertex kernels run in float; staged and pipelined are replaced by layered.
  Precision arithmetic = Precision::float64;
};

/// A = Q^T A_L Q, the stiffness matrix of -Laplace(u) on GLL points of order p, applied without
/// forming it: the element Laplacians A_e = D^T G^e D by sum factorization (Deville, Fischer and
/// Mund, 2002, sec. 4.4; the Neko paper's eq. (5)-(8)), assembled over the global numbering of
/// number_gll_points. Rows and columns of the Dirichlet points (by default every boundary point,
/// as in CEED BP5) are those of the identity, so A stays symmetric positive definite and a right-
/// hand side that is 0 there gives a solution that is 0 there.
///
/// Vectors are assembled (global): num_global() entries, one per distinct GLL point, so every
/// Krylov solver's inner products are the standard ones. On every backend; on cuda the
/// element kernel, the assembly and the diagonal kernel are chosen by SemPoissonOptions.
class SemPoissonOperator : public LinearOperator {
 public:
  /// `vertices`: 8 x 3 corner coordinates per element (lexicographic corner order), order p in
  /// 1..15. `dirichlet_boundary` false leaves every point free (the pure Neumann operator,
  /// singular: for tests). Throws what number_gll_points, gll_rule and geometric_factors throw;
  /// OutOfMemory when the data do not fit on `backend`; NotSupported for more than 2^31 local
  /// points (2^30 global points on cuda), or a shared element kernel or natural/shared diagonal
  /// kernel asked for with N = p + 1 > 10.
  SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                     std::span<const double> vertices, int order, bool dirichlet_boundary = true);
  /// As above with options (options.dirichlet_types must be empty: there are no faces).
  SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                     std::span<const double> vertices, int order, const SemPoissonOptions& options);
  /// On a mesh; Dirichlet points as options.dirichlet_types selects from mesh.fields[0].
  /// Throws InvalidInput when a type is given and the mesh has no boundary field, or no face
  /// of the mesh carries any of the types; otherwise as above.
  SemPoissonOperator(const Backend& backend, const HexMesh& mesh, int order,
                     const SemPoissonOptions& options = {});
  /// Not copyable (a copy would share the scratch unnoticed: with_arithmetic says so); movable.
  SemPoissonOperator(const SemPoissonOperator&) = delete;
  SemPoissonOperator& operator=(const SemPoissonOperator&) = delete;
  SemPoissonOperator(SemPoissonOperator&&) = default;
  SemPoissonOperator& operator=(SemPoissonOperator&&) = default;

  index_t num_rows() const override { return static_cast<index_t>(data_->numbering.num_global); }
  index_t num_cols() const override { return num_rows(); }
  const Backend& backend() const override { return data_->g.backend(); }
  /// y = A x. Errors as LinearOperator::apply, and InvalidInput when x and y are the same
  /// vector. Not for concurrent calls (shared scratch).
  void apply(const Vector& x, Vector& y) const override;
  /// y = alpha A x + beta y. With beta == 1 the product is added into y by the assembly itself
  /// (no separate vector or pass: the bits of A x into a vector, then axpby(alpha, A x, 1, y),
  /// except with the cuda atomic assembly, whose sums are in no fixed order anyway); otherwise
  /// LinearOperator's. Errors as apply.
  void apply(double alpha, const Vector& x, double beta, Vector& y) const override;
  /// r = b - A x in the assembly of the product (b read where r is written; with the cuda
  /// atomic assembly and b distinct from r, b's shared points are copied into r first); no
  /// separate vector pass. b may be r itself; x must not be. Errors as apply.
  void residual(const Vector& b, const Vector& x, Vector& r) const override;
  /// Its products only queue kernels: they may be recorded and replayed.
  bool supports_recording() const override { return true; }
  /// y = Q^T A_L Q x without the Dirichlet mask (the Neumann operator on every point): for
  /// lifting inhomogeneous Dirichlet data, b_free = (B f - A_N u_D)_free. Errors as apply.
  void apply_unmasked(const Vector& x, Vector& y) const;
  /// d = diag(A), assembled without forming A: per element and point q = (i, j, k),
  /// sum_m G11(m,j,k) D_mi^2 + G22(i,m,k) D_mj^2 + G33(i,j,m) D_mk^2 (the Neko paper's eq. (9))
  /// plus the cross terms 2 (G12 D_ii D_jj + G13 D_ii D_kk + G23 D_jj D_kk)(q) of deformed
  /// elements (D_ii is nonzero only at the element's end points), summed over the elements that
  /// share the point; 1 at Dirichlet points. Computed on the backend at each call by the
  /// diagonal kernel of the options (cuda: the four designs of Wahlgren 2022, sec. 3.1), then
  /// assembled over the global numbering. Errors as LinearOperator::diagonal.
  void diagonal(Vector& d) const override;

  /// The same operator at another order: the same mesh, Dirichlet faces (all boundary faces,
  /// those of the types given, or none), assembly and arithmetic (SemPoissonOptions::
  /// arithmetic), on the same backend, with the element and diagonal kernels chosen
  /// automatically for `order` (the levels of p-multigrid). Throws as the constructor.
  std::unique_ptr<SemPoissonOperator> at_order(int order) const;
  /// The same operator (order, mesh, Dirichlet points, kernels; num_rows() x num_rows() on the
  /// same backend) applied in the arithmetic `arithmetic` (SemPoissonOptions::arithmetic, which
  /// gives the accuracy of float32; for the levels of a mixed-precision multigrid cycle). Cheap: it
  /// shares this operator's numbering, geometry, assembly lists and scratch (no copy, no setup),
  /// and stays valid after this operator is destroyed. Because of the shared scratch, it and this
  /// operator must not apply concurrently (they may alternate on one backend queue). The element
  /// kernel is this operator's resolved one (on cuda, staged and pipelined become layered in
  /// float32). Throws nothing but std::bad_alloc.
  std::unique_ptr<SemPoissonOperator> with_arithmetic(Precision arithmetic) const;
  /// The arithmetic of the element Laplacians (SemPoissonOptions::arithmetic).
  Precision arithmetic() const noexcept { return options_.arithmetic; }

  /// A as host triplets (one per pair of local points of an element, duplicates summed by
  /// CsrMatrix::from_coo): the element matrices D^T G^e D formed from the same metric terms
  /// (the entry (q, q') is what apply gives on the local unit vector of q', up to rounding),
  /// entries of a Dirichlet row or column dropped and 1 on a Dirichlet diagonal. For the
  /// coarsest level of p-multigrid (order 1: the trilinear elements on the mesh vertices) and
  /// for tests. Cost N^7 operations and N^6 triplets per element: throws NotSupported above
  /// order 3; std::bad_alloc when the triplets do not fit on the host.
  CooMatrix assembled_matrix() const;

  /// The assembly lists on backend(), as the operator's kernels use them: the local points of
  /// global point g are global_locals()[global_offsets()[g] .. global_offsets()[g + 1] - 1], in
  /// increasing local index (local point (i, j, k) of element e is ((e N + k) N + j) N + i).
  /// num_global() + 1 offsets and num_elements N^3 local indices: for kernels that sum element-
  /// local vectors into global ones (the p-multigrid transfers, SemTransfer).
  const Array<std::int64_t>& global_offsets() const noexcept { return data_->global_offsets; }
  const Array<index_t>& global_locals() const noexcept { return data_->global_locals; }
  /// On cuda (empty on the host backends): the lists of the shared points, which are global
  /// points 0 .. S - 1 (numbering()): global_locals()[shared_offsets()[g] .. shared_offsets()[g
  /// + 1] - 1] for g < S = shared_offsets().size() - 1, in 32-bit offsets; every later point
  /// has one local point, global_locals()[shared_offsets()[S] + g - S].
  const Array<index_t>& shared_offsets() const noexcept { return data_->shared_offsets; }
  /// The Dirichlet mask on backend() (num_global; 1: Dirichlet point).
  const Array<char>& dirichlet_mask() const noexcept { return data_->mask; }

  /// The numbering of number_gll_points with its shared points (multiplicity > 1) renumbered
  /// first: global points 0 .. S-1 are shared, S .. num_global-1 belong to one element each.
  const GlobalNumbering& numbering() const noexcept { return data_->numbering; }
  const GllRule& rule() const noexcept { return data_->rule; }
  /// The assembled diagonal of the GLL mass matrix B = Q^T diag(w |J|) (host, num_global),
  /// for right-hand sides b = B f.
  const std::vector<double>& mass() const noexcept { return data_->mass; }
  /// Whether each global point is a Dirichlet point (host, num_global).
  const std::vector<char>& dirichlet() const noexcept { return data_->mask_host; }
  /// Physical coordinates of each global point (host, 3 x num_global, x y z interleaved).
  const std::vector<double>& coordinates() const noexcept { return data_->coordinates; }
  /// Bytes one application must move at least: metric terms (6 doubles per local point; with
  /// the cuda vertex kernel the 8 x 3 corner coordinates per element instead), the numbering
  /// (a 4-byte index per local point), x and y once each per global point: the numerator of
  /// the operator's bandwidth roofline.
  double apply_bytes() const noexcept;
  /// The kernels this operator runs ("cpu loops", or e.g. "staged element kernel, atomic
  /// assembly, shared diagonal kernel" on cuda): the choices of options resolved, followed by
  /// ", float32 element arithmetic" when SemPoissonOptions::arithmetic is float32.
  std::string kernel_description() const;
  /// Changes the cuda element kernel and assembly of later applications (automatic: the
  /// defaults; in float32 arithmetic staged and pipelined become layered); for benchmarks,
  /// which compare them on one operator. Throws NotSupported as the constructor does. Host
  /// backends ignore the choice.
  void select_kernels(SemElementKernel element_kernel, SemAssembly assembly);
  /// The resolved choices (automatic replaced by what runs; host backends report them too).
  SemElementKernel element_kernel() const noexcept { return element_kernel_; }
  SemAssembly assembly() const noexcept { return assembly_; }
  SemDiagonalKernel diagonal_kernel() const noexcept { return diagonal_kernel_; }

 private:
  friend class VertexPatchSmoother;  // its fused step runs the element Laplacians on patches
  kernels::sem::PoissonView view(bool masked) const;
  void build(const Backend& backend, std::int64_t num_elements, std::span<const double> vertices,
             const std::vector<char>* dirichlet, const SemPoissonOptions& options);
  /// at_order's: the mesh as corners, the Dirichlet faces (element * 6 + face) or, when
  /// `faces` is null, options.dirichlet_boundary's default.
  SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                     std::span<const double> vertices, int order, const SemPoissonOptions& options,
                     const std::vector<std::int64_t>* faces);
  /// with_arithmetic's: `other`'s data shared, its kernels kept.
  SemPoissonOperator(const SemPoissonOperator& other, Precision arithmetic);

  /// What an operator shares with its copies of another arithmetic (with_arithmetic): the
  /// numbering, geometry and assembly lists, and the scratch of the applications.
  struct Data {
    GlobalNumbering numbering;
    GllRule rule;
    std::vector<double> vertices_host;          // 8 x 3 corners per element
    std::vector<std::int64_t> dirichlet_faces;  // element * 6 + face; empty: options' default
    std::vector<double> mass;
    std::vector<char> mask_host;
    std::vector<double> coordinates;
    Array<double> derivative;
    Array<double> g;
    Array<double> vertices;  // 8 x 3 corners per element (the vertex kernel)
    Array<double> nodes;     // GLL nodes and weights (the vertex kernel)
    Array<double> weights;
    Array<index_t> local_to_global;   // host backends
    Array<std::uint32_t> local_code;  // cuda
    Array<index_t> shared_offsets;    // cuda
    Array<index_t> shared_locals;     // cuda
    Array<std::int64_t> global_offsets;
    Array<index_t> global_locals;
    Array<char> mask;
    Array<double> local_x;  // scratch
    Array<double> local_y;  // scratch
  };

  SemElementKernel element_kernel_ = SemElementKernel::layered;
  SemAssembly assembly_ = SemAssembly::sorted;
  SemDiagonalKernel diagonal_kernel_ = SemDiagonalKernel::extended;
  SemPoissonOptions options_;  // as given (dirichlet_types cleared)
  std::shared_ptr<Data> data_;
};

/// Adds the load of the natural (Neumann) boundary faces to a right-hand side b of A:
///   b_g += sum over Neumann faces and their GLL points of w_a w_b (n dS / dr_a dr_b) . q(x),
/// GLL face quadrature of the boundary term of the weak form, int_Gamma_N (q . n) v dS, where q
/// is the flux grad(u) of the solution (for -Laplace(u) = f) at the point x. The Neumann faces
/// are the boundary-condition records of mesh.fields[0] whose type is not in dirichlet_types;
/// with dirichlet_types empty every boundary face is Dirichlet and nothing is added. On the
/// trilinear face of axis d, n dS = +-|J| grad(r_d) dr_a dr_b (sign + on r_d = +1): the row d
/// of the cofactor matrix of J. Dirichlet points of A (their rows are identity rows) are left
/// alone. Preconditions: A was built on `mesh` with the same dirichlet_types; b has
/// A.num_rows() entries (host). Throws DimensionMismatch for another b or element count,
/// InvalidInput for a face record naming an element out of range.
void add_neumann_load(
    const SemPoissonOperator& A, const HexMesh& mesh,
    const std::vector<std::string>& dirichlet_types,
    const std::function<std::array<double, 3>(const std::array<double, 3>&)>& flux,
    std::vector<double>& b);

}  // namespace kryflow::sem
