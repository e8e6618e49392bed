// Multiplicative Schwarz smoothing on vertex patches: the placement of each vertex's 2 x 2 x 2
// elements in one box (host), the colors, the separable 1D problems of each patch and their
// generalized eigenvectors (host), and the colored sweeps (the local solves and the scatter of
// kernels/sem/schwarz.hpp on the operator's backend).
#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/sem/schwarz.hpp"
#include "src/sem/fdm_patches.hpp"

#ifdef _OPENMP
#define KRYFLOW_VERTEX_PATCH_OMP(directive) _Pragma(directive)
#else
#define KRYFLOW_VERTEX_PATCH_OMP(directive)
#endif

namespace kryflow::sem {

struct VertexPatchSmoother::Data {
  const SemPoissonOperator* A = nullptr;
  int box = 0;  // M = 2p + 1
  std::vector<std::int64_t> color_offsets;
  std::vector<std::int64_t> vertex;  // the global point of each patch's vertex
  Array<index_t> box_to_global;
  Array<double> eigenvectors, eigenvalues;     // float64
  Array<float> eigenvectors32, eigenvalues32;  // float32
  Vector dirichlet;                            // 1 at the Dirichlet points, 0 elsewhere
  bool has_dirichlet = false;
  mutable Vector residual, scratch;
  mutable Array<double> local;   // the largest color's local results: float64
  mutable Array<float> local32;  // float32
  std::int64_t largest = 0;      // patches of the largest color
  Array<double> scale;           // per patch min(1, damping_bound / lambda_P); empty: 1
  std::vector<double> lambda;    // host copy of lambda_P
  std::int64_t uncovered = 0;    // unknowns inside no patch
  Vector jacobi;                 // w / A_gg at those unknowns, 0 elsewhere
  // Parameters::fused: every box point's global point, the elements and their placements.
  Array<index_t> box_full;
  Array<std::int64_t> elements;
  Array<std::int32_t> placements;
};

namespace {

/// Where one element of a vertex patch lies in the patch's box: local coordinate i_{perm[a]}
/// of the element is box coordinate base[a] + sign[a] * i_{perm[a]} along box axis a.
struct Placement {
  std::array<int, 3> perm{0, 1, 2};
  std::array<int, 3> sign{1, 1, 1};
  std::array<int, 3> base{0, 0, 0};
  /// Bit a set when the element lies on the upper side (box coordinates p .. 2p) of axis a.
  int octant(int p) const {
    int o = 0;
    for (int a = 0; a < 3; ++a) {
      if (std::min(base[a], base[a] + sign[a] * p) == p) o |= 1 << a;
    }
    return o;
  }
};

int corner_bit(int corner, int axis) {
  return (corner >> axis) & 1;
}

/// The placement with the given axes and signs that puts the element's corner `corner` at the
/// box center (p, p, p).
Placement placement(const std::array<int, 3>& perm, const std::array<int, 3>& sign, int corner,
                    int p) {
  Placement P;
  P.perm = perm;
  P.sign = sign;
  for (int a = 0; a < 3; ++a) P.base[a] = p - sign[a] * corner_bit(corner, perm[a]) * p;
  return P;
}

/// The 48 signed permutations of the three axes.
const std::vector<std::pair<std::array<int, 3>, std::array<int, 3>>>& orientations() {
  static const auto all = [] {
    std::vector<std::pair<std::array<int, 3>, std::array<int, 3>>> result;
    std::array<int, 3> perm{0, 1, 2};
    do {
      for (int s = 0; s < 8; ++s) {
        result.push_back({perm, {s & 1 ? -1 : 1, s & 2 ? -1 : 1, s & 4 ? -1 : 1}});
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
    return result;
  }();
  return all;
}

/// Places the 8 (element, corner) pairs around one vertex in a 2 x 2 x 2 box: the first as it
/// is, each other one by the orientation under which at least 4 of its corners (a face) fall on
/// box lattice points already taken by the same global points and none on points of others.
/// False when the elements do not form such a box.
bool place_patch(const GlobalNumbering& numbering,
                 const std::vector<std::pair<std::int64_t, int>>& around,
                 std::array<Placement, 8>& placed) {
  const int p = numbering.order;
  std::array<std::int64_t, 27> lattice;
  lattice.fill(-1);
  std::array<bool, 8> octant_used{};
  std::array<bool, 8> done{};
  auto lattice_index = [p](const Placement& P, int c) {
    int index = 0;
    for (int a = 2; a >= 0; --a) {
      index = index * 3 + (P.base[a] + P.sign[a] * corner_bit(c, P.perm[a]) * p) / p;
    }
    return index;
  };
  auto take = [&](int k, const Placement& P) {
    placed[k] = P;
    done[k] = true;
    octant_used[P.octant(p)] = true;
    for (int c = 0; c < 8; ++c)
      lattice[lattice_index(P, c)] = detail::corner_point(numbering, around[k].first, c);
  };
  take(0, placement({0, 1, 2}, {1, 1, 1}, around[0].second, p));
  for (int pass = 0; pass < 8; ++pass) {
    bool progress = false;
    for (int k = 1; k < 8; ++k) {
      if (done[k]) continue;
      const auto [e, corner] = around[k];
      std::array<std::int64_t, 8> corners{};
      for (int c = 0; c < 8; ++c) corners[c] = detail::corner_point(numbering, e, c);
      for (const auto& [perm, sign] : orientations()) {
        const Placement P = placement(perm, sign, corner, p);
        if (octant_used[P.octant(p)]) continue;
        int matches = 0;
        bool conflict = false;
        for (int c = 0; c < 8 && !conflict; ++c) {
          const std::int64_t there = lattice[lattice_index(P, c)];
          if (there == corners[c]) {
            ++matches;
          } else if (there >= 0) {
            conflict = true;
          }
        }
        if (!conflict && matches >= 4) {
          take(k, P);
          progress = true;
          break;
        }
      }
    }
    if (!progress) break;
  }
  return std::all_of(done.begin(), done.end(), [](bool d) { return d; });
}

/// Colors 0..7 of the mesh's vertices (by global point) with the 8 corners of every element
/// colored differently and consistently (the parities of a structured vertex lattice),
/// propagated from element to element through the face adjacency: across a shared face, the
/// face's 4 corners give the color bits of the face's two axes, the third axis takes the third
/// bit. Empty when the mesh admits no such coloring (irregular vertices, twisted blocks).
std::vector<signed char> lattice_colors(const GlobalNumbering& numbering) {
  const std::int64_t E = numbering.num_elements;
  std::vector<signed char> color(static_cast<std::size_t>(numbering.num_global), -1);
  std::vector<char> visited(static_cast<std::size_t>(E), 0);
  std::vector<std::int64_t> queue;
  for (std::int64_t start = 0; start < E; ++start) {
    if (visited[start]) continue;
    visited[start] = 1;
    queue.assign(1, start);
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::int64_t e = queue[head];
      std::array<std::int64_t, 8> g{};
      for (int c = 0; c < 8; ++c) g[c] = detail::corner_point(numbering, e, c);
      // beta[l]: the color bit that flips along local axis l; from pairs of known corners.
      std::array<int, 3> beta{-1, -1, -1};
      int known = -1;
      for (int c = 0; c < 8; ++c) {
        if (color[g[c]] < 0) continue;
        known = c;
        for (int l = 0; l < 3; ++l) {
          const int other = c ^ (1 << l);
          if (color[g[other]] >= 0) beta[l] = color[g[c]] ^ color[g[other]];
        }
      }
      if (known < 0) {
        beta = {1, 2, 4};
        color[g[0]] = 0;
        known = 0;
      }
      const int set = (beta[0] > 0 ? 1 : 0) + (beta[1] > 0 ? 1 : 0) + (beta[2] > 0 ? 1 : 0);
      if (set == 2) {
        for (int l = 0; l < 3; ++l) {
          if (beta[l] < 0) beta[l] = 7 ^ beta[(l + 1) % 3] ^ beta[(l + 2) % 3];
        }
      }
      auto bit = [](int b) { return b == 1 || b == 2 || b == 4; };
      if (!bit(beta[0]) || !bit(beta[1]) || !bit(beta[2]) || (beta[0] | beta[1] | beta[2]) != 7) {
        return {};
      }
      int origin = color[g[known]];
      for (int l = 0; l < 3; ++l) {
        if (corner_bit(known, l) != 0) origin ^= beta[l];
      }
      for (int c = 0; c < 8; ++c) {
        int value = origin;
        for (int l = 0; l < 3; ++l) {
          if (corner_bit(c, l) != 0) value ^= beta[l];
        }
        if (color[g[c]] >= 0 && color[g[c]] != value) return {};
        color[g[c]] = static_cast<signed char>(value);
      }
      for (int f = 0; f < 6; ++f) {
        const std::int64_t other = numbering.face_neighbours[e * 6 + f];
        if (other >= 0 && !visited[other / 6]) {
          visited[other / 6] = 1;
          queue.push_back(other / 6);
        }
      }
    }
  }
  return color;
}

}  // namespace

VertexPatchSmoother::Patches VertexPatchSmoother::build_patches(const SemPoissonOperator& A,
                                                                bool fused_data) {
  const GlobalNumbering& numbering = A.numbering();
  const int p = numbering.order;
  const int n = p + 1;
  const int M = 2 * p + 1;
  const std::int64_t M3 = static_cast<std::int64_t>(M) * M * M;
  const std::int64_t E = numbering.num_elements;
  const auto& l2g = numbering.local_to_global;
  const std::vector<char>& dirichlet = A.dirichlet();

  // The elements around each vertex: (global point, element * 8 + corner), sorted.
  std::vector<std::pair<std::int64_t, std::int64_t>> corners;
  corners.reserve(static_cast<std::size_t>(E * 8));
  for (std::int64_t e = 0; e < E; ++e) {
    for (int c = 0; c < 8; ++c)
      corners.push_back({detail::corner_point(numbering, e, c), e * 8 + c});
  }
  std::sort(corners.begin(), corners.end());
  std::vector<std::int64_t> candidates;  // start in corners of the vertices with 8 elements
  for (std::size_t q = 0; q < corners.size();) {
    std::size_t end = q;
    while (end < corners.size() && corners[end].first == corners[q].first) ++end;
    if (end - q == 8) candidates.push_back(static_cast<std::int64_t>(q));
    q = end;
  }

  // Placement of every candidate's elements (independent: the host's threads).
  const auto count = static_cast<std::int64_t>(candidates.size());
  std::vector<std::array<Placement, 8>> placements(static_cast<std::size_t>(count));
  std::vector<char> regular(static_cast<std::size_t>(count), 0);
  KRYFLOW_VERTEX_PATCH_OMP("omp parallel for schedule(dynamic, 256)")
  for (std::int64_t v = 0; v < count; ++v) {
    std::vector<std::pair<std::int64_t, int>> around(8);
    for (int k = 0; k < 8; ++k) {
      const std::int64_t code = corners[candidates[v] + k].second;
      around[k] = {code / 8, static_cast<int>(code % 8)};
    }
    regular[v] = place_patch(numbering, around, placements[v]) ? 1 : 0;
  }
  std::vector<std::int64_t> patch_vertex;  // index into candidates
  for (std::int64_t v = 0; v < count; ++v)
    if (regular[v]) patch_vertex.push_back(v);
  const auto P = static_cast<std::int64_t>(patch_vertex.size());
  if (P * M3 > 0x7fffffffLL) {
    throw NotSupported("VertexPatchSmoother: " + std::to_string(P * M3) +
                       " patch points exceed 2^31 - 1");
  }

  // Colors: the lattice parities, or greedy (smallest color no patch sharing an element has).
  Patches patches;
  patches.box = M;
  const std::vector<signed char> lattice = lattice_colors(numbering);
  std::vector<int> color(static_cast<std::size_t>(P), 0);
  patches.lattice_colors = !lattice.empty();
  if (patches.lattice_colors) {
    for (std::int64_t q = 0; q < P; ++q) {
      color[q] = lattice[corners[candidates[patch_vertex[q]]].first];
    }
  } else {
    std::vector<int> vertex_color(static_cast<std::size_t>(numbering.num_global), -1);
    for (std::int64_t q = 0; q < P; ++q) {
      std::vector<char> used;
      for (int k = 0; k < 8; ++k) {
        const std::int64_t e = corners[candidates[patch_vertex[q]] + k].second / 8;
        for (int c = 0; c < 8; ++c) {
          const int other = vertex_color[detail::corner_point(numbering, e, c)];
          if (other >= 0) {
            if (static_cast<int>(used.size()) <= other) used.resize(other + 1, 0);
            used[other] = 1;
          }
        }
      }
      int c = 0;
      while (c < static_cast<int>(used.size()) && used[c]) ++c;
      color[q] = c;
      vertex_color[corners[candidates[patch_vertex[q]]].first] = c;
    }
  }
  const int num_colors = P > 0 ? *std::max_element(color.begin(), color.end()) + 1 : 0;
  std::vector<std::int64_t> order(static_cast<std::size_t>(P));
  for (std::int64_t q = 0; q < P; ++q) order[q] = q;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return color[a] < color[b]; });
  patches.color_offsets.assign(static_cast<std::size_t>(num_colors + 1), 0);
  for (std::int64_t q = 0; q < P; ++q) ++patches.color_offsets[color[q] + 1];
  for (int c = 0; c < num_colors; ++c) patches.color_offsets[c + 1] += patches.color_offsets[c];

