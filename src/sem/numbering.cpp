// Global numbering of GLL points on conforming hexahedral meshes: vertices by position, edges
// and faces by their corner vertices, each in a canonical orientation.
#include "kryflow/sem/numbering.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

#include "kryflow/core/error.hpp"

namespace kryflow::sem {
namespace {

using Key = std::array<std::int64_t, 3>;

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t v : k) {
      h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return static_cast<std::size_t>(h);
  }
};

/// Merges corners that lie within `tolerance` (max-norm) of each other: a hash grid of cells of
/// twice the tolerance, searched in the 27 cells around each point.
std::vector<std::int64_t> identify_vertices(std::span<const double> xyz, double tolerance,
                                            std::int64_t& num_vertices) {
  const std::size_t count = xyz.size() / 3;
  const double cell = std::max(2.0 * tolerance, std::numeric_limits<double>::min());
  std::unordered_map<Key, std::vector<std::int64_t>, KeyHash> grid;
  std::vector<std::array<double, 3>> positions;
  std::vector<std::int64_t> ids(count);
  for (std::size_t p = 0; p < count; ++p) {
    const double* x = xyz.data() + 3 * p;
    Key key;
    for (int d = 0; d < 3; ++d) key[d] = static_cast<std::int64_t>(std::floor(x[d] / cell));
    std::int64_t found = -1;
    for (int a = -1; a <= 1 && found < 0; ++a) {
      for (int b = -1; b <= 1 && found < 0; ++b) {
        for (int c = -1; c <= 1 && found < 0; ++c) {
          const auto it = grid.find({key[0] + a, key[1] + b, key[2] + c});
          if (it == grid.end()) continue;
          for (std::int64_t v : it->second) {
            const auto& q = positions[static_cast<std::size_t>(v)];
            if (std::abs(q[0] - x[0]) <= tolerance && std::abs(q[1] - x[1]) <= tolerance &&
                std::abs(q[2] - x[2]) <= tolerance) {
              found = v;
              break;
            }
          }
        }
      }
    }
    if (found < 0) {
      found = static_cast<std::int64_t>(positions.size());
      positions.push_back({x[0], x[1], x[2]});
      grid[key].push_back(found);
    }
    ids[p] = found;
  }
  num_vertices = static_cast<std::int64_t>(positions.size());
  return ids;
}

/// Corners of the 6 faces (r = -1, r = +1, s = -1, s = +1, t = -1, t = +1) in the face's own
/// (x, y) order: corner (x, y) of face f is kFaceCorners[f][x + 2 y].
constexpr int kFaceCorners[6][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 1, 4, 5},
                                    {2, 3, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};

}  // namespace

