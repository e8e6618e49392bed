// The SpMV format advisor: block-structure detection, SELL padding, and a bytes-over-bandwidth
// prediction per format.
#include "kryflow/linalg/format_advisor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "src/linalg/format_number.hpp"

namespace kryflow {
namespace {

/// Fraction of the measured copy bandwidth each format's cuda kernel reaches on matrices too
/// large for the cache; the advisor divides each format's bytes by it. Measured with kryflow
/// bench spmv on an H200 (bench/results/h200_automatic_choices): CSR 1.00 and 1.01 on 3D
/// Poisson 200^3 (7 and 27 points); SELL-32 0.98 and 1.03; BSR 0.99 (B = 4, block_row) and
/// 0.86 (B = 5, coefficient) on block Poisson 64^3 (kryflow_bench_bsr), 0.87 on
/// ex19_cavity_257 (BSR-4). The H100 gave CSR 0.99, SELL 0.98-0.99, BSR-4 0.91. The SELL and
/// CSR fractions are equal, so padding decides between them; BSR must save about 13 % of
/// CSR's bytes (its fraction and kMargin).
struct Efficiency {
  double csr = 1.00;
  double sell = 1.00;
  double bsr = 0.90;
};
constexpr Efficiency kEfficiency{};
/// Another format must be predicted this much faster than CSR to be chosen (run-to-run noise
/// of the measurements is about 2%).
constexpr double kMargin = 1.03;
/// SELL candidates: slice height 32 (a warp), unsorted or sorted in windows of 8 slices.
constexpr int kSellSliceHeight = 32;
constexpr index_t kSellSigmas[] = {1, 256};

using detail::format_number;

}  // namespace

std::int64_t sell_stored_entries(Span<const index_t> row_ptr, int slice_height, index_t sigma) {
  if (slice_height < 1 || sigma < 1) {
    throw InvalidInput("sell_stored_entries: slice height and sigma must be positive");
  }
  const index_t n = row_ptr.size() == 0 ? 0 : static_cast<index_t>(row_ptr.size() - 1);
  std::vector<index_t> lengths(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) lengths[i] = row_ptr[i + 1] - row_ptr[i];
  if (sigma > 1) {
    for (index_t w = 0; w < n; w += sigma) {
      std::sort(lengths.begin() + w, lengths.begin() + std::min(n, w + sigma),
                std::greater<index_t>());
    }
  }
  std::int64_t stored = 0;
  for (index_t s = 0; s < n; s += slice_height) {
    const index_t end = std::min(n, s + slice_height);
    const index_t width = *std::max_element(lengths.begin() + s, lengths.begin() + end);
    stored += static_cast<std::int64_t>(width) * (end - s);
  }
  return stored;
}

FormatAdvice advise_format(const CsrMatrix& A, int block_size) {
  if (block_size < 0) throw InvalidInput("advise_format: block size must be >= 0 (0: detect)");
  const bool on_host = A.backend().kind() == BackendKind::reference;
  const Array<index_t> row_ptr_copy =
      on_host ? Array<index_t>() : A.row_ptr().copy_to(Backend::reference());
  const Array<index_t> col_idx_copy =
      on_host ? Array<index_t>() : A.col_idx().copy_to(Backend::reference());
  const Span<const index_t> row_ptr = on_host ? A.row_ptr().span() : row_ptr_copy.span();
  const Span<const index_t> col_idx = on_host ? A.col_idx().span() : col_idx_copy.span();

  const double n = A.num_rows();
  const double vectors = 8.0 * A.num_cols() + 8.0 * n;
  const double nnz = static_cast<double>(A.nnz());
  FormatAdvice advice;
  advice.csr_bytes = 12.0 * nnz + 4.0 * (n + 1) + vectors;

  // BSR: detected or forced block size.
  int B = 1;
  std::string bsr_note;
  if (block_size == 0) {
    B = detect_block_size(A.num_rows(), A.num_cols(), row_ptr, col_idx);
    bsr_note =
        B > 1 ? "the pattern tiles into " + std::to_string(B) + "x" + std::to_string(B) + " blocks"
              : "the pattern has no block structure (no B in 2..8 tiles it)";
  } else if (block_size > 1) {
    const BlockTiling tiling =
        check_block_tiling(A.num_rows(), A.num_cols(), row_ptr, col_idx, block_size);
    if (tiling.strict) {
      B = block_size;
      bsr_note = "block size " + std::to_string(B) + " given";
    } else {
      bsr_note =
          "the pattern does not tile into " + std::to_string(block_size) + "x" +
          std::to_string(block_size) + " blocks (" +
          (tiling.divisible ? "block row " + std::to_string(tiling.first_partial_block_row + 1)
                            : std::string("the size is not a multiple of it")) +
          ")";
    }
  }
  advice.detected_block_size = B;
  if (B > 1) {
    const double blocks = nnz / (static_cast<double>(B) * B);
    advice.bsr_bytes = blocks * (8.0 * B * B + 4.0) + 4.0 * (n / B + 1) + vectors;
  }

  // SELL: the candidate with the fewest bytes.
  const double slices = std::ceil(n / kSellSliceHeight);
  for (const index_t sigma : kSellSigmas) {
    const double stored =
        static_cast<double>(sell_stored_entries(row_ptr, kSellSliceHeight, sigma));
    const double bytes =
        12.0 * stored + 8.0 * (slices + 1) + 4.0 * slices + (sigma > 1 ? 4.0 * n : 0.0) + vectors;
    if (advice.sell_bytes == 0.0 || bytes < advice.sell_bytes) {
      advice.sell_bytes = bytes;
      advice.sigma = sigma;
      advice.slice_height = kSellSliceHeight;
      advice.sell_padding = nnz > 0 ? stored / nnz - 1.0 : 0.0;
    }
  }

  const double t_csr = advice.csr_bytes / kEfficiency.csr;
  const double t_sell = advice.sell_bytes / kEfficiency.sell;
  const double t_bsr = B > 1 ? advice.bsr_bytes / kEfficiency.bsr : 0.0;
  const std::string csr_per_entry =
      format_number("%.2f", nnz > 0 ? advice.csr_bytes / nnz : 0.0) + " bytes per entry";
  const std::string sell_text = "SELL-" + std::to_string(advice.slice_height) + "-" +
                                std::to_string(advice.sigma) + " would pad " +
                                format_number("%.1f%%", 100.0 * advice.sell_padding);
  if (B > 1 && t_bsr * kMargin < t_csr && t_bsr <= t_sell) {
    advice.format = "bsr";
    advice.block_size = B;
    advice.reason = bsr_note + ", so one column index serves " + std::to_string(B * B) +
                    " values: " + format_number("%.2f", advice.bsr_bytes / nnz) +
                    " bytes per entry against " + csr_per_entry + " in CSR (" + sell_text + ").";
  } else if (t_sell * kMargin < t_csr) {
    advice.format = "sell";
    advice.reason =
        "padding adds " + format_number("%.1f%%", 100.0 * advice.sell_padding) +
        " and no row pointers are read: " + format_number("%.2f", advice.sell_bytes / nnz) +
        " bytes per entry against " + csr_per_entry + " in CSR; " + bsr_note + ".";
  } else {
    advice.format = "csr";
    advice.reason = csr_per_entry + "; " + sell_text + " (" +
                    format_number("%.2f", nnz > 0 ? advice.sell_bytes / nnz : 0.0) +
                    " bytes per entry), not enough to pay; " + bsr_note + ".";
  }
  return advice;
}

}  // namespace kryflow
