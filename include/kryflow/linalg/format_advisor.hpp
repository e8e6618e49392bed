// Chooses the storage format of a sparse matrix for SpMV (CSR, SELL-C-sigma or BSR) from its
// pattern alone, and says why.
#pragma once

#include <cstdint>
#include <string>

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow {

/// Stored entries of SELL-C-sigma with slice height C and sorting window sigma, padding
/// included: rows sorted by decreasing length within each window of sigma rows (sigma = 1: not
/// sorted), cut into slices of C rows, every slice padded to its longest row (Kreutzer et al.,
/// SIAM J. Sci. Comput. 36(5), 2014, sec. 3). The last slice counts only its rows.
std::int64_t sell_stored_entries(Span<const index_t> row_ptr, int slice_height, index_t sigma);

/// What the advisor chose and the figures behind it.
struct FormatAdvice {
  std::string format;           ///< "csr", "sell" or "bsr"
  int block_size = 1;           ///< BSR block size (1 unless format is "bsr")
  int slice_height = 32;        ///< SELL slice height C (meaningful when format is "sell")
  index_t sigma = 1;            ///< SELL sorting window (meaningful when format is "sell")
  int detected_block_size = 1;  ///< detect_block_size (bsr_matrix.hpp), or the forced size
  /// Bytes one product moves in each candidate format with float64 values, vectors included
  /// (0 when the format does not apply: BSR without a block structure).
  double csr_bytes = 0.0;
  double sell_bytes = 0.0;
  double bsr_bytes = 0.0;
  double sell_padding = 0.0;  ///< padded / stored entries - 1 of the SELL candidate
  /// One or two sentences with the numbers: why this format, and why not the others.
  std::string reason;
};

/// Advises CSR, SELL-C-sigma or BSR for y = A x on an NVIDIA GPU: predicts each format's time
/// as the bytes it moves over the fraction of copy bandwidth its kernel reaches (a table of
/// H200 measurements, src/linalg/format_advisor.cpp) and picks the fastest. `block_size` 0
/// detects the block structure; a positive value forces it (a pattern that does not tile
/// then gives CSR or SELL with the reason). A may live on any backend (its pattern is copied to
/// the host, temporarily). Throws InvalidInput for a negative block_size; otherwise only what
/// that copy throws.
FormatAdvice advise_format(const CsrMatrix& A, int block_size = 0);

}  // namespace kryflow
