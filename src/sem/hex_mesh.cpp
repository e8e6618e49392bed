// Hexahedral meshes: trilinear Jacobians, the deformed box generator and the Nek5000 .re2
// reader (plain or gzip).
#include "kryflow/sem/hex_mesh.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "kryflow/core/error.hpp"

namespace kryflow::sem {
namespace {

constexpr double kPi = std::numbers::pi;

/// Reference coordinate (-1 or +1) of lexicographic vertex v in direction d.
constexpr double corner(int v, int d) {
  return ((v >> d) & 1) != 0 ? 1.0 : -1.0;
}

void check_element(const HexMesh& mesh, std::int64_t e) {
  if (e < 0 || e >= mesh.num_elements) {
    throw InvalidInput("element index " + std::to_string(e) + " out of range [0, " +
                       std::to_string(mesh.num_elements) + ")");
  }
}

// ---------------------------------------------------------------------------------------------
// Kershaw map (see BoxOptions::kershaw_epsilon).

double kershaw_right(double eps, double x) {
  return x <= 0.5 ? (2.0 - eps) * x : 1.0 + eps * (x - 1.0);
}
double kershaw_left(double eps, double x) {
  return 1.0 - kershaw_right(eps, 1.0 - x);
}
double kershaw_step(double a, double b, double l) {
  if (l <= 0.0) return a;
  if (l >= 1.0) return b;
  return a + (b - a) * l;
}
/// The transverse coordinate y (or z) after the Kershaw map at abscissa x.
double kershaw_transverse(double eps, double x, double y) {
  const int layer = static_cast<int>(std::floor(6.0 * x));
  const double l = 6.0 * x - layer;
  switch (layer) {
    case 0:
      return kershaw_left(eps, y);
    case 1:
    case 4:
      return kershaw_step(kershaw_left(eps, y), kershaw_right(eps, y), l);
    case 2:
      return kershaw_step(kershaw_right(eps, y), kershaw_left(eps, y), l / 2.0);
    case 3:
      return kershaw_step(kershaw_right(eps, y), kershaw_left(eps, y), (1.0 + l) / 2.0);
    default:
      return layer < 0 ? kershaw_left(eps, y) : kershaw_right(eps, y);
  }
}

/// The Kershaw map of a point of the unit cube, in place: x unchanged, y and z moved.
void kershaw_point(double eps, double unit[3]) {
  const double x = unit[0];
  unit[1] = kershaw_transverse(eps, x, unit[1]);
  unit[2] = kershaw_transverse(eps, x, unit[2]);
}

void check_kershaw_epsilon(const char* caller, const char* name, double eps) {
  if (!std::isfinite(eps) || !(eps > 0.0) || eps > 1.0) {
    std::ostringstream s;
    s << caller << ": " << name << " must lie in (0, 1], got " << eps;
    throw InvalidInput(s.str());
  }
}

// ---------------------------------------------------------------------------------------------
// .re2 reading.

/// Lexicographic index of Nek preprocessor vertex 1..8 (index 0..7 here).
constexpr int kNekVertexToLex[8] = {0, 1, 3, 2, 4, 5, 7, 6};
/// kryflow face of Nek preprocessor face 1..6 (index 0..5 here).
constexpr int kNekFaceToKryflow[6] = {2, 1, 3, 0, 4, 5};
constexpr float kEndianMarker = 6.54321f;
constexpr std::size_t kHeaderBytes = 80;

std::string system_message() {
  return std::strerror(errno);
}

/// The whole (uncompressed) file in memory. gzip is read with gzread; a damaged or truncated
/// stream is a ParseError at the uncompressed offset where it stops.
std::vector<unsigned char> read_all(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw InvalidInput("cannot open .re2 file '" + name + "': it is a directory");
  }
  std::FILE* f = std::fopen(name.c_str(), "rb");
  if (f == nullptr) {
    throw InvalidInput("cannot open .re2 file '" + name + "': " + system_message());
  }
  unsigned char magic[2] = {0, 0};
  const bool gzip = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::vector<unsigned char> data;
  if (!gzip) {
    std::rewind(f);
    unsigned char chunk[1 << 16];
    for (;;) {
      const std::size_t n = std::fread(chunk, 1, sizeof chunk, f);
      data.insert(data.end(), chunk, chunk + n);
      if (n < sizeof chunk) break;
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) {
      throw ParseError(name, static_cast<long long>(data.size()),
                       "read error at byte offset " + std::to_string(data.size()));
    }
    return data;
  }
  std::fclose(f);
  gzFile gz = gzopen(name.c_str(), "rb");
  if (gz == nullptr) throw InvalidInput("cannot open .re2 file '" + name + "' with zlib");
  constexpr unsigned kChunk = 1u << 20;
  for (;;) {
    const std::size_t old = data.size();
    data.resize(old + kChunk);
    const int n = gzread(gz, data.data() + old, kChunk);
    data.resize(old + static_cast<std::size_t>(std::max(n, 0)));
    int errnum = Z_OK;
    const char* message = gzerror(gz, &errnum);
    if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) {
      const std::string what = message != nullptr ? message : "unknown error";
      gzclose(gz);
      throw ParseError(name, static_cast<long long>(data.size()),
                       "damaged or truncated gzip stream (zlib: " + what + ") after byte offset " +
                           std::to_string(data.size()) + " of the uncompressed data");
    }
    if (n == 0) break;
  }
  gzclose(gz);
  return data;
}

