// Matrix Market reader and writer: hand-checked small files, bit-exact round trips, one
// ParseError per malformed file of tests/data/bad, and the real matrices of the corpus.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace fs = std::filesystem;
using io::MatrixMarketField;
using io::MatrixMarketSymmetry;

fs::path good_file(const std::string& name) {
  return fs::path(KRYFLOW_TEST_SOURCE_DIR) / "data" / "good" / name;
}

fs::path bad_folder() {
  return fs::path(KRYFLOW_TEST_SOURCE_DIR) / "data" / "bad";
}

/// Row-major dense copy of a CSR matrix (tiny matrices only).
std::vector<std::vector<double>> to_dense(const CsrMatrix& A) {
  const std::vector<index_t> row_ptr = A.row_ptr().to_host();
  const std::vector<index_t> col_idx = A.col_idx().to_host();
  const std::vector<double> values = A.values().to_host();
  std::vector<std::vector<double>> dense(static_cast<std::size_t>(A.num_rows()),
                                         std::vector<double>(A.num_cols(), 0.0));
  for (index_t i = 0; i < A.num_rows(); ++i) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) dense[i][col_idx[k]] = values[k];
  }
  return dense;
}

std::vector<std::uint64_t> bits_of(const std::vector<double>& v) {
  std::vector<std::uint64_t> bits(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) bits[k] = std::bit_cast<std::uint64_t>(v[k]);
  return bits;
}

bool starts_with_gzip_magic(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return magic[0] == 0x1f && magic[1] == 0x8b;
}

/// A fresh folder under the system temporary directory, removed with the fixture.
class MatrixMarketTempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kryflow_test_matrix_market_" + std::to_string(test::fresh_seed()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// ---- Hand-checked good files -----------------------------------------------------------------

TEST(MatrixMarketRead, GeneralRealKeepsDuplicatesAndSkipsCommentsAndBlankLines) {
  // Arrange
  const fs::path file = good_file("general_real.mtx");
  io::MatrixMarketHeader header;

  // Act
  const CooMatrix coo = io::read_matrix_market(file, &header);

  // Assert: the six triplets in file order (0-based), the duplicate (2,3) kept twice.
  EXPECT_TRUE(header.coordinate);
  EXPECT_EQ(header.field, MatrixMarketField::real);
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::general);
  EXPECT_EQ(header.num_rows, 3);
  EXPECT_EQ(header.num_cols, 4);
  EXPECT_EQ(header.num_entries, 6);
  EXPECT_EQ(coo.num_rows, 3);
  EXPECT_EQ(coo.num_cols, 4);
  EXPECT_EQ(coo.row_idx, (std::vector<index_t>{0, 1, 2, 1, 0, 2}));
  EXPECT_EQ(coo.col_idx, (std::vector<index_t>{0, 2, 3, 2, 1, 0}));
  EXPECT_EQ(coo.values, (std::vector<double>{1.5, -2.0, 42.5, 0.5, -1e-3, 7.0}));
}

TEST(MatrixMarketRead, DuplicatesAreSummedByFromCoo) {
  // Arrange
  const CooMatrix coo = io::read_matrix_market(good_file("general_real.mtx"));

  // Act
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);

  // Assert: (2,3) = -2.0 + 0.5 = -1.5 exactly.
  EXPECT_EQ(A.row_ptr().to_host(), (std::vector<index_t>{0, 2, 3, 5}));
  EXPECT_EQ(A.col_idx().to_host(), (std::vector<index_t>{0, 1, 2, 0, 3}));
  EXPECT_EQ(A.values().to_host(), (std::vector<double>{1.5, -1e-3, -1.5, 7.0, 42.5}));
}

