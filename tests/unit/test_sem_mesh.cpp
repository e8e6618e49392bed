// Hexahedral meshes: the box generator (counts, extents, boundary faces, deformations) and the
// Nek5000 .re2 reader on every mesh of the corpus and on corrupted copies.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace fs = std::filesystem;
using sem::BoxOptions;
using sem::HexMesh;

struct Box {
  std::array<double, 3> lower;
  std::array<double, 3> upper;
};

Box bounding_box(const HexMesh& mesh) {
  Box b{{1e300, 1e300, 1e300}, {-1e300, -1e300, -1e300}};
  for (std::int64_t e = 0; e < mesh.num_elements; ++e) {
    for (int v = 0; v < 8; ++v) {
      for (int d = 0; d < 3; ++d) {
        b.lower[d] = std::min(b.lower[d], mesh.vertex(e, v, d));
        b.upper[d] = std::max(b.upper[d], mesh.vertex(e, v, d));
      }
    }
  }
  return b;
}

/// True when the 4 vertices of (e, face) lie on the side of `box` the face number names.
bool face_on_box_boundary(const HexMesh& mesh, std::int64_t e, int face, const Box& box,
                          double tol) {
  const int d = face / 2;
  const double plane = face % 2 == 0 ? box.lower[d] : box.upper[d];
  for (int v : sem::face_vertices(face)) {
    if (std::fabs(mesh.vertex(e, v, d) - plane) > tol) return false;
  }
  return true;
}

/// Face key: its 4 vertices quantized to `h` and sorted, so both elements sharing a face in
/// a conforming mesh produce the same key.
using FaceKey = std::array<std::array<long long, 3>, 4>;
FaceKey face_key(const HexMesh& mesh, std::int64_t e, int face, double h) {
  FaceKey key{};
  const auto vs = sem::face_vertices(face);
  for (int n = 0; n < 4; ++n) {
    for (int d = 0; d < 3; ++d) key[n][d] = std::llround(mesh.vertex(e, vs[n], d) / h);
  }
  std::sort(key.begin(), key.end());
  return key;
}

/// How many element faces share each geometric face.
std::map<FaceKey, int> face_multiplicity(const HexMesh& mesh, double h) {
  std::map<FaceKey, int> count;
  for (std::int64_t e = 0; e < mesh.num_elements; ++e) {
    for (int f = 0; f < 6; ++f) ++count[face_key(mesh, e, f, h)];
  }
  return count;
}

void expect_all_right_handed(const HexMesh& mesh) {
  std::int64_t bad = 0;
  for (std::int64_t e = 0; e < mesh.num_elements; ++e) bad += sem::is_right_handed(mesh, e) ? 0 : 1;
  EXPECT_EQ(bad, 0) << "elements not right-handed";
}

// ---------------------------------------------------------------------------------------------
// Box generator.

TEST(HexMeshBox, FaceVerticesFollowKryflowFaceOrder) {
  EXPECT_EQ(sem::face_vertices(0), (std::array<int, 4>{0, 2, 4, 6}));
  EXPECT_EQ(sem::face_vertices(1), (std::array<int, 4>{1, 3, 5, 7}));
  EXPECT_EQ(sem::face_vertices(2), (std::array<int, 4>{0, 1, 4, 5}));
  EXPECT_EQ(sem::face_vertices(3), (std::array<int, 4>{2, 3, 6, 7}));
  EXPECT_EQ(sem::face_vertices(4), (std::array<int, 4>{0, 1, 2, 3}));
  EXPECT_EQ(sem::face_vertices(5), (std::array<int, 4>{4, 5, 6, 7}));
  EXPECT_THROW(sem::face_vertices(6), InvalidInput);
}

