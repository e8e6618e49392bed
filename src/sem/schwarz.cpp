// Overlapping Schwarz on element patches with fast-diagonalization local solves: the patches'
// box numbering, the separable 1D operators and their generalized eigenvectors (host), and the
// apply (the local solves and the sums of kernels/sem/schwarz.hpp).
#include "kryflow/sem/schwarz.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"
#include "src/sem/fdm_patches.hpp"

#ifdef _OPENMP
#define KRYFLOW_SCHWARZ_OMP(directive) _Pragma(directive)
#else
#define KRYFLOW_SCHWARZ_OMP(directive)
#endif

namespace kryflow::sem {
namespace {

/// The point with face coordinates (u, v) of face f (direction f / 2: r, s, t; side f % 2: index
/// 0 or p): u and v run along the two other directions in order.
std::array<int, 3> face_point(int f, int n, int u, int v) {
  const int d = f / 2;
  std::array<int, 3> c{};
  c[d] = f % 2 == 0 ? 0 : n - 1;
  c[d == 0 ? 1 : 0] = u;
  c[d == 2 ? 1 : 2] = v;
  return c;
}

}  // namespace

SchwarzPreconditioner::Patches SchwarzPreconditioner::build_patches(const SemPoissonOperator& A) {
  const GlobalNumbering& numbering = A.numbering();
  const int n = numbering.order + 1;
  const int p = n - 1;
  const int N = n + 2;
  const std::int64_t E = numbering.num_elements;
  const std::int64_t N3 = static_cast<std::int64_t>(N) * N * N;
  if (E * N3 > 0x7fffffffLL) {
    throw NotSupported("SchwarzPreconditioner: " + std::to_string(E * N3) +
                       " patch points exceed 2^31 - 1");
  }
  const auto& l2g = numbering.local_to_global;
  const std::vector<char>& dirichlet = A.dirichlet();

  // The face adjacency of the numbering: neighbour[e * 6 + f] = {e', f'}, or {-1, -1}.
  std::vector<std::pair<std::int64_t, int>> neighbour(static_cast<std::size_t>(E * 6), {-1, -1});
  for (std::size_t q = 0; q < neighbour.size(); ++q) {
    const std::int64_t other = numbering.face_neighbours[q];
    if (other >= 0) neighbour[q] = {other / 6, static_cast<int>(other % 6)};
  }

  const std::vector<double> length = detail::element_lengths(A);
  const GllRule& rule = A.rule();
  const std::vector<double> stiffness = detail::reference_stiffness(rule);

  Patches patches;
  patches.n = n;
  patches.box_to_global.assign(static_cast<std::size_t>(E * N3), -1);
  patches.eigenvectors.assign(static_cast<std::size_t>(E * 3 * N * N), 0.0);
  patches.eigenvalues.assign(static_cast<std::size_t>(E * 3 * N), 0.0);
  auto box = [N](int i, int j, int k) { return (static_cast<std::int64_t>(k) * N + j) * N + i; };
  auto free_point = [&](std::int64_t g) {
    return dirichlet[g] != 0 ? -1 : static_cast<index_t>(g);
  };

  // Every element's patch is independent of the others: the elements are split among the
  // host's threads (the 1D eigenproblems dominate), each with its own scratch; an error of any
  // element is rethrown after the loop (the first by element index).
  auto build_element = [&](std::int64_t e, std::vector<double>& A1, std::vector<double>& B1,
                           std::vector<char>& active) {
    index_t* map = patches.box_to_global.data() + e * N3;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          map[box(i + 1, j + 1, k + 1)] = free_point(l2g[detail::local_index(e, n, {i, j, k})]);
    for (int f = 0; f < 6; ++f) {
      const auto [e2, f2] = neighbour[e * 6 + f];
      if (e2 < 0) continue;
      // The neighbour's face points by global index, and one step inward along its normal.
      std::vector<std::pair<std::int64_t, std::int64_t>> theirs;  // global, inward global
      for (int v = 0; v < n; ++v) {
        for (int u = 0; u < n; ++u) {
          std::array<int, 3> c = face_point(f2, n, u, v);
          const std::int64_t g = l2g[detail::local_index(e2, n, c)];
          c[f2 / 2] += f2 % 2 == 0 ? 1 : -1;
          theirs.push_back({g, l2g[detail::local_index(e2, n, c)]});
        }
      }
      std::sort(theirs.begin(), theirs.end());
      const int d = f / 2;
      for (int v = 0; v < n; ++v) {
        for (int u = 0; u < n; ++u) {
          const std::array<int, 3> c = face_point(f, n, u, v);
          const std::int64_t g = l2g[detail::local_index(e, n, c)];
          const auto it = std::lower_bound(theirs.begin(), theirs.end(),
                                           std::pair<std::int64_t, std::int64_t>{g, -1});
          if (it == theirs.end() || it->first != g) {
            throw InvalidInput("SchwarzPreconditioner: elements " + std::to_string(e + 1) +
                               " and " + std::to_string(e2 + 1) +
                               " share the corners of a face "
                               "but not its points");
          }
          std::array<int, 3> b{c[0] + 1, c[1] + 1, c[2] + 1};
          b[d] = f % 2 == 0 ? 0 : N - 1;
          map[box(b[0], b[1], b[2])] = free_point(it->second);
        }
      }
    }
    // The separable 1D problems.
    for (int d = 0; d < 3; ++d) {
      const double lm = length[e * 3 + d];
      std::fill(A1.begin(), A1.end(), 0.0);
      std::fill(B1.begin(), B1.end(), 0.0);
      std::fill(active.begin(), active.end(), 1);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) A1[(i + 1) * N + (j + 1)] += 2.0 / lm * stiffness[i * n + j];
        B1[i + 1] += 0.5 * lm * rule.weights[i];
      }
      for (int side = 0; side < 2; ++side) {
        const int f = 2 * d + side;
        const auto [e2, f2] = neighbour[e * 6 + f];
        // Box indices: the point beyond the face, and the face's own point.
        const int outer = side == 0 ? 0 : N - 1;
        const int face = side == 0 ? 1 : N - 2;
        if (e2 >= 0) {
          const double l = length[e2 * 3 + f2 / 2];
          // The neighbour's two points nearest the face: its indices p - 1, p (or 1, 0),
          // mapped to outer, face. The GLL matrices are centro-symmetric, so either is the
          // mirror of the other.
          const int box_index[2] = {outer, face};
          const int their[2] = {p - 1, p};
          for (int a = 0; a < 2; ++a) {
            for (int b = 0; b < 2; ++b) {
              A1[box_index[a] * N + box_index[b]] += 2.0 / l * stiffness[their[a] * n + their[b]];
            }
            B1[box_index[a]] += 0.5 * l * rule.weights[their[a]];
          }
        } else {
          active[outer] = 0;
          // A Dirichlet face: every point of the face is a Dirichlet point.
          bool all_dirichlet = true;
          for (int v = 0; v < n && all_dirichlet; ++v)
            for (int u = 0; u < n && all_dirichlet; ++u)
              all_dirichlet =
                  dirichlet[l2g[detail::local_index(e, n, face_point(f, n, u, v))]] != 0;
          if (all_dirichlet) active[face] = 0;
        }
      }
      detail::generalized_eigen(N, A1, B1, active,
                                patches.eigenvectors.data() + (e * 3 + d) * N * N,
                                patches.eigenvalues.data() + (e * 3 + d) * N);
    }
  };
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(E));
#ifdef KRYFLOW_WITH_OPENMP
  kernels::parallel::wait_passively();