TEST(MatrixMarketRead, GzipFileReadsLikeThePlainFile) {
  // Arrange
  ASSERT_TRUE(starts_with_gzip_magic(good_file("general_real.mtx.gz")));

  // Act
  const CooMatrix plain = io::read_matrix_market(good_file("general_real.mtx"));
  const CooMatrix gzip = io::read_matrix_market(good_file("general_real.mtx.gz"));

  // Assert
  EXPECT_EQ(gzip.num_rows, plain.num_rows);
  EXPECT_EQ(gzip.num_cols, plain.num_cols);
  EXPECT_EQ(gzip.row_idx, plain.row_idx);
  EXPECT_EQ(gzip.col_idx, plain.col_idx);
  EXPECT_EQ(gzip.values, plain.values);
}

TEST(MatrixMarketRead, SymmetricFileIsExpandedToBothTriangles) {
  // Arrange
  io::MatrixMarketHeader header;

  // Act
  const CooMatrix coo = io::read_matrix_market(good_file("symmetric.mtx"), &header);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);

  // Assert: 6 stored entries (3 diagonal, 3 off-diagonal) become 9.
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(header.num_entries, 6);
  EXPECT_EQ(coo.num_entries(), 9u);
  const std::vector<std::vector<double>> expected = {
      {4.0, -1.0, 0.5}, {-1.0, 4.0, -1.0}, {0.5, -1.0, 4.0}};
  EXPECT_EQ(to_dense(A), expected);
}

TEST(MatrixMarketRead, SkewSymmetricMirrorIsNegated) {
  // Act
  io::MatrixMarketHeader header;
  const CooMatrix coo = io::read_matrix_market(good_file("skew_symmetric.mtx"), &header);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);

  // Assert
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::skew_symmetric);
  EXPECT_EQ(coo.num_entries(), 6u);
  const std::vector<std::vector<double>> expected = {
      {0.0, -2.0, 3.0}, {2.0, 0.0, -5.0}, {-3.0, 5.0, 0.0}};
  EXPECT_EQ(to_dense(A), expected);
  EXPECT_EQ(A.nnz(), 6);  // no diagonal entries stored
}

TEST(MatrixMarketRead, PatternEntriesHaveValueOne) {
  // Act
  io::MatrixMarketHeader header;
  const CooMatrix coo = io::read_matrix_market(good_file("pattern.mtx"), &header);

  // Assert
  EXPECT_EQ(header.field, MatrixMarketField::pattern);
  EXPECT_EQ(coo.row_idx, (std::vector<index_t>{0, 1, 0}));
  EXPECT_EQ(coo.col_idx, (std::vector<index_t>{0, 2, 2}));
  EXPECT_EQ(coo.values, (std::vector<double>{1.0, 1.0, 1.0}));
}

TEST(MatrixMarketRead, IntegerValuesBecomeDoubles) {
  // Act
  io::MatrixMarketHeader header;
  const CsrMatrix A = CsrMatrix::from_coo(
      Backend::reference(), io::read_matrix_market(good_file("integer.mtx"), &header));

  // Assert
  EXPECT_EQ(header.field, MatrixMarketField::integer);
  const std::vector<std::vector<double>> expected = {{-3.0, 0.0}, {12.0, 7.0}};
  EXPECT_EQ(to_dense(A), expected);
}

TEST(MatrixMarketRead, CrlfTabsAndUpperCaseKeywordsAreAccepted) {
  // Act
  const CsrMatrix A = CsrMatrix::from_coo(
      Backend::reference(), io::read_matrix_market(good_file("crlf_tabs_uppercase.mtx")));

  // Assert
  const std::vector<std::vector<double>> expected = {{1.0, 0.0}, {0.0, -2.0}};
  EXPECT_EQ(to_dense(A), expected);
}

