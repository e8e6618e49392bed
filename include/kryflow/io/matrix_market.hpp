// Matrix Market (NIST) reader and writer: coordinate matrices and array vectors, plain or gzip.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::io {

enum class MatrixMarketField { real, integer, pattern };
enum class MatrixMarketSymmetry { general, symmetric, skew_symmetric };

/// What the banner and size line of a Matrix Market file declared.
struct MatrixMarketHeader {
  bool coordinate = true;  ///< false for `array` (dense, column-major) files
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int64_t num_entries = 0;  ///< entries stored in the file (one triangle when symmetric)
};

/// Reads a `coordinate` matrix (real, integer or pattern; general, symmetric or skew-symmetric)
/// from `file`, gzip-compressed when it starts with the gzip magic bytes. Symmetric and
/// skew-symmetric files are expanded to both triangles; pattern entries get the value 1;
/// duplicates stay as separate triplets (CsrMatrix::from_coo sums them).
/// Throws ParseError naming the file, the 1-based line and what was expected for: a bad banner
/// or size line, an unsupported field (complex, hermitian), wrong entry counts, an index zero or
/// out of range, non-numeric or extra tokens, NaN, Inf or overflowing values, a truncated or
/// corrupt gzip stream, dimensions beyond 32-bit indices. Throws InvalidInput when the file
/// cannot be opened.
CooMatrix read_matrix_market(const std::filesystem::path& file,
                             MatrixMarketHeader* header = nullptr);

/// Reads a vector: an `array` file with one column (real or integer, general), or a
/// `coordinate` file with one column (missing entries are 0). Same errors as above.
std::vector<double> read_vector(const std::filesystem::path& file);

/// Writes A as `coordinate real general` with 17 significant digits, 1-based indices;
/// gzip-compressed when the file name ends in ".gz". Throws InvalidInput when the file cannot
/// be written.
void write_matrix_market(const std::filesystem::path& file, const CsrMatrix& A);
void write_matrix_market(const std::filesystem::path& file, const CooMatrix& A);
/// Writes x as an `array real general` n x 1 file (gzip when the name ends in ".gz").
void write_vector(const std::filesystem::path& file, Span<const double> x);

}  // namespace kryflow::io