TEST(HexMeshBox, UnitCubeHasCountsExtentsAndVolumeJacobian) {
  const HexMesh mesh = sem::box_mesh(3, 4, 5);
  EXPECT_EQ(mesh.num_elements, 60);
  EXPECT_EQ(mesh.vertices.size(), 60u * 24u);
  EXPECT_EQ(mesh.groups.size(), 60u);
  const Box box = bounding_box(mesh);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(box.lower[d], 0.0);
    EXPECT_EQ(box.upper[d], 1.0);
  }
  // Element (1, 2, 3): lexicographic vertex v at (i + v&1, j + (v>>1)&1, k + v>>2) / n.
  const std::int64_t e = 1 + 3 * (2 + 4 * 3);
  for (int v = 0; v < 8; ++v) {
    EXPECT_DOUBLE_EQ(mesh.vertex(e, v, 0), (1 + (v & 1)) / 3.0);
    EXPECT_DOUBLE_EQ(mesh.vertex(e, v, 1), (2 + ((v >> 1) & 1)) / 4.0);
    EXPECT_DOUBLE_EQ(mesh.vertex(e, v, 2), (3 + (v >> 2)) / 5.0);
  }
  // det J = volume / 8 everywhere for an affine brick.
  EXPECT_NEAR(sem::jacobian_determinant(mesh, e, 0.3, -0.7, 1.0), 1.0 / 60.0 / 8.0, 1e-15);
  expect_all_right_handed(mesh);
}

TEST(HexMeshBox, BoundaryFacesAreWallsOnTheBoundary) {
  BoxOptions options;
  options.lower = {-1.0, 0.5, 2.0};
  options.upper = {2.0, 1.5, 2.25};
  const int nx = 4, ny = 3, nz = 2;
  const HexMesh mesh = sem::box_mesh(nx, ny, nz, options);
  const Box box = bounding_box(mesh);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(box.lower[d], options.lower[d]);
    EXPECT_EQ(box.upper[d], options.upper[d]);
  }
  ASSERT_EQ(mesh.fields.size(), 1u);
  EXPECT_EQ(mesh.fields[0].size(), std::size_t(2 * (nx * ny + ny * nz + nz * nx)));
  std::map<std::pair<std::int64_t, int>, int> seen;
  for (const auto& f : mesh.fields[0]) {
    EXPECT_EQ(f.type, "W");
    EXPECT_TRUE(face_on_box_boundary(mesh, f.element, f.face, box, 0.0))
        << "element " << f.element << " face " << f.face;
    EXPECT_EQ(++seen[std::make_pair(f.element, f.face)], 1);
  }
}

TEST(HexMeshBox, DeformationsKeepBoundaryAndOrientation) {
  // Each deformation alone at its limits, and both together where the Kershaw elements are
  // not too thin for the bump.
  const std::vector<std::pair<double, double>> cases = {{0.1, 1.0},  {-0.1, 1.0},  {0.0, 0.7},
                                                        {0.0, 0.3},  {0.0, 0.05},  {0.05, 0.7},
                                                        {0.05, 0.3}, {-0.05, 0.3}, {0.02, 0.05}};
  for (const auto& [a, eps] : cases) {
    {
      for (const auto& n : {std::array<int, 3>{6, 4, 4}, std::array<int, 3>{12, 8, 6},
                            std::array<int, 3>{5, 3, 7}}) {
        SCOPED_TRACE("a = " + std::to_string(a) + ", eps = " + std::to_string(eps) +
                     ", n = " + std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" +
                     std::to_string(n[2]));
        BoxOptions options;
        options.smooth_deformation = a;
        options.kershaw_epsilon = eps;
        options.upper = {6.0, 6.0, 6.0};
        const HexMesh mesh = sem::box_mesh(n[0], n[1], n[2], options);
        const Box box = bounding_box(mesh);
        for (int d = 0; d < 3; ++d) {
          EXPECT_EQ(box.lower[d], 0.0);
          EXPECT_EQ(box.upper[d], 6.0);
        }
        for (const auto& f : mesh.fields[0]) {
          ASSERT_TRUE(face_on_box_boundary(mesh, f.element, f.face, box, 1e-12))
              << "element " << f.element << " face " << f.face;
        }
        expect_all_right_handed(mesh);
        // Conforming: interior faces are shared by exactly two elements.
        std::size_t once = 0;
        for (const auto& [key, count] : face_multiplicity(mesh, 1e-9)) {
          EXPECT_LE(count, 2);
          once += count == 1 ? 1 : 0;
        }
        EXPECT_EQ(once, mesh.fields[0].size());
      }
    }
  }
}

