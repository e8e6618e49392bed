// Setup of the matrix-free SEM Poisson operator: numbering, geometry, assembly lists.
#include "kryflow/sem/poisson_operator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "kernels/sem/diagonal.hpp"
#include "kernels/sem/poisson.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::sem {

namespace {

template <class Enum, std::size_t K>
Enum parse_choice(const std::string& name, const std::array<Enum, K>& values, const char* what) {
  std::string valid;
  for (Enum v : values) {
    if (name == to_string(v)) return v;
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw InvalidInput(std::string("unknown ") + what + " '" + name + "' (valid: " + valid + ")");
}

/// Local index (k N + j) N + i of point (a, b) of face `face` (0..5, kryflow order): the
/// face's axis index fixed at 0 or N - 1, a and b along the other two axes in increasing order.
std::int64_t face_point(int face, int N, int a, int b) {
  const int axis = face / 2;
  int ijk[3];
  ijk[axis] = (face % 2) == 0 ? 0 : N - 1;
  ijk[axis == 0 ? 1 : 0] = a;
  ijk[axis == 2 ? 1 : 2] = b;
  return (static_cast<std::int64_t>(ijk[2]) * N + ijk[1]) * N + ijk[0];
}

/// The faces (element * 6 + face) of `mesh.fields[0]` whose type is one of `types`.
std::vector<std::int64_t> faces_of_types(const HexMesh& mesh,
                                         const std::vector<std::string>& types) {
  if (mesh.fields.empty()) {
    throw InvalidInput(
        "SemPoissonOperator: Dirichlet boundary-condition types were given but the "
        "mesh has no boundary-condition field");
  }
  std::vector<std::int64_t> faces;
  for (const BoundaryFace& f : mesh.fields[0]) {
    if (std::find(types.begin(), types.end(), f.type) == types.end()) continue;
    faces.push_back(f.element * 6 + f.face);
  }
  if (faces.empty()) {
    std::string listed;
    for (const std::string& t : types) listed += (listed.empty() ? "'" : ", '") + t + "'";
    throw InvalidInput("SemPoissonOperator: no boundary face of the mesh has type " + listed);
  }
  return faces;
}

/// The Dirichlet points of `faces` (element * 6 + face).
std::vector<char> dirichlet_of_faces(const GlobalNumbering& numbering,
                                     const std::vector<std::int64_t>& faces) {
  const int N = numbering.order + 1;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  std::vector<char> mask(static_cast<std::size_t>(numbering.num_global), 0);
  for (const std::int64_t ef : faces) {
    const std::int64_t element = ef / 6;
    const int face = static_cast<int>(ef % 6);
    for (int b = 0; b < N; ++b) {
      for (int a = 0; a < N; ++a) {
        const std::int64_t q = face_point(face, N, a, b);
        mask[static_cast<std::size_t>(
            numbering.local_to_global[static_cast<std::size_t>(element * n3 + q)])] = 1;
      }
    }
  }
  return mask;
}

/// The numbering with its shared points (multiplicity > 1) renumbered first, then the others,
/// each group in its previous order: the cuda assembly adds into one contiguous range.
GlobalNumbering shared_points_first(GlobalNumbering numbering) {
  const auto num_global = static_cast<std::size_t>(numbering.num_global);
  std::vector<std::int64_t> new_index(num_global);
  std::int64_t next = 0;
  for (std::size_t g = 0; g < num_global; ++g) {
    if (numbering.multiplicity[g] > 1) new_index[g] = next++;
  }
  for (std::size_t g = 0; g < num_global; ++g) {
    if (numbering.multiplicity[g] <= 1) new_index[g] = next++;
  }
  for (std::int64_t& g : numbering.local_to_global) g = new_index[static_cast<std::size_t>(g)];
  std::vector<int> multiplicity(num_global);
  std::vector<char> on_boundary(num_global);
  for (std::size_t g = 0; g < num_global; ++g) {
    const auto h = static_cast<std::size_t>(new_index[g]);
    multiplicity[h] = numbering.multiplicity[g];
    on_boundary[h] = numbering.on_boundary[g];
  }
  numbering.multiplicity = std::move(multiplicity);
  numbering.on_boundary = std::move(on_boundary);
  return numbering;
}

/// The kernels read x while they write y (the atomic assembly zeroes part of y first).
void check_not_aliased(const Vector& x, const Vector& y, const char* operation) {
  if (x.size() > 0 && x.span().data() == y.span().data()) {
    throw InvalidInput(std::string(operation) + ": x and y are the same vector");
  }
}

SemPoissonOptions options_with_dirichlet(bool dirichlet_boundary) {
  SemPoissonOptions options;
  options.dirichlet_boundary = dirichlet_boundary;
  return options;
}

}  // namespace

const char* to_string(SemElementKernel kernel) {
  switch (kernel) {
    case SemElementKernel::automatic:
      return "automatic";
    case SemElementKernel::shared:
      return "shared";
    case SemElementKernel::layered:
      return "layered";
    case SemElementKernel::staged:
      return "staged";
    case SemElementKernel::pipelined:
      return "pipelined";
    case SemElementKernel::vertex:
      return "vertex";
    case SemElementKernel::vertex_lines:
      return "vertex_lines";
  }
  return "?";
}

const char* to_string(SemAssembly assembly) {
  switch (assembly) {
    case SemAssembly::automatic:
      return "automatic";
    case SemAssembly::sorted:
      return "sorted";
    case SemAssembly::atomic:
      return "atomic";
  }
  return "?";
}

const char* to_string(SemDiagonalKernel kernel) {
  switch (kernel) {
    case SemDiagonalKernel::automatic:
      return "automatic";
    case SemDiagonalKernel::natural:
      return "natural";
    case SemDiagonalKernel::shared:
      return "shared";
    case SemDiagonalKernel::extended:
      return "extended";
    case SemDiagonalKernel::wide:
      return "wide";
  }
  return "?";
}

SemElementKernel parse_sem_element_kernel(const std::string& name) {
  return parse_choice(
      name,
      std::array{SemElementKernel::automatic, SemElementKernel::shared, SemElementKernel::layered,
                 SemElementKernel::staged, SemElementKernel::pipelined, SemElementKernel::vertex,
                 SemElementKernel::vertex_lines},
      "SEM element kernel");
}

SemAssembly parse_sem_assembly(const std::string& name) {
  return parse_choice(name,
                      std::array{SemAssembly::automatic, SemAssembly::sorted, SemAssembly::atomic},
                      "SEM assembly");
}

SemDiagonalKernel parse_sem_diagonal_kernel(const std::string& name) {
  return parse_choice(
      name,
      std::array{SemDiagonalKernel::automatic, SemDiagonalKernel::natural,
                 SemDiagonalKernel::shared, SemDiagonalKernel::extended, SemDiagonalKernel::wide},
      "SEM diagonal kernel");
}

SemPoissonOperator::SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                                       std::span<const double> vertices, int order,
                                       bool dirichlet_boundary)
    : SemPoissonOperator(backend, num_elements, vertices, order,
                         options_with_dirichlet(dirichlet_boundary)) {}