#endif
  KRYFLOW_SCHWARZ_OMP("omp parallel") {
    std::vector<double> A1(static_cast<std::size_t>(N * N)), B1(static_cast<std::size_t>(N));
    std::vector<char> active(static_cast<std::size_t>(N));
    KRYFLOW_SCHWARZ_OMP("omp for schedule(dynamic, 64)")
    for (std::int64_t e = 0; e < E; ++e) {
      try {
        build_element(e, A1, B1, active);
      } catch (...) {
        errors[static_cast<std::size_t>(e)] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return patches;
}

void SchwarzPreconditioner::setup(const LinearOperator& A) {
  const auto* op = dynamic_cast<const SemPoissonOperator*>(&A);
  if (op == nullptr) {
    throw NotSupported(
        "SchwarzPreconditioner: A must be a spectral-element Poisson operator (kryflow sem)");
  }
  A_ = nullptr;
  Patches patches = build_patches(*op);
  const Backend& backend = op->backend();
  const GlobalNumbering& numbering = op->numbering();
  const int N = patches.n + 2;
  const std::int64_t N3 = static_cast<std::int64_t>(N) * N * N;
  const std::int64_t n3 = static_cast<std::int64_t>(patches.n) * patches.n * patches.n;
  const std::int64_t G = numbering.num_global;
  std::vector<double> weight(static_cast<std::size_t>(G));
  if (method_ == Method::additive) {
    // The assembly lists of the box points: every global point's patch points, in increasing
    // box index.
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(G + 1), 0);
    for (index_t g : patches.box_to_global)
      if (g >= 0) ++offsets[g + 1];
    for (std::int64_t g = 0; g < G; ++g) offsets[g + 1] += offsets[g];
    std::vector<index_t> locals(static_cast<std::size_t>(offsets[G]));
    std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t q = 0; q < patches.box_to_global.size(); ++q) {
      const index_t g = patches.box_to_global[q];
      if (g >= 0) locals[next[g]++] = static_cast<index_t>(q);
    }
    for (std::int64_t g = 0; g < G; ++g) weight[g] = op->dirichlet()[g] != 0 ? 0.0 : 1.0;
    offsets_ = Array<std::int64_t>::from_host(backend, offsets);
    locals_ = Array<index_t>::from_host(backend, locals);
  } else {
    for (std::int64_t g = 0; g < G; ++g) {
      weight[g] = op->dirichlet()[g] != 0 ? 0.0 : 1.0 / numbering.multiplicity[g];
    }
    offsets_ = Array<std::int64_t>();
    locals_ = Array<index_t>();
  }
  // The local solves' results: the box's points (ASM) or the element's own (RAS), in the
  // precision of the local solves (float32: the results are floats, summed in double).
  const auto locals_size =
      static_cast<std::size_t>(numbering.num_elements * (method_ == Method::additive ? N3 : n3));
  local_ = Array<double>();
  local32_ = Array<float>();
  if (precision_ == Precision::float32) {
    local32_ = Array<float>(backend, locals_size);
  } else {
    local_ = Array<double>(backend, locals_size);
  }
  box_to_global_ = Array<index_t>::from_host(backend, patches.box_to_global);
  if (precision_ == Precision::float32) {
    const std::vector<float> S(patches.eigenvectors.begin(), patches.eigenvectors.end());
    const std::vector<float> lambda(patches.eigenvalues.begin(), patches.eigenvalues.end());
    eigenvectors32_ = Array<float>::from_host(backend, S);
    eigenvalues32_ = Array<float>::from_host(backend, lambda);
    eigenvectors_ = Array<double>();
    eigenvalues_ = Array<double>();
  } else {
    eigenvectors_ = Array<double>::from_host(backend, patches.eigenvectors);
    eigenvalues_ = Array<double>::from_host(backend, patches.eigenvalues);
    eigenvectors32_ = Array<float>();
    eigenvalues32_ = Array<float>();
  }
  weight_ = Array<double>::from_host(backend, weight);
  num_elements_ = numbering.num_elements;
  n_ = patches.n;
  rows_ = op->num_rows();
  A_ = op;
}