TEST(HexMeshBox, InvertingCombinationIsRejected) {
  BoxOptions options;
  options.smooth_deformation = 0.1;
  options.kershaw_epsilon = 0.05;
  EXPECT_THROW(sem::box_mesh(6, 4, 4, options), InvalidInput);
}

TEST(HexMeshBox, KershawMovesInteriorVertices) {
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh plain = sem::box_mesh(6, 4, 4);
  const HexMesh deformed = sem::box_mesh(6, 4, 4, options);
  double moved = 0.0;
  for (std::size_t i = 0; i < plain.vertices.size(); ++i) {
    moved = std::max(moved, std::fabs(plain.vertices[i] - deformed.vertices[i]));
  }
  EXPECT_GT(moved, 0.1);
  // x is unchanged by the Kershaw map.
  for (std::size_t i = 0; i < plain.vertices.size(); i += 3) {
    EXPECT_EQ(plain.vertices[i], deformed.vertices[i]);
  }
}

TEST(ApplyKershaw, MatchesTheKershawBoxVertexForVertex) {
  // Arrange
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh expected = sem::box_mesh(12, 4, 4, options);
  HexMesh mesh = sem::box_mesh(12, 4, 4);

  // Act
  sem::apply_kershaw(mesh, 0.3);

  // Assert
  ASSERT_EQ(mesh.vertices.size(), expected.vertices.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    worst = std::max(worst, std::fabs(mesh.vertices[i] - expected.vertices[i]));
  }
  EXPECT_LE(worst, 1e-14);
}

TEST(ApplyKershaw, ScalesTheBoundingBoxToTheUnitCubeAndBack) {
  // Arrange: the same box on [0,6]^3, as kershaw.re2 is stored.
  BoxOptions plain;
  plain.upper = {6.0, 6.0, 6.0};
  BoxOptions deformed = plain;
  deformed.kershaw_epsilon = 0.3;
  const HexMesh expected = sem::box_mesh(6, 4, 4, deformed);
  HexMesh mesh = sem::box_mesh(6, 4, 4, plain);

  // Act
  sem::apply_kershaw(mesh, 0.3);

  // Assert
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    ASSERT_NEAR(mesh.vertices[i], expected.vertices[i], 1e-13) << "coordinate " << i;
  }
  const Box box = bounding_box(mesh);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(box.lower[d], 0.0);
    EXPECT_EQ(box.upper[d], 6.0);
  }
}

TEST(ApplyKershaw, RejectsBadEpsilonAndEmptyMeshes) {
  HexMesh mesh = sem::box_mesh(6, 2, 2);
  EXPECT_THROW(sem::apply_kershaw(mesh, 0.0), InvalidInput);
  EXPECT_THROW(sem::apply_kershaw(mesh, -0.3), InvalidInput);
  EXPECT_THROW(sem::apply_kershaw(mesh, 1.5), InvalidInput);
  EXPECT_THROW(sem::apply_kershaw(mesh, std::nan("")), InvalidInput);
  HexMesh empty;
  EXPECT_THROW(sem::apply_kershaw(empty, 0.3), InvalidInput);
  HexMesh flat = sem::box_mesh(1, 1, 1);
  for (std::size_t i = 2; i < flat.vertices.size(); i += 3) flat.vertices[i] = 0.0;
  EXPECT_THROW(sem::apply_kershaw(flat, 0.3), InvalidInput);
}

TEST(ApplyKershaw, NamesAnElementLeftInvertedOneBased) {
  // Arrange: element 3 (0-based 2) mirrored by swapping its corners 0 and 1.
  HexMesh mesh = sem::box_mesh(6, 2, 2);
  for (int d = 0; d < 3; ++d) {
    std::swap(mesh.vertices[static_cast<std::size_t>(2 * 24 + d)],
              mesh.vertices[static_cast<std::size_t>(2 * 24 + 3 + d)]);
  }

  // Act and Assert
  try {
    sem::apply_kershaw(mesh, 0.3);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("element 3 (1-based) is inverted"), std::string::npos)
        << e.what();
  }
}