GlobalNumbering number_gll_points(std::int64_t num_elements, std::span<const double> vertices,
                                  int order, double tolerance) {
  if (order < 1) {
    throw InvalidInput("number_gll_points: order must be >= 1, got " + std::to_string(order));
  }
  if (num_elements < 0 || vertices.size() != static_cast<std::size_t>(num_elements) * 24) {
    throw InvalidInput("number_gll_points: expected " + std::to_string(num_elements * 24) +
                       " vertex coordinates (8 x 3 per element), got " +
                       std::to_string(vertices.size()));
  }
  const int p = order;
  const int N = p + 1;
  const std::int64_t m = p - 1;  // interior points per edge direction

  GlobalNumbering g;
  g.order = p;
  g.num_elements = num_elements;
  if (num_elements == 0) return g;

  double lo[3] = {INFINITY, INFINITY, INFINITY};
  double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t q = 0; q < vertices.size(); ++q) {
    if (!std::isfinite(vertices[q])) {
      throw InvalidInput("number_gll_points: coordinate " + std::to_string(q % 3) + " of corner " +
                         std::to_string((q / 3) % 8) + " of element " + std::to_string(q / 24 + 1) +
                         " is not finite");
    }
    lo[q % 3] = std::min(lo[q % 3], vertices[q]);
    hi[q % 3] = std::max(hi[q % 3], vertices[q]);
  }
  const double diagonal =
      std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
  const std::vector<std::int64_t> corner =
      identify_vertices(vertices, tolerance * diagonal, g.num_vertices);
  for (std::int64_t e = 0; e < num_elements; ++e) {
    for (int a = 0; a < 8; ++a) {
      for (int b = a + 1; b < 8; ++b) {
        if (corner[e * 8 + a] == corner[e * 8 + b]) {
          throw InvalidInput("number_gll_points: element " + std::to_string(e + 1) +
                             " has coincident corners " + std::to_string(a) + " and " +
                             std::to_string(b));
        }
      }
    }
  }

  // Edges and faces by their sorted corner vertices, numbered in order of first appearance.
  std::map<std::array<std::int64_t, 2>, std::int64_t> edges;
  // id, uses, the first user e * 6 + f
  std::map<std::array<std::int64_t, 4>, std::array<std::int64_t, 3>> faces;
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const std::int64_t* c = corner.data() + e * 8;
    for (int d = 0; d < 3; ++d) {
      const int bit = 1 << d;
      for (int v = 0; v < 8; ++v) {
        if ((v & bit) != 0) continue;
        const std::array<std::int64_t, 2> key = {std::min(c[v], c[v | bit]),
                                                 std::max(c[v], c[v | bit])};
        edges.emplace(key, static_cast<std::int64_t>(edges.size()));
      }
    }
    for (int face = 0; face < 6; ++face) {
      const auto& f = kFaceCorners[face];
      std::array<std::int64_t, 4> key = {c[f[0]], c[f[1]], c[f[2]], c[f[3]]};
      std::sort(key.begin(), key.end());
      auto [it, inserted] = faces.emplace(
          key,
          std::array<std::int64_t, 3>{static_cast<std::int64_t>(faces.size()), 0, e * 6 + face});
      if (++it->second[1] > 2) {
        throw InvalidInput("number_gll_points: a face of element " + std::to_string(e + 1) +
                           " is shared by more than two elements (not a conforming mesh)");
      }
    }
  }
  g.num_edges = static_cast<std::int64_t>(edges.size());
  g.num_faces = static_cast<std::int64_t>(faces.size());
  const std::int64_t edge_base = g.num_vertices;
  const std::int64_t face_base = edge_base + g.num_edges * m;
  const std::int64_t interior_base = face_base + g.num_faces * m * m;
  g.num_global = interior_base + num_elements * m * m * m;

  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  g.local_to_global.resize(static_cast<std::size_t>(num_elements * n3));
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const std::int64_t* c = corner.data() + e * 8;
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const int idx[3] = {i, j, k};
          int side[3];  // 0 or 1 at the ends, -1 inside
          int extremes = 0;
          for (int d = 0; d < 3; ++d) {
            side[d] = idx[d] == 0 ? 0 : idx[d] == p ? 1 : -1;
            extremes += side[d] >= 0 ? 1 : 0;
          }
          std::int64_t global = 0;
          if (extremes == 3) {
            global = c[side[0] + 2 * side[1] + 4 * side[2]];
          } else if (extremes == 2) {
            int d = 0;
            while (side[d] >= 0) ++d;  // the direction along the edge
            int v0 = 0;
            for (int a = 0; a < 3; ++a) {
              if (a != d) v0 |= side[a] << a;
            }
            const std::int64_t A = c[v0];
            const std::int64_t B = c[v0 | (1 << d)];
            const std::int64_t q = A < B ? idx[d] : p - idx[d];
            global = edge_base + edges.at({std::min(A, B), std::max(A, B)}) * m + (q - 1);
          } else if (extremes == 1) {
            int d = 0;
            while (side[d] < 0) ++d;  // the face's normal direction
            const int f = 2 * d + side[d];
            const int d1 = d == 0 ? 1 : 0;
            const int d2 = d == 2 ? 1 : 2;
            const int* fc = kFaceCorners[f];
            // The face's corners in its (x, y) order: x along d1, y along d2.
            int x0 = 0;
            int y0 = 0;
            for (int xy = 1; xy < 4; ++xy) {
              if (c[fc[xy]] < c[fc[x0 + 2 * y0]]) {
                x0 = xy % 2;
                y0 = xy / 2;
              }
            }
            const std::int64_t n1 = c[fc[(1 - x0) + 2 * y0]];
            const std::int64_t n2 = c[fc[x0 + 2 * (1 - y0)]];
            const std::int64_t u1 = x0 == 0 ? idx[d1] : p - idx[d1];
            const std::int64_t u2 = y0 == 0 ? idx[d2] : p - idx[d2];
            const std::int64_t U = n1 < n2 ? u1 : u2;
            const std::int64_t V = n1 < n2 ? u2 : u1;
            std::array<std::int64_t, 4> key = {c[fc[0]], c[fc[1]], c[fc[2]], c[fc[3]]};
            std::sort(key.begin(), key.end());
            global = face_base + faces.at(key)[0] * m * m + (U - 1) * m + (V - 1);
          } else {
            global = interior_base + e * m * m * m + ((k - 1) * m + (j - 1)) * m + (i - 1);
          }
          g.local_to_global[static_cast<std::size_t>(((e * N + k) * N + j) * N + i)] = global;
        }
      }
    }
  }
  g.multiplicity.assign(static_cast<std::size_t>(g.num_global), 0);
  for (std::int64_t global : g.local_to_global) ++g.multiplicity[static_cast<std::size_t>(global)];
  // Boundary: every point of a face that belongs to one element only. Shared faces pair their
  // two users.
  g.on_boundary.assign(static_cast<std::size_t>(g.num_global), 0);
  g.face_neighbours.assign(static_cast<std::size_t>(num_elements * 6), -1);
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const std::int64_t* c = corner.data() + e * 8;
    for (int f = 0; f < 6; ++f) {
      std::array<std::int64_t, 4> key = {c[kFaceCorners[f][0]], c[kFaceCorners[f][1]],
                                         c[kFaceCorners[f][2]], c[kFaceCorners[f][3]]};
      std::sort(key.begin(), key.end());
      const std::array<std::int64_t, 3>& use = faces.at(key);
      if (use[1] == 2) {
        if (use[2] != e * 6 + f) {
          g.face_neighbours[static_cast<std::size_t>(e * 6 + f)] = use[2];
          g.face_neighbours[static_cast<std::size_t>(use[2])] = e * 6 + f;
        }
        continue;
      }
      const int d = f / 2;
      const int fixed = (f % 2) * p;
      for (int a = 0; a < N; ++a) {
        for (int b = 0; b < N; ++b) {
          int idx[3];
          idx[d] = fixed;
          idx[d == 0 ? 1 : 0] = a;
          idx[d == 2 ? 1 : 2] = b;
          const std::int64_t local = ((e * N + idx[2]) * N + idx[1]) * N + idx[0];
          g.on_boundary[static_cast<std::size_t>(
              g.local_to_global[static_cast<std::size_t>(local)])] = 1;
        }
      }
    }
  }
  return g;
}

}  // namespace kryflow::sem