  // The patches in color order: box numbering and separable 1D problems.
  const std::vector<double> length = detail::element_metric_lengths(A);
  const std::vector<double> stiffness = detail::reference_stiffness(A.rule());
  const std::vector<double>& w = A.rule().weights;
  patches.box_to_global.assign(static_cast<std::size_t>(P * M3), -1);
  if (fused_data) {
    patches.box_full.assign(static_cast<std::size_t>(P * M3), -1);
    patches.elements.assign(static_cast<std::size_t>(P * 8), -1);
    patches.placements.assign(static_cast<std::size_t>(P * 8 * 9), 0);
  }
  patches.eigenvectors.assign(static_cast<std::size_t>(P * 3 * M * M), 0.0);
  patches.eigenvalues.assign(static_cast<std::size_t>(P * 3 * M), 0.0);
  patches.vertex.resize(static_cast<std::size_t>(P));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(P));
  KRYFLOW_VERTEX_PATCH_OMP("omp parallel") {
    std::vector<std::int64_t> map(static_cast<std::size_t>(M3));
    std::vector<double> A1(static_cast<std::size_t>(M * M)), B1(static_cast<std::size_t>(M));
    std::vector<char> active(static_cast<std::size_t>(M));
    KRYFLOW_VERTEX_PATCH_OMP("omp for schedule(dynamic, 64)")
    for (std::int64_t q = 0; q < P; ++q) {
      try {
        const std::int64_t v = patch_vertex[order[q]];
        const std::array<Placement, 8>& placed = placements[v];
        patches.vertex[q] = corners[candidates[v]].first;
        std::fill(map.begin(), map.end(), -1);
        for (int k = 0; k < 8; ++k) {
          const std::int64_t e = corners[candidates[v] + k].second / 8;
          const Placement& pl = placed[k];
          if (fused_data) {
            patches.elements[q * 8 + k] = e;
            std::int32_t* code = patches.placements.data() + (q * 8 + k) * 9;
            for (int a = 0; a < 3; ++a) {
              code[a] = pl.perm[a];
              code[3 + a] = pl.sign[a];
              code[6 + a] = pl.base[a];
            }
          }
          for (int kk = 0; kk < n; ++kk) {
            for (int j = 0; j < n; ++j) {
              for (int i = 0; i < n; ++i) {
                const std::array<int, 3> local{i, j, kk};
                std::array<int, 3> I{};
                for (int a = 0; a < 3; ++a) I[a] = pl.base[a] + pl.sign[a] * local[pl.perm[a]];
                const std::int64_t box = (static_cast<std::int64_t>(I[2]) * M + I[1]) * M + I[0];
                const std::int64_t g = l2g[detail::local_index(e, n, local)];
                if (map[box] >= 0 && map[box] != g) {
                  throw InvalidInput("VertexPatchSmoother: the elements around global point " +
                                     std::to_string(patches.vertex[q]) +
                                     " share corners but not the points between them");
                }
                map[box] = g;
              }
            }
          }
        }
        if (fused_data) {
          index_t* full = patches.box_full.data() + q * M3;
          for (std::int64_t box = 0; box < M3; ++box) full[box] = static_cast<index_t>(map[box]);
        }
        index_t* out = patches.box_to_global.data() + q * M3;
        for (int K = 1; K < M - 1; ++K) {
          for (int J = 1; J < M - 1; ++J) {
            for (int I = 1; I < M - 1; ++I) {
              const std::int64_t box = (static_cast<std::int64_t>(K) * M + J) * M + I;
              const std::int64_t g = map[box];
              out[box] = g >= 0 && dirichlet[g] == 0 ? static_cast<index_t>(g) : -1;
            }
          }
        }
        // Per box axis: the two intervals' averaged lengths, the 1D stiffness and mass on the
        // box's M points, and its eigenvectors on the inner M - 2 points.
        for (int a = 0; a < 3; ++a) {
          double h[2] = {0.0, 0.0};
          for (int k = 0; k < 8; ++k) {
            const std::int64_t e = corners[candidates[v] + k].second / 8;
            h[(placed[k].octant(p) >> a) & 1] += 0.25 * length[e * 3 + placed[k].perm[a]];
          }
          std::fill(A1.begin(), A1.end(), 0.0);
          std::fill(B1.begin(), B1.end(), 0.0);
          for (int side = 0; side < 2; ++side) {
            const int offset = side * p;
            for (int i = 0; i < n; ++i) {
              for (int j = 0; j < n; ++j) {
                A1[(offset + i) * M + offset + j] += 2.0 / h[side] * stiffness[i * n + j];
              }
              B1[offset + i] += 0.5 * h[side] * w[i];
            }
          }
          std::fill(active.begin(), active.end(), 1);
          active[0] = active[M - 1] = 0;
          detail::generalized_eigen(M, A1, B1, active,
                                    patches.eigenvectors.data() + (q * 3 + a) * M * M,
                                    patches.eigenvalues.data() + (q * 3 + a) * M);
        }
      } catch (...) {
        errors[static_cast<std::size_t>(q)] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }

  // The unknowns inside no patch.
  std::vector<char> covered(static_cast<std::size_t>(numbering.num_global), 0);
  for (index_t g : patches.box_to_global)
    if (g >= 0) covered[g] = 1;
  for (std::int64_t g = 0; g < numbering.num_global; ++g) {
    if (dirichlet[g] == 0 && covered[g] == 0) patches.uncovered.push_back(static_cast<index_t>(g));
  }
  return patches;
}

VertexPatchSmoother::VertexPatchSmoother(Parameters parameters, Direction direction)
    : parameters_(parameters), direction_(direction) {
  if (!(parameters_.relaxation > 0.0) || !std::isfinite(parameters_.relaxation)) {
    throw ConfigError("relaxation", "must be positive and finite");
  }
  if (parameters_.eigen_iterations < 0) {
    throw ConfigError("eigen_iterations", "must not be negative");
  }
  if (!(parameters_.damping_bound > 0.0 && parameters_.damping_bound < 2.0)) {
    throw ConfigError("damping_bound", "must be in (0, 2)");
  }
  if (!(parameters_.uncovered_weight >= 0.0 && parameters_.uncovered_weight <= 1.0)) {
    throw ConfigError("uncovered_weight", "must be in [0, 1]");
  }
}

void VertexPatchSmoother::setup(const LinearOperator& A) {
  const auto* op = dynamic_cast<const SemPoissonOperator*>(&A);
  if (op == nullptr) {
    throw NotSupported(
        "VertexPatchSmoother: A must be a spectral-element Poisson operator (kryflow sem)");
  }
  data_.reset();
  Patches patches = build_patches(*op, parameters_.fused);
  if (!patches.uncovered.empty() && parameters_.uncovered_weight == 0.0) {
    const std::int64_t g = patches.uncovered.front();
    const std::vector<double>& x = op->coordinates();
    throw NotSupported("VertexPatchSmoother: global point " + std::to_string(g) + " at (" +
                       std::to_string(x[3 * g]) + ", " + std::to_string(x[3 * g + 1]) + ", " +
                       std::to_string(x[3 * g + 2]) + ") lies inside no vertex patch, one of " +
                       std::to_string(patches.uncovered.size()) +
                       " (patches need interior vertices with 8 elements in a 2 x 2 x 2 box), and "
                       "uncovered_weight is 0");
  }
  const Backend& backend = op->backend();
  auto data = std::make_shared<Data>();
  data->A = op;
  data->box = patches.box;
  data->color_offsets = patches.color_offsets;
  data->vertex = patches.vertex;
  const std::int64_t M3 = static_cast<std::int64_t>(patches.box) * patches.box * patches.box;
  std::int64_t& largest = data->largest;
  for (std::size_t c = 0; c + 1 < patches.color_offsets.size(); ++c) {
    largest = std::max(largest, patches.color_offsets[c + 1] - patches.color_offsets[c]);
  }
  data->box_to_global = Array<index_t>::from_host(backend, patches.box_to_global);
  if (parameters_.fused) {
    data->box_full = Array<index_t>::from_host(backend, patches.box_full);
    data->elements = Array<std::int64_t>::from_host(backend, patches.elements);
    data->placements = Array<std::int32_t>::from_host(backend, patches.placements);
  }
  if (parameters_.precision == Precision::float32) {
    data->eigenvectors32 = Array<float>::from_host(
        backend, std::vector<float>(patches.eigenvectors.begin(), patches.eigenvectors.end()));
    data->eigenvalues32 = Array<float>::from_host(
        backend, std::vector<float>(patches.eigenvalues.begin(), patches.eigenvalues.end()));
    data->local32 = Array<float>(backend, static_cast<std::size_t>(largest * M3));
  } else {
    data->eigenvectors = Array<double>::from_host(backend, patches.eigenvectors);
    data->eigenvalues = Array<double>::from_host(backend, patches.eigenvalues);
    data->local = Array<double>(backend, static_cast<std::size_t>(largest * M3));
  }
  std::vector<double> mask(op->dirichlet().begin(), op->dirichlet().end());
  data->has_dirichlet = std::any_of(mask.begin(), mask.end(), [](double m) { return m != 0.0; });
  data->dirichlet = Vector::from_host(backend, mask);
  data->residual = Vector(backend, static_cast<std::size_t>(op->num_rows()));
  data->scratch = Vector(backend, static_cast<std::size_t>(op->num_rows()));
  data->uncovered = static_cast<std::int64_t>(patches.uncovered.size());
  if (data->uncovered > 0) {
    // w / A_gg at the unknowns inside no patch (A_gg > 0 for the SEM Laplacian's unknowns).
    Vector diagonal(backend, static_cast<std::size_t>(op->num_rows()));
    op->diagonal(diagonal);
    const std::vector<double> diag = diagonal.to_host();
    std::vector<double> jacobi(diag.size(), 0.0);
    for (index_t g : patches.uncovered) {
      if (!(diag[g] > 0.0) || !std::isfinite(diag[g])) {
        throw InvalidInput("VertexPatchSmoother: the diagonal at global point " +
                           std::to_string(g) + " (inside no patch) is " + std::to_string(diag[g]) +
                           ", not positive");
      }
      jacobi[g] = parameters_.uncovered_weight / diag[g];
    }
    data->jacobi = Vector::from_host(backend, jacobi);
  }
  if (parameters_.eigen_iterations > 0) estimate_patch_eigenvalues(*data);
  data_ = std::move(data);
}

kernels::sem::SchwarzView VertexPatchSmoother::color_view(const Data& d, int c) const {
  const std::int64_t M = d.box;
  const std::int64_t M3 = M * M * M;
  const std::int64_t first = d.color_offsets[c];
  kernels::sem::SchwarzView view;
  view.num_elements = d.color_offsets[c + 1] - first;
  view.n = d.box - 2;
  view.box_to_global = d.box_to_global.data() + first * M3;
  if (parameters_.precision == Precision::float32) {
    view.eigenvectors32 = d.eigenvectors32.data() + first * 3 * M * M;
    view.eigenvalues32 = d.eigenvalues32.data() + first * 3 * M;
  } else {
    view.eigenvectors = d.eigenvectors.data() + first * 3 * M * M;
    view.eigenvalues = d.eigenvalues.data() + first * 3 * M;
  }
  return view;
}

kernels::sem::SchwarzLocals VertexPatchSmoother::locals(const Data& d) const {
  kernels::sem::SchwarzLocals locals;
  if (parameters_.precision == Precision::float32) {
    locals.values32 = d.local32.data();
  } else {
    locals.values = d.local.data();
  }
  return locals;
}

void VertexPatchSmoother::estimate_patch_eigenvalues(Data& d) const {
  // Power steps on T_c = (sum over the color's patches of R_P^T A~_P^-1 R_P) A restricted to
  // the color's unknowns: the color's patches share no element, so at patch P's unknowns A v is
  // A_P v_P and T_c is block diagonal, one block A~_P^-1 A_P per patch. Each patch's part is
  // normalized between steps (the scale of the next step's scatter: T_c commutes with it), so
  // lambda_P is the norm of the patch's part after the last step. Start: A~_P^-1 of a
  // pseudo-random vector.
  const Backend& backend = d.A->backend();
  const auto rows = static_cast<std::size_t>(d.A->num_rows());
  const std::int64_t patches = d.color_offsets.back();
  Vector v(backend, rows), y(backend, rows);
  Array<double> norms(backend, static_cast<std::size_t>(d.largest));
  Array<double> inverse(backend, static_cast<std::size_t>(d.largest));
  const kernels::sem::SchwarzLocals y_local = locals(d);
  d.lambda.assign(static_cast<std::size_t>(patches), 1.0);
  std::vector<double> scale(static_cast<std::size_t>(patches), 1.0);
  for (int c = 0; c + 1 < static_cast<int>(d.color_offsets.size()); ++c) {
    const kernels::sem::SchwarzView view = color_view(d, c);
    const auto count = static_cast<std::size_t>(view.num_elements);
    if (count == 0) continue;
    fill_pseudo_random(y, 0x7e57a11ce + static_cast<std::uint64_t>(c));
    std::vector<double> n;
    for (int k = 0; k <= parameters_.eigen_iterations; ++k) {
      if (k > 0) d.A->apply(v, y);
      kernels::sem::schwarz_fdm_solve(backend, view, y.span(), y_local);
      fill(v, 0.0);
      kernels::sem::schwarz_scatter_add(backend, view, y_local, 1.0,
                                        k > 0 ? inverse.data() : nullptr, v.span());
      kernels::sem::schwarz_patch_norms(backend, view, v.span(), norms.span());
      n = norms.to_host();
      if (k == parameters_.eigen_iterations) break;
      // The next step's scale: 1 / ||v_P|| (0 past this color's patches).
      std::vector<double> s(n.size(), 0.0);
      for (std::size_t q = 0; q < count; ++q) s[q] = n[q] > 0.0 ? 1.0 / std::sqrt(n[q]) : 0.0;
      inverse.assign_from_host(Span<const double>(s.data(), s.size()));
    }
    for (std::size_t q = 0; q < count; ++q) {
      const auto P = static_cast<std::size_t>(d.color_offsets[c]) + q;
      const double lambda = std::sqrt(n[q]);
      if (!std::isfinite(lambda)) {
        throw InvalidInput(
            "VertexPatchSmoother: the eigenvalue estimate of the patch of global "
            "point " +
            std::to_string(d.vertex[P]) + " is not finite");
      }
      d.lambda[P] = lambda;
      scale[P] = std::min(1.0, parameters_.damping_bound / lambda);
    }
  }
  d.scale = Array<double>::from_host(backend, scale);
}

const std::vector<double>& VertexPatchSmoother::patch_eigenvalues() const {
  static const std::vector<double> none;
  return data_ == nullptr ? none : data_->lambda;
}

void VertexPatchSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  if (data_ == nullptr) throw InvalidInput("VertexPatchSmoother: smooth before setup");
  const Data& d = *data_;
  const auto rows = static_cast<std::size_t>(d.A->num_rows());
  if (b.size() != rows || x.size() != rows) {
    throw DimensionMismatch("VertexPatchSmoother::smooth: b has " + std::to_string(b.size()) +
                            " and x " + std::to_string(x.size()) + " entries, A has " +
                            std::to_string(rows) + " rows");
  }
  const Backend& backend = d.A->backend();
  const int colors = static_cast<int>(d.color_offsets.size()) - 1;
  if (x_is_zero) fill(x, 0.0);
  const kernels::sem::SchwarzLocals y_local = locals(d);
  const double* scale = d.scale.size() > 0 ? d.scale.data() : nullptr;
  // The first residual, and x = x + r at the Dirichlet points (where A is the identity). The
  // fused steps compute their residuals themselves: r = b - x is then enough at those points.
  const Vector* r = &b;
  bool fresh = true;  // r is the residual of the current x
  if (!x_is_zero) {
    if (parameters_.fused) {
      if (d.has_dirichlet) {
        copy(b, d.residual);
        axpby(-1.0, x, 1.0, d.residual);
      }
      fresh = false;
    } else {
      d.A->residual(b, x, d.residual);
    }
    r = &d.residual;
  }
  if (d.has_dirichlet) {
    pointwise_multiply(d.dirichlet, *r, d.scratch);
    axpby(1.0, d.scratch, 1.0, x);
  }
  // The unknowns inside no patch: x = x + w D^-1 r there (r of the current x).
  const auto relax_uncovered = [&] {
    if (d.uncovered == 0) return;
    if (!fresh) {
      d.A->residual(b, x, d.residual);
      r = &d.residual;
    }
    pointwise_multiply(d.jacobi, *r, d.scratch);
    axpby(1.0, d.scratch, 1.0, x);
    fresh = false;
  };
  // The Dirichlet update above changed x only where A is the identity and r is then 0: r is
  // still the residual of x at every other point, which is all the steps below read.
  if (direction_ == Direction::backward) relax_uncovered();
  const kernels::sem::PoissonView operator_view =
      parameters_.fused ? d.A->view(true) : kernels::sem::PoissonView{};
  for (int step = 0; step < colors; ++step) {
    const int c = direction_ == Direction::forward ? step : colors - 1 - step;
    if (parameters_.fused) {
      const std::int64_t first = d.color_offsets[c];
      const std::int64_t M3 = static_cast<std::int64_t>(d.box) * d.box * d.box;
      kernels::sem::FusedPatchView fused;
      fused.box_full = d.box_full.data() + first * M3;
      fused.elements = d.elements.data() + first * 8;
      fused.placements = d.placements.data() + first * 8 * 9;
      kernels::sem::vertex_patch_fused_step(backend, color_view(d, c), fused, operator_view,
                                            b.span(), parameters_.relaxation,
                                            scale != nullptr ? scale + first : nullptr, x.span());
      fresh = false;
      continue;
    }
    if (!fresh) {
      d.A->residual(b, x, d.residual);
      r = &d.residual;
    }
    const kernels::sem::SchwarzView view = color_view(d, c);
    kernels::sem::schwarz_fdm_solve(backend, view, r->span(), y_local);
    kernels::sem::schwarz_scatter_add(backend, view, y_local, parameters_.relaxation,
                                      scale != nullptr ? scale + d.color_offsets[c] : nullptr,
                                      x.span());
    fresh = false;
  }
  if (direction_ == Direction::forward) relax_uncovered();
}