TEST(MatrixMarketRead, SymmetricArrayIsReadAsDenseTriplets) {
  // Act
  io::MatrixMarketHeader header;
  const CooMatrix coo = io::read_matrix_market(good_file("array_symmetric.mtx"), &header);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);

  // Assert: the lower triangle column by column, mirrored.
  EXPECT_FALSE(header.coordinate);
  EXPECT_EQ(header.num_entries, 6);
  EXPECT_EQ(coo.num_entries(), 9u);
  const std::vector<std::vector<double>> expected = {
      {1.0, 2.0, 3.0}, {2.0, 4.0, 5.0}, {3.0, 5.0, 6.0}};
  EXPECT_EQ(to_dense(A), expected);
}

TEST(MatrixMarketRead, HeaderAloneGivesSizesWithoutEntries) {
  // Act
  const io::MatrixMarketHeader header = io::read_matrix_market_header(good_file("symmetric.mtx"));

  // Assert
  EXPECT_TRUE(header.coordinate);
  EXPECT_EQ(header.symmetry, MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(header.num_rows, 3);
  EXPECT_EQ(header.num_cols, 3);
  EXPECT_EQ(header.num_entries, 6);
}

TEST(MatrixMarketRead, HeaderGivesTheLineOfTheSizeLineAfterComments) {
  // general_real.mtx: the banner, three comment lines, then the size line on line 5.
  io::MatrixMarketHeader header;
  io::read_matrix_market(good_file("general_real.mtx"), &header);
  EXPECT_EQ(header.size_line, 5);
  EXPECT_EQ(io::read_matrix_market_header(good_file("general_real.mtx")).size_line, 5);
}

TEST(MatrixMarketRead, ArrayVectorSkipsCommentsAndBlankLines) {
  // Act
  const std::vector<double> x = io::read_vector(good_file("vector.mtx"));

  // Assert
  EXPECT_EQ(x, (std::vector<double>{1.0, -2.5, 3e-2, 4.0}));
}

TEST(MatrixMarketRead, CoordinateVectorFillsZerosAndSumsDuplicates) {
  // Act
  const std::vector<double> x = io::read_vector(good_file("vector_coordinate.mtx"));

  // Assert
  EXPECT_EQ(x, (std::vector<double>{0.0, 4.0, 0.0, 0.0, -1.0}));
}

TEST(MatrixMarketRead, VectorReaderRejectsMatrices) {
  // A 3 x 4 matrix is no vector (size line, line 5); a symmetric file neither (banner).
  try {
    io::read_vector(good_file("general_real.mtx"));
    ADD_FAILURE() << "a 3 x 4 matrix was read as a vector";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("expected a vector"), std::string::npos) << e.what();
  }
  try {
    io::read_vector(good_file("symmetric.mtx"));
    ADD_FAILURE() << "a symmetric matrix was read as a vector";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 1);
  }
}

TEST(MatrixMarketRead, MissingFileIsInvalidInputNamingTheFile) {
  // Arrange
  const fs::path file = bad_folder() / "no_such_file.mtx";

  // Act and Assert, for each reading entry point.
  for (int entry = 0; entry < 3; ++entry) {
    try {
      if (entry == 0) io::read_matrix_market(file);
      if (entry == 1) io::read_vector(file);
      if (entry == 2) io::read_matrix_market_header(file);
      ADD_FAILURE() << "no exception for a missing file";
    } catch (const ParseError& e) {
      ADD_FAILURE() << "a missing file is not a parse error: " << e.what();
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("no_such_file.mtx"), std::string::npos) << e.what();
    }
  }
}

// ---- Generated files --------------------------------------------------------------------------

using MatrixMarketGenerated = MatrixMarketTempDir;

TEST_F(MatrixMarketGenerated, ConcatenatedGzipMembersAreReadInTurn) {
  // Arrange: a gzip file of two members (what `cat a.gz b.gz` gives), split inside an entry.
  const fs::path file = dir_ / "two_members.mtx.gz";
  const std::string first = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.";
  const std::string second = "25\n2 2 -3.5\n";
  for (const std::string* part : {&first, &second}) {
    gzFile gz = gzopen(file.c_str(), part == &first ? "wb" : "ab");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, part->data(), static_cast<unsigned>(part->size())),
              static_cast<int>(part->size()));
    ASSERT_EQ(gzclose(gz), Z_OK);
  }

  // Act
  const CooMatrix coo = io::read_matrix_market(file);

  // Assert
  EXPECT_EQ(coo.values, (std::vector<double>{1.25, -3.5}));
}