/// Cursor over the uncompressed bytes, reading words of the file's size and byte order.
class Re2Reader {
 public:
  Re2Reader(std::string name, std::vector<unsigned char> data)
      : name_(std::move(name)), data_(std::move(data)) {}

  [[noreturn]] void fail(std::size_t offset, const std::string& problem) const {
    throw ParseError(name_, static_cast<long long>(offset),
                     "byte offset " + std::to_string(offset) + ": " + problem);
  }

  std::size_t size() const { return data_.size(); }
  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return data_.size() - offset_; }
  std::size_t word() const { return word_; }
  void set_word(std::size_t bytes) { word_ = bytes; }
  void set_swap(bool swap) { swap_ = swap; }
  void skip(std::size_t bytes) { offset_ += bytes; }

  /// Ensures `bytes` more bytes exist, else a ParseError naming `what`.
  void need(std::size_t bytes, const std::string& what) const {
    if (remaining() < bytes) {
      fail(offset_, "file ends (" + std::to_string(remaining()) + " bytes left) inside " + what +
                        ", which needs " + std::to_string(bytes) + " bytes");
    }
  }

  std::string header() {
    need(kHeaderBytes, "the 80-byte header");
    std::string h(reinterpret_cast<const char*>(data_.data()), kHeaderBytes);
    offset_ += kHeaderBytes;
    return h;
  }

  float raw_float32(std::size_t at) const {
    std::uint32_t bits = 0;
    std::memcpy(&bits, data_.data() + at, 4);
    if (swap_) bits = byteswap32(bits);
    return std::bit_cast<float>(bits);
  }
  float marker_float32(std::size_t at, bool swap) const {
    std::uint32_t bits = 0;
    std::memcpy(&bits, data_.data() + at, 4);
    if (swap) bits = byteswap32(bits);
    return std::bit_cast<float>(bits);
  }

  /// A real in one word (float64 or float32), advancing.
  double real() {
    double value = 0.0;
    if (word_ == 8) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, data_.data() + offset_, 8);
      if (swap_) bits = byteswap64(bits);
      value = std::bit_cast<double>(bits);
    } else {
      value = raw_float32(offset_);
    }
    offset_ += word_;
    return value;
  }

  /// An integer in one word (float64 holding an integral value, or int32), advancing; a
  /// non-integral or non-finite value is a ParseError naming `what`.
  std::int64_t integer(const std::string& what) {
    const std::size_t at = offset_;
    if (word_ == 4) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, data_.data() + offset_, 4);
      if (swap_) bits = byteswap32(bits);
      offset_ += 4;
      return static_cast<std::int32_t>(bits);
    }
    const double value = real();
    if (!std::isfinite(value) || value != std::floor(value) || std::fabs(value) > 9.0e15) {
      std::ostringstream s;
      s << what << ": expected an integer, found " << value;
      fail(at, s.str());
    }
    return static_cast<std::int64_t>(value);
  }

  /// The type characters of a record's last word, trimmed of spaces and NULs.
  std::string type_word() {
    std::string t(reinterpret_cast<const char*>(data_.data() + offset_),
                  std::min<std::size_t>(word_, 3));
    offset_ += word_;
    const auto keep = [](char c) { return c != ' ' && c != '\0'; };
    const auto first = std::find_if(t.begin(), t.end(), keep);
    const auto last = std::find_if(t.rbegin(), t.rend(), keep).base();
    return first < last ? std::string(first, last) : std::string();
  }

 private:
  static std::uint32_t byteswap32(std::uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  }
  static std::uint64_t byteswap64(std::uint64_t v) {
    return (static_cast<std::uint64_t>(byteswap32(static_cast<std::uint32_t>(v))) << 32) |
           byteswap32(static_cast<std::uint32_t>(v >> 32));
  }

  std::string name_;
  std::vector<unsigned char> data_;
  std::size_t offset_ = 0;
  std::size_t word_ = 8;
  bool swap_ = false;
};

}  // namespace