SemPoissonOperator::SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                                       std::span<const double> vertices, int order,
                                       const SemPoissonOptions& options)
    : data_(std::make_shared<Data>()) {
  data_->numbering = shared_points_first(number_gll_points(num_elements, vertices, order));
  data_->rule = gll_rule(order);
  if (!options.dirichlet_types.empty()) {
    throw InvalidInput(
        "SemPoissonOperator: Dirichlet boundary-condition types need a mesh with boundary faces");
  }
  build(backend, num_elements, vertices, nullptr, options);
}

SemPoissonOperator::SemPoissonOperator(const Backend& backend, const HexMesh& mesh, int order,
                                       const SemPoissonOptions& options)
    : data_(std::make_shared<Data>()) {
  data_->numbering =
      shared_points_first(number_gll_points(mesh.num_elements, mesh.vertices, order));
  data_->rule = gll_rule(order);
  std::vector<char> mask;
  if (options.dirichlet_boundary && !options.dirichlet_types.empty()) {
    data_->dirichlet_faces = faces_of_types(mesh, options.dirichlet_types);
    mask = dirichlet_of_faces(data_->numbering, data_->dirichlet_faces);
  }
  build(backend, mesh.num_elements, mesh.vertices, mask.empty() ? nullptr : &mask, options);
}

