// Global numbering of the Gauss-Lobatto-Legendre points of a conforming hexahedral mesh: the Q
// of the gather-scatter QQ^T (Deville, Fischer and Mund, High-Order Methods for Incompressible
// Fluid Flow, 2002, sec. 4.5.1).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kryflow::sem {

/// Which global point each local point of each element is.
struct GlobalNumbering {
  int order = 0;  ///< polynomial order p; N = p + 1 points per direction
  std::int64_t num_elements = 0;
  std::int64_t num_global = 0;    ///< distinct points (vertices, edge, face and interior points)
  std::int64_t num_vertices = 0;  ///< distinct mesh vertices
  std::int64_t num_edges = 0;     ///< distinct mesh edges
  std::int64_t num_faces = 0;     ///< distinct mesh faces
  /// num_elements * N^3 entries: local point (i, j, k) of element e (i fastest, along r) is
  /// global point local_to_global[((e * N + k) * N + j) * N + i], in 0..num_global-1.
  std::vector<std::int64_t> local_to_global;
  /// num_global entries: how many local points share each global point (the diagonal of Q^T Q).
  std::vector<int> multiplicity;
  /// num_global entries: 1 for points on the mesh boundary (on a face that belongs to one
  /// element only), else 0: the default homogeneous Dirichlet set.
  std::vector<char> on_boundary;
  /// num_elements * 6 entries: for face f of element e (f = 0..5: r = -1, r = +1, s = -1,
  /// s = +1, t = -1, t = +1), e' * 6 + f' for the face f' of the other element e' that shares
  /// it, or -1 on the mesh boundary (the face adjacency, e.g. for Schwarz patches).
  std::vector<std::int64_t> face_neighbours;
};

/// Numbers the GLL points of a conforming hexahedral mesh of `num_elements` elements whose
/// corner coordinates are `vertices` (8 x 3 doubles per element, corner v = i + 2 j + 4 k in the
/// lexicographic order of the reference cube [-1, 1]^3, coordinate d of corner v of element e at
/// (e * 8 + v) * 3 + d) for polynomial order p = `order`.
///
/// Corners at the same position (within `tolerance` times the mesh's bounding-box diagonal) are
/// one vertex; two elements share an edge or face when they share its corner vertices, in any
/// relative orientation: edge points are numbered from the edge's lower-numbered vertex, face
/// points in a frame whose origin is the face's lowest-numbered vertex and whose first axis
/// runs to the lower-numbered of its two neighbours on the face. Only conforming meshes (shared
/// faces are whole faces of both elements) are supported; periodic identification is not made.
/// Throws InvalidInput when order < 1, vertices does not hold num_elements * 24 entries, a
/// coordinate is not finite, an element has two coincident corners, or a face or edge would be
/// shared by corners in a way no conforming mesh allows.
GlobalNumbering number_gll_points(std::int64_t num_elements, std::span<const double> vertices,
                                  int order, double tolerance = 1e-10);

}  // namespace kryflow::sem