TEST_F(MatrixMarketGenerated, LineLongerThanOneMebibyteIsRejected) {
  // Arrange: a third line of 2 MiB without a newline.
  const fs::path file = dir_ / "long_line.mtx";
  {
    std::ofstream out(file, std::ios::binary);
    out << "%%MatrixMarket matrix coordinate real general\n1 1 1\n" << std::string(2 << 20, '1');
  }

  // Act and Assert
  try {
    io::read_matrix_market(file);
    ADD_FAILURE() << "a 2 MiB line was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("line longer than"), std::string::npos) << e.what();
  }
}

TEST_F(MatrixMarketGenerated, UnderflowingValueReadsAsNearestDouble) {
  // Arrange: 1e-400 is below the smallest subnormal (it rounds to 0, as strtod does);
  // 5e-324 is the smallest subnormal itself.
  const fs::path file = dir_ / "tiny.mtx";
  {
    std::ofstream out(file);
    out << "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 1e-400\n1 2 5e-324\n";
  }

  // Act
  const CooMatrix coo = io::read_matrix_market(file);

  // Assert
  EXPECT_EQ(coo.values[0], 0.0);
  EXPECT_EQ(coo.values[1], std::numeric_limits<double>::denorm_min());
}

// ---- Round trips ----------------------------------------------------------------------------

/// Values that stress %.17g: random magnitudes over the whole exponent range (never zero),
/// plus the extremes of the double format.
std::vector<double> awkward_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-1000, 1000);
  std::bernoulli_distribution negative(0.5);
  std::vector<double> v(n);
  for (double& x : v) {
    x = std::ldexp(mantissa(rng), exponent(rng));
    if (negative(rng)) x = -x;
  }
  const double extremes[] = {std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::lowest(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min(),
                             -std::numeric_limits<double>::denorm_min(),
                             0.1,
                             1.0 / 3.0};
  for (std::size_t k = 0; k < std::size(extremes) && k < n; ++k) v[k] = extremes[k];
  return v;
}

class MatrixMarketRoundTrip : public MatrixMarketTempDir,
                              public ::testing::WithParamInterface<std::string> {};

TEST_P(MatrixMarketRoundTrip, CsrMatrixIsBitExact) {
  // Arrange: a random pattern (empty rows, one long row) with awkward values.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CooMatrix coo = test::random_sparse(57, 43, 9, true, seed);
  coo.values = awkward_values(coo.num_entries(), seed);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  const fs::path file = dir_ / ("matrix" + GetParam());

  // Act
  io::write_matrix_market(file, A);
  io::MatrixMarketHeader header;
  const CsrMatrix B =
      CsrMatrix::from_coo(Backend::reference(), io::read_matrix_market(file, &header));

  // Assert: same pattern, values equal bit for bit; gzip exactly when the name ends in .gz.
  EXPECT_EQ(starts_with_gzip_magic(file), GetParam() == ".mtx.gz");
  EXPECT_EQ(header.num_entries, A.nnz());
  EXPECT_EQ(B.num_rows(), A.num_rows());
  EXPECT_EQ(B.num_cols(), A.num_cols());
  EXPECT_EQ(B.row_ptr().to_host(), A.row_ptr().to_host());
  EXPECT_EQ(B.col_idx().to_host(), A.col_idx().to_host());
  EXPECT_EQ(bits_of(B.values().to_host()), bits_of(A.values().to_host()));
}