TEST(HexMeshBox, RejectsBadCountsAndOptions) {
  EXPECT_THROW(sem::box_mesh(0, 1, 1), InvalidInput);
  EXPECT_THROW(sem::box_mesh(1, -2, 1), InvalidInput);
  BoxOptions options;
  options.smooth_deformation = 0.2;
  EXPECT_THROW(sem::box_mesh(2, 2, 2, options), InvalidInput);
  options = {};
  options.kershaw_epsilon = 0.0;
  EXPECT_THROW(sem::box_mesh(2, 2, 2, options), InvalidInput);
  options.kershaw_epsilon = 1.5;
  EXPECT_THROW(sem::box_mesh(2, 2, 2, options), InvalidInput);
  options.kershaw_epsilon = std::nan("");
  EXPECT_THROW(sem::box_mesh(2, 2, 2, options), InvalidInput);
  options = {};
  options.upper = {1.0, 0.0, 1.0};
  EXPECT_THROW(sem::box_mesh(2, 2, 2, options), InvalidInput);
}

// ---------------------------------------------------------------------------------------------
// .re2 reader on the corpus.

struct Re2Case {
  const char* file;
  std::int64_t elements;
  std::int64_t curved;
  std::vector<std::size_t> bc_per_field;
  Box box;
  bool plain_box;  ///< stored mesh is an axis-aligned box: BC faces lie on its planes
  const char* version;
};

const std::vector<Re2Case>& re2_cases() {
  static const std::vector<Re2Case> cases = {
      {"meshes/nek/nekrs_kershaw/kershaw.re2.gz",
       8000,
       0,
       {2400},
       {{0, 0, 0}, {6, 6, 6}},
       true,
       "#v002"},
      {"meshes/nek/nek_bp5/bp5.re2.gz", 1000, 0, {600}, {{0, 0, 0}, {1, 1, 1}}, true, "#v002"},
      {"meshes/nek/nek_turbPipe/turbPipe.re2.gz",
       1620,
       12960,
       {576},
       {{-0.5, -0.5, 0}, {0.5, 0.5, 5}},
       false,
       "#v002"},
      {"meshes/nek/nek_tgv/tgv.re2.gz", 512, 0, {384}, {{0, 0, 0}, {8, 8, 8}}, true, "#v002"},
      {"meshes/nek/nekrs_rbc/rbc.re2.gz",
       3520,
       19200,
       {1080, 1080},
       {{-0.5, -0.5, 0}, {0.5, 0.5, 1}},
       false,
       "#v002"},
      {"meshes/nek/nekrs_hemi/hemi.re2.gz",
       2042,
       700,
       {1232},
       {{-3.2, -3.2, 0}, {15, 3.2, 3.25}},
       false,
       "#v002"},
      {"meshes/nek/nekrs_turbChannel/turbChannel.re2.gz",
       10368,
       0,
       {3024},
       {{0, 0, 0}, {1, 1, 1}},
       true,
       "#v002"},
      {"meshes/nek/nekrs_ethier/ethier.re2.gz",
       32,
       96,
       {24},
       {{-1, -1, -1}, {1, 1, 1}},
       false,
       "#v003"},
  };
  return cases;
}

