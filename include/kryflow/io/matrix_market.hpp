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
  /// Entries stored in the file (one triangle when symmetric); for `array` files the number of
  /// values the size line implies.
  std::int64_t num_entries = 0;
  long long size_line = 0;  ///< 1-based line number of the size line (for messages)
};

/// Reads only the banner and the size line of `file` (plain or gzip), for sizing a run before
/// reading the entries. Throws ParseError for a bad banner or size line and InvalidInput when
/// the file cannot be opened.
MatrixMarketHeader read_matrix_market_header(const std::filesystem::path& file);

/// Reads a `coordinate` matrix (real, integer or pattern; general, symmetric or skew-symmetric)
/// from `file`, gzip-compressed when it starts with the gzip magic bytes. Symmetric and
/// skew-symmetric files are expanded to both triangles; pattern entries get the value 1;
/// duplicates stay as separate triplets (CsrMatrix::from_coo sums them). Symmetric files may
/// store either triangle (each off-diagonal entry is mirrored). An `array` file is returned as
/// dense triplets (every value, zeros included, column-major order).
/// Throws ParseError naming the file, the 1-based line and what was expected for: a bad banner
/// or size line, an unsupported field (complex, hermitian), wrong entry counts, an index zero or
/// out of range, non-numeric or extra tokens, NaN, Inf or overflowing values, a truncated or
/// corrupt gzip stream, dimensions beyond 32-bit indices. Throws InvalidInput when the file
/// cannot be opened.
CooMatrix read_matrix_market(const std::filesystem::path& file,
                             MatrixMarketHeader* header = nullptr);

/// Reads a vector: a `general` file with one column or one row, either `array` (real or
/// integer) or `coordinate` (missing entries are 0, duplicates are summed). Same errors as
/// above, plus a ParseError on line 1 or the size line for a symmetric or multi-column file.
std::vector<double> read_vector(const std::filesystem::path& file);

/// Writes A as `coordinate real general` with 17 significant digits (`%.17g`, so values read
/// back bit-exact), 1-based indices; gzip-compressed when the file name ends in ".gz". A CSR
/// matrix on a device is copied to the host first; float32 values are written as the doubles
/// they convert to. Non-finite values are written as printf
/// spells them ("nan", "inf"), which the reader rejects. Throws InvalidInput when the file
/// cannot be written or a COO index is out of range.
void write_matrix_market(const std::filesystem::path& file, const CsrMatrix& A);
void write_matrix_market(const std::filesystem::path& file, const CooMatrix& A);
/// Writes x as an `array real general` n x 1 file (gzip when the name ends in ".gz").
void write_vector(const std::filesystem::path& file, Span<const double> x);

}  // namespace kryflow::io