TEST_P(MatrixMarketRoundTrip, Float32CsrMatrixIsWrittenAsTheDoublesOfItsValues) {
  // Arrange: random values stored in float32.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix A = CsrMatrix::from_coo(
      Backend::reference(), test::random_sparse(57, 43, 9, true, seed), Precision::float32);
  const fs::path file = dir_ / ("matrix" + GetParam());

  // Act
  io::write_matrix_market(file, A);
  const CsrMatrix B = CsrMatrix::from_coo(Backend::reference(), io::read_matrix_market(file));

  // Assert: read back in double, the float values exactly.
  EXPECT_EQ(B.col_idx().to_host(), A.col_idx().to_host());
  EXPECT_EQ(bits_of(B.values().to_host()), bits_of(A.values_to_host()));
}

TEST_P(MatrixMarketRoundTrip, CooMatrixKeepsTripletsInOrder) {
  // Arrange: triplets in random order with a duplicate entry.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CooMatrix coo = test::random_sparse(31, 64, 7, false, seed);
  coo.push_back(coo.row_idx[0], coo.col_idx[0], 0.25);
  coo.values = awkward_values(coo.num_entries(), seed);
  const fs::path file = dir_ / ("triplets" + GetParam());

  // Act
  io::write_matrix_market(file, coo);
  const CooMatrix back = io::read_matrix_market(file);

  // Assert
  EXPECT_EQ(back.num_rows, coo.num_rows);
  EXPECT_EQ(back.num_cols, coo.num_cols);
  EXPECT_EQ(back.row_idx, coo.row_idx);
  EXPECT_EQ(back.col_idx, coo.col_idx);
  EXPECT_EQ(bits_of(back.values), bits_of(coo.values));
}

TEST_P(MatrixMarketRoundTrip, VectorIsBitExact) {
  // Arrange
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> x = awkward_values(1001, seed);
  const fs::path file = dir_ / ("vector" + GetParam());

  // Act
  io::write_vector(file, Span<const double>(x.data(), x.size()));
  const std::vector<double> y = io::read_vector(file);

  // Assert
  EXPECT_EQ(starts_with_gzip_magic(file), GetParam() == ".mtx.gz");
  EXPECT_EQ(bits_of(y), bits_of(x));
}