SemPoissonOperator::SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                                       std::span<const double> vertices, int order,
                                       const SemPoissonOptions& options,
                                       const std::vector<std::int64_t>* faces)
    : data_(std::make_shared<Data>()) {
  data_->numbering = shared_points_first(number_gll_points(num_elements, vertices, order));
  data_->rule = gll_rule(order);
  std::vector<char> mask;
  if (faces != nullptr) {
    data_->dirichlet_faces = *faces;
    mask = dirichlet_of_faces(data_->numbering, data_->dirichlet_faces);
  }
  build(backend, num_elements, vertices, faces != nullptr ? &mask : nullptr, options);
}

std::unique_ptr<SemPoissonOperator> SemPoissonOperator::at_order(int order) const {
  SemPoissonOptions options = options_;
  options.element_kernel = SemElementKernel::automatic;
  options.diagonal_kernel = SemDiagonalKernel::automatic;
  return std::unique_ptr<SemPoissonOperator>(new SemPoissonOperator(
      backend(), data_->numbering.num_elements, data_->vertices_host, order, options,
      data_->dirichlet_faces.empty() ? nullptr : &data_->dirichlet_faces));
}

SemPoissonOperator::SemPoissonOperator(const SemPoissonOperator& other, Precision arithmetic)
    : options_(other.options_), data_(other.data_) {
  options_.arithmetic = arithmetic;
  select_kernels(other.element_kernel_, other.assembly_);
  diagonal_kernel_ = other.diagonal_kernel_;
}

std::unique_ptr<SemPoissonOperator> SemPoissonOperator::with_arithmetic(
    Precision arithmetic) const {
  return std::unique_ptr<SemPoissonOperator>(new SemPoissonOperator(*this, arithmetic));
}

CooMatrix SemPoissonOperator::assembled_matrix() const {
  const int N = data_->numbering.order + 1;
  if (data_->numbering.order > 3) {
    throw NotSupported("SemPoissonOperator::assembled_matrix: order " +
                       std::to_string(data_->numbering.order) +
                       " (N^7 operations per element); at most order 3");
  }
  const int n3 = N * N * N;
  const std::int64_t num_elements = data_->numbering.num_elements;
  const GeometricFactors factors =
      geometric_factors(num_elements, data_->vertices_host, data_->rule);
  const std::vector<double> D = derivative_matrix(data_->rule);
  CooMatrix coo;
  coo.num_rows = coo.num_cols = static_cast<index_t>(data_->numbering.num_global);
  coo.reserve(static_cast<std::size_t>(num_elements) * static_cast<std::size_t>(n3) * n3 +
              static_cast<std::size_t>(data_->numbering.num_global));
  std::vector<double> u(static_cast<std::size_t>(n3)), y(static_cast<std::size_t>(n3));
  std::vector<double> w(static_cast<std::size_t>(3 * n3));
  const auto at = [N](int i, int j, int k) { return (k * N + j) * N + i; };
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const double* G = factors.g.data() + e * 6 * n3;
    const std::int64_t* l2g = data_->numbering.local_to_global.data() + e * n3;
    for (int column = 0; column < n3; ++column) {
      const auto gc = static_cast<std::size_t>(l2g[column]);
      if (data_->mask_host[gc] != 0) continue;
      std::fill(u.begin(), u.end(), 0.0);
      u[static_cast<std::size_t>(column)] = 1.0;
      // w_a = G_a1 u_r + G_a2 u_s + G_a3 u_t at every point, then y = D^T w (r, s, t).
      for (int k = 0; k < N; ++k) {
        for (int j = 0; j < N; ++j) {
          for (int i = 0; i < N; ++i) {
            double ur = 0.0, us = 0.0, ut = 0.0;
            for (int m = 0; m < N; ++m) {
              ur +=
                  D[static_cast<std::size_t>(i * N + m)] * u[static_cast<std::size_t>(at(m, j, k))];
              us +=
                  D[static_cast<std::size_t>(j * N + m)] * u[static_cast<std::size_t>(at(i, m, k))];
              ut +=
                  D[static_cast<std::size_t>(k * N + m)] * u[static_cast<std::size_t>(at(i, j, m))];
            }
            const int q = at(i, j, k);
            const double g11 = G[0 * n3 + q], g12 = G[1 * n3 + q], g13 = G[2 * n3 + q];
            const double g22 = G[3 * n3 + q], g23 = G[4 * n3 + q], g33 = G[5 * n3 + q];
            w[static_cast<std::size_t>(q)] = g11 * ur + g12 * us + g13 * ut;
            w[static_cast<std::size_t>(n3 + q)] = g12 * ur + g22 * us + g23 * ut;
            w[static_cast<std::size_t>(2 * n3 + q)] = g13 * ur + g23 * us + g33 * ut;
          }
        }
      }
      for (int k = 0; k < N; ++k) {
        for (int j = 0; j < N; ++j) {
          for (int i = 0; i < N; ++i) {
            double sum = 0.0;
            for (int m = 0; m < N; ++m) {
              sum +=
                  D[static_cast<std::size_t>(m * N + i)] * w[static_cast<std::size_t>(at(m, j, k))];
              sum += D[static_cast<std::size_t>(m * N + j)] *
                     w[static_cast<std::size_t>(n3 + at(i, m, k))];
              sum += D[static_cast<std::size_t>(m * N + k)] *
                     w[static_cast<std::size_t>(2 * n3 + at(i, j, m))];
            }
            y[static_cast<std::size_t>(at(i, j, k))] = sum;
          }
        }
      }
      for (int row = 0; row < n3; ++row) {
        const auto gr = static_cast<std::size_t>(l2g[row]);
        if (data_->mask_host[gr] != 0 || y[static_cast<std::size_t>(row)] == 0.0) continue;
        coo.push_back(static_cast<index_t>(gr), static_cast<index_t>(gc),
                      y[static_cast<std::size_t>(row)]);
      }
    }
  }
  for (std::int64_t g = 0; g < data_->numbering.num_global; ++g) {
    if (data_->mask_host[static_cast<std::size_t>(g)] != 0) {
      coo.push_back(static_cast<index_t>(g), static_cast<index_t>(g), 1.0);
    }
  }
  return coo;
}

