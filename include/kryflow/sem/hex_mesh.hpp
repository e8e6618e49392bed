// Conforming trilinear hexahedral meshes for the spectral-element operators: a structured box
// generator (optionally deformed) and a reader for Nek5000 `.re2` files.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kryflow::sem {

/// One element face carrying a boundary condition.
///
/// Faces are numbered in kryflow's tensor order on the reference cube [-1,1]^3 with
/// coordinates (r, s, t):
///   0: r = -1,  1: r = +1,  2: s = -1,  3: s = +1,  4: t = -1,  5: t = +1.
/// (Nek5000's preprocessor numbers the same faces 4, 2, 1, 3, 5, 6; read_re2 converts.)
struct BoundaryFace {
  std::int64_t element = 0;  ///< 0-based element index
  int face = 0;              ///< 0..5, kryflow order (above)
  std::string type;  ///< Nek's 3-character type with spaces trimmed: "W", "v", "P", "SYM", ...
};

/// The boundary faces of one field (Nek5000 writes one set per field: velocity, temperature,
/// ...), in file order.
using BoundaryField = std::vector<BoundaryFace>;

/// A conforming hexahedral mesh treated as trilinear: each element is given by its 8 corner
/// vertices and mapped from the reference cube by
///   x(r, s, t) = sum_v N_v(r, s, t) X_v,   N_v = (1 + r r_v)(1 + s s_v)(1 + t t_v) / 8,
/// with the vertices in LEXICOGRAPHIC tensor order v = i + 2 j + 4 k, where r_v = -1/+1 for
/// i = 0/1, s_v by j and t_v by k. Only conforming meshes (neighbouring elements share whole
/// faces, edges and vertices) are meant; hanging nodes are not represented. Curved sides of
/// the source file are counted but ignored.
struct HexMesh {
  std::int64_t num_elements = 0;
  /// 8 * 3 * num_elements coordinates: element e, vertex v, coordinate d (x, y, z) at
  /// (e * 8 + v) * 3 + d. Units are those of the source (the box generator: its extents).
  std::vector<double> vertices;
  /// Group (Nek5000 "igroup") per element; 0 for generated meshes.
  std::vector<int> groups;
  /// Number of curved-side records in the source file (read, reported, not used).
  std::int64_t curved_side_records = 0;
  /// Boundary-condition sets, one per field.
  std::vector<BoundaryField> fields;
  /// The header's version tag ("#v001", "#v002", "#v003"); empty for generated meshes.
  std::string format_version;

  /// Coordinate d of vertex v (lexicographic order) of element e.
  double vertex(std::int64_t e, int v, int d) const {
    return vertices[static_cast<std::size_t>((e * 8 + v) * 3 + d)];
  }
};

/// The 4 vertices (lexicographic numbering, 0..7) of face `face` (0..5, kryflow order).
/// Throws InvalidInput for a face outside 0..5.
std::array<int, 4> face_vertices(int face);

/// det(dx/dr) of element e's trilinear map at the reference point (r, s, t). Precondition:
/// 0 <= e < mesh.num_elements (checked: InvalidInput).
double jacobian_determinant(const HexMesh& mesh, std::int64_t e, double r, double s, double t);

/// True when the Jacobian determinant of element e is positive at its centre and at its 8
/// corners (right-handed, not inverted; for a trilinear map the corners are where it is most
/// often lost). Throws InvalidInput for an element index out of range.
bool is_right_handed(const HexMesh& mesh, std::int64_t e);

/// Options of box_mesh. The deformations are defined on the unit cube and act before the
/// scaling to [lower, upper].
struct BoxOptions {
  std::array<double, 3> lower = {0.0, 0.0, 0.0};  ///< lower corner of the box
  std::array<double, 3> upper = {1.0, 1.0, 1.0};  ///< upper corner; upper > lower componentwise
  /// Amplitude a of the smooth interior deformation applied to every vertex (unit cube):
  ///   (x, y, z) += a sin(pi x) sin(pi y) sin(pi z) (1, 1, 1).
  /// It vanishes on the boundary; its Jacobian 1 + a pi (cos(pi x) sin(pi y) sin(pi z) + ...)
  /// stays positive for |a| < 1 / (3 pi). Allowed range: |a| <= 0.1.
  double smooth_deformation = 0.0;
  /// Kershaw parameter eps in (0, 1] for both y and z (1: undeformed). The generalized
  /// Kershaw map of the CEED benchmarks (D. Kershaw, J. Comput. Phys. 39 (1981) 375-395;
  /// CEED BP5 as run by nekRS examples/kershaw and MFEM), on the unit cube:
  ///   right(x) = (2 - eps) x for x <= 1/2, 1 + eps (x - 1) otherwise;  left(x) = 1 - right(1 - x)
  ///   step(a, b, l) = a + (b - a) clamp(l, 0, 1)
  ///   layer = floor(6 x), l = 6 x - layer;  X = x and, with f = left/right in y (and z):
  ///     layer 0: Y = left(y);              layers 1, 4: Y = step(left(y), right(y), l)
  ///     layer 2: Y = step(right(y), left(y), l / 2)
  ///     layer 3: Y = step(right(y), left(y), (1 + l) / 2);  layer >= 5: Y = right(y)
  /// and Z the same in z. It maps the cube onto itself and keeps each boundary face in place.
  /// The map is piecewise linear on elements when nx is a multiple of 6 and ny, nz are even;
  /// for other counts the vertices are still mapped exactly and the elements stay valid
  /// (y and z stay monotone in each x-plane), but an element may straddle a kink.
  /// Combined with a smooth_deformation, small eps (thin elements) can invert elements:
  /// box_mesh then throws InvalidInput naming the element (e.g. a = 0.1 with eps <= 0.3).
  double kershaw_epsilon = 1.0;
};

