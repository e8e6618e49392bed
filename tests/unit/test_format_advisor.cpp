// The SpMV format advisor: block-structure detection, SELL padding counts, and its choice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/generators.hpp"

namespace kryflow {
namespace {

/// Every entry (I, J) of `scalar` becomes a fully stored B x B block with nonzero values.
CooMatrix blocked(const CooMatrix& scalar, int B) {
  CooMatrix coo;
  coo.num_rows = scalar.num_rows * B;
  coo.num_cols = scalar.num_cols * B;
  for (std::size_t k = 0; k < scalar.num_entries(); ++k) {
    for (int r = 0; r < B; ++r) {
      for (int c = 0; c < B; ++c) {
        coo.push_back(scalar.row_idx[k] * B + r, scalar.col_idx[k] * B + c,
                      scalar.values[k] * (1.0 + 0.1 * r + 0.01 * c));
      }
    }
  }
  return coo;
}

CsrMatrix host_csr(const CooMatrix& coo) {
  return CsrMatrix::from_coo(Backend::reference(), coo);
}

int detect(const CsrMatrix& A) {
  return detect_block_size(A.num_rows(), A.num_cols(), A.row_ptr().span(), A.col_idx().span());
}

TEST(FormatAdvisor, DetectsTheBlockSizeOfABlockedPattern) {
  for (int B = 2; B <= 8; ++B) {
    SCOPED_TRACE(B);
    const CsrMatrix A = host_csr(blocked(poisson2d(5), B));
    // 4x4 blocks also tile as 2x2 ones: the largest B that tiles wins.
    EXPECT_EQ(detect(A), B);
    const FormatAdvice advice = advise_format(A);
    EXPECT_EQ(advice.format, "bsr") << advice.reason;
    EXPECT_EQ(advice.block_size, B);
    EXPECT_LT(advice.bsr_bytes, advice.csr_bytes);
    EXPECT_NE(advice.reason.find("tiles into"), std::string::npos) << advice.reason;
  }
}

TEST(FormatAdvisor, ScalarPatternHasBlockSizeOne) {
  EXPECT_EQ(detect(host_csr(poisson3d(6))), 1);
  EXPECT_EQ(detect(host_csr(poisson2d(7))), 1);
}

TEST(FormatAdvisor, NamesTheFirstBlockRowThatDoesNotTile) {
  // Drop one entry of block row 4 (0-based 3) of a 3x3-blocked matrix.
  CooMatrix coo = blocked(poisson2d(4), 3);
  CooMatrix broken;
  broken.num_rows = coo.num_rows;
  broken.num_cols = coo.num_cols;
  bool dropped = false;
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (!dropped && coo.row_idx[k] == 10 && coo.col_idx[k] == 11) {
      dropped = true;
      continue;
    }
    broken.push_back(coo.row_idx[k], coo.col_idx[k], coo.values[k]);
  }
  ASSERT_TRUE(dropped);
  const CsrMatrix A = host_csr(broken);
  const BlockTiling tiling =
      check_block_tiling(A.num_rows(), A.num_cols(), A.row_ptr().span(), A.col_idx().span(), 3);
  EXPECT_FALSE(tiling.strict);
  EXPECT_EQ(tiling.first_partial_block_row, 3);
  EXPECT_EQ(detect(A), 1);
  const FormatAdvice forced = advise_format(A, 3);
  EXPECT_NE(forced.format, "bsr");
  EXPECT_NE(forced.reason.find("block row 4"), std::string::npos) << forced.reason;
}

TEST(FormatAdvisor, BlockSizeMustDivideTheDimensions) {
  const CsrMatrix A = host_csr(blocked(poisson2d(3), 2));  // 18 rows
  EXPECT_TRUE(check_block_tiling(18, 18, A.row_ptr().span(), A.col_idx().span(), 2).strict);
  const BlockTiling four = check_block_tiling(18, 18, A.row_ptr().span(), A.col_idx().span(), 4);
  EXPECT_FALSE(four.strict);
  EXPECT_FALSE(four.divisible);
  const FormatAdvice forced = advise_format(A, 4);
  EXPECT_NE(forced.reason.find("not a multiple"), std::string::npos) << forced.reason;
  EXPECT_THROW(advise_format(A, -1), InvalidInput);
}

TEST(FormatAdvisor, SellStoredEntriesCountsPaddingByHand) {
  // Row lengths 1, 3, 2, 5, 1.
  const std::vector<index_t> row_ptr = {0, 1, 4, 6, 11, 12};
  const Span<const index_t> span(row_ptr.data(), row_ptr.size());
  EXPECT_EQ(sell_stored_entries(span, 1, 1), 12);
  EXPECT_EQ(sell_stored_entries(span, 2, 1), 6 + 10 + 1);
  // Sorted in windows of 4: 5 3 2 1 | 1 -> slices (5,3) (2,1) (1).
  EXPECT_EQ(sell_stored_entries(span, 2, 4), 10 + 4 + 1);
  EXPECT_EQ(sell_stored_entries(span, 8, 1), 5 * 5);
  EXPECT_THROW(sell_stored_entries(span, 0, 1), InvalidInput);
}

TEST(FormatAdvisor, ExplainsItsChoiceOnAScalarMatrix) {
  const FormatAdvice advice = advise_format(host_csr(poisson3d(8)));
  EXPECT_TRUE(advice.format == "csr" || advice.format == "sell") << advice.format;
  EXPECT_EQ(advice.detected_block_size, 1);
  EXPECT_GT(advice.csr_bytes, 0.0);
  EXPECT_GT(advice.sell_bytes, 0.0);
  EXPECT_EQ(advice.bsr_bytes, 0.0);
  EXPECT_NE(advice.reason.find("bytes per entry"), std::string::npos) << advice.reason;
  EXPECT_NE(advice.reason.find("no block structure"), std::string::npos) << advice.reason;
}

}  // namespace
}  // namespace kryflow