TEST(Re2Reader, ReadsEveryCorpusMesh) {
  for (const Re2Case& c : re2_cases()) {
    SCOPED_TRACE(c.file);
    const fs::path path = test::data_file(c.file);
    if (path.empty()) continue;
    const HexMesh mesh = sem::read_re2(path);
    EXPECT_EQ(mesh.format_version, c.version);
    ASSERT_EQ(mesh.num_elements, c.elements);
    EXPECT_EQ(mesh.vertices.size(), static_cast<std::size_t>(c.elements) * 24);
    EXPECT_EQ(mesh.groups.size(), static_cast<std::size_t>(c.elements));
    EXPECT_EQ(mesh.curved_side_records, c.curved);
    ASSERT_EQ(mesh.fields.size(), c.bc_per_field.size());
    for (std::size_t f = 0; f < c.bc_per_field.size(); ++f) {
      EXPECT_EQ(mesh.fields[f].size(), c.bc_per_field[f]) << "field " << f;
    }
    const Box box = bounding_box(mesh);
    double extent = 0.0;
    for (int d = 0; d < 3; ++d) {
      extent = std::max(extent, c.box.upper[d] - c.box.lower[d]);
      EXPECT_NEAR(box.lower[d], c.box.lower[d], 1e-6 * extent) << "direction " << d;
      EXPECT_NEAR(box.upper[d], c.box.upper[d], 1e-6 * extent) << "direction " << d;
    }
    expect_all_right_handed(mesh);

    // Every boundary face is a face of exactly one element (the face mapping and the vertex
    // order agree), and the faces of field 0 are all the faces that occur once.
    const auto multiplicity = face_multiplicity(mesh, 1e-7 * extent);
    std::size_t once = 0;
    for (const auto& [key, count] : multiplicity) {
      EXPECT_LE(count, 2);
      once += count == 1 ? 1 : 0;
    }
    EXPECT_EQ(once, mesh.fields[0].size());
    for (const auto& field : mesh.fields) {
      for (const auto& face : field) {
        ASSERT_TRUE(face.element >= 0 && face.element < mesh.num_elements);
        ASSERT_TRUE(face.face >= 0 && face.face < 6);
        EXPECT_FALSE(face.type.empty());
        EXPECT_LE(face.type.size(), 3u);
        EXPECT_EQ(multiplicity.at(face_key(mesh, face.element, face.face, 1e-7 * extent)), 1)
            << "element " << face.element << " face " << face.face;
        if (c.plain_box) {
          EXPECT_TRUE(face_on_box_boundary(mesh, face.element, face.face, box, 1e-9 * extent))
              << "element " << face.element << " face " << face.face;
        }
      }
    }
  }
}

TEST(Re2Reader, Bp5FirstElementIsInLexicographicOrder) {
  const fs::path path = test::data_file("meshes/nek/nek_bp5/bp5.re2.gz");
  if (path.empty()) return;
  const HexMesh mesh = sem::read_re2(path);
  for (int v = 0; v < 8; ++v) {
    EXPECT_NEAR(mesh.vertex(0, v, 0), 0.1 * (v & 1), 1e-15);
    EXPECT_NEAR(mesh.vertex(0, v, 1), 0.1 * ((v >> 1) & 1), 1e-15);
    EXPECT_NEAR(mesh.vertex(0, v, 2), 0.1 * (v >> 2), 1e-15);
  }
  EXPECT_EQ(mesh.fields[0][0].type, "v");
  EXPECT_GT(sem::jacobian_determinant(mesh, 0, 0.0, 0.0, 0.0), 0.0);
}

// ---------------------------------------------------------------------------------------------
// .re2 reader on corrupted copies of bp5 (1000 elements, no curved sides, one field of 600).

std::vector<unsigned char> inflate_file(const fs::path& path) {
  std::vector<unsigned char> data;
  gzFile gz = gzopen(path.string().c_str(), "rb");
  if (gz == nullptr) return data;
  unsigned char chunk[1 << 16];
  int n = 0;
  while ((n = gzread(gz, chunk, sizeof chunk)) > 0) data.insert(data.end(), chunk, chunk + n);
  gzclose(gz);
  return data;
}

std::vector<unsigned char> raw_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path write_temp(const std::string& name, const std::vector<unsigned char>& data) {
  const fs::path dir = fs::temp_directory_path() / "kryflow_test_sem_mesh";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return path;
}

void put_double(std::vector<unsigned char>& data, std::size_t offset, double value) {
  std::memcpy(data.data() + offset, &value, 8);
}

constexpr std::size_t kBp5Elements = 1000;
constexpr std::size_t kBp5FirstBc = 84 + kBp5Elements * 25 * 8 + 8 + 8;  // after both counts