void SemPoissonOperator::build(const Backend& backend, std::int64_t num_elements,
                               std::span<const double> vertices, const std::vector<char>* dirichlet,
                               const SemPoissonOptions& options) {
  const int N = data_->numbering.order + 1;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const std::int64_t num_local = num_elements * n3;
  if (num_local > std::numeric_limits<index_t>::max() ||
      data_->numbering.num_global > std::numeric_limits<index_t>::max()) {
    throw NotSupported("SemPoissonOperator: " + std::to_string(num_local) +
                       " local points exceed the 32-bit index range");
  }
  const GeometricFactors factors = geometric_factors(num_elements, vertices, data_->rule);
  const std::int64_t num_global = data_->numbering.num_global;
  options_ = options;
  options_.dirichlet_types.clear();
  data_->vertices_host.assign(vertices.begin(), vertices.end());

  // Assembly lists: the locals of each global point in increasing local index.
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_global + 1), 0);
  for (std::int64_t g : data_->numbering.local_to_global)
    ++offsets[static_cast<std::size_t>(g + 1)];
  for (std::int64_t g = 0; g < num_global; ++g) {
    offsets[static_cast<std::size_t>(g + 1)] += offsets[static_cast<std::size_t>(g)];
  }
  std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
  std::vector<index_t> locals(static_cast<std::size_t>(num_local));
  for (std::int64_t l = 0; l < num_local; ++l) {
    const auto g =
        static_cast<std::size_t>(data_->numbering.local_to_global[static_cast<std::size_t>(l)]);
    locals[static_cast<std::size_t>(next[g]++)] = static_cast<index_t>(l);
  }

  // Mass, coordinates and mask on the host.
  data_->mass.assign(static_cast<std::size_t>(num_global), 0.0);
  data_->coordinates.assign(static_cast<std::size_t>(3 * num_global), 0.0);
  for (std::int64_t e = 0; e < num_elements; ++e) {
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const std::int64_t q = (static_cast<std::int64_t>(k) * N + j) * N + i;
          const auto g = static_cast<std::size_t>(
              data_->numbering.local_to_global[static_cast<std::size_t>(e * n3 + q)]);
          data_->mass[g] += factors.mass[static_cast<std::size_t>(e * n3 + q)];
          const double r[3] = {data_->rule.nodes[i], data_->rule.nodes[j], data_->rule.nodes[k]};
          double J[3][3];
          trilinear_map(vertices.data() + e * 24, r, data_->coordinates.data() + 3 * g, J);
        }
      }
    }
  }
  data_->mask_host.assign(static_cast<std::size_t>(num_global), 0);
  if (options.dirichlet_boundary)
    data_->mask_host = dirichlet != nullptr ? *dirichlet : data_->numbering.on_boundary;

  data_->derivative = Array<double>::from_host(backend, derivative_matrix(data_->rule));
  data_->g = Array<double>::from_host(backend, factors.g);
  data_->vertices =
      Array<double>::from_host(backend, std::vector<double>(vertices.begin(), vertices.end()));
  data_->nodes = Array<double>::from_host(backend, data_->rule.nodes);
  data_->weights = Array<double>::from_host(backend, data_->rule.weights);
  if (!backend.is_device()) {
    // The cuda kernels gather through the local codes built below; the host loops read the
    // numbering itself.
    data_->local_to_global = Array<index_t>::from_host(
        backend, std::vector<index_t>(data_->numbering.local_to_global.begin(),
                                      data_->numbering.local_to_global.end()));
  }
  data_->global_offsets = Array<std::int64_t>::from_host(backend, offsets);
  data_->global_locals = Array<index_t>::from_host(backend, locals);
  data_->mask = Array<char>::from_host(backend, data_->mask_host);
  if (backend.is_device()) {
    if (num_global >= (std::int64_t{1} << 30)) {
      throw NotSupported("SemPoissonOperator: the cuda kernels address at most 2^30 global points");
    }
    // Codes of the local points and the shared points' lists (kernels/sem/poisson.hpp).
    // Bit 31 (unique): a point of one element, or the first local point of a shared Dirichlet
    // point, which writes that point's identity row in the atomic assembly (kernels/sem/
    // poisson_cuda.cu, store_point). Bit 30: a Dirichlet point.
    std::vector<std::uint32_t> code(static_cast<std::size_t>(num_local));
    std::vector<char> seen(static_cast<std::size_t>(num_global), 0);
    for (std::int64_t l = 0; l < num_local; ++l) {
      const auto g =
          static_cast<std::size_t>(data_->numbering.local_to_global[static_cast<std::size_t>(l)]);
      const bool dirichlet = data_->mask_host[g] != 0;
      const bool first = seen[g] == 0;
      seen[g] = 1;
      code[static_cast<std::size_t>(l)] =
          static_cast<std::uint32_t>(g) |
          (data_->numbering.multiplicity[g] == 1 || (dirichlet && first) ? (1u << 31) : 0u) |
          (dirichlet ? (1u << 30) : 0u);
    }
    // Shared points are 0 .. num_shared - 1 (shared_points_first).
    std::vector<index_t> shared_offsets = {0};
    std::vector<index_t> shared_locals;
    for (std::int64_t g = 0; g < num_global; ++g) {
      const auto begin = offsets[static_cast<std::size_t>(g)];
      const auto end = offsets[static_cast<std::size_t>(g + 1)];
      if (end - begin < 2) break;
      for (auto q = begin; q < end; ++q)
        shared_locals.push_back(locals[static_cast<std::size_t>(q)]);
      shared_offsets.push_back(static_cast<index_t>(shared_locals.size()));
    }
    data_->local_code = Array<std::uint32_t>::from_host(backend, code);
    data_->shared_offsets = Array<index_t>::from_host(backend, shared_offsets);
    data_->shared_locals = Array<index_t>::from_host(backend, shared_locals);
  }
  if (!backend.is_device())
    data_->local_x = Array<double>(backend, static_cast<std::size_t>(num_local));
  data_->local_y = Array<double>(backend, static_cast<std::size_t>(num_local));

  select_kernels(options.element_kernel, options.assembly);
  diagonal_kernel_ = options.diagonal_kernel;
  // H200 (kryflow_bench_sem_diagonal, p = 2..11, bench/results/h200_automatic_choices): on
  // meshes that fill the device shared is fastest for N = 4..10 (p = 8: wide 2 % ahead, a
  // tie), wide for N = 3 (0.90 of the roofline against 0.59) and above N = 10, where shared
  // does not fit a block. N = 2 (not measured) takes N = 3's.
  if (diagonal_kernel_ == SemDiagonalKernel::automatic) {
    diagonal_kernel_ = N >= 4 && N <= 10 ? SemDiagonalKernel::shared : SemDiagonalKernel::wide;
  }
  if ((diagonal_kernel_ == SemDiagonalKernel::natural ||
       diagonal_kernel_ == SemDiagonalKernel::shared) &&
      N > 10) {
    throw NotSupported(std::string("SemPoissonOperator: the ") + to_string(diagonal_kernel_) +
                       " diagonal kernel needs N^3 <= 1024 threads (order <= 9); use extended");
  }
  kernels::sem::poisson_prepare(backend, view(true));
}