std::array<int, 4> face_vertices(int face) {
  if (face < 0 || face > 5) {
    throw InvalidInput("face " + std::to_string(face) + " out of range 0..5");
  }
  const int d = face / 2;     // direction normal to the face
  const int side = face % 2;  // 0: -1, 1: +1
  std::array<int, 4> result{};
  int n = 0;
  for (int v = 0; v < 8; ++v) {
    if (((v >> d) & 1) == side) result[static_cast<std::size_t>(n++)] = v;
  }
  return result;
}

double jacobian_determinant(const HexMesh& mesh, std::int64_t e, double r, double s, double t) {
  check_element(mesh, e);
  const double p[3] = {r, s, t};
  double J[3][3] = {};  // J[d][q] = d x_d / d p_q
  for (int v = 0; v < 8; ++v) {
    double n[3];
    for (int q = 0; q < 3; ++q) n[q] = 0.5 * (1.0 + corner(v, q) * p[q]);
    const double dn[3] = {0.5 * corner(v, 0) * n[1] * n[2], 0.5 * corner(v, 1) * n[0] * n[2],
                          0.5 * corner(v, 2) * n[0] * n[1]};
    for (int d = 0; d < 3; ++d) {
      const double x = mesh.vertex(e, v, d);
      for (int q = 0; q < 3; ++q) J[d][q] += x * dn[q];
    }
  }
  return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
         J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
         J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

bool is_right_handed(const HexMesh& mesh, std::int64_t e) {
  if (!(jacobian_determinant(mesh, e, 0.0, 0.0, 0.0) > 0.0)) return false;
  for (int v = 0; v < 8; ++v) {
    if (!(jacobian_determinant(mesh, e, corner(v, 0), corner(v, 1), corner(v, 2)) > 0.0)) {
      return false;
    }
  }
  return true;
}

HexMesh box_mesh(int nx, int ny, int nz, const BoxOptions& options) {
  if (nx < 1 || ny < 1 || nz < 1) {
    throw InvalidInput("box_mesh: element counts must be positive, got " + std::to_string(nx) +
                       " x " + std::to_string(ny) + " x " + std::to_string(nz));
  }
  const std::int64_t total = std::int64_t{nx} * ny * nz;
  if (total > (std::int64_t{1} << 31)) {
    throw InvalidInput("box_mesh: " + std::to_string(total) + " elements is more than 2^31");
  }
  for (int d = 0; d < 3; ++d) {
    if (!std::isfinite(options.lower[d]) || !std::isfinite(options.upper[d]) ||
        !(options.upper[d] > options.lower[d])) {
      throw InvalidInput("box_mesh: upper corner must exceed lower corner in every direction");
    }
  }
  const double a = options.smooth_deformation;
  if (!std::isfinite(a) || std::fabs(a) > 0.1) {
    throw InvalidInput("box_mesh: smooth_deformation must lie in [-0.1, 0.1]");
  }
  const double eps = options.kershaw_epsilon;
  check_kershaw_epsilon("box_mesh", "kershaw_epsilon", eps);

  // Mapped grid points, point (i, j, k) at i + (nx + 1) (j + (ny + 1) k).
  const std::int64_t px = nx + 1, py = ny + 1, pz = nz + 1;
  std::vector<double> points(static_cast<std::size_t>(px * py * pz * 3));
  for (std::int64_t k = 0; k < pz; ++k) {
    for (std::int64_t j = 0; j < py; ++j) {
      for (std::int64_t i = 0; i < px; ++i) {
        // Exact 0 and 1 on the boundary.
        double unit[3] = {static_cast<double>(i) / nx, static_cast<double>(j) / ny,
                          static_cast<double>(k) / nz};
        if (eps != 1.0) kershaw_point(eps, unit);
        double& x = unit[0];
        double& y = unit[1];
        double& z = unit[2];
        if (a != 0.0) {
          const double bump = a * std::sin(kPi * x) * std::sin(kPi * y) * std::sin(kPi * z);
          const bool boundary = i == 0 || i == nx || j == 0 || j == ny || k == 0 || k == nz;
          if (!boundary) {
            x += bump;
            y += bump;
            z += bump;
          }
        }
        const std::size_t p = static_cast<std::size_t>((i + px * (j + py * k)) * 3);
        for (int d = 0; d < 3; ++d) {
          points[p + d] = options.lower[d] + (options.upper[d] - options.lower[d]) * unit[d];
          if (unit[d] == 0.0) points[p + d] = options.lower[d];
          if (unit[d] == 1.0) points[p + d] = options.upper[d];
        }
      }
    }
  }

  HexMesh mesh;
  mesh.num_elements = total;
  mesh.vertices.resize(static_cast<std::size_t>(total * 24));
  mesh.groups.assign(static_cast<std::size_t>(total), 0);
  for (std::int64_t k = 0; k < nz; ++k) {
    for (std::int64_t j = 0; j < ny; ++j) {
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t e = i + nx * (j + ny * k);
        for (int v = 0; v < 8; ++v) {
          const std::int64_t p = (i + (v & 1)) + px * ((j + ((v >> 1) & 1)) + py * (k + (v >> 2)));
          for (int d = 0; d < 3; ++d) {
            mesh.vertices[static_cast<std::size_t>((e * 8 + v) * 3 + d)] =
                points[static_cast<std::size_t>(p * 3 + d)];
          }
        }
      }
    }
  }

  BoundaryField walls;
  walls.reserve(static_cast<std::size_t>(
      2 * (std::int64_t{nx} * ny + std::int64_t{ny} * nz + std::int64_t{nz} * nx)));
  const std::int64_t count[3] = {nx, ny, nz};
  for (int face = 0; face < 6; ++face) {
    const int d = face / 2;
    const std::int64_t layer = face % 2 == 0 ? 0 : count[d] - 1;
    for (std::int64_t k = 0; k < nz; ++k) {
      for (std::int64_t j = 0; j < ny; ++j) {
        for (std::int64_t i = 0; i < nx; ++i) {
          const std::int64_t position[3] = {i, j, k};
          if (position[d] == layer) walls.push_back({i + nx * (j + ny * k), face, "W"});
        }
      }
    }
  }
  mesh.fields.push_back(std::move(walls));

  for (std::int64_t e = 0; e < total; ++e) {
    if (!is_right_handed(mesh, e)) {
      throw InvalidInput("box_mesh: element " + std::to_string(e) +
                         " is inverted by the requested deformation");
    }
  }
  return mesh;
}