/// Expects read_re2(path) to throw ParseError whose message names the file and `fragment`.
void expect_parse_error(const fs::path& path, const std::string& fragment) {
  try {
    sem::read_re2(path);
    ADD_FAILURE() << "no ParseError for " << path;
  } catch (const ParseError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

class Re2Corrupted : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = test::data_file("meshes/nek/nek_bp5/bp5.re2.gz");
    if (source_.empty()) GTEST_SKIP();
    plain_ = inflate_file(source_);
    ASSERT_EQ(plain_.size(), 238500u);
  }
  fs::path source_;
  std::vector<unsigned char> plain_;
};

TEST_F(Re2Corrupted, PlainCopyReadsLikeTheGzipFile) {
  const HexMesh a = sem::read_re2(source_);
  const HexMesh b = sem::read_re2(write_temp("bp5_plain.re2", plain_));
  EXPECT_EQ(a.vertices, b.vertices);
  EXPECT_EQ(a.fields[0].size(), b.fields[0].size());
}

TEST_F(Re2Corrupted, ByteSwappedCopyReadsTheSame) {
  std::vector<unsigned char> swapped = plain_;
  std::reverse(swapped.begin() + 80, swapped.begin() + 84);
  for (std::size_t at = 84; at + 8 <= swapped.size(); at += 8) {
    const bool type_word = at >= kBp5FirstBc && (at - kBp5FirstBc) % 64 == 56;
    if (!type_word) std::reverse(swapped.begin() + at, swapped.begin() + at + 8);
  }
  const HexMesh a = sem::read_re2(source_);
  const HexMesh b = sem::read_re2(write_temp("bp5_swapped.re2", swapped));
  EXPECT_EQ(a.vertices, b.vertices);
  ASSERT_EQ(b.fields.size(), 1u);
  EXPECT_EQ(b.fields[0].size(), 600u);
  EXPECT_EQ(b.fields[0][7].face, a.fields[0][7].face);
  EXPECT_EQ(b.fields[0][7].type, "v");
}

TEST_F(Re2Corrupted, Version1CopyWithFourByteWordsReadsTheSame) {
  // #v001 (as Nek5000's genbox writes it): int32 group, counts, element and face numbers;
  // float32 coordinates and parameters; a 4-byte type word.
  std::vector<unsigned char> v1(plain_.begin(), plain_.begin() + 84);
  std::memcpy(v1.data(), "#v001", 5);
  const auto put32 = [&v1](const void* p) {
    const auto* b = static_cast<const unsigned char*>(p);
    v1.insert(v1.end(), b, b + 4);
  };
  const auto as_int = [](double x) { return static_cast<std::int32_t>(x); };
  std::size_t at = 84;
  const auto next = [&]() {
    double x = 0.0;
    std::memcpy(&x, plain_.data() + at, 8);
    at += 8;
    return x;
  };
  for (std::size_t e = 0; e < kBp5Elements; ++e) {
    const std::int32_t group = as_int(next());
    put32(&group);
    for (int k = 0; k < 24; ++k) {
      const float x = static_cast<float>(next());
      put32(&x);
    }
  }
  const std::int32_t curved = as_int(next()), nbc = as_int(next());
  put32(&curved);
  put32(&nbc);
  for (std::int32_t b = 0; b < nbc; ++b) {
    const std::int32_t element = as_int(next()), face = as_int(next());
    put32(&element);
    put32(&face);
    for (int k = 0; k < 5; ++k) {
      const float x = static_cast<float>(next());
      put32(&x);
    }
    v1.insert(v1.end(), plain_.begin() + static_cast<std::ptrdiff_t>(at),
              plain_.begin() + static_cast<std::ptrdiff_t>(at) + 4);
    at += 8;
  }
  ASSERT_EQ(at, plain_.size());
  const HexMesh a = sem::read_re2(source_);
  const HexMesh b = sem::read_re2(write_temp("bp5_v1.re2", v1));
  EXPECT_EQ(b.format_version, "#v001");
  ASSERT_EQ(b.vertices.size(), a.vertices.size());
  for (std::size_t i = 0; i < a.vertices.size(); ++i) {
    ASSERT_EQ(b.vertices[i], static_cast<double>(static_cast<float>(a.vertices[i])));
  }
  ASSERT_EQ(b.fields.size(), 1u);
  ASSERT_EQ(b.fields[0].size(), a.fields[0].size());
  for (std::size_t f = 0; f < a.fields[0].size(); ++f) {
    EXPECT_EQ(b.fields[0][f].element, a.fields[0][f].element);
    EXPECT_EQ(b.fields[0][f].face, a.fields[0][f].face);
    EXPECT_EQ(b.fields[0][f].type, a.fields[0][f].type);
  }
}