void SemPoissonOperator::select_kernels(SemElementKernel element_kernel, SemAssembly assembly) {
  // The defaults were measured on an H200 (kryflow_bench_sem, box and Kershaw meshes,
  // bench/results/h200_sem_vertex/b99922b): the shared kernel is fastest for p = 3 and 5
  // (box: 625 us against 696 for layered at p = 3, 818 against 826 for staged at p = 5), the
  // vertex kernel for p = 4 and from p = 6 on (p = 7: 680 us against 784 for pipelined, the
  // H100's choice; Kershaw 98 against 118); atomic assembly beats sorted for the vertex kernel
  // at every order. p = 1 and 2 (not measured on the H200) keep the H100's shared. Every
  // kryflow mesh is trilinear (8 corners per element), which is what the vertex kernel needs.
  // The vertex_lines kernel, measured later (bench/results/h200_pmg/c3fdb9c_vertex_lines_caps,
  // atomic assembly, box), beats both at p = 5, 7 and 9: double 690, 466 and 624 us against 812
  // (shared), 610 and 1029 (vertex); float 545, 356 and 448 against 625 (shared), 460 and 719
  // (vertex); Kershaw at p = 7 68.5 and 55.1 against 85.8 and 65.6. At p = 3 shared stays the
  // fastest (622 us against 784). So: shared for p <= 3, vertex_lines for p = 4..9 (N <= 10,
  // its limit; p = 4, 6 and 8 not measured), vertex from p = 10 on.
  if (element_kernel == SemElementKernel::automatic) {
    const int p = data_->numbering.order;
    element_kernel = p <= 3   ? SemElementKernel::shared
                     : p <= 9 ? SemElementKernel::vertex_lines
                              : SemElementKernel::vertex;
  }
  if (element_kernel == SemElementKernel::shared && data_->numbering.order + 1 > 10) {
    throw NotSupported(
        "SemPoissonOperator: the shared element kernel needs N^3 <= 1024 threads "
        "(order <= 9); use layered");
  }
  if (element_kernel == SemElementKernel::vertex_lines && data_->numbering.order + 1 > 10) {
    throw NotSupported(
        "SemPoissonOperator: the vertex_lines element kernel needs N <= 10 points per direction "
        "(order <= 9); use vertex");
  }
  if (assembly == SemAssembly::automatic) assembly = SemAssembly::atomic;
  // The float kernels (kernels/sem/poisson_cuda.cu): staged and pipelined run as layered.
  if (options_.arithmetic == Precision::float32 &&
      (element_kernel == SemElementKernel::staged ||
       element_kernel == SemElementKernel::pipelined)) {
    element_kernel = SemElementKernel::layered;
  }
  element_kernel_ = element_kernel;
  assembly_ = assembly;
}