void apply_kershaw(HexMesh& mesh, double epsilon) {
  check_kershaw_epsilon("apply_kershaw", "epsilon", epsilon);
  if (mesh.num_elements < 1 ||
      mesh.vertices.size() != static_cast<std::size_t>(mesh.num_elements) * 24) {
    throw InvalidInput("apply_kershaw: the mesh has no elements or " +
                       std::to_string(mesh.vertices.size()) + " coordinates for " +
                       std::to_string(mesh.num_elements) + " elements (expected 24 each)");
  }
  std::array<double, 3> lower = {INFINITY, INFINITY, INFINITY};
  std::array<double, 3> upper = {-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    lower[i % 3] = std::min(lower[i % 3], mesh.vertices[i]);
    upper[i % 3] = std::max(upper[i % 3], mesh.vertices[i]);
  }
  for (int d = 0; d < 3; ++d) {
    if (!std::isfinite(lower[d]) || !std::isfinite(upper[d]) || !(upper[d] > lower[d])) {
      std::ostringstream s;
      s << "apply_kershaw: the bounding box of the mesh is empty in "
        << "xyz"[d] << " (" << lower[d] << " to " << upper[d] << ")";
      throw InvalidInput(s.str());
    }
  }
  for (std::size_t at = 0; at < mesh.vertices.size(); at += 3) {
    double unit[3];
    for (int d = 0; d < 3; ++d) {
      const double x = mesh.vertices[at + d];
      // Exact 0 and 1 on the faces of the box, as box_mesh has them.
      unit[d] = x == lower[d] ? 0.0 : x == upper[d] ? 1.0 : (x - lower[d]) / (upper[d] - lower[d]);
    }
    kershaw_point(epsilon, unit);
    for (int d = 0; d < 3; ++d) {
      double x = lower[d] + (upper[d] - lower[d]) * unit[d];
      if (unit[d] == 0.0) x = lower[d];
      if (unit[d] == 1.0) x = upper[d];
      mesh.vertices[at + d] = x;
    }
  }
  for (std::int64_t e = 0; e < mesh.num_elements; ++e) {
    if (!is_right_handed(mesh, e)) {
      std::ostringstream s;
      s << "apply_kershaw: element " << e + 1 << " (1-based) is inverted after the Kershaw map "
        << "with eps = " << epsilon;
      throw InvalidInput(s.str());
    }
  }
}