TEST_F(Re2Corrupted, TruncatedPlainCopyNamesTheElement) {
  std::vector<unsigned char> cut(plain_.begin(), plain_.begin() + 84 + 16 * 200 + 100);
  expect_parse_error(write_temp("bp5_cut.re2", cut), "element 17");
  cut.assign(plain_.begin(), plain_.end() - 30);
  expect_parse_error(write_temp("bp5_cut_bc.re2", cut), "boundary field 1");
  cut.assign(plain_.begin(), plain_.begin() + 50);
  expect_parse_error(write_temp("bp5_cut_header.re2", cut), "header");
}

TEST_F(Re2Corrupted, TruncatedGzipCopyIsRejected) {
  std::vector<unsigned char> gz = raw_file(source_);
  gz.resize(gz.size() / 2);
  expect_parse_error(write_temp("bp5_cut.re2.gz", gz), "gzip");
}

TEST_F(Re2Corrupted, WrongHeaderVersionIsRejected) {
  std::memcpy(plain_.data(), "#v009", 5);
  expect_parse_error(write_temp("bp5_version.re2", plain_), "#v009");
}

TEST_F(Re2Corrupted, BadEndiannessMarkerIsRejected) {
  const float wrong = 1.5f;
  std::memcpy(plain_.data() + 80, &wrong, 4);
  expect_parse_error(write_temp("bp5_marker.re2", plain_), "endianness marker");
}

TEST_F(Re2Corrupted, FaceNumberNineIsRejected) {
  put_double(plain_, kBp5FirstBc + 5 * 64 + 8, 9.0);
  expect_parse_error(write_temp("bp5_face9.re2", plain_), "boundary record 6: face 9");
}

TEST_F(Re2Corrupted, ElementIndexPastTheEndIsRejected) {
  put_double(plain_, kBp5FirstBc + 4 * 64, 1001.0);
  expect_parse_error(write_temp("bp5_element.re2", plain_), "boundary record 5: element 1001");
}

TEST_F(Re2Corrupted, NanCoordinateAndBadCountsAreRejected) {
  std::vector<unsigned char> data = plain_;
  put_double(data, 84 + 16 * 200 + 8 + 3 * 8, std::nan(""));
  expect_parse_error(write_temp("bp5_nan.re2", data), "element 17: coordinate x4");
  data = plain_;
  std::memcpy(data.data() + 5, "        0", 9);
  expect_parse_error(write_temp("bp5_zero.re2", data), "nelgt = 0");
  data = plain_;
  put_double(data, 84 + kBp5Elements * 200, 1e6);
  expect_parse_error(write_temp("bp5_curved.re2", data), "curved-side count");
  data = plain_;
  put_double(data, 84 + kBp5Elements * 200 + 8, 601.0);
  expect_parse_error(write_temp("bp5_bccount.re2", data), "boundary field 1: record count 601");
}

TEST_F(Re2Corrupted, TwoDimensionalMeshIsNotSupported) {
  std::memcpy(plain_.data() + 14, "  2", 3);
  EXPECT_THROW(sem::read_re2(write_temp("bp5_2d.re2", plain_)), NotSupported);
}

TEST(Re2Reader, MissingFileIsInvalidInput) {
  EXPECT_THROW(sem::read_re2("/nonexistent/mesh.re2"), InvalidInput);
}

}  // namespace
}  // namespace kryflow