kernels::sem::PoissonView SemPoissonOperator::view(bool masked) const {
  kernels::sem::PoissonView view;
  view.num_elements = data_->numbering.num_elements;
  view.n = data_->numbering.order + 1;
  view.derivative = data_->derivative.data();
  view.g = data_->g.data();
  view.vertices = data_->vertices.data();
  view.nodes = data_->nodes.data();
  view.weights = data_->weights.data();
  view.num_global = data_->numbering.num_global;
  view.local_to_global = data_->local_to_global.data();
  view.global_offsets = data_->global_offsets.data();
  view.global_locals = data_->global_locals.data();
  view.mask = masked ? data_->mask.data() : nullptr;
  view.local_code = data_->local_code.data();
  view.num_shared = static_cast<index_t>(data_->shared_offsets.size()) - 1;
  view.shared_offsets = data_->shared_offsets.data();
  view.shared_locals = data_->shared_locals.data();
  view.local_x = data_->local_x.data();
  view.local_y = data_->local_y.data();
  view.float_arithmetic = options_.arithmetic == Precision::float32;
  view.element_kernel = kernels::sem::ElementKernel::layered;
  switch (element_kernel_) {
    case SemElementKernel::shared:
      view.element_kernel = kernels::sem::ElementKernel::shared;
      break;
    case SemElementKernel::staged:
      view.element_kernel = kernels::sem::ElementKernel::staged;
      break;
    case SemElementKernel::pipelined:
      view.element_kernel = kernels::sem::ElementKernel::pipelined;
      break;
    case SemElementKernel::vertex:
      view.element_kernel = kernels::sem::ElementKernel::vertex;
      break;
    case SemElementKernel::vertex_lines:
      view.element_kernel = kernels::sem::ElementKernel::vertex_lines;
      break;
    case SemElementKernel::automatic:
    case SemElementKernel::layered:
      break;
  }
  view.assembly = assembly_ == SemAssembly::atomic ? kernels::sem::Assembly::atomic
                                                   : kernels::sem::Assembly::sorted;
  return view;
}