TEST_P(MatrixMarketRoundTrip, WriterFailureIsInvalidInputNamingTheFile) {
  // Arrange: a folder that does not exist.
  const fs::path file = dir_ / "missing_folder" / ("out" + GetParam());
  const std::vector<double> x = {1.0, 2.0};
  CooMatrix coo;
  coo.num_rows = 1;
  coo.num_cols = 1;
  coo.push_back(0, 0, 1.0);

  // Act and Assert
  for (int entry = 0; entry < 2; ++entry) {
    try {
      if (entry == 0) io::write_vector(file, Span<const double>(x.data(), x.size()));
      if (entry == 1) io::write_matrix_market(file, coo);
      ADD_FAILURE() << "writing into a missing folder succeeded";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(MatrixMarketPlainAndGzip, MatrixMarketRoundTrip,
                         ::testing::Values(std::string(".mtx"), std::string(".mtx.gz")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == ".mtx" ? std::string("Plain") : std::string("Gzip");
                         });

TEST_F(MatrixMarketGenerated, CooWriterRejectsIndexOutOfRange) {
  // Arrange
  CooMatrix coo;
  coo.num_rows = 2;
  coo.num_cols = 2;
  coo.push_back(0, 2, 1.0);

  // Act and Assert
  EXPECT_THROW(io::write_matrix_market(dir_ / "bad.mtx", coo), InvalidInput);
}

// ---- Malformed files ------------------------------------------------------------------------

struct BadFile {
  std::string name;
  long long line = 0;
  std::string message;
};

std::ostream& operator<<(std::ostream& os, const BadFile& f) {
  return os << f.name;
}

/// Parses tests/data/bad/expected.txt: "<file> <line> <message substring>" per line, '#'
/// comments.
std::vector<BadFile> load_manifest() {
  std::vector<BadFile> files;
  std::ifstream in(bad_folder() / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    BadFile f;
    fields >> f.name >> f.line;
    fields.get();  // the space before the message
    std::getline(fields, f.message);
    files.push_back(f);
  }
  return files;
}

TEST(MatrixMarketBadFileManifest, ListsEveryBadFileOnceAndAtLeastThirty) {
  // Arrange
  const std::vector<BadFile> manifest = load_manifest();
  std::vector<std::string> listed;
  for (const BadFile& f : manifest) {
    EXPECT_GT(f.line, 0) << f.name;
    EXPECT_FALSE(f.message.empty()) << f.name;
    listed.push_back(f.name);
  }
  std::vector<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(bad_folder())) {
    if (entry.path().filename() != "expected.txt") {
      on_disk.push_back(entry.path().filename().string());
    }
  }

  // Assert
  std::sort(listed.begin(), listed.end());
  std::sort(on_disk.begin(), on_disk.end());
  EXPECT_GE(listed.size(), 30u);
  EXPECT_EQ(listed, on_disk);
}

class MatrixMarketBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(MatrixMarketBadFile, RaisesParseErrorWithFileLineAndProblem) {
  // Arrange
  const BadFile& expected = GetParam();
  const fs::path file = bad_folder() / expected.name;
  ASSERT_TRUE(fs::exists(file)) << file;

  // Act and Assert
  try {
    io::read_matrix_market(file);
    ADD_FAILURE() << expected.name << " was accepted";
  } catch (const ParseError& e) {
    const std::string& named = e.file();
    EXPECT_TRUE(named.size() >= expected.name.size() &&
                named.compare(named.size() - expected.name.size(), expected.name.size(),
                              expected.name) == 0)
        << named;
    EXPECT_EQ(e.line(), expected.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected.message), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << expected.message;
  }
}

INSTANTIATE_TEST_SUITE_P(MatrixMarketManifest, MatrixMarketBadFile,
                         ::testing::ValuesIn(load_manifest()),
                         [](const ::testing::TestParamInfo<BadFile>& info) {
                           std::string name;
                           for (const char c : info.param.name) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// ---- Corpus ---------------------------------------------------------------------------------

struct CorpusMatrix {
  std::string file;
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::int64_t stored = 0;  // entries in the file (README: "nnz stored")
  std::int64_t full = 0;    // both triangles (README: "nnz full")
};

std::ostream& operator<<(std::ostream& os, const CorpusMatrix& m) {
  return os << m.file;
}

class MatrixMarketCorpus : public ::testing::TestWithParam<CorpusMatrix> {};

TEST_P(MatrixMarketCorpus, ReadsWithTheDocumentedCounts) {
  // Arrange: counts from the corpus README (checked there with scipy.io.mmread).
  const CorpusMatrix& m = GetParam();
  const fs::path file = test::data_file(m.file);
  ASSERT_FALSE(file.empty());

  // Act
  io::MatrixMarketHeader header;
  const CooMatrix coo = io::read_matrix_market(file, &header);

  // Assert
  EXPECT_EQ(coo.num_rows, m.num_rows);
  EXPECT_EQ(coo.num_cols, m.num_cols);
  EXPECT_EQ(header.num_entries, m.stored);
  EXPECT_EQ(static_cast<std::int64_t>(coo.num_entries()), m.full);
  if (header.coordinate) {
    // No duplicates in these files: the CSR keeps every expanded entry.
    EXPECT_EQ(CsrMatrix::from_coo(Backend::reference(), coo).nnz(), m.full);
  }
}

INSTANTIATE_TEST_SUITE_P(
    MatrixMarketFiles, MatrixMarketCorpus,
    ::testing::Values(
        CorpusMatrix{"matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz", 23325, 23325,
                     90677, 158029},
        CorpusMatrix{"matrices/suitesparse/ex10hs/ex10hs.mtx.gz", 2548, 2548, 29928, 57308},
        CorpusMatrix{"matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz", 14214, 14214, 259688,
                     259688},
        CorpusMatrix{"matrices/suitesparse/airfoil_2d/airfoil_2d_coord.mtx.gz", 14214, 2, 28428,
                     28428},
        CorpusMatrix{"matrices/suitesparse/airfoil_2d/airfoil_2d_t.mtx.gz", 27748, 3, 83244, 83244},
        CorpusMatrix{"matrices/fvens/2dcyl1/2dcyl1.mtx.gz", 1784, 1784, 34656, 34656},
        CorpusMatrix{"matrices/petsc_ex19/ex19_cavity_33.mtx.gz", 4356, 4356, 85008, 85008},
        CorpusMatrix{"matrices/petsc_ex19/ex19_cavity_129.mtx.gz", 66564, 66564, 1323024, 1323024},
        CorpusMatrix{"matrices/petsc_ex19/ex19_cavity_257.mtx.gz", 264196, 264196, 5267472,
                     5267472}),
    [](const ::testing::TestParamInfo<CorpusMatrix>& info) {
      const std::string stem = fs::path(info.param.file).stem().stem().string();
      std::string name;
      for (const char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

struct CorpusVector {
  std::string file;
  std::size_t size = 0;
};

std::ostream& operator<<(std::ostream& os, const CorpusVector& v) {
  return os << v.file;
}

class MatrixMarketCorpusVector : public ::testing::TestWithParam<CorpusVector> {};

TEST_P(MatrixMarketCorpusVector, ReadsWithTheMatrixRowCount) {
  // Arrange
  const fs::path file = test::data_file(GetParam().file);
  ASSERT_FALSE(file.empty());

  // Act
  const std::vector<double> x = io::read_vector(file);

  // Assert
  EXPECT_EQ(x.size(), GetParam().size);
}

INSTANTIATE_TEST_SUITE_P(
    MatrixMarketFiles, MatrixMarketCorpusVector,
    ::testing::Values(CorpusVector{"matrices/fvens/2dcyl1/2dcyl1_b.mtx.gz", 1784},
                      CorpusVector{"matrices/fvens/2dcyl1/2dcyl1_x.mtx.gz", 1784},
                      CorpusVector{"matrices/petsc_ex19/ex19_cavity_33_b.mtx.gz", 4356},
                      CorpusVector{"matrices/petsc_ex19/ex19_cavity_129_b.mtx.gz", 66564},
                      CorpusVector{"matrices/petsc_ex19/ex19_cavity_257_b.mtx.gz", 264196}),
    [](const ::testing::TestParamInfo<CorpusVector>& info) {
      const std::string stem = fs::path(info.param.file).stem().stem().string();
      std::string name;
      for (const char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(MatrixMarketCorpusValues, CylinderSolutionSatisfiesTheSystem) {
  // Arrange: 2dcyl1 ships A, b and the solution x; the corpus README reports
  // ||A x - b|| / ||b|| = 1.8e-16, so every value must have been read correctly.
  const fs::path a_file = test::data_file("matrices/fvens/2dcyl1/2dcyl1.mtx.gz");
  const fs::path b_file = test::data_file("matrices/fvens/2dcyl1/2dcyl1_b.mtx.gz");
  const fs::path x_file = test::data_file("matrices/fvens/2dcyl1/2dcyl1_x.mtx.gz");
  ASSERT_FALSE(a_file.empty() || b_file.empty() || x_file.empty());

  // Act
  const CooMatrix A = io::read_matrix_market(a_file);
  const std::vector<double> b = io::read_vector(b_file);
  const std::vector<double> x = io::read_vector(x_file);

  // Assert: tolerance 1e-13, about 500 times the documented residual (summation order).
  EXPECT_LE(test::true_relative_residual(A, x, b), 1e-13);
}

}  // namespace
}  // namespace kryflow