std::string VertexPatchSmoother::name() const {
  std::string uncovered;
  if (data_ != nullptr && data_->uncovered > 0) {
    uncovered = ", " + std::to_string(data_->uncovered) + " points by Jacobi";
  }
  return std::string("vertex_patch_schwarz(") +
         (direction_ == Direction::forward ? "forward" : "backward") + ", " +
         std::string(to_string(parameters_.precision)) + uncovered + ")";
}

std::unique_ptr<VertexPatchSmoother> VertexPatchSmoother::adjoint() const {
  if (data_ == nullptr) throw InvalidInput("VertexPatchSmoother: adjoint before setup");
  auto other = std::make_unique<VertexPatchSmoother>(
      parameters_, direction_ == Direction::forward ? Direction::backward : Direction::forward);
  other->data_ = data_;
  return other;
}

std::int64_t VertexPatchSmoother::num_patches() const {
  return data_ == nullptr ? 0 : data_->color_offsets.back();
}

std::int64_t VertexPatchSmoother::num_uncovered() const {
  return data_ == nullptr ? 0 : data_->uncovered;
}

int VertexPatchSmoother::num_colors() const {
  return data_ == nullptr ? 0 : static_cast<int>(data_->color_offsets.size()) - 1;
}

}  // namespace kryflow::sem