const Backend& SchwarzPreconditioner::backend() const {
  if (A_ == nullptr) throw InvalidInput("SchwarzPreconditioner: used before setup");
  return A_->backend();
}

std::string SchwarzPreconditioner::name() const {
  return std::string(method_ == Method::additive ? "additive_schwarz"
                                                 : "restricted_additive_schwarz") +
         (precision_ == Precision::float32 ? " (float32)" : "");
}

void SchwarzPreconditioner::apply(const Vector& r, Vector& z) const {
  if (A_ == nullptr) throw InvalidInput("SchwarzPreconditioner: apply before setup");
  check_apply_shapes(r, z, "SchwarzPreconditioner::apply");
  run(r, kernels::sem::SchwarzUpdate{}, z);
}

void SchwarzPreconditioner::apply_update(const Vector& r, double alpha, double beta, Vector& d,
                                         Vector& x, bool x_is_zero, Vector&) const {
  if (A_ == nullptr) throw InvalidInput("SchwarzPreconditioner: apply before setup");
  check_apply_shapes(r, d, "SchwarzPreconditioner::apply_update");
  check_apply_shapes(r, x, "SchwarzPreconditioner::apply_update");
  const double* vectors[] = {r.span().data(), d.span().data(), x.span().data()};
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      if (vectors[a] == vectors[b] && r.size() > 0) {
        throw InvalidInput("SchwarzPreconditioner::apply_update: r, d and x must be distinct");
      }
    }
  }
  kernels::sem::SchwarzUpdate update;
  update.alpha = alpha;
  update.beta = beta;
  update.x = x.span().data();
  update.x_is_zero = x_is_zero;
  run(r, update, d);
}

void SchwarzPreconditioner::run(const Vector& r, const kernels::sem::SchwarzUpdate& update,
                                Vector& z) const {
  const Backend& backend = A_->backend();
  kernels::sem::SchwarzView view;
  view.num_elements = num_elements_;
  view.n = n_;
  view.box_to_global = box_to_global_.data();
  view.eigenvectors = eigenvectors_.data();
  view.eigenvalues = eigenvalues_.data();
  if (precision_ == Precision::float32) {
    view.eigenvectors32 = eigenvectors32_.data();
    view.eigenvalues32 = eigenvalues32_.data();
  }
  view.restricted = method_ == Method::restricted;
  kernels::sem::SchwarzLocals locals;
  if (precision_ == Precision::float32) {
    locals.values32 = local32_.data();
  } else {
    locals.values = local_.data();
  }
  kernels::sem::schwarz_fdm_solve(backend, view, r.span(), locals);
  kernels::sem::TransferSideView out;
  out.num_elements = num_elements_;
  out.n = n_;
  out.num_global = rows_;
  out.weight = weight_.data();
  if (method_ == Method::additive) {
    out.global_offsets = offsets_.data();
    out.global_locals = locals_.data();
  } else {
    out.global_offsets = A_->global_offsets().data();
    out.global_locals = A_->global_locals().data();
    if (!A_->shared_offsets().empty()) {  // cuda: the 32-bit shared lists, no weight read
      out.num_shared = static_cast<std::int64_t>(A_->shared_offsets().size()) - 1;
      out.shared_offsets = A_->shared_offsets().data();
      out.mask = A_->dirichlet_mask().empty() ? nullptr : A_->dirichlet_mask().data();
    }
  }
  kernels::sem::schwarz_assemble(backend, out, locals, r.span(), update, z.span());
}

}  // namespace kryflow::sem