HexMesh read_re2(const std::filesystem::path& file) {
  const std::string name = file.string();
  Re2Reader in(name, read_all(file));

  // Header: "#v002  nelgt  ndim  nelgv ...".
  const std::string header = in.header();
  const std::string version = header.substr(0, 5);
  if (version == "#v001") {
    in.set_word(4);
  } else if (version == "#v002" || version == "#v003") {
    in.set_word(8);
  } else {
    in.fail(0, "unknown header version '" + version + "': expected #v001, #v002 or #v003");
  }
  std::istringstream fields(header.substr(5));
  long long nelgt = -1, ndim = -1, nelgv = -1;
  if (!(fields >> nelgt >> ndim >> nelgv)) {
    in.fail(5, "header: expected three integers 'nelgt ndim nelgv' after the version");
  }
  if (ndim == 2) {
    throw NotSupported("'" + name +
                       "' is a 2D mesh (ndim = 2); only 3D hexahedral meshes are supported");
  }
  if (ndim != 3) in.fail(5, "header: ndim = " + std::to_string(ndim) + ", expected 3");
  if (nelgt < 1 || nelgt > (1LL << 31)) {
    in.fail(5, "header: element count nelgt = " + std::to_string(nelgt) + ", expected 1..2^31");
  }
  if (nelgv < 0 || nelgv > nelgt) {
    in.fail(5, "header: fluid element count nelgv = " + std::to_string(nelgv) +
                   ", expected 0..nelgt = " + std::to_string(nelgt));
  }

  // Endianness marker.
  in.need(4, "the endianness marker");
  const std::size_t marker_at = in.offset();
  if (in.marker_float32(marker_at, false) == kEndianMarker) {
    in.set_swap(false);
  } else if (in.marker_float32(marker_at, true) == kEndianMarker) {
    in.set_swap(true);
  } else {
    in.fail(marker_at, "bad endianness marker: expected the float32 6.54321 in either byte order");
  }
  in.skip(4);

  HexMesh mesh;
  mesh.format_version = version;
  mesh.num_elements = nelgt;
  const std::size_t w = in.word();
  const std::size_t element_bytes = 25 * w;
  if (in.remaining() / element_bytes < static_cast<std::size_t>(nelgt)) {
    const std::size_t complete = in.remaining() / element_bytes;
    in.fail(in.offset() + complete * element_bytes,
            "element " + std::to_string(complete + 1) + " of " + std::to_string(nelgt) +
                ": file ends inside the element records (" + std::to_string(element_bytes) +
                " bytes each)");
  }
  mesh.vertices.resize(static_cast<std::size_t>(nelgt) * 24);
  mesh.groups.resize(static_cast<std::size_t>(nelgt));
  for (long long e = 0; e < nelgt; ++e) {
    const std::string record = "element " + std::to_string(e + 1);
    const std::int64_t group = in.integer(record + " group");
    if (group < std::numeric_limits<int>::min() || group > std::numeric_limits<int>::max()) {
      in.fail(in.offset() - w, record + ": group " + std::to_string(group) + " out of int range");
    }
    mesh.groups[static_cast<std::size_t>(e)] = static_cast<int>(group);
    for (int d = 0; d < 3; ++d) {
      for (int k = 0; k < 8; ++k) {
        const std::size_t at = in.offset();
        const double x = in.real();
        if (!std::isfinite(x)) {
          in.fail(at,
                  record + ": coordinate " + "xyz"[d] + std::to_string(k + 1) + " is not finite");
        }
        mesh.vertices[static_cast<std::size_t>((e * 8 + kNekVertexToLex[k]) * 3 + d)] = x;
      }
    }
  }

  // Curved sides: counted and skipped (the mesh is treated as trilinear).
  in.need(w, "the curved-side count");
  std::size_t count_at = in.offset();
  const std::int64_t num_curved = in.integer("curved-side count");
  if (num_curved < 0 || static_cast<std::uint64_t>(num_curved) > in.remaining() / (8 * w)) {
    in.fail(count_at, "curved-side count " + std::to_string(num_curved) + ": expected 0.." +
                          std::to_string(in.remaining() / (8 * w)) +
                          " (records of 8 words that fit in the rest of the file)");
  }
  for (std::int64_t c = 0; c < num_curved; ++c) {
    const std::size_t at = in.offset();
    const std::int64_t element = in.integer("curved-side record " + std::to_string(c + 1));
    if (element < 1 || element > nelgt) {
      in.fail(at, "curved-side record " + std::to_string(c + 1) + ": element " +
                      std::to_string(element) + " out of range 1.." + std::to_string(nelgt));
    }
    in.skip(7 * w);
  }
  mesh.curved_side_records = num_curved;

  // Boundary-condition sets until the end of the file.
  while (in.remaining() > 0) {
    const std::string field = "boundary field " + std::to_string(mesh.fields.size() + 1);
    in.need(w, field + " count");
    count_at = in.offset();
    const std::int64_t num_bc = in.integer(field + " count");
    if (num_bc < 0 || static_cast<std::uint64_t>(num_bc) > in.remaining() / (8 * w)) {
      in.fail(count_at, field + ": record count " + std::to_string(num_bc) + ": expected 0.." +
                            std::to_string(in.remaining() / (8 * w)) +
                            " (records of 8 words that fit in the rest of the file)");
    }
    BoundaryField faces;
    faces.reserve(static_cast<std::size_t>(num_bc));
    for (std::int64_t b = 0; b < num_bc; ++b) {
      const std::string record = field + ", boundary record " + std::to_string(b + 1);
      const std::size_t at = in.offset();
      const std::int64_t element = in.integer(record + " element");
      if (element < 1 || element > nelgt) {
        in.fail(at, record + ": element " + std::to_string(element) + " out of range 1.." +
                        std::to_string(nelgt));
      }
      const std::int64_t face = in.integer(record + " face");
      if (face < 1 || face > 6) {
        in.fail(at + w, record + ": face " + std::to_string(face) + " out of range 1..6");
      }
      in.skip(5 * w);
      faces.push_back({element - 1, kNekFaceToKryflow[face - 1], in.type_word()});
    }
    mesh.fields.push_back(std::move(faces));
  }
  return mesh;
}

}  // namespace kryflow::sem