void SemPoissonOperator::apply(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "SemPoissonOperator::apply");
  check_not_aliased(x, y, "SemPoissonOperator::apply");
  kernels::sem::poisson_apply(backend(), view(true), x.span(), y.span());
}

void SemPoissonOperator::apply(double alpha, const Vector& x, double beta, Vector& y) const {
  if (beta != 1.0) {
    LinearOperator::apply(alpha, x, beta, y);
    return;
  }
  check_apply_shapes(x, y, "SemPoissonOperator::apply(alpha, x, 1, y)");
  check_not_aliased(x, y, "SemPoissonOperator::apply(alpha, x, 1, y)");
  kernels::sem::PoissonView v = view(true);
  v.accumulate = true;
  v.alpha = alpha;
  kernels::sem::poisson_apply(backend(), v, x.span(), y.span());
}

void SemPoissonOperator::residual(const Vector& b, const Vector& x, Vector& r) const {
  check_apply_shapes(x, r, "SemPoissonOperator::residual");
  check_apply_shapes(b, r, "SemPoissonOperator::residual");
  check_not_aliased(x, r, "SemPoissonOperator::residual");
  kernels::sem::PoissonView v = view(true);
  v.accumulate = true;
  v.alpha = -1.0;
  v.base = b.span().data();
  kernels::sem::poisson_apply(backend(), v, x.span(), r.span());
}

void SemPoissonOperator::apply_unmasked(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "SemPoissonOperator::apply_unmasked");
  check_not_aliased(x, y, "SemPoissonOperator::apply_unmasked");
  kernels::sem::poisson_apply(backend(), view(false), x.span(), y.span());
}

void SemPoissonOperator::diagonal(Vector& d) const {
  if (d.size() != static_cast<std::size_t>(data_->numbering.num_global)) {
    throw DimensionMismatch("SemPoissonOperator::diagonal: expected " +
                            std::to_string(data_->numbering.num_global) + " entries, got " +
                            std::to_string(d.size()));
  }
  if (!(d.backend() == backend())) {
    throw InvalidInput("SemPoissonOperator::diagonal: d must live on " + backend().name());
  }
  // d_L = diag(A_L) per element (eq. (9) with the cross terms), then summed over the locals of
  // each global point (Q^T), 1 at Dirichlet points.
  const kernels::sem::PoissonView v = view(true);
  kernels::sem::DiagonalVariant variant = kernels::sem::DiagonalVariant::extended;
  switch (diagonal_kernel_) {
    case SemDiagonalKernel::natural:
      variant = kernels::sem::DiagonalVariant::natural;
      break;
    case SemDiagonalKernel::shared:
      variant = kernels::sem::DiagonalVariant::shared;
      break;
    case SemDiagonalKernel::wide:
      variant = kernels::sem::DiagonalVariant::wide;
      break;
    case SemDiagonalKernel::automatic:
    case SemDiagonalKernel::extended:
      break;
  }
  kernels::sem::poisson_local_diagonal(backend(), v, variant, data_->local_y.span());
  kernels::sem::poisson_assemble_diagonal(backend(), v, data_->local_y.span(), 1.0, d.span());
}