/// A structured nx x ny x nz box of hexahedra on [lower, upper] (default the unit cube), element
/// e = i + nx (j + ny k) for element position (i, j, k), deformed as `options` asks. One
/// boundary field: every boundary face with type "W" (wall, Dirichlet), 2 (nx ny + ny nz +
/// nz nx) faces, ordered by face number and then element. Throws InvalidInput for a count < 1,
/// a total count above 2^31, upper <= lower, |smooth_deformation| > 0.1, kershaw_epsilon
/// outside (0, 1] (or not finite), or a combination of deformations that inverts an element.
HexMesh box_mesh(int nx, int ny, int nz, const BoxOptions& options = {});

/// Deforms `mesh` in place by the generalized Kershaw map of BoxOptions::kershaw_epsilon (the
/// same implementation box_mesh uses; source: Kershaw, J. Comput. Phys. 39 (1981), as in the
/// CEED BP5 runs of nekRS examples/kershaw and MFEM). Every vertex x of the 8 x 3 x
/// num_elements coordinates is scaled from the mesh's bounding box [lower, upper] to the unit
/// cube, mapped (x unchanged, y and z moved by layers of x) and scaled back, so the bounding
/// box and each of its faces stay in place. Vertices on a face of the bounding box stay there
/// exactly. Meant for a structured box such as a Nek genbox mesh stored undeformed (nekRS
/// applies eps = 0.3 to kershaw.re2 in its case code); for the map to be piecewise linear on
/// the elements the box needs a multiple of 6 elements in x and an even number in y and z.
/// Boundary faces, groups and curved-side counts are unchanged.
/// Throws InvalidInput for epsilon outside (0, 1] (or not finite), for a mesh without elements
/// (or without 24 coordinates per element) or whose bounding box is empty in some direction (upper
/// <= lower), and when an element is no longer right-handed after the map (is_right_handed), naming
/// its 1-based index; the mesh is then left deformed.
void apply_kershaw(HexMesh& mesh, double epsilon);

/// Reads a Nek5000 `.re2` mesh, plain or gzip-compressed (detected by the magic bytes 1f 8b).
///
/// Layout: an 80-byte ASCII header `#v00N nelgt ndim nelgv ...`; the float32 6.54321 as an
/// endianness marker (byte-swapped files are read, swapping every word); per element its group,
/// then x[8], y[8], z[8] in Nek's preprocessor vertex order (counterclockwise in each z-layer,
/// converted here to lexicographic order); a curved-side count and its records (8 words each,
/// skipped); then, until the end of the file, per field a boundary count and its records
/// (element, face, 5 parameters, type in the last word). Words are 8 bytes for #v002 and #v003
/// (reals are float64, integers are stored as float64) and 4 bytes for #v001 (reals float32,
/// integers int32). Element and face numbers in the file are 1-based; faces are converted to
/// kryflow's order (see BoundaryFace). In a byte-swapped file the numbers are swapped and the
/// type characters read as stored. The corpus holds #v002 and #v003 files only; #v001 is checked
/// against a 4-byte conversion of one of them. Source: the layout Nek5000's tools (genbox,
/// reatore2) write and its .re2 reader reads.
///
/// Throws InvalidInput when the file cannot be opened, NotSupported for a 2D mesh (ndim = 2),
/// and ParseError (naming the file, the byte offset in the uncompressed data, the record and
/// what was expected) for a malformed or truncated file: unknown version, bad header counts,
/// bad endianness marker, non-finite coordinates, element numbers out of 1..nelgt, face numbers
/// out of 1..6, negative or oversized record counts, trailing bytes, a damaged gzip stream.
HexMesh read_re2(const std::filesystem::path& file);

}  // namespace kryflow::sem