double SemPoissonOperator::apply_bytes() const noexcept {
  const double num_local = static_cast<double>(data_->numbering.local_to_global.size());
  // The vertex kernel reads the 8 corners of each element instead of the metric terms.
  const double metric = backend().is_device() && (element_kernel_ == SemElementKernel::vertex ||
                                                  element_kernel_ == SemElementKernel::vertex_lines)
                            ? 24.0 * 8.0 * static_cast<double>(data_->numbering.num_elements)
                            : 6.0 * 8.0 * num_local;
  return metric + 4.0 * num_local + 16.0 * static_cast<double>(data_->numbering.num_global);
}

std::string SemPoissonOperator::kernel_description() const {
  const std::string arithmetic =
      options_.arithmetic == Precision::float32 ? ", float32 element arithmetic" : "";
  if (!backend().is_device()) {
    return std::string(to_string(backend().kind())) + " loops" + arithmetic;
  }
  return std::string(to_string(element_kernel_)) + " element kernel, " + to_string(assembly_) +
         " assembly, " + to_string(diagonal_kernel_) + " diagonal kernel" + arithmetic;
}

void add_neumann_load(
    const SemPoissonOperator& A, const HexMesh& mesh,
    const std::vector<std::string>& dirichlet_types,
    const std::function<std::array<double, 3>(const std::array<double, 3>&)>& flux,
    std::vector<double>& b) {
  const GlobalNumbering& numbering = A.numbering();
  if (b.size() != static_cast<std::size_t>(A.num_rows())) {
    throw DimensionMismatch("add_neumann_load: b has " + std::to_string(b.size()) +
                            " entries, the operator " + std::to_string(A.num_rows()));
  }
  if (mesh.num_elements != numbering.num_elements) {
    throw DimensionMismatch("add_neumann_load: the mesh has " + std::to_string(mesh.num_elements) +
                            " elements, the operator " + std::to_string(numbering.num_elements));
  }
  if (dirichlet_types.empty() || mesh.fields.empty()) return;
  const GllRule& rule = A.rule();
  const int N = rule.order + 1;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  for (const BoundaryFace& f : mesh.fields[0]) {
    if (std::find(dirichlet_types.begin(), dirichlet_types.end(), f.type) !=
        dirichlet_types.end()) {
      continue;
    }
    if (f.element < 0 || f.element >= mesh.num_elements || f.face < 0 || f.face > 5) {
      throw InvalidInput("add_neumann_load: boundary face record of element " +
                         std::to_string(f.element + 1) + ", face " + std::to_string(f.face) +
                         " is out of range");
    }
    const int axis = f.face / 2;
    const double sign = (f.face % 2) == 0 ? -1.0 : 1.0;
    for (int bb = 0; bb < N; ++bb) {
      for (int aa = 0; aa < N; ++aa) {
        const std::int64_t q = face_point(f.face, N, aa, bb);
        const int ijk[3] = {static_cast<int>(q % N), static_cast<int>((q / N) % N),
                            static_cast<int>(q / (static_cast<std::int64_t>(N) * N))};
        const auto g = static_cast<std::size_t>(
            numbering.local_to_global[static_cast<std::size_t>(f.element * n3 + q)]);
        if (A.dirichlet()[g] != 0) continue;
        // The trilinear map and its Jacobian J[c][d] = dx_c / dr_d at the point.
        const double r[3] = {rule.nodes[ijk[0]], rule.nodes[ijk[1]], rule.nodes[ijk[2]]};
        double J[3][3];
        std::array<double, 3> x;
        trilinear_map(mesh.vertices.data() + f.element * 24, r, x.data(), J);
        // Row `axis` of the cofactor matrix: |J| grad(r_axis) (the rows of |J| J^-1).
        const int a1 = (axis + 1) % 3;
        const int a2 = (axis + 2) % 3;
        double area_normal[3];
        for (int c = 0; c < 3; ++c) {
          const int c1 = (c + 1) % 3;
          const int c2 = (c + 2) % 3;
          area_normal[c] = J[c1][a1] * J[c2][a2] - J[c1][a2] * J[c2][a1];
        }
        const std::array<double, 3> flux_at = flux(x);
        const double w =
            rule.weights[static_cast<std::size_t>(aa)] * rule.weights[static_cast<std::size_t>(bb)];
        b[g] += w * sign *
                (area_normal[0] * flux_at[0] + area_normal[1] * flux_at[1] +
                 area_normal[2] * flux_at[2]);
      }
    }
  }
}

}  // namespace kryflow::sem
