// The AMG setup kernels (kernels/sparse_setup, kernels/amg, kernels/smoothers) on the backend under
// test against the reference on random data, bit for bit, and against independent naive
// computations in this file: dense products, the definitions of strength, splitting and
// interpolation. Random matrices have empty rows, long rows (beyond 1024 entries where the cuda
// kernels switch to their fallback paths) and both signs; a fresh seed per test is printed on
// failure. Every kernel's contract says deterministic, so every comparison with the reference
// is bit for bit (EXPECT_EQ on the raw doubles); tolerances appear only against the
// independent computations.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/amg/amg.hpp"
#include "kernels/amg/amg_rows.hpp"
#include "kernels/smoothers/smoothers.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/amg/amg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "src/amg/amg_hierarchy.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace ss = kernels::sparse_setup;
namespace ka = kernels::amg;

/// A CSR matrix on the host (sorted columns, no duplicates).
struct HostCsr {
  index_t rows = 0, cols = 0;
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
  double at(index_t i, index_t j) const {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (col_idx[k] == j) return values[k];
    }
    return 0.0;
  }
};

HostCsr host_csr(const CooMatrix& coo) {
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  return {A.num_rows(), A.num_cols(), A.row_ptr().to_host(), A.col_idx().to_host(),
          A.values_to_host()};
}

/// The same matrix in arrays on `backend`, with the kernels' views.
struct OnBackend {
  OnBackend(const Backend& backend, const HostCsr& a)
      : rows(a.rows),
        cols(a.cols),
        row_ptr(Array<index_t>::from_host(backend, a.row_ptr)),
        col_idx(Array<index_t>::from_host(backend, a.col_idx)),
        values(Array<double>::from_host(backend, a.values)) {}
  index_t rows, cols;
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  ss::PatternView pattern() const {
    return {rows, cols, row_ptr.span().data(), col_idx.span().data()};
  }
  ss::MatrixView matrix() const { return {pattern(), values.span().data()}; }
};

/// A random symmetric matrix with mixed-sign off-diagonal entries (mostly negative) and a
/// positive diagonal 1 + sum |a_ij|: symmetric positive definite, some rows with one entry.
/// About 2 per_row off-diagonal entries per row.
CooMatrix random_spd(index_t n, std::uint64_t seed, index_t per_row = 9) {
  const CooMatrix pattern = test::random_sparse(n, n, per_row, true, seed);
  std::map<std::pair<index_t, index_t>, double> entries;
  for (std::size_t k = 0; k < pattern.num_entries(); ++k) {
    const index_t i = pattern.row_idx[k], j = pattern.col_idx[k];
    if (i == j) continue;
    // About 15% positive couplings.
    const double v =
        pattern.values[k] < -0.7 ? 0.5 * std::abs(pattern.values[k]) : -std::abs(pattern.values[k]);
    entries[{std::min(i, j), std::max(i, j)}] = v;
  }
  std::vector<double> diagonal(static_cast<std::size_t>(n), 1.0);
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  for (const auto& [ij, v] : entries) {
    coo.push_back(ij.first, ij.second, v);
    coo.push_back(ij.second, ij.first, v);
    diagonal[ij.first] += std::abs(v);
    diagonal[ij.second] += std::abs(v);
  }
  for (index_t i = 0; i < n; ++i) coo.push_back(i, i, diagonal[i]);
  return coo;
}

/// random_spd's matrix times sign (-1: negative definite, the diagonal negative).
HostCsr signed_random_spd(index_t n, std::uint64_t seed, double sign, index_t per_row = 9) {
  HostCsr a = host_csr(random_spd(n, seed, per_row));
  for (double& v : a.values) v *= sign;
  return a;
}

/// C = A B computed densely on the host.
std::vector<double> dense_product(const HostCsr& a, const HostCsr& b) {
  std::vector<double> c(static_cast<std::size_t>(a.rows) * b.cols, 0.0);
  for (index_t i = 0; i < a.rows; ++i) {
    for (index_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const index_t k = a.col_idx[p];
      for (index_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
        c[static_cast<std::size_t>(i) * b.cols + b.col_idx[q]] += a.values[p] * b.values[q];
      }
    }
  }
  return c;
}

/// The product on `backend` through the three SpGEMM phases; checks that spgemm_fill_numeric
/// gives the same columns and values.
HostCsr spgemm(const Backend& backend, const HostCsr& a, const HostCsr& b) {
  const OnBackend A(backend, a), B(backend, b);
  Array<index_t> counts(backend, static_cast<std::size_t>(a.rows));
  ss::spgemm_count(backend, A.pattern(), B.pattern(), counts.span());
  Array<index_t> row_ptr(backend, counts.size() + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  Array<double> values(backend, static_cast<std::size_t>(nnz));
  ss::spgemm_fill(backend, A.pattern(), B.pattern(), row_ptr.span().data(), col_idx.span().data());
  const ss::PatternView c{a.rows, b.cols, row_ptr.span().data(), col_idx.span().data()};
  ss::spgemm_numeric(backend, A.matrix(), B.matrix(), c, values.span().data());
  HostCsr product{a.rows, b.cols, row_ptr.to_host(), col_idx.to_host(), values.to_host()};
  // The one-pass fill and numeric phase of a re-setup, on the same row pointers, into arrays
  // holding other numbers: the same columns and bits.
  Array<index_t> fused_col_idx = Array<index_t>::from_host(
      backend, std::vector<index_t>(static_cast<std::size_t>(nnz), index_t{-7}));
  Array<double> fused_values =
      Array<double>::from_host(backend, std::vector<double>(static_cast<std::size_t>(nnz), 0.5));
  ss::spgemm_fill_numeric(backend, A.matrix(), B.matrix(), row_ptr.span().data(),
                          fused_col_idx.span().data(), fused_values.span().data());
  EXPECT_EQ(fused_col_idx.to_host(), product.col_idx) << "spgemm_fill_numeric";
  EXPECT_EQ(fused_values.to_host(), product.values) << "spgemm_fill_numeric";
  return product;
}

TEST(SparseSetup, SpgemmMatchesReferenceBitForBitAndTheDenseProduct) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(test::random_sparse(53, 37, 12, true, seed));
  const HostCsr b = host_csr(test::random_sparse(37, 61, 9, true, seed + 1));

  const HostCsr c = spgemm(test::backend_under_test(), a, b);
  const HostCsr expected = spgemm(Backend::reference(), a, b);

  EXPECT_EQ(c.row_ptr, expected.row_ptr);
  EXPECT_EQ(c.col_idx, expected.col_idx);
  EXPECT_EQ(c.values, expected.values);
  // Against the dense product: every stored product entry, and nothing missing (tolerance: a
  // sum of at most 37 products of numbers below 1, 64 eps).
  const std::vector<double> dense = dense_product(a, b);
  std::vector<double> from_sparse(dense.size(), 0.0);
  for (index_t i = 0; i < c.rows; ++i) {
    for (index_t k = c.row_ptr[i]; k < c.row_ptr[i + 1]; ++k) {
      if (k > c.row_ptr[i]) EXPECT_LT(c.col_idx[k - 1], c.col_idx[k]);
      from_sparse[static_cast<std::size_t>(i) * c.cols + c.col_idx[k]] = c.values[k];
    }
  }
  EXPECT_LE(test::relative_max_difference(from_sparse, dense),
            64 * std::numeric_limits<double>::epsilon());
}

/// a^T on `backend` (transpose_count, scan, transpose_fill, gather of the values); `source` gets
/// the entry of a behind each entry of a^T.
HostCsr transpose(const Backend& backend, const HostCsr& a, std::vector<index_t>& source) {
  const OnBackend A(backend, a);
  Array<index_t> counts(backend, static_cast<std::size_t>(a.cols));
  ss::transpose_count(backend, A.pattern(), counts.span());
  Array<index_t> row_ptr(backend, counts.size() + 1);
  // The entry count is known: the scan that does not read it back (no wait on a device).
  const auto nnz = static_cast<std::int64_t>(a.col_idx.size());
  ss::exclusive_scan_bounded(backend, counts.span(), row_ptr.span(), nnz);
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  Array<index_t> positions(backend, static_cast<std::size_t>(nnz));
  ss::transpose_fill(backend, A.pattern(), nnz, row_ptr.span().data(), col_idx.span().data(),
                     positions.span().data());
  Array<double> values(backend, positions.size());
  ss::gather(backend, A.values.span(), positions.span(), values.span());
  source = positions.to_host();
  return HostCsr{a.cols, a.rows, row_ptr.to_host(), col_idx.to_host(), values.to_host()};
}

/// A random matrix whose row lengths are drawn from `lengths` (uniformly; repeat a length to
/// make it likelier), with distinct random columns and values in [-1, -0.1] u [0.1, 1].
HostCsr random_rows(index_t rows, index_t cols, const std::vector<index_t>& lengths,
                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, lengths.size() - 1);
  std::uniform_int_distribution<index_t> column(0, cols - 1);
  HostCsr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.push_back(0);
  for (index_t i = 0; i < rows; ++i) {
    const index_t length = std::min(lengths[pick(rng)], cols);
    std::set<index_t> columns;
    while (static_cast<index_t>(columns.size()) < length) columns.insert(column(rng));
    a.col_idx.insert(a.col_idx.end(), columns.begin(), columns.end());
    a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
  }
  a.values = test::random_vector(a.col_idx.size(), seed + 1);
  return a;
}

TEST(SparseSetup, TransposeMatchesReferenceAndTheDefinition) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(test::random_sparse(45, 71, 10, true, seed));
  std::vector<index_t> source, expected_source;

  const HostCsr t = transpose(test::backend_under_test(), a, source);
  const HostCsr expected = transpose(Backend::reference(), a, expected_source);

  EXPECT_EQ(t.row_ptr, expected.row_ptr);
  EXPECT_EQ(t.col_idx, expected.col_idx);
  EXPECT_EQ(source, expected_source);
  ASSERT_EQ(t.values.size(), a.values.size());
  for (index_t i = 0; i < a.rows; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      EXPECT_EQ(t.at(a.col_idx[k], i), a.values[k]);
    }
  }
}

TEST(SparseSetup, PatternSymmetricMatchesReferenceAndTheDefinition) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const HostCsr symmetric = host_csr(random_spd(1203, seed));
  // One entry moved within its row to a column whose mirror is not stored: not symmetric, with
  // the same entry counts per row.
  CooMatrix moved = random_spd(1203, seed);
  for (std::size_t k = 0; k < moved.num_entries(); ++k) {
    const index_t i = moved.row_idx[k], j = moved.col_idx[k];
    if (i == j) continue;
    for (index_t c = 0; c < moved.num_cols; ++c) {
      bool stored = false;
      for (std::size_t q = 0; q < moved.num_entries(); ++q) {
        stored = stored || (moved.row_idx[q] == i && moved.col_idx[q] == c) ||
                 (moved.row_idx[q] == c && moved.col_idx[q] == i);
      }
      if (!stored) {
        moved.col_idx[k] = c;
        break;
      }
    }
    break;
  }
  const HostCsr nonsymmetric = host_csr(moved);
  const HostCsr rectangular = host_csr(test::random_sparse(45, 71, 10, true, seed));
  for (const Backend& on : {backend, Backend::reference()}) {
    SCOPED_TRACE(on.name());
    EXPECT_TRUE(ss::pattern_symmetric(on, OnBackend(on, symmetric).pattern()));
    EXPECT_FALSE(ss::pattern_symmetric(on, OnBackend(on, nonsymmetric).pattern()));
    EXPECT_FALSE(ss::pattern_symmetric(on, OnBackend(on, rectangular).pattern()));
  }
}

TEST(SparseSetup, FirstInvalidRowMatchesReference) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const HostCsr valid = host_csr(test::random_sparse(3000, 2500, 12, true, seed));
  std::mt19937_64 random(seed);
  // Valid, then one defect of each kind in a random row (the earliest defect wins when two
  // rows are broken), each compared with the reference.
  for (int defect = 0; defect < 5; ++defect) {
    HostCsr a = valid;
    index_t row = -1;
    for (int picks = 0; defect > 0 && picks < 2; ++picks) {
      index_t i = static_cast<index_t>(random() % static_cast<std::uint64_t>(a.rows));
      while (a.row_ptr[i + 1] - a.row_ptr[i] < 2) i = (i + 1) % a.rows;
      const index_t k = a.row_ptr[i];
      if (defect == 1) std::swap(a.col_idx[k], a.col_idx[k + 1]);  // unsorted
      if (defect == 2) a.col_idx[k + 1] = a.col_idx[k];            // duplicate
      if (defect == 3) a.col_idx[k] = -1;                          // below 0
      if (defect == 4) a.col_idx[k + 1] = a.cols;                  // beyond the last column
      row = row < 0 ? i : std::min(row, i);
    }
    SCOPED_TRACE("defect " + std::to_string(defect));
    const index_t expected = ss::reference::first_invalid_row(
        Backend::reference(), OnBackend(Backend::reference(), a).pattern());
    EXPECT_EQ(expected, row);
    EXPECT_EQ(ss::first_invalid_row(backend, OnBackend(backend, a).pattern()), expected);
  }
}

TEST(SparseSetup, ExpandBlocksMatchesReferenceAndTheDenseBlocks) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  for (const index_t B : {1, 3, 4, 5}) {
    SCOPED_TRACE("block size " + std::to_string(B));
    const HostCsr blocks = host_csr(test::random_sparse(700, 650, 9, true, seed + B));
    const std::size_t nnzb = blocks.col_idx.size();
    const auto expand = [&](const Backend& on) {
      const OnBackend pattern(on, blocks);
      Array<index_t> row_ptr(on, static_cast<std::size_t>(blocks.rows * B) + 1);
      Array<index_t> col_idx(on, nnzb * B * B), position(on, nnzb * B * B);
      ss::expand_blocks(on, pattern.pattern(), B, row_ptr.data(), col_idx.data(), position.data());
      return std::array<std::vector<index_t>, 3>{row_ptr.to_host(), col_idx.to_host(),
                                                 position.to_host()};
    };
    const auto expected = expand(Backend::reference());
    // The reference against the blocks themselves: entry (I B + r, J B + c) of block k
    // is value (k B + r) B + c, and every scalar row lists its columns in increasing order.
    for (index_t I = 0; I < blocks.rows; ++I) {
      for (index_t r = 0; r < B; ++r) {
        const index_t row = I * B + r;
        index_t at = expected[0][row];
        ASSERT_EQ(expected[0][row + 1] - at, B * (blocks.row_ptr[I + 1] - blocks.row_ptr[I]));
        for (index_t k = blocks.row_ptr[I]; k < blocks.row_ptr[I + 1]; ++k) {
          for (index_t c = 0; c < B; ++c, ++at) {
            ASSERT_EQ(expected[1][at], blocks.col_idx[k] * B + c);
            ASSERT_EQ(expected[2][at], (k * B + r) * B + c);
          }
        }
      }
    }
    const auto got = expand(backend);
    EXPECT_EQ(got[0], expected[0]);
    EXPECT_EQ(got[1], expected[1]);
    EXPECT_EQ(got[2], expected[2]);
  }
}

TEST(SparseSetup, ExclusiveScanMatchesReferenceAndRefusesOverflow) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<index_t> count(0, 50);
  // Sizes on both sides of the cuda scan's one-block tiles (4,096 counts each, eight at most;
  // past them the device-wide scan) and of one tile.
  for (const std::size_t n :
       {0, 1, 1000, 4095, 4096, 4097, 8193, 16385, 32767, 32768, 32769, 1000003}) {
    SCOPED_TRACE("n " + std::to_string(n));
    std::vector<index_t> counts(n);
    for (index_t& c : counts) c = count(rng);
    const auto scan = [&](const Backend& b, std::int64_t& total) {
      const Array<index_t> c = Array<index_t>::from_host(b, counts);
      Array<index_t> offsets(b, n + 1);
      total = ss::exclusive_scan(b, c.span(), offsets.span());
      return offsets.to_host();
    };
    std::int64_t total = -1, expected_total = -2;

    const std::vector<index_t> offsets = scan(backend, total);

    EXPECT_EQ(offsets, scan(Backend::reference(), expected_total));
    EXPECT_EQ(total, expected_total);
    EXPECT_EQ(total, offsets.back());
    const Array<index_t> c = Array<index_t>::from_host(backend, counts);
    Array<index_t> bounded(backend, n + 1);
    ss::exclusive_scan_bounded(backend, c.span(), bounded.span(), expected_total);
    EXPECT_EQ(bounded.to_host(), offsets);
  }
  const index_t big = index_t{1} << 30;
  const Array<index_t> c = Array<index_t>::from_host(backend, std::vector<index_t>{big, big, big});
  Array<index_t> offsets(backend, 4);
  EXPECT_THROW(ss::exclusive_scan(backend, c.span(), offsets.span()), NotSupported);
}

TEST(SparseSetup, LongRowsMatchReferenceBitForBit) {
  // Row lengths beyond 1024 in A and B; products per row of C from none to tens of thousands
  // (past the cuda kernels' shared-memory hash tables of 2048 slots), rows of C beyond 512
  // entries (past their shared-memory numeric rows), and columns spread over more than one
  // bitmap window of 262,144 columns (300,007 columns) or packed into a few thousand.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    index_t rows, inner, cols;
    std::vector<index_t> a_lengths, b_lengths;
  };
  const std::vector<Case> cases = {
      {97,
       4001,
       300007,
       {0, 1, 3, 7, 12, 150, 300, 400, 1500},
       {0, 1, 2, 3, 4, 5, 9, 0, 2, 1100, 2500}},
      {53, 301, 2003, {0, 5, 9, 290}, {0, 3, 7, 1500}},
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    const Case& k = cases[c];
    const HostCsr a = random_rows(k.rows, k.inner, k.a_lengths, seed + 10 * c);
    const HostCsr b = random_rows(k.inner, k.cols, k.b_lengths, seed + 10 * c + 5);

    const HostCsr product = spgemm(test::backend_under_test(), a, b);
    const HostCsr expected = spgemm(Backend::reference(), a, b);

    EXPECT_EQ(product.row_ptr, expected.row_ptr);
    EXPECT_EQ(product.col_idx, expected.col_idx);
    EXPECT_EQ(product.values, expected.values);
    index_t longest = 0;
    for (index_t i = 0; i < expected.rows; ++i) {
      longest = std::max(longest, expected.row_ptr[i + 1] - expected.row_ptr[i]);
    }
    EXPECT_GT(longest, 1024);

    std::vector<index_t> source, expected_source;
    const HostCsr t = transpose(test::backend_under_test(), b, source);
    const HostCsr expected_t = transpose(Backend::reference(), b, expected_source);
    EXPECT_EQ(t.row_ptr, expected_t.row_ptr);
    EXPECT_EQ(t.col_idx, expected_t.col_idx);
    EXPECT_EQ(source, expected_source);
    EXPECT_EQ(t.values, expected_t.values);
  }
}

/// B with rows of 2^r entries (r < 13) and rows 13 + r repeating the columns of rows r < 7;
/// A's row for a product count t uses the rows of B whose lengths are t's binary digits, so
/// row i of A B has exactly targets[i] products (twice that, half of them repeated columns,
/// for the targets marked `doubled`).
std::pair<HostCsr, HostCsr> rows_with_products(const std::vector<index_t>& targets,
                                               const std::vector<index_t>& doubled,
                                               std::uint64_t seed) {
  constexpr index_t kCols = 6007;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<index_t> column(0, kCols - 1);
  HostCsr b;
  b.rows = 20;
  b.cols = kCols;
  b.row_ptr.push_back(0);
  for (index_t r = 0; r < b.rows; ++r) {
    if (r >= 13) {
      const index_t source = r - 13;
      b.col_idx.insert(b.col_idx.end(), b.col_idx.begin() + b.row_ptr[source],
                       b.col_idx.begin() + b.row_ptr[source + 1]);
    } else {
      std::set<index_t> columns;
      while (static_cast<index_t>(columns.size()) < (index_t{1} << r)) columns.insert(column(rng));
      b.col_idx.insert(b.col_idx.end(), columns.begin(), columns.end());
    }
    b.row_ptr.push_back(static_cast<index_t>(b.col_idx.size()));
  }
  b.values = test::random_vector(b.col_idx.size(), seed + 1);
  HostCsr a;
  a.cols = b.rows;
  a.row_ptr.push_back(0);
  const auto add_row = [&](index_t target, bool twice) {
    for (index_t r = 0; r < 13; ++r) {
      if ((target >> r) & 1) a.col_idx.push_back(r);
    }
    if (twice) {
      for (index_t r = 0; r < 7; ++r) {
        if ((target >> r) & 1) a.col_idx.push_back(13 + r);
      }
    }
    a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
  };
  for (const index_t t : targets) add_row(t, false);
  for (const index_t t : doubled) add_row(t, true);
  a.rows = static_cast<index_t>(a.row_ptr.size()) - 1;
  a.values = test::random_vector(a.col_idx.size(), seed + 2);
  return {a, b};
}

/// Bin-boundary targets of rows_with_products taken twice (half the products repeated columns).
const std::vector<index_t> kDoubledTargets = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127};

/// A B on the backend under test through the three SpGEMM phases and spgemm_fill_numeric
/// (spgemm above), bit for bit the reference's; returns the reference's product.
HostCsr expect_product_as_reference(const HostCsr& a, const HostCsr& b) {
  const HostCsr product = spgemm(test::backend_under_test(), a, b);
  const HostCsr expected = spgemm(Backend::reference(), a, b);
  EXPECT_EQ(product.row_ptr, expected.row_ptr);
  EXPECT_EQ(product.col_idx, expected.col_idx);
  EXPECT_EQ(product.values, expected.values);
  return expected;
}

TEST(SparseSetup, ManyRowsOnBinBoundariesMatchReferenceBitForBit) {
  // More rows than the cuda SpGEMM runs in one launch for all its bins (2^16): there every bin
  // has a launch of its own (RowsOnEveryBinBoundary below covers the merged launch). Products
  // per row from none to past the largest group bin (2048), repeated columns included.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Most rows short (the bins of a fine level), every 16th from the longer bins in turn.
  const std::vector<index_t> short_rows = {0, 1, 2, 3, 5, 17, 31, 32, 33};
  const std::vector<index_t> long_rows = {64, 65, 127, 129, 255, 257, 513, 1023, 1025, 2049};
  std::vector<index_t> targets(140'000);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    targets[i] = i % 16 == 0 ? long_rows[(i / 16) % long_rows.size()]
                             : short_rows[(i * 7) % short_rows.size()];
  }
  const auto [a, b] = rows_with_products(targets, kDoubledTargets, seed);
  expect_product_as_reference(a, b);
}

TEST(SparseSetup, RowsOnEveryBinBoundaryMatchReferenceBitForBit) {
  // The cuda SpGEMM bins rows by their product count (at most 32, 64, ..., 2048, then the long
  // rows): rows with one product less, exactly and one more than every bound, repeated columns
  // (distinct columns half the products), and a numeric phase on a pattern wider than the
  // product (rows binned by their length instead).
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<index_t> targets = {0, 1, 2, 3, 5, 4097, 6000, 8191};
  for (index_t bound = 16; bound <= 4096; bound *= 2) {
    targets.insert(targets.end(), {bound - 1, bound, bound + 1});
  }
  const auto [a, b] = rows_with_products(targets, kDoubledTargets, seed);
  const HostCsr expected = expect_product_as_reference(a, b);

  // A wider pattern: row i also holds the columns [6007 - w_i, 6007) for widths up to 2100.
  HostCsr wide;
  wide.rows = expected.rows;
  wide.cols = expected.cols;
  wide.row_ptr.push_back(0);
  for (index_t i = 0; i < expected.rows; ++i) {
    std::set<index_t> columns(expected.col_idx.begin() + expected.row_ptr[i],
                              expected.col_idx.begin() + expected.row_ptr[i + 1]);
    const index_t width = (i * 97) % 2100;
    for (index_t j = expected.cols - width; j < expected.cols; ++j) columns.insert(j);
    wide.col_idx.insert(wide.col_idx.end(), columns.begin(), columns.end());
    wide.row_ptr.push_back(static_cast<index_t>(wide.col_idx.size()));
  }
  const auto numeric = [&](const Backend& backend) {
    const OnBackend A(backend, a), B(backend, b);
    const Array<index_t> row_ptr = Array<index_t>::from_host(backend, wide.row_ptr);
    const Array<index_t> col_idx = Array<index_t>::from_host(backend, wide.col_idx);
    Array<double> values(backend, wide.col_idx.size());
    const ss::PatternView c{wide.rows, wide.cols, row_ptr.span().data(), col_idx.span().data()};
    ss::spgemm_numeric(backend, A.matrix(), B.matrix(), c, values.span().data());
    return values.to_host();
  };
  const std::vector<double> values = numeric(test::backend_under_test());
  EXPECT_EQ(values, numeric(Backend::reference()));
  for (index_t i = 0; i < wide.rows; ++i) {
    for (index_t k = wide.row_ptr[i]; k < wide.row_ptr[i + 1]; ++k) {
      if (!std::binary_search(expected.col_idx.begin() + expected.row_ptr[i],
                              expected.col_idx.begin() + expected.row_ptr[i + 1],
                              wide.col_idx[k])) {
        EXPECT_EQ(values[k], 0.0) << "row " << i << " column " << wide.col_idx[k];
      }
    }
  }
}

/// The strength pattern on `backend`.
std::vector<std::set<index_t>> strength(const Backend& backend, const HostCsr& a,
                                        const ka::StrengthParameters& p) {
  const OnBackend A(backend, a);
  Array<index_t> counts(backend, static_cast<std::size_t>(a.rows));
  ka::strength_count(backend, A.matrix(), p, counts.span());
  Array<index_t> row_ptr(backend, counts.size() + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  ka::strength_fill(backend, A.matrix(), p, row_ptr.span().data(), col_idx.span().data());
  const std::vector<index_t> rp = row_ptr.to_host(), ci = col_idx.to_host();
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(a.rows));
  for (index_t i = 0; i < a.rows; ++i) rows[i] = {ci.begin() + rp[i], ci.begin() + rp[i + 1]};
  return rows;
}

/// The definitions of kernels/amg/amg.hpp, written out.
bool strongly_depends(const HostCsr& a, const ka::StrengthParameters& p, index_t i, index_t j) {
  const double a_ii = a.at(i, i);
  double row_sum = 0.0, largest = 0.0;
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    row_sum += a.values[k];
    if (a.col_idx[k] != i) largest = std::max(largest, -(a_ii < 0 ? -1.0 : 1.0) * a.values[k]);
  }
  if (p.max_row_sum < 1.0 && std::abs(row_sum) > p.max_row_sum * std::abs(a_ii)) return false;
  const double a_ij = a.at(i, j);
  if (p.measure == ka::StrengthMeasure::seed) return std::abs(a_ij) > p.threshold * std::abs(a_ii);
  if (p.measure == ka::StrengthMeasure::symmetric) {
    return a_ij != 0.0 && std::abs(a_ij) >= p.threshold * std::sqrt(std::abs(a_ii * a.at(j, j)));
  }
  const double s = -(a_ii < 0 ? -1.0 : 1.0) * a_ij;
  return largest > 0.0 && s > 0.0 && s >= p.threshold * largest;
}

TEST(AmgKernels, StrengthMatchesReferenceAndTheDefinitions) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(211, seed));
  for (const ka::StrengthParameters p :
       {ka::StrengthParameters{ka::StrengthMeasure::classical, 0.25, 1.0},
        ka::StrengthParameters{ka::StrengthMeasure::classical, 0.5, 0.8},
        ka::StrengthParameters{ka::StrengthMeasure::seed, 0.1, 1.0},
        ka::StrengthParameters{ka::StrengthMeasure::symmetric, 0.0, 1.0},
        ka::StrengthParameters{ka::StrengthMeasure::symmetric, 0.3, 0.9}}) {
    SCOPED_TRACE("threshold " + std::to_string(p.threshold));

    const auto s = strength(test::backend_under_test(), a, p);
    const auto expected = strength(Backend::reference(), a, p);

    EXPECT_EQ(s, expected);
    for (index_t i = 0; i < a.rows; ++i) {
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const index_t j = a.col_idx[k];
        EXPECT_EQ(s[i].count(j) == 1, j != i && strongly_depends(a, p, i, j))
            << "row " << i << " column " << j;
      }
    }
  }
}

struct Strength {
  HostCsr s;   // pattern, values unused
  HostCsr st;  // its transpose
};

Strength strength_pattern(const HostCsr& a, const ka::StrengthParameters& p) {
  const auto rows = strength(Backend::reference(), a, p);
  CooMatrix s, st;
  s.num_rows = s.num_cols = st.num_rows = st.num_cols = a.rows;
  for (index_t i = 0; i < a.rows; ++i) {
    for (const index_t j : rows[i]) {
      s.push_back(i, j, 1.0);
      st.push_back(j, i, 1.0);
    }
  }
  return {host_csr(s), host_csr(st)};
}

std::vector<index_t> split(const Backend& backend, const Strength& s, bool pmis,
                           std::uint64_t seed) {
  const OnBackend S(backend, s.s), St(backend, s.st);
  Array<index_t> cf(backend, static_cast<std::size_t>(s.s.rows));
  if (pmis) {
    ka::pmis_splitting(backend, S.pattern(), St.pattern(), seed, cf.span());
  } else {
    ka::greedy_splitting(backend, S.pattern(), cf.span());
  }
  return cf.to_host();
}

TEST(AmgKernels, GreedySplittingFollowsTheParallelToolboxRules) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Strength s = strength_pattern(host_csr(random_spd(307, seed)), {});

  const std::vector<index_t> cf = split(test::backend_under_test(), s, false, 0);

  EXPECT_EQ(cf, split(Backend::reference(), s, false, 0));
  // Row 0 is coarse; a fine row j was made fine by an earlier coarse row i with j in S_i; a
  // coarse row i is not in S_k of an earlier coarse row k.
  ASSERT_FALSE(cf.empty());
  EXPECT_EQ(cf[0], ka::kCoarse);
  for (index_t j = 0; j < s.s.rows; ++j) {
    bool made_fine = false;
    for (index_t i = 0; i < j; ++i) {
      if (cf[i] == ka::kCoarse && s.s.at(i, j) != 0.0) made_fine = true;
    }
    EXPECT_EQ(cf[j] == ka::kFine, made_fine) << "row " << j;
  }
}

/// The PMIS splitting of S on the backend under test: the reference's, the same again, and
/// PMIS's rules.
void check_pmis_splitting(const Strength& s) {
  const std::vector<index_t> cf = split(test::backend_under_test(), s, true, 7);

  EXPECT_EQ(cf, split(Backend::reference(), s, true, 7));
  EXPECT_EQ(cf, split(test::backend_under_test(), s, true, 7));
  for (index_t i = 0; i < s.s.rows; ++i) {
    ASSERT_TRUE(cf[i] == ka::kCoarse || cf[i] == ka::kFine);
    const bool influences = s.st.row_ptr[i + 1] > s.st.row_ptr[i];
    if (!influences) EXPECT_EQ(cf[i], ka::kFine) << "row " << i << " influences nothing";
    bool depends_on_coarse = false;
    for (index_t k = s.s.row_ptr[i]; k < s.s.row_ptr[i + 1]; ++k) {
      const index_t j = s.s.col_idx[k];
      // Two coarse rows never depend on each other both ways (one was made fine by the other
      // in the round the first was chosen, or they were neighbours in the same round).
      if (cf[i] == ka::kCoarse && cf[j] == ka::kCoarse) {
        EXPECT_EQ(s.s.at(j, i), 0.0) << "coarse " << i << " and " << j;
      }
      depends_on_coarse = depends_on_coarse || cf[j] == ka::kCoarse;
    }
    // A fine row that influences others was made fine by a coarse row it depends on.
    if (cf[i] == ka::kFine && influences) EXPECT_TRUE(depends_on_coarse) << "row " << i;
  }
}

TEST(AmgKernels, PmisSplittingIsDeterministicForASeedAndFollowsItsRules) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Rows on both sides of the cuda one-block PMIS (at most 8,192 rows; above, one cooperative
  // launch, or a launch per half round under KRYFLOW_COOPERATIVE_ROWS=0).
  for (const index_t rows : {401, 9001}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    check_pmis_splitting(strength_pattern(host_csr(random_spd(rows, seed)), {}));
  }
}

std::vector<index_t> hmis_split(const Backend& backend, const Strength& s, std::uint64_t seed) {
  const OnBackend S(backend, s.s), St(backend, s.st);
  Array<index_t> cf(backend, static_cast<std::size_t>(s.s.rows));
  ka::hmis_splitting(backend, S.pattern(), St.pattern(), seed, cf.span());
  return cf.to_host();
}

/// The coarse rows of the Ruge-Stueben first pass on each domain of kHmisDomainRows rows,
/// written from the definition: every step recounts lambda_i = |S^T_i cap U| + 2 |S^T_i cap F|
/// over the domain's rows (no incremental updates), the undecided row of largest
/// (lambda, random, place) with lambda > 0 becomes coarse and its undecided influenced rows of
/// the domain fine.
std::vector<char> first_pass_by_definition(const Strength& s, std::uint64_t seed) {
  const index_t n = s.s.rows;
  std::vector<char> coarse(static_cast<std::size_t>(n), 0);
  for (index_t lo = 0; lo < n; lo += ka::kHmisDomainRows) {
    const index_t hi = std::min(n, lo + ka::kHmisDomainRows);
    std::vector<char> state(static_cast<std::size_t>(hi - lo), 'U');
    for (;;) {
      std::uint64_t best = 0;
      for (index_t i = lo; i < hi; ++i) {
        if (state[i - lo] != 'U') continue;
        index_t lambda = 0;
        for (index_t k = s.st.row_ptr[i]; k < s.st.row_ptr[i + 1]; ++k) {
          const index_t j = s.st.col_idx[k];
          if (j < lo || j >= hi || j == i) continue;
          lambda += state[j - lo] == 'U' ? 1 : (state[j - lo] == 'F' ? 2 : 0);
        }
        if (lambda > 0) best = std::max(best, ka::hmis_key(lambda, seed, i, i - lo));
      }
      if (best == 0) break;
      const index_t c = lo + static_cast<index_t>(best & 0xffff);
      state[c - lo] = 'C';
      coarse[c] = 1;
      for (index_t k = s.st.row_ptr[c]; k < s.st.row_ptr[c + 1]; ++k) {
        const index_t j = s.st.col_idx[k];
        if (j >= lo && j < hi && state[j - lo] == 'U') state[j - lo] = 'F';
      }
    }
  }
  return coarse;
}

TEST(AmgKernels, HmisSplittingIsDeterministicForASeedAndFollowsItsRules) {
  // 700 rows: two whole domains and a partial one; 9,001 rows: past the cuda one-block PMIS
  // that follows the first pass (at most 8,192 rows).
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t rows : {700, 9001}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    const Strength s = strength_pattern(host_csr(random_spd(rows, seed)), {});

    const std::vector<index_t> cf = hmis_split(test::backend_under_test(), s, 7);

    EXPECT_EQ(cf, hmis_split(Backend::reference(), s, 7));
    EXPECT_EQ(cf, hmis_split(test::backend_under_test(), s, 7));
    const std::vector<char> first = first_pass_by_definition(s, 7);
    index_t first_coarse = 0;
    for (index_t i = 0; i < s.s.rows; ++i) {
      ASSERT_TRUE(cf[i] == ka::kCoarse || cf[i] == ka::kFine);
      // The first pass's coarse rows stay coarse.
      if (first[i]) {
        ++first_coarse;
        EXPECT_EQ(cf[i], ka::kCoarse) << "row " << i << " is coarse in its domain's first pass";
      }
      const bool influences = s.st.row_ptr[i + 1] > s.st.row_ptr[i];
      if (!influences) EXPECT_EQ(cf[i], ka::kFine) << "row " << i << " influences nothing";
      bool depends_on_coarse = false;
      for (index_t k = s.s.row_ptr[i]; k < s.s.row_ptr[i + 1]; ++k) {
        depends_on_coarse = depends_on_coarse || cf[s.s.col_idx[k]] == ka::kCoarse;
      }
      // A fine row that influences others depends on a coarse row.
      if (cf[i] == ka::kFine && influences) EXPECT_TRUE(depends_on_coarse) << "row " << i;
    }
    EXPECT_GT(first_coarse, 0);
    // PMIS from the first pass's coarse rows: the rows PMIS adds are fewer than the first
    // pass's where the random matrix's couplings stay mostly inside the domains (700 rows; the
    // 9,001-row matrix couples rows far apart, and its domains hold few of them).
    const auto coarse = static_cast<index_t>(std::count(cf.begin(), cf.end(), ka::kCoarse));
    if (rows == 700) EXPECT_LT(coarse - first_coarse, first_coarse);
  }
}

/// Roots and aggregates of mis2_roots and mis2_aggregates on `backend`.
struct Aggregates {
  std::vector<index_t> roots, aggregate;
  std::int64_t count = 0;
  index_t left = 0;
};

Aggregates aggregate(const Backend& backend, const Strength& s, std::uint64_t seed) {
  const OnBackend S(backend, s.s), St(backend, s.st);
  const auto n = static_cast<std::size_t>(s.s.rows);
  Array<index_t> roots(backend, n), root_index(backend, n + 1), aggregate(backend, n);
  ka::mis2_roots(backend, S.pattern(), St.pattern(), seed, roots.span());
  Aggregates out;
  out.count = ss::exclusive_scan(backend, roots.span(), root_index.span());
  out.left = ka::mis2_aggregates(backend, S.pattern(), St.pattern(), seed, roots.span(),
                                 root_index.span(), aggregate.span());
  out.roots = roots.to_host();
  out.aggregate = aggregate.to_host();
  return out;
}

/// Distances in the graph S + S^T from `source`, up to 2 (3 beyond).
std::vector<int> distances_up_to_two(const Strength& s, index_t source) {
  std::vector<int> d(static_cast<std::size_t>(s.s.rows), 3);
  d[source] = 0;
  for (int level = 0; level < 2; ++level) {
    for (index_t i = 0; i < s.s.rows; ++i) {
      if (d[i] != level) continue;
      for (const HostCsr* g : {&s.s, &s.st}) {
        for (index_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; ++k) {
          d[g->col_idx[k]] = std::min(d[g->col_idx[k]], level + 1);
        }
      }
    }
  }
  return d;
}

TEST(AmgKernels, Mis2AggregatesAreDeterministicForASeedAndFollowTheirRules) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // A nonsymmetric strength pattern (classical measure on mixed signs) with isolated rows.
  const Strength s = strength_pattern(host_csr(random_spd(347, seed)), {});

  const Aggregates a = aggregate(test::backend_under_test(), s, 11);
  const Aggregates expected = aggregate(Backend::reference(), s, 11);

  EXPECT_EQ(a.roots, expected.roots);
  EXPECT_EQ(a.aggregate, expected.aggregate);
  EXPECT_EQ(a.roots, aggregate(test::backend_under_test(), s, 11).roots);
  EXPECT_NE(a.roots, aggregate(Backend::reference(), s, 12).roots) << "the seed is not used";
  EXPECT_EQ(a.left, 0);
  ASSERT_GT(a.count, 0);
  std::vector<index_t> root_of(static_cast<std::size_t>(a.count), -1);
  for (index_t i = 0; i < s.s.rows; ++i) {
    ASSERT_GE(a.aggregate[i], 0);
    ASSERT_LT(a.aggregate[i], a.count);
    if (a.roots[i]) root_of[a.aggregate[i]] = i;
  }
  for (index_t i = 0; i < s.s.rows; ++i) {
    const std::vector<int> d = distances_up_to_two(s, i);
    bool near_root = false;
    for (index_t j = 0; j < s.s.rows; ++j) {
      // Independent at distance two; maximal: every other row within distance two of a root.
      if (a.roots[i] && a.roots[j] && j != i) EXPECT_EQ(d[j], 3) << "roots " << i << ", " << j;
      near_root = near_root || (a.roots[j] && d[j] <= 2);
    }
    EXPECT_TRUE(near_root) << "row " << i;
    // Each aggregate has one root, numbered in row order, within distance two of its rows; a
    // row next to a root is in the root's aggregate.
    const index_t root = root_of[a.aggregate[i]];
    ASSERT_GE(root, 0) << "aggregate " << a.aggregate[i] << " has no root";
    EXPECT_LE(d[root], 2) << "row " << i;
    if (a.roots[i]) EXPECT_EQ(root, i);
    for (index_t j = 0; j < s.s.rows; ++j) {
      if (a.roots[j] && d[j] == 1) EXPECT_EQ(a.aggregate[i], a.aggregate[j]) << "row " << i;
    }
  }
  for (index_t r = 1; r < a.count; ++r) EXPECT_LT(root_of[r - 1], root_of[r]);
}

TEST(AmgKernels, Mis2OfASymmetricStrengthGivesTheSameAggregatesWithoutTheTranspose) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // The symmetric measure on a symmetric matrix: S = S^T, so a null S^T stands for G = S.
  const Strength s =
      strength_pattern(host_csr(random_spd(401, seed)), {ka::StrengthMeasure::symmetric, 0.0, 1.0});
  ASSERT_EQ(s.s.row_ptr, s.st.row_ptr);
  ASSERT_EQ(s.s.col_idx, s.st.col_idx);
  const Backend backend = test::backend_under_test();
  const Aggregates with = aggregate(backend, s, 5);
  const OnBackend S(backend, s.s);
  const ss::PatternView none{s.s.rows, s.s.rows, nullptr, nullptr};
  const auto n = static_cast<std::size_t>(s.s.rows);
  Array<index_t> roots(backend, n), root_index(backend, n + 1), aggregate(backend, n);

  ka::mis2_roots(backend, S.pattern(), none, 5, roots.span());
  ss::exclusive_scan(backend, roots.span(), root_index.span());
  const index_t left = ka::mis2_aggregates(backend, S.pattern(), none, 5, roots.span(),
                                           root_index.span(), aggregate.span());

  EXPECT_EQ(left, 0);
  EXPECT_EQ(roots.to_host(), with.roots);
  EXPECT_EQ(aggregate.to_host(), with.aggregate);
}

TEST(AmgKernels, ProlongationSmoothingMatchesReferenceAndTheDefinitions) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(293, seed));
  const Backend backend = test::backend_under_test();
  const OnBackend A(backend, a), Aref(Backend::reference(), a);

  double bound = 0.0;
  for (index_t i = 0; i < a.rows; ++i) {
    double sum = 0.0;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += std::abs(a.values[k]);
    bound = std::max(bound, sum / std::abs(a.at(i, i)));
  }
  // The bound stays where A lives (no wait); smoothed_aggregation_values reads it there.
  Array<double> bound_on_backend(backend, 1);
  Array<double> bound_ref(Backend::reference(), 1);
  ka::gershgorin_bound(backend, A.matrix(), bound_on_backend.span().data());
  ka::gershgorin_bound(Backend::reference(), Aref.matrix(), bound_ref.span().data());
  const double rho = bound_on_backend.to_host()[0];
  EXPECT_EQ(rho, bound_ref.to_host()[0]);
  EXPECT_NEAR(rho, bound, 1e-14 * bound);
  EXPECT_GT(rho, 1.0);

  std::vector<index_t> aggregates(static_cast<std::size_t>(a.rows));
  for (index_t i = 0; i < a.rows; ++i) aggregates[i] = (i * 7 + 3) % 41;
  const Array<index_t> on_backend = Array<index_t>::from_host(backend, aggregates);
  Array<index_t> row_ptr(backend, aggregates.size() + 1), col_idx(backend, aggregates.size());
  Array<double> ones(backend, aggregates.size());
  ka::tentative_prolongation(backend, on_backend.span(), row_ptr.span().data(),
                             col_idx.span().data(), ones.span().data());
  std::vector<index_t> iota(aggregates.size() + 1);
  for (std::size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<index_t>(i);
  EXPECT_EQ(row_ptr.to_host(), iota);
  EXPECT_EQ(col_idx.to_host(), aggregates);
  EXPECT_EQ(ones.to_host(), std::vector<double>(aggregates.size(), 1.0));

  // P = (I - omega D^-1 A) T on the pattern of A T (row i: the sorted aggregates of its
  // columns), against the reference bit for bit and the definition summed here.
  HostCsr p;
  p.rows = a.rows;
  p.row_ptr.push_back(0);
  for (index_t i = 0; i < a.rows; ++i) {
    std::vector<index_t> row;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      row.push_back(aggregates[a.col_idx[k]]);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    p.col_idx.insert(p.col_idx.end(), row.begin(), row.end());
    p.row_ptr.push_back(static_cast<index_t>(p.col_idx.size()));
  }
  // The pattern on the backend: counts, then the sorted distinct aggregates of each row.
  Array<index_t> counts(backend, static_cast<std::size_t>(a.rows));
  ka::smoothed_aggregation_count(backend, A.matrix().pattern, on_backend.span(), counts.span());
  const std::vector<index_t> c = counts.to_host();
  for (index_t i = 0; i < a.rows; ++i) {
    ASSERT_EQ(c[i], p.row_ptr[i + 1] - p.row_ptr[i]) << "row " << i;
  }
  Array<index_t> filled(backend, p.col_idx.size());
  {
    const auto row_ptr_on_backend = Array<index_t>::from_host(backend, p.row_ptr);
    ka::smoothed_aggregation_fill(backend, A.matrix().pattern, on_backend.span(),
                                  row_ptr_on_backend.span().data(), filled.span().data());
    EXPECT_EQ(filled.to_host(), p.col_idx);
  }
  // omega = factor / rho, divided where the kernel runs: the host's bits (correctly rounded).
  const double factor = 4.0 / 3.0;
  const double omega = factor / rho;
  const auto p_row_ptr = Array<index_t>::from_host(backend, p.row_ptr);
  const auto p_col_idx = Array<index_t>::from_host(backend, p.col_idx);
  const auto p_row_ptr_ref = Array<index_t>::from_host(Backend::reference(), p.row_ptr);
  const auto p_col_idx_ref = Array<index_t>::from_host(Backend::reference(), p.col_idx);
  const ss::PatternView pattern{p.rows, 41, p_row_ptr.span().data(), p_col_idx.span().data()};
  const ss::PatternView pattern_ref{p.rows, 41, p_row_ptr_ref.span().data(),
                                    p_col_idx_ref.span().data()};
  const auto aggregates_ref = Array<index_t>::from_host(Backend::reference(), aggregates);
  Array<double> values(backend, p.col_idx.size()), expected(Backend::reference(), p.col_idx.size());
  ka::smoothed_aggregation_values(backend, A.matrix(), factor, bound_on_backend.span().data(),
                                  on_backend.span(), pattern, values.span().data());
  ka::smoothed_aggregation_values(Backend::reference(), Aref.matrix(), factor,
                                  bound_ref.span().data(), aggregates_ref.span(), pattern_ref,
                                  expected.span().data());
  const std::vector<double> v = values.to_host();
  EXPECT_EQ(v, expected.to_host());
  for (index_t i = 0; i < a.rows; ++i) {
    for (index_t q = p.row_ptr[i]; q < p.row_ptr[i + 1]; ++q) {
      double definition = 0.0, magnitude = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (aggregates[a.col_idx[k]] != p.col_idx[q]) continue;
        const double s_ik = (a.col_idx[k] == i ? 1.0 : 0.0) - omega * a.values[k] / a.at(i, i);
        definition += s_ik;
        magnitude += std::abs(s_ik);
      }
      EXPECT_NEAR(v[q], definition, 1e-14 * std::max(1.0, magnitude)) << "row " << i;
    }
  }
}

TEST(AmgKernels, RestrictionValuesAreTheTransposedProlongationValues) {
  // A random P (300 x 40, one to five distinct columns per row, values in [-1, 1)); R's
  // pattern is P's transposed on the host, and every value of R must be the P entry it mirrors.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 engine(seed);
  const index_t rows = 300, cols = 40;
  HostCsr p;
  p.rows = rows;
  p.cols = cols;
  p.row_ptr.push_back(0);
  std::vector<std::vector<std::pair<index_t, double>>> transposed(cols);
  for (index_t i = 0; i < rows; ++i) {
    std::vector<index_t> row(static_cast<std::size_t>(cols));
    std::iota(row.begin(), row.end(), 0);
    std::shuffle(row.begin(), row.end(), engine);
    row.resize(1 + engine() % 5);
    for (const index_t c : row) {
      const double v = std::uniform_real_distribution<double>(-1.0, 1.0)(engine);
      p.col_idx.push_back(c);
      p.values.push_back(v);
      transposed[c].emplace_back(i, v);
    }
    p.row_ptr.push_back(static_cast<index_t>(p.col_idx.size()));
  }
  std::vector<index_t> r_row_ptr{0}, r_col_idx;
  std::vector<double> expected;
  for (const auto& column : transposed) {
    for (const auto& [i, v] : column) {
      r_col_idx.push_back(i);
      expected.push_back(v);
    }
    r_row_ptr.push_back(static_cast<index_t>(r_col_idx.size()));
  }
  for (const Backend& backend : {test::backend_under_test(), Backend::reference()}) {
    SCOPED_TRACE(backend.name());
    const auto pr = Array<index_t>::from_host(backend, p.row_ptr);
    const auto pc = Array<index_t>::from_host(backend, p.col_idx);
    const auto pv = Array<double>::from_host(backend, p.values);
    const auto rr = Array<index_t>::from_host(backend, r_row_ptr);
    const auto rc = Array<index_t>::from_host(backend, r_col_idx);
    Array<double> values(backend, r_col_idx.size());
    ka::restriction_values(backend,
                           {{rows, cols, pr.span().data(), pc.span().data()}, pv.span().data()},
                           {cols, rows, rr.span().data(), rc.span().data()}, values.span().data());
    EXPECT_EQ(values.to_host(), expected);
  }
}

/// P on `backend` (columns are coarse indices) for a splitting.
HostCsr interpolation(const Backend& backend, const HostCsr& a, const Strength& s,
                      const std::vector<index_t>& cf, const ka::InterpolationParameters& p) {
  const OnBackend A(backend, a), S(backend, s.s);
  const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
  Array<index_t> coarse_index(backend, cf.size() + 1);
  const std::int64_t num_coarse =
      ss::exclusive_scan(backend, splitting.span(), coarse_index.span());
  Array<index_t> counts(backend, cf.size());
  ka::interpolation_count(backend, A.matrix(), S.pattern(), splitting.span(), p, counts.span());
  Array<index_t> row_ptr(backend, cf.size() + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  Array<double> values(backend, static_cast<std::size_t>(nnz));
  ka::interpolation_fill(backend, A.matrix(), S.pattern(), splitting.span(), coarse_index.span(), p,
                         row_ptr.span().data(), col_idx.span().data(), values.span().data());
  return {a.rows, static_cast<index_t>(num_coarse), row_ptr.to_host(), col_idx.to_host(),
          values.to_host()};
}

/// Direct interpolation weights of fine row i over the fine-numbered points `set`, written out
/// from Trottenberg et al. (A.7.7)-(A.7.8).
std::map<index_t, double> direct_weights(const HostCsr& a, index_t i,
                                         const std::set<index_t>& set) {
  double a_ii = a.at(i, i), neg_n = 0, pos_n = 0, neg_p = 0, pos_p = 0;
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    if (a.col_idx[k] == i) continue;
    (a.values[k] < 0 ? neg_n : pos_n) += a.values[k];
    if (set.count(a.col_idx[k])) (a.values[k] < 0 ? neg_p : pos_p) += a.values[k];
  }
  const double alpha = neg_p != 0 ? neg_n / neg_p : 0.0;
  const double beta = pos_p != 0 ? pos_n / pos_p : 0.0;
  if (pos_p == 0) a_ii += pos_n;
  std::map<index_t, double> w;
  for (const index_t j : set) {
    const double v = a.at(i, j);
    w[j] = v < 0 ? -alpha * v / a_ii : -beta * v / a_ii;
  }
  return w;
}

TEST(AmgKernels, InterpolationMatchesReferenceAndTheFormulas) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(263, seed));
  const Strength s = strength_pattern(a, {});
  const std::vector<index_t> cf = split(Backend::reference(), s, false, 0);
  std::vector<index_t> coarse_index(cf.size() + 1, 0);
  std::vector<index_t> coarse_points;  // the row of each coarse index
  for (std::size_t i = 0; i < cf.size(); ++i) {
    coarse_index[i + 1] = coarse_index[i] + cf[i];
    if (cf[i] == ka::kCoarse) coarse_points.push_back(static_cast<index_t>(i));
  }
  for (const ka::InterpolationParameters p :
       {ka::InterpolationParameters{ka::InterpolationKind::seed, 0, 0.0},
        ka::InterpolationParameters{ka::InterpolationKind::direct, 0, 0.0},
        ka::InterpolationParameters{ka::InterpolationKind::direct, 2, 0.2}}) {
    SCOPED_TRACE("kind " + std::to_string(int(p.kind)) + " max " +
                 std::to_string(p.max_elements_per_row));

    const HostCsr P = interpolation(test::backend_under_test(), a, s, cf, p);
    const HostCsr expected = interpolation(Backend::reference(), a, s, cf, p);

    EXPECT_EQ(P.row_ptr, expected.row_ptr);
    EXPECT_EQ(P.col_idx, expected.col_idx);
    EXPECT_EQ(P.values, expected.values);
    for (index_t i = 0; i < a.rows; ++i) {
      const index_t length = P.row_ptr[i + 1] - P.row_ptr[i];
      if (cf[i] == ka::kCoarse) {
        ASSERT_EQ(length, 1);
        EXPECT_EQ(P.col_idx[P.row_ptr[i]], coarse_index[i]);
        EXPECT_EQ(P.values[P.row_ptr[i]], 1.0);
        continue;
      }
      if (p.max_elements_per_row > 0) EXPECT_LE(length, p.max_elements_per_row);
      std::set<index_t> kept;  // fine numbering
      for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
        const index_t j = coarse_points[P.col_idx[k]];
        ASSERT_EQ(cf[j], ka::kCoarse);
        ASSERT_NE(s.s.at(i, j), 0.0) << "interpolates from a point it does not depend on";
        kept.insert(j);
      }
      const std::map<index_t, double> w = direct_weights(a, i, kept);
      for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
        const index_t j = *std::next(kept.begin(), k - P.row_ptr[i]);
        const double expected_w = p.kind == ka::InterpolationKind::seed ? 1.0 / length : w.at(j);
        EXPECT_NEAR(P.values[k], expected_w, 1e-14 * std::max(1.0, std::abs(expected_w)));
      }
    }
  }
}

TEST(AmgKernels, InterpolationValuesReproduceTheFillBitForBit) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(199, seed));
  const Strength s = strength_pattern(a, {});
  const std::vector<index_t> cf = split(Backend::reference(), s, true, 3);
  std::vector<index_t> coarse_points;
  for (std::size_t i = 0; i < cf.size(); ++i) {
    if (cf[i] == ka::kCoarse) coarse_points.push_back(static_cast<index_t>(i));
  }
  for (const ka::InterpolationParameters p :
       {ka::InterpolationParameters{ka::InterpolationKind::seed, 2, 0.0},
        ka::InterpolationParameters{ka::InterpolationKind::direct, 3, 0.1},
        ka::InterpolationParameters{ka::InterpolationKind::extended_i, 0, 0.0},
        ka::InterpolationParameters{ka::InterpolationKind::extended_i, 3, 0.1}}) {
    SCOPED_TRACE("kind " + std::to_string(int(p.kind)));
    const HostCsr P = interpolation(Backend::reference(), a, s, cf, p);
    const Backend backend = test::backend_under_test();
    const OnBackend A(backend, a), S(backend, s.s), Pb(backend, P);
    const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
    const Array<index_t> points = Array<index_t>::from_host(backend, coarse_points);
    Array<double> values(backend, P.values.size());

    ka::interpolation_values(backend, A.matrix(), S.pattern(), splitting.span(), points.span(),
                             p.kind, Pb.pattern(), values.span().data());

    EXPECT_EQ(values.to_host(), P.values);
  }
}

/// C_i^ of extended+i (fine numbering): the coarse points of S_i and of S_k, k fine in S_i.
std::set<index_t> extended_set(const HostCsr& s, const std::vector<index_t>& cf, index_t i) {
  std::set<index_t> set;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t k = s.col_idx[q];
    if (cf[k] == ka::kCoarse) {
      set.insert(k);
      continue;
    }
    for (index_t r = s.row_ptr[k]; r < s.row_ptr[k + 1]; ++r) {
      if (cf[s.col_idx[r]] == ka::kCoarse) set.insert(s.col_idx[r]);
    }
  }
  return set;
}

/// Extended+i weights of fine row i over the interpolatory set `set` written out from De
/// Sterck, Falgout, Nolting, Yang (2008): w_ij = -(a_ij + sum_{k in F_i^s} a_ik a^_kj / d_k) /
/// a~_ii, d_k = sum_{l in set + {i}} a^_kl, a^ the couplings of sign opposite to a_kk; every
/// other neighbour (and a_ik with d_k = 0) joins a~_ii.
std::map<index_t, double> extended_weights(const HostCsr& a, const HostCsr& s,
                                           const std::vector<index_t>& cf, index_t i,
                                           const std::set<index_t>& set) {
  const auto bar = [&](index_t k, index_t l) {
    const double v = a.at(k, l);
    return (a.at(k, k) < 0) == (v > 0) && v != 0 && l != k ? v : 0.0;
  };
  std::map<index_t, double> numerator;
  for (const index_t j : set) numerator[j] = a.at(i, j);
  double diagonal = a.at(i, i);
  for (index_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
    const index_t n = a.col_idx[e];
    if (n == i || set.count(n)) continue;
    if (s.at(i, n) == 0.0 || cf[n] == ka::kCoarse) {
      diagonal += a.values[e];
      continue;
    }
    double d = bar(n, i);
    for (const index_t l : set) d += bar(n, l);
    if (d == 0.0) {
      diagonal += a.values[e];
      continue;
    }
    diagonal += a.values[e] * bar(n, i) / d;
    for (const index_t l : set) numerator[l] += a.values[e] * bar(n, l) / d;
  }
  std::map<index_t, double> w;
  for (const auto& [j, v] : numerator) w[j] = diagonal != 0.0 ? -v / diagonal : 0.0;
  return w;
}

TEST(AmgKernels, ExtendedInterpolationMatchesReferenceAndTheFormula) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // A and -A: the classical strength and a^_kl follow the sign of the diagonal.
  for (const double sign : {1.0, -1.0}) {
    const HostCsr a = signed_random_spd(263, seed, sign);
    const Strength s = strength_pattern(a, {});
    for (const bool pmis : {false, true}) {
      SCOPED_TRACE(std::string(pmis ? "pmis" : "greedy") + (sign < 0 ? ", -A" : ", A"));
      const std::vector<index_t> cf = split(Backend::reference(), s, pmis, seed);
      std::vector<index_t> coarse_points;  // the row of each coarse index
      for (std::size_t i = 0; i < cf.size(); ++i) {
        if (cf[i] == ka::kCoarse) coarse_points.push_back(static_cast<index_t>(i));
      }
      index_t distance_two = 0;  // points of P not in S_i
      for (const ka::InterpolationParameters p :
           {ka::InterpolationParameters{ka::InterpolationKind::extended_i, 0, 0.0},
            ka::InterpolationParameters{ka::InterpolationKind::extended_i, 4, 0.0},
            ka::InterpolationParameters{ka::InterpolationKind::extended_i, 0, 0.3},
            ka::InterpolationParameters{ka::InterpolationKind::extended_i, 3, 0.2}}) {
        SCOPED_TRACE("max " + std::to_string(p.max_elements_per_row) + " factor " +
                     std::to_string(p.truncation_factor));

        const HostCsr P = interpolation(test::backend_under_test(), a, s, cf, p);
        const HostCsr expected = interpolation(Backend::reference(), a, s, cf, p);

        EXPECT_EQ(P.row_ptr, expected.row_ptr);
        EXPECT_EQ(P.col_idx, expected.col_idx);
        EXPECT_EQ(P.values, expected.values);
        const bool truncated = p.max_elements_per_row > 0 || p.truncation_factor > 0;
        for (index_t i = 0; i < a.rows; ++i) {
          if (cf[i] == ka::kCoarse) {
            ASSERT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], 1);
            EXPECT_EQ(P.values[P.row_ptr[i]], 1.0);
            continue;
          }
          const std::set<index_t> full = extended_set(s.s, cf, i);
          std::set<index_t> kept;
          for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
            const index_t j = coarse_points[P.col_idx[k]];
            if (k > P.row_ptr[i]) ASSERT_LT(P.col_idx[k - 1], P.col_idx[k]);
            ASSERT_EQ(full.count(j), 1u) << "row " << i << " interpolates from " << j;
            distance_two += s.s.at(i, j) == 0.0 ? 1 : 0;
            kept.insert(j);
          }
          if (!truncated) EXPECT_EQ(kept, full) << "row " << i;
          if (p.max_elements_per_row > 0) {
            EXPECT_LE(kept.size(), static_cast<std::size_t>(p.max_elements_per_row));
          }
          const std::map<index_t, double> w = extended_weights(a, s.s, cf, i, kept);
          for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
            const double expected_w = w.at(coarse_points[P.col_idx[k]]);
            EXPECT_NEAR(P.values[k], expected_w, 1e-13 * std::max(1.0, std::abs(expected_w)))
                << "row " << i;
          }
        }
      }
      EXPECT_GT(distance_two, 0);
    }
  }
}

/// P of extended+i on the reference for A (classical strength, theta 0.25) and a splitting.
HostCsr extended_p(const HostCsr& a, const std::vector<index_t>& cf,
                   const ka::InterpolationParameters& p) {
  const Strength s = strength_pattern(a, {});
  const HostCsr P = interpolation(test::backend_under_test(), a, s, cf, p);
  EXPECT_EQ(P.values, interpolation(Backend::reference(), a, s, cf, p).values);
  return P;
}

/// tridiag(-1, 2, -1) of n rows.
HostCsr laplacian1d(index_t n) {
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    coo.push_back(i, i, 2.0);
    if (i > 0) coo.push_back(i, i - 1, -1.0);
    if (i < n - 1) coo.push_back(i, i + 1, -1.0);
  }
  return host_csr(coo);
}

TEST(AmgKernels, ExtendedInterpolationOf1dLaplacianIsLinearInterpolation) {
  // tridiag(-1, 2, -1), n = 10, C F F C F F C F F C. Fine row 1: C_1^ = {0} + S_2's coarse
  // {3}; k = 2 distributes a_12 = -1 over a_21 = -1 (to the diagonal) and a_23 = -1: d = -2,
  // a~_11 = 2 + (-1)(-1)/(-2) = 1.5, w_10 = 1/1.5 = 2/3, w_13 = 0.5/1.5 = 1/3. By symmetry
  // w_20 = 1/3, w_23 = 2/3: linear interpolation between coarse points three apart.
  const HostCsr a = laplacian1d(10);
  std::vector<index_t> cf(10, ka::kFine);
  for (const index_t c : {0, 3, 6, 9}) cf[c] = ka::kCoarse;

  const HostCsr P = extended_p(a, cf, {ka::InterpolationKind::extended_i, 0, 0.0});

  ASSERT_EQ(P.cols, 4);
  for (index_t i = 0; i < 10; ++i) {
    const index_t left = i / 3;  // the coarse index of the coarse point at or left of i
    if (i % 3 == 0) {
      ASSERT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], 1);
      EXPECT_EQ(P.col_idx[P.row_ptr[i]], left);
      EXPECT_EQ(P.values[P.row_ptr[i]], 1.0);
      continue;
    }
    ASSERT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], 2) << "row " << i;
    EXPECT_EQ(P.col_idx[P.row_ptr[i]], left);
    EXPECT_EQ(P.col_idx[P.row_ptr[i] + 1], left + 1);
    const double right_weight = (i % 3) / 3.0;
    EXPECT_NEAR(P.values[P.row_ptr[i]], 1.0 - right_weight, 1e-15) << "row " << i;
    EXPECT_NEAR(P.values[P.row_ptr[i] + 1], right_weight, 1e-15) << "row " << i;
  }
}

TEST(AmgKernels, ExtendedInterpolationKeepsConstantsInZeroRowSumRows) {
  // 2D Poisson 24 x 24 (Dirichlet rows at the boundary): every fine row whose row sum is 0
  // (the interior) has weights summing to 1, also after truncation (the formula recomputed
  // over the kept points moves the dropped couplings to a~_ii).
  const HostCsr a = host_csr(poisson2d(24));
  const Strength s = strength_pattern(a, {});
  const std::vector<index_t> cf = split(Backend::reference(), s, true, 5);
  for (const ka::InterpolationParameters p :
       {ka::InterpolationParameters{ka::InterpolationKind::extended_i, 0, 0.0},
        ka::InterpolationParameters{ka::InterpolationKind::extended_i, 4, 0.2}}) {
    SCOPED_TRACE("max " + std::to_string(p.max_elements_per_row));
    const HostCsr P = extended_p(a, cf, p);
    index_t checked = 0;
    for (index_t i = 0; i < a.rows; ++i) {
      double row_sum = 0.0, weights = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) row_sum += a.values[k];
      for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) weights += P.values[k];
      if (cf[i] == ka::kCoarse || row_sum != 0.0) continue;
      EXPECT_NEAR(weights, 1.0, 1e-14) << "row " << i;
      if (p.max_elements_per_row > 0) EXPECT_LE(P.row_ptr[i + 1] - P.row_ptr[i], 4);
      ++checked;
    }
    EXPECT_GT(checked, 200);
  }
}

/// The truncation's definition: the indices of `weights` with |w| >= factor max|w|, stably
/// sorted by decreasing key(k), the first max_elements_per_row of them (all when it is 0), in
/// increasing order; `limited` counts the rows the limit cut.
template <class Key>
std::vector<index_t> kept_by_definition(const std::vector<double>& weights,
                                        const ka::InterpolationParameters& p, Key key,
                                        index_t& limited) {
  double largest = 0.0;
  for (const double w : weights) largest = std::max(largest, std::abs(w));
  std::vector<index_t> order;
  for (index_t k = 0; k < static_cast<index_t>(weights.size()); ++k) {
    if (std::abs(weights[k]) >= p.truncation_factor * largest) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t x, index_t y) { return key(x) > key(y); });
  if (p.max_elements_per_row > 0 && order.size() > std::size_t(p.max_elements_per_row)) {
    order.resize(static_cast<std::size_t>(p.max_elements_per_row));
    ++limited;
  }
  std::sort(order.begin(), order.end());
  return order;
}

TEST(AmgKernels, TruncationKeepsTheFirstPointsOfAStableSortByDecreasingKey) {
  // rows::truncate against its definition: of the points with |w| >= factor max|w|, a stable
  // sort by decreasing key (|w|, or |a| for the seed's weights) and its first
  // max_elements_per_row, in column order; keys drawn from a few values, so many tie.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 random(seed);
  const std::vector<double> levels = {-0.4, -0.25, -0.1, 0.0, 0.1, 0.25, 0.4, 1.0};
  std::uniform_int_distribution<std::size_t> level(0, levels.size() - 1);
  index_t limited = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const auto m = static_cast<index_t>(1 + random() % 70);
    ka::InterpolationParameters p;
    p.kind = random() % 3 == 0 ? ka::InterpolationKind::seed : ka::InterpolationKind::extended_i;
    p.max_elements_per_row = static_cast<int>(random() % 9);
    p.truncation_factor = std::vector<double>{0.0, 0.2, 0.5}[random() % 3];
    std::vector<index_t> columns(static_cast<std::size_t>(m));
    std::vector<double> a(columns.size()), weights(columns.size());
    for (index_t k = 0; k < m; ++k) {
      columns[k] = 3 * k + static_cast<index_t>(random() % 3);
      a[k] = levels[level(random)];
      weights[k] = levels[level(random)];
    }
    const std::vector<index_t> order = kept_by_definition(
        weights, p,
        [&](index_t k) {
          return std::abs(p.kind == ka::InterpolationKind::seed ? a[k] : weights[k]);
        },
        limited);
    std::vector<index_t> expected_columns;
    std::vector<double> expected_a;
    for (const index_t k : order) {
      expected_columns.push_back(columns[k]);
      expected_a.push_back(a[k]);
    }

    ka::rows::PointsView row{columns.data(), a.data(), weights.data(), m};
    ka::rows::truncate(p, row);
    ASSERT_EQ(std::vector<index_t>(columns.begin(), columns.begin() + row.size), expected_columns)
        << "trial " << trial;
    ASSERT_EQ(std::vector<double>(a.begin(), a.begin() + row.size), expected_a);
  }
  EXPECT_GT(limited, 1000);
}

TEST(AmgKernels, TruncatedRowKeepsTheLargestWeightsScaledToTheRowSum) {
  // rows::truncated_row and truncated_count against their definition: of the weights with
  // |w| >= factor max|w|, a stable sort by decreasing |w| and its first max_elements_per_row
  // (up to 12: the register list below kRegisterKept and kept_points above it), in column
  // order, each times sum_all / sum_kept (both summed in column order), bit for bit.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 random(seed);
  const std::vector<double> levels = {-0.4, -0.25, -0.1, 0.0, 0.1, 0.25, 0.4, 1.0};
  std::uniform_int_distribution<std::size_t> level(0, levels.size() - 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  index_t limited = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const auto m = static_cast<index_t>(1 + random() % 70);
    ka::InterpolationParameters p;
    p.kind = ka::InterpolationKind::mm_extended_i;
    p.max_elements_per_row = static_cast<int>(random() % 13);
    p.truncation_factor = std::vector<double>{0.0, 0.2, 0.5}[random() % 3];
    const bool ties = random() % 2 == 0;
    std::vector<index_t> columns(static_cast<std::size_t>(m));
    std::vector<double> weights(columns.size());
    for (index_t k = 0; k < m; ++k) {
      columns[k] = 3 * k + static_cast<index_t>(random() % 3);
      weights[k] = ties ? levels[level(random)] : uniform(random);
    }
    double total = 0.0;
    for (const double w : weights) total += w;
    const std::vector<index_t> order = kept_by_definition(
        weights, p, [&](index_t k) { return std::abs(weights[k]); }, limited);
    double kept = 0.0;
    for (const index_t k : order) kept += weights[k];
    const double scale = kept != 0.0 ? total / kept : 1.0;
    std::vector<index_t> expected_columns;
    std::vector<double> expected_values;
    for (const index_t k : order) {
      expected_columns.push_back(columns[k]);
      expected_values.push_back(weights[k] * scale);
    }

    const std::vector<index_t> row_ptr = {0, m};
    const ka::MatrixView row{{1, 3 * m, row_ptr.data(), columns.data()}, weights.data()};
    std::vector<index_t> got_columns;
    std::vector<double> got_values;
    ka::rows::truncated_row(row, p, 0, [&](index_t j, double v) {
      got_columns.push_back(j);
      got_values.push_back(v);
    });
    ASSERT_EQ(got_columns, expected_columns) << "trial " << trial;
    ASSERT_EQ(got_values, expected_values) << "trial " << trial;
    ASSERT_EQ(ka::rows::truncated_count(row, p, 0), static_cast<index_t>(order.size()));
  }
  EXPECT_GT(limited, 1000);
}

/// Matrix-product extended+i on `backend`: L and B (mm_extended_*), P = L B (the SpGEMM phases,
/// checked by spgemm above) and its truncation when p asks; the value-only paths (the fill on
/// L's and B's patterns again, spgemm_numeric onto P's pattern or truncation_values) checked to
/// give the same bits.
struct MmExtended {
  HostCsr left, right, full, P;
};
MmExtended mm_extended(const Backend& backend, const HostCsr& a, const Strength& s,
                       const std::vector<index_t>& cf, const ka::InterpolationParameters& p) {
  const OnBackend A(backend, a), S(backend, s.s);
  const auto n = cf.size();
  const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
  Array<index_t> coarse_index(backend, n + 1);
  const auto num_coarse =
      static_cast<index_t>(ss::exclusive_scan(backend, splitting.span(), coarse_index.span()));
  Array<double> coarse_sum(backend, n);
  ka::mm_extended_coarse_sums(backend, A.matrix(), S.pattern(), splitting.span(),
                              coarse_sum.span());
  Array<index_t> left_counts(backend, n), right_counts(backend, n);
  ka::mm_extended_count(backend, S.pattern(), splitting.span(), left_counts.span(),
                        right_counts.span());
  Array<index_t> left_ptr(backend, n + 1), right_ptr(backend, n + 1);
  const std::int64_t left_nnz = ss::exclusive_scan(backend, left_counts.span(), left_ptr.span());
  const std::int64_t right_nnz = ss::exclusive_scan(backend, right_counts.span(), right_ptr.span());
  const auto fill = [&](MmExtended& out) {
    Array<index_t> lc(backend, static_cast<std::size_t>(left_nnz));
    Array<index_t> rc(backend, static_cast<std::size_t>(right_nnz));
    Array<double> lv(backend, static_cast<std::size_t>(left_nnz));
    Array<double> rv(backend, static_cast<std::size_t>(right_nnz));
    ka::mm_extended_fill(backend, A.matrix(), S.pattern(), splitting.span(), coarse_index.span(),
                         coarse_sum.span(), left_ptr.span().data(), lc.span().data(),
                         lv.span().data(), right_ptr.span().data(), rc.span().data(),
                         rv.span().data());
    out.left = {a.rows, a.rows, left_ptr.to_host(), lc.to_host(), lv.to_host()};
    out.right = {a.rows, num_coarse, right_ptr.to_host(), rc.to_host(), rv.to_host()};
  };
  MmExtended m, again;
  fill(m);
  fill(again);
  EXPECT_EQ(again.left.values, m.left.values);
  EXPECT_EQ(again.right.values, m.right.values);
  m.full = spgemm(backend, m.left, m.right);
  m.P = m.full;
  const OnBackend F(backend, m.full);
  if (p.max_elements_per_row > 0 || p.truncation_factor > 0.0) {
    Array<index_t> counts(backend, n);
    ka::truncation_count(backend, F.matrix(), p, counts.span());
    Array<index_t> row_ptr(backend, n + 1);
    const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
    Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
    Array<double> values(backend, static_cast<std::size_t>(nnz));
    ka::truncation_fill(backend, F.matrix(), p, row_ptr.span().data(), col_idx.span().data(),
                        values.span().data());
    m.P = {a.rows, num_coarse, row_ptr.to_host(), col_idx.to_host(), values.to_host()};
    Array<double> resetup(backend, static_cast<std::size_t>(nnz));
    ka::truncation_values(backend, F.matrix(),
                          {a.rows, num_coarse, row_ptr.span().data(), col_idx.span().data()},
                          resetup.span().data());
    EXPECT_EQ(resetup.to_host(), m.P.values) << "truncation_values";
  }
  const OnBackend L(backend, m.left), B(backend, m.right), P(backend, m.P);
  if (m.P.values.size() == m.full.values.size()) {
    Array<double> resetup(backend, m.P.values.size());
    ss::spgemm_numeric(backend, L.matrix(), B.matrix(), P.pattern(), resetup.span().data());
    EXPECT_EQ(resetup.to_host(), m.P.values) << "spgemm_numeric onto P";
  }
  return m;
}

/// Row i of matrix-product extended+i written out from its formula (fine numbering), from A,
/// S and the splitting alone (InterpolationKind::mm_extended_i).
std::map<index_t, double> mm_extended_weights(const HostCsr& a, const HostCsr& s,
                                              const std::vector<index_t>& cf, index_t i) {
  const auto strong = [&](index_t r, index_t c) { return s.at(r, c) != 0.0; };
  const auto beta = [&](index_t k) {
    double sum = 0.0;
    for (index_t q = s.row_ptr[k]; q < s.row_ptr[k + 1]; ++q) {
      if (cf[s.col_idx[q]] == ka::kCoarse) sum += a.at(k, s.col_idx[q]);
    }
    return sum;
  };
  double t = a.at(i, i);
  for (index_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
    if (a.col_idx[q] != i && !strong(i, a.col_idx[q])) t += a.values[q];
  }
  std::map<index_t, double> numerator;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t j = s.col_idx[q];
    if (cf[j] == ka::kCoarse) numerator[j] += a.at(i, j);
  }
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t k = s.col_idx[q];
    if (cf[k] == ka::kCoarse) continue;
    const double a_ki = strong(k, i) ? a.at(k, i) : 0.0;
    const double d = beta(k) + a_ki;
    if (d == 0.0) {
      t += a.at(i, k);
      for (index_t r = s.row_ptr[k]; r < s.row_ptr[k + 1]; ++r) {
        if (cf[s.col_idx[r]] == ka::kCoarse) numerator[s.col_idx[r]] += 0.0;
      }
      continue;
    }
    t += a_ki * a.at(i, k) / d;
    for (index_t r = s.row_ptr[k]; r < s.row_ptr[k + 1]; ++r) {
      const index_t l = s.col_idx[r];
      if (cf[l] == ka::kCoarse) numerator[l] += a.at(i, k) * a.at(k, l) / d;
    }
  }
  std::map<index_t, double> w;
  for (const auto& [j, v] : numerator) w[j] = t != 0.0 ? -v / t : 0.0;
  return w;
}

TEST(AmgKernels, MatrixProductExtendedInterpolationMatchesReferenceAndTheFormula) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Rows of about 18 and of about 120 entries: the second has fine rows with more than 32
  // strong points (a warp per row in the cuda fill).
  for (const auto& [sign, n, per_row] : {std::tuple{1.0, 263, 9}, std::tuple{-1.0, 263, 9},
                                         std::tuple{1.0, 400, 60}, std::tuple{-1.0, 400, 60}}) {
    SCOPED_TRACE("rows " + std::to_string(n) + " per row " + std::to_string(per_row));
    const HostCsr a = signed_random_spd(n, seed, sign, per_row);
    const Strength s = strength_pattern(a, {});
    const std::vector<index_t> cf = split(Backend::reference(), s, true, seed);
    index_t long_fine_rows = 0;
    for (index_t i = 0; i < a.rows; ++i) {
      long_fine_rows += cf[i] != ka::kCoarse && s.s.row_ptr[i + 1] - s.s.row_ptr[i] > 32;
    }
    if (per_row > 32) EXPECT_GT(long_fine_rows, 10);
    std::vector<index_t> coarse_points;
    for (std::size_t i = 0; i < cf.size(); ++i) {
      if (cf[i] == ka::kCoarse) coarse_points.push_back(static_cast<index_t>(i));
    }
    index_t distance_two = 0;
    for (const ka::InterpolationParameters p :
         {ka::InterpolationParameters{ka::InterpolationKind::mm_extended_i, 0, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::mm_extended_i, 4, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::mm_extended_i, 0, 0.3},
          ka::InterpolationParameters{ka::InterpolationKind::mm_extended_i, 3, 0.2}}) {
      SCOPED_TRACE(std::string(sign < 0 ? "-A" : "A") + " max " +
                   std::to_string(p.max_elements_per_row) + " factor " +
                   std::to_string(p.truncation_factor));

      const MmExtended m = mm_extended(test::backend_under_test(), a, s, cf, p);
      const MmExtended expected = mm_extended(Backend::reference(), a, s, cf, p);

      for (const auto& [got, want] :
           {std::pair{&m.left, &expected.left}, std::pair{&m.right, &expected.right},
            std::pair{&m.P, &expected.P}}) {
        EXPECT_EQ(got->row_ptr, want->row_ptr);
        EXPECT_EQ(got->col_idx, want->col_idx);
        EXPECT_EQ(got->values, want->values);
      }
      for (index_t i = 0; i < a.rows; ++i) {
        const HostCsr& P = m.P;
        if (cf[i] == ka::kCoarse) {
          ASSERT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], 1);
          EXPECT_EQ(P.values[P.row_ptr[i]], 1.0);
          continue;
        }
        // The untruncated row: the points and weights of the formula.
        const std::map<index_t, double> w = mm_extended_weights(a, s.s, cf, i);
        std::map<index_t, double> full;
        double total = 0.0;
        for (index_t k = m.full.row_ptr[i]; k < m.full.row_ptr[i + 1]; ++k) {
          full[coarse_points[m.full.col_idx[k]]] = m.full.values[k];
          total += m.full.values[k];
        }
        ASSERT_EQ(full.size(), w.size()) << "row " << i;
        for (const auto& [j, v] : w) {
          ASSERT_EQ(full.count(j), 1u) << "row " << i << " misses point " << j;
          EXPECT_NEAR(full.at(j), v, 1e-13 * std::max(1.0, std::abs(v))) << "row " << i;
          distance_two += s.s.at(i, j) == 0.0 ? 1 : 0;
        }
        // The truncated row: the largest passing weights (a stable sort by decreasing |w| of
        // the weights of the full row above the threshold), scaled to the full row's sum.
        std::vector<std::pair<index_t, double>> order;  // (coarse index, w)
        double largest = 0.0;
        for (index_t k = m.full.row_ptr[i]; k < m.full.row_ptr[i + 1]; ++k) {
          largest = std::max(largest, std::abs(m.full.values[k]));
        }
        for (index_t k = m.full.row_ptr[i]; k < m.full.row_ptr[i + 1]; ++k) {
          if (std::abs(m.full.values[k]) >= p.truncation_factor * largest) {
            order.emplace_back(m.full.col_idx[k], m.full.values[k]);
          }
        }
        std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
          return std::abs(x.second) > std::abs(y.second);
        });
        if (p.max_elements_per_row > 0 && order.size() > std::size_t(p.max_elements_per_row)) {
          order.resize(static_cast<std::size_t>(p.max_elements_per_row));
        }
        std::map<index_t, double> kept(order.begin(), order.end());
        double kept_sum = 0.0;
        for (const auto& [j, v] : kept) kept_sum += v;
        ASSERT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], static_cast<index_t>(kept.size()))
            << "row " << i;
        double row_sum = 0.0;
        for (index_t k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
          ASSERT_EQ(kept.count(P.col_idx[k]), 1u) << "row " << i;
          const double expected_w =
              kept_sum != 0.0 ? kept.at(P.col_idx[k]) * total / kept_sum : kept.at(P.col_idx[k]);
          EXPECT_NEAR(P.values[k], expected_w, 1e-13 * std::max(1.0, std::abs(expected_w)));
          row_sum += P.values[k];
        }
        if (kept_sum != 0.0) EXPECT_NEAR(row_sum, total, 1e-12 * std::max(1.0, std::abs(total)));
      }
    }
    EXPECT_GT(distance_two, 0);
  }
}

TEST(AmgKernels, MatrixProductExtendedInterpolationOf1dLaplacianIsLinearInterpolation) {
  // tridiag(-1, 2, -1), C F F C F F C: fine row 1 has C^s_1 = {0}, F^s_1 = {2}; beta_2 = a_23
  // = -1 and 1 in S_2, so d_12 = -1 + (-1) = -2, t_1 = 2 + (-1)(-1)/(-2) = 1.5, w_10 = 1/1.5,
  // w_13 = (-1)(-1)/(-2) / -1.5 = 1/3: the same linear interpolation as extended+i, since each
  // fine neighbour's own coarse points are all of C_i^ here.
  const HostCsr a = laplacian1d(7);
  const Strength s = strength_pattern(a, {});
  const std::vector<index_t> cf{1, 0, 0, 1, 0, 0, 1};
  const MmExtended m = mm_extended(test::backend_under_test(), a, s, cf,
                                   {ka::InterpolationKind::mm_extended_i, 0, 0.0});
  const std::vector<std::vector<double>> expected{
      {1.0, 0, 0}, {2.0 / 3, 1.0 / 3, 0}, {1.0 / 3, 2.0 / 3, 0},
      {0, 1.0, 0}, {0, 2.0 / 3, 1.0 / 3}, {0, 1.0 / 3, 2.0 / 3},
      {0, 0, 1.0}};
  for (index_t i = 0; i < 7; ++i) {
    for (index_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(m.P.at(i, c), expected[i][c], 1e-15) << "row " << i << " column " << c;
    }
  }
}

TEST(SmootherKernels, L1NormsMatchReference) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // random_spd(2203) has a row of more than 1024 entries.
  for (const index_t n : {157, 2203}) {
    const HostCsr a = host_csr(random_spd(n, seed));
    const auto norms = [&](const Backend& backend) {
      const OnBackend A(backend, a);
      Array<double> d(backend, static_cast<std::size_t>(n));
      kernels::smoothers::l1_row_norms(backend, A.matrix(), d.span());
      return d.to_host();
    };

    const std::vector<double> d = norms(test::backend_under_test());

    EXPECT_EQ(d, norms(Backend::reference()));
    for (index_t i = 0; i < a.rows; ++i) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += std::abs(a.values[k]);
      EXPECT_DOUBLE_EQ(d[i], sum);
    }
  }
}

/// Jacobi-preconditioned CG written out (no x): the scalars of smoothers::cg_lanczos (slot 2
/// r0.z0, 6 + j p_j.A p_j, 6 + steps + j r_(j+1).z_(j+1)), summed in row order.
std::vector<double> plain_cg_scalars(const HostCsr& a, std::vector<double> r, int steps) {
  const auto n = static_cast<std::size_t>(a.rows);
  std::vector<double> dinv(n), z(n), p(n), q(n), scalars(6 + 2 * static_cast<std::size_t>(steps));
  for (std::size_t i = 0; i < n; ++i)
    dinv[i] = 1.0 / a.at(static_cast<index_t>(i), static_cast<index_t>(i));
  double rz = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = dinv[i] * r[i];
    p[i] = z[i];
    rz += r[i] * z[i];
  }
  scalars[2] = rz;
  for (int j = 0; j < steps; ++j) {
    double pq = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      q[i] = 0.0;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        q[i] += a.values[k] * p[a.col_idx[k]];
      pq += p[i] * q[i];
    }
    scalars[6 + j] = pq;
    const double alpha = rz / pq;
    double rz_next = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      r[i] -= alpha * q[i];
      z[i] = dinv[i] * r[i];
      rz_next += r[i] * z[i];
    }
    scalars[6 + steps + j] = rz_next;
    const double beta = rz_next / rz;
    rz = rz_next;
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  return scalars;
}

// cg_lanczos (the fused steps of the Chebyshev smoother's estimate) against the reference and
// CG written out, on random SPD and negative definite matrices with double and float values,
// from a random r0. The backends sum in different orders; over ten CG steps on these matrices
// (condition numbers below 1e3) the scalars agree to 1e-9 relative, the reference and the
// written-out CG (rows in the same order, partials by chunks of 4,096 rows) to 1e-12.
TEST(SmootherKernels, CgLanczosMatchesReferenceAndCgWrittenOut) {
  // All twelve systems in one call (on cuda: two launches of up to eight systems, double and
  // float values mixed in one launch, each system on its own group of blocks).
  namespace ks = kernels::smoothers;
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kSteps = 10;
  const Backend backend = test::backend_under_test();
  struct Case {
    index_t n;
    double sign;
    bool single;
    HostCsr a;
    std::vector<double> r0;
  };
  std::vector<Case> cases;
  for (const index_t n : {157, 5003, 70001}) {
    for (const double sign : {1.0, -1.0}) {
      for (const bool single : {false, true}) {
        HostCsr a = signed_random_spd(n, seed + static_cast<std::uint64_t>(n), sign, 4);
        if (single) {
          for (double& v : a.values) v = static_cast<double>(static_cast<float>(v));
        }
        cases.push_back(
            {n, sign, single, std::move(a),
             test::random_vector(static_cast<std::size_t>(n), seed + 1 + cases.size())});
      }
    }
  }
  // Runs every case on `on` in one cg_lanczos call: each case's scalars and last residual.
  const auto run = [&](const Backend& on, std::vector<std::vector<double>>& r_out) {
    struct Arrays {
      OnBackend A;
      Array<float> values_f32;
      Array<double> d, r, p, p_next, q, scalars;
    };
    std::vector<std::unique_ptr<Arrays>> arrays;
    std::vector<ks::LanczosSystem> systems;
    for (const Case& c : cases) {
      const auto size = static_cast<std::size_t>(c.n);
      std::vector<double> dinv(size);
      for (index_t i = 0; i < c.n; ++i) dinv[static_cast<std::size_t>(i)] = 1.0 / c.a.at(i, i);
      const std::vector<float> f(c.a.values.begin(), c.a.values.end());
      arrays.push_back(std::make_unique<Arrays>(
          Arrays{OnBackend(on, c.a), Array<float>::from_host(on, f),
                 Array<double>::from_host(on, dinv), Array<double>::from_host(on, c.r0),
                 Array<double>(on, size), Array<double>(on, size), Array<double>(on, size),
                 Array<double>::from_host(on, std::vector<double>(6 + 2 * kSteps, -7.0))}));
      Arrays& x = *arrays.back();
      const ks::MatrixView view =
          c.single ? ks::MatrixView(x.A.pattern(), nullptr, x.values_f32.span().data())
                   : ks::MatrixView(x.A.matrix());
      systems.push_back({view, static_cast<std::int64_t>(c.a.values.size()), x.d.span(), x.r.span(),
                         x.p.span(), x.p_next.span(), x.q.span(), x.scalars.span().data()});
    }
    ks::cg_lanczos(on, systems, kSteps);
    std::vector<std::vector<double>> scalars;
    r_out.clear();
    for (const auto& x : arrays) {
      r_out.push_back(x->r.to_host());
      scalars.push_back(x->scalars.to_host());
    }
    return scalars;
  };
  std::vector<std::vector<double>> r_ref, r_dev;
  const std::vector<std::vector<double>> all_expected = run(Backend::reference(), r_ref);
  const std::vector<std::vector<double>> all_actual = run(backend, r_dev);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    SCOPED_TRACE("n " + std::to_string(c.n) + (c.sign < 0 ? ", negative" : "") +
                 (c.single ? ", float values" : ""));
    const std::vector<double>& expected = all_expected[k];
    const std::vector<double>& actual = all_actual[k];
    const std::vector<double> written = plain_cg_scalars(c.a, c.r0, kSteps);
    for (const std::size_t slot : {0, 1, 3, 4, 5}) {
      EXPECT_EQ(actual[slot], -7.0) << "slot " << slot << " is not cg_lanczos's";
    }
    for (std::size_t slot = 6; slot < expected.size(); ++slot) {
      EXPECT_NEAR(expected[slot], written[slot], 1e-12 * std::abs(written[slot]))
          << "slot " << slot;
    }
    for (const std::size_t slot : {std::size_t{2}, std::size_t{6}, std::size_t{6 + kSteps - 1},
                                   std::size_t{6 + kSteps}, expected.size() - 1}) {
      EXPECT_NE(actual[slot], 0.0) << "slot " << slot;
    }
    EXPECT_NEAR(actual[2], expected[2], 1e-9 * std::abs(expected[2]));
    for (std::size_t slot = 6; slot < expected.size(); ++slot) {
      EXPECT_NEAR(actual[slot], expected[slot], 1e-9 * std::abs(expected[slot])) << "slot " << slot;
    }
    double largest = 0.0, difference = 0.0;
    for (std::size_t i = 0; i < r_ref[k].size(); ++i) {
      largest = std::max(largest, std::abs(r_ref[k][i]));
      difference = std::max(difference, std::abs(r_dev[k][i] - r_ref[k][i]));
    }
    EXPECT_LE(difference, 1e-8 * largest) << "the last residual";
  }
}

TEST(SmootherKernels, GaussSeidelMatchesReferenceOnTheHostAndIsRefusedOnCuda) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(157, seed));
  const std::vector<double> b = test::random_vector(157, seed + 1);
  const std::vector<double> x0 = test::random_vector(157, seed + 2);
  std::vector<double> dinv(157);
  for (index_t i = 0; i < 157; ++i) dinv[i] = 1.0 / a.at(i, i);
  const auto run = [&](const Backend& backend) {
    const OnBackend A(backend, a);
    const Array<double> inverse = Array<double>::from_host(backend, dinv);
    const Array<double> bb = Array<double>::from_host(backend, b);
    Array<double> x = Array<double>::from_host(backend, x0);
    for (const auto direction : {kernels::smoothers::SweepDirection::forward,
                                 kernels::smoothers::SweepDirection::backward}) {
      kernels::smoothers::gauss_seidel(backend, A.matrix(), inverse.span(), bb.span(), x.span(),
                                       direction);
    }
    return x.to_host();
  };
  const Backend backend = test::backend_under_test();
  if (backend.kind() == BackendKind::cuda) {
    // Sequential by definition: no cuda kernel, the message names the parallel smoothers.
    try {
      run(backend);
      ADD_FAILURE() << "gauss_seidel ran on cuda";
    } catch (const NotSupported& error) {
      EXPECT_NE(std::string(error.what()).find("chebyshev"), std::string::npos) << error.what();
    }
    return;
  }
  EXPECT_EQ(run(backend), run(Backend::reference()));
}

/// A random nonsymmetric matrix on the pattern of random_sparse (mixed signs, never zero, empty
/// and long rows) with a positive diagonal (0.6 + u) * sum_{j != i} |a_ij| + 0.5, u uniform in
/// [0, 1): some rows diagonally dominant, others not.
CooMatrix random_nonsymmetric(index_t n, std::uint64_t seed) {
  const CooMatrix pattern = test::random_sparse(n, n, 9, true, seed);
  std::mt19937_64 rng(seed + 7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> off(static_cast<std::size_t>(n), 0.0);
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  for (std::size_t k = 0; k < pattern.num_entries(); ++k) {
    if (pattern.row_idx[k] == pattern.col_idx[k]) continue;
    coo.push_back(pattern.row_idx[k], pattern.col_idx[k], pattern.values[k]);
    off[pattern.row_idx[k]] += std::abs(pattern.values[k]);
  }
  for (index_t i = 0; i < n; ++i) coo.push_back(i, i, (0.6 + unit(rng)) * off[i] + 0.5);
  return coo;
}

/// 3D Poisson's pattern (n^3 rows) with random values of both signs off the diagonal and a
/// positive diagonal as random_nonsymmetric: enough stored entries (n = 40: 440,000) for the cpu
/// kernels to open parallel regions.
CooMatrix random_on_poisson_pattern(index_t n, std::uint64_t seed) {
  CooMatrix coo = poisson3d(n);
  const std::vector<double> random = test::random_vector(coo.num_entries(), seed);
  std::vector<double> off(static_cast<std::size_t>(coo.num_rows), 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k]) continue;
    coo.values[k] = random[k];
    off[coo.row_idx[k]] += std::abs(random[k]);
  }
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k]) {
      coo.values[k] = (0.6 + 0.5 * (1.0 + random[k])) * off[coo.row_idx[k]] + 0.5;
    }
  }
  return coo;
}

/// The hybrid diagonal and x after three sweeps (forward, backward, forward) of hybrid Gauss-Seidel
/// from x0 on `backend`, the values stored in double or (float32) rounded to float; the inverse
/// diagonal is 1 / d of this backend's hybrid_diagonal, inverted on the host.
struct HybridResult {
  std::vector<double> d, x;
};

HybridResult hybrid_sweeps(const Backend& backend, const HostCsr& a, index_t block_rows, bool l1,
                           bool float32, const std::vector<double>& b,
                           const std::vector<double>& x0) {
  namespace ks = kernels::smoothers;
  const OnBackend A(backend, a);
  std::vector<float> rounded(a.values.begin(), a.values.end());
  const Array<float> values_f32 = Array<float>::from_host(backend, rounded);
  const ks::MatrixView view = float32
                                  ? ks::MatrixView(A.pattern(), nullptr, values_f32.span().data())
                                  : ks::MatrixView(A.matrix());
  const auto n = static_cast<std::size_t>(a.rows);
  Array<double> d(backend, n);
  ks::hybrid_diagonal(backend, view, block_rows, l1, d.span());
  HybridResult out;
  out.d = d.to_host();
  std::vector<double> inverse(n);
  for (std::size_t i = 0; i < n; ++i) inverse[i] = 1.0 / out.d[i];
  const Array<double> inverse_diagonal = Array<double>::from_host(backend, inverse);
  const Array<double> bb = Array<double>::from_host(backend, b);
  Array<double> x = Array<double>::from_host(backend, x0);
  Array<double> x_start(backend, n);
  for (const auto direction :
       {ks::SweepDirection::forward, ks::SweepDirection::backward, ks::SweepDirection::forward}) {
    ks::hybrid_gauss_seidel(backend, view, block_rows, l1, inverse_diagonal.span(), bb.span(),
                            x.span(), x_start.span(), direction);
  }
  out.x = x.to_host();
  return out;
}

TEST(SmootherKernels, HybridGaussSeidelMatchesReferenceBitForBit) {
  // Symmetric positive definite and nonsymmetric random matrices (2203 rows: a row of more than
  // 1024 entries), and a random matrix on 3D Poisson's 40^3 pattern (parallel regions on the
  // cpu backend); blocks of 1, 7 and 32 rows and one block of all rows, with and without l1,
  // values in double and in float. The partition depends only on n and block_rows: the bits
  // must be the reference's.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  struct Case {
    const char* name;
    HostCsr a;
  };
  const Case cases[] = {
      {"spd 157", host_csr(random_spd(157, seed))},
      {"spd 2203", host_csr(random_spd(2203, seed + 1))},
      {"nonsymmetric 2203", host_csr(random_nonsymmetric(2203, seed + 2))},
      {"poisson pattern 40^3", host_csr(random_on_poisson_pattern(40, seed + 3))}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto n = static_cast<std::size_t>(c.a.rows);
    const std::vector<double> b = test::random_vector(n, seed + 4);
    const std::vector<double> x0 = test::random_vector(n, seed + 5);
    for (const index_t block_rows : {index_t{1}, index_t{7}, index_t{32}, c.a.rows}) {
      for (const bool l1 : {false, true}) {
        for (const bool float32 : {false, true}) {
          SCOPED_TRACE("block_rows " + std::to_string(block_rows) + (l1 ? ", l1" : "") +
                       (float32 ? ", float" : ", double"));
          const HybridResult got = hybrid_sweeps(backend, c.a, block_rows, l1, float32, b, x0);
          const HybridResult expected =
              hybrid_sweeps(Backend::reference(), c.a, block_rows, l1, float32, b, x0);
          EXPECT_EQ(got.d, expected.d);
          EXPECT_EQ(got.x, expected.x);
          for (const double v : expected.x) ASSERT_TRUE(std::isfinite(v));
        }
      }
    }
  }
}

TEST(SmootherKernels, HybridGaussSeidelIsGaussSeidelInOneBlockAndL1JacobiInBlocksOfOneRow) {
  // The reference kernel against the two existing oracles it generalizes, bit for bit: one block
  // of all rows (block_rows = n or more) without l1 is the sequential gauss_seidel sweep, with
  // the diagonal a_ii; blocks of one row with l1 are l1-Jacobi, the diagonal l1_row_norms (the
  // diagonal is positive) and the update L1JacobiSmoother's x + D^-1 (b - A x).
  namespace ks = kernels::smoothers;
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend reference = Backend::reference();
  for (const bool symmetric : {true, false}) {
    SCOPED_TRACE(symmetric ? "symmetric positive definite" : "nonsymmetric");
    const CooMatrix coo = symmetric ? random_spd(157, seed) : random_nonsymmetric(157, seed);
    const HostCsr a = host_csr(coo);
    const OnBackend A(reference, a);
    const auto n = static_cast<std::size_t>(a.rows);
    const std::vector<double> b = test::random_vector(n, seed + 1);
    const std::vector<double> x0 = test::random_vector(n, seed + 2);
    const Array<double> bb = Array<double>::from_host(reference, b);
    Array<double> d(reference, n), x_start(reference, n);

    for (const index_t block_rows : {a.rows, a.rows + 10, std::numeric_limits<index_t>::max()}) {
      SCOPED_TRACE("block_rows " + std::to_string(block_rows));
      ks::hybrid_diagonal(reference, A.matrix(), block_rows, false, d.span());
      const std::vector<double> diagonal = d.to_host();
      std::vector<double> inverse(n);
      for (index_t i = 0; i < a.rows; ++i) {
        ASSERT_EQ(diagonal[i], a.at(i, i));
        inverse[i] = 1.0 / a.at(i, i);
      }
      const Array<double> inverse_diagonal = Array<double>::from_host(reference, inverse);
      Array<double> hybrid = Array<double>::from_host(reference, x0);
      Array<double> sequential = Array<double>::from_host(reference, x0);
      for (const auto direction : {ks::SweepDirection::forward, ks::SweepDirection::backward}) {
        ks::hybrid_gauss_seidel(reference, A.matrix(), block_rows, false, inverse_diagonal.span(),
                                bb.span(), hybrid.span(), x_start.span(), direction);
        ks::gauss_seidel(reference, A.matrix(), inverse_diagonal.span(), bb.span(),
                         sequential.span(), direction);
        EXPECT_EQ(hybrid.to_host(), sequential.to_host());
      }
    }

    // Blocks of one row, l1: the diagonal of l1-Jacobi and its update, sweep after sweep.
    ks::hybrid_diagonal(reference, A.matrix(), 1, true, d.span());
    Array<double> norms(reference, n);
    ks::l1_row_norms(reference, A.matrix(), norms.span());
    EXPECT_EQ(d.to_host(), norms.to_host());
    const CsrMatrix matrix = CsrMatrix::from_coo(reference, coo);
    L1JacobiSmoother l1_jacobi;
    l1_jacobi.setup(matrix);
    const std::vector<double> l1 = norms.to_host();
    std::vector<double> inverse(n);
    for (std::size_t i = 0; i < n; ++i) inverse[i] = 1.0 / l1[i];
    const Array<double> inverse_l1 = Array<double>::from_host(reference, inverse);
    Array<double> hybrid = Array<double>::from_host(reference, x0);
    Vector jacobi = Vector::from_host(reference, x0);
    const Vector bv = Vector::from_host(reference, b);
    for (const auto direction :
         {ks::SweepDirection::forward, ks::SweepDirection::backward, ks::SweepDirection::forward}) {
      ks::hybrid_gauss_seidel(reference, A.matrix(), 1, true, inverse_l1.span(), bb.span(),
                              hybrid.span(), x_start.span(), direction);
      l1_jacobi.smooth(bv, jacobi, false);
      EXPECT_EQ(hybrid.to_host(), jacobi.to_host());
    }
  }
}

TEST(SmootherKernels, HybridGaussSeidelRejectsBadBlockSizesAndAnAliasedCopy) {
  namespace ks = kernels::smoothers;
  const Backend backend = test::backend_under_test();
  const HostCsr a = host_csr(random_spd(20, 5));
  const OnBackend A(backend, a);
  Array<double> d(backend, 20), x(backend, 20), x_start(backend, 20);
  const Array<double> b(backend, 20);
  EXPECT_THROW(ks::hybrid_diagonal(backend, A.matrix(), 0, true, d.span()), InvalidInput);
  EXPECT_THROW(ks::hybrid_gauss_seidel(backend, A.matrix(), -3, true, d.span(), b.span(), x.span(),
                                       x_start.span(), ks::SweepDirection::forward),
               InvalidInput);
  EXPECT_THROW(ks::hybrid_gauss_seidel(backend, A.matrix(), 4, true, d.span(), b.span(), x.span(),
                                       x.span(), ks::SweepDirection::forward),
               InvalidInput);
}

TEST(AmgKernels, LongRowsMatchReferenceBitForBit) {
  // random_spd(2203) has a row of more than 1024 entries (and its mirror column): strength rows
  // and interpolation rows far beyond the cuda kernels' 32 per-thread points.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(2203, seed));
  index_t longest = 0;
  for (index_t i = 0; i < a.rows; ++i) longest = std::max(longest, a.row_ptr[i + 1] - a.row_ptr[i]);
  ASSERT_GT(longest, 1024);
  const Backend backend = test::backend_under_test();
  for (const ka::StrengthParameters p :
       {ka::StrengthParameters{ka::StrengthMeasure::classical, 0.25, 1.0},
        ka::StrengthParameters{ka::StrengthMeasure::seed, 0.01, 1.0}}) {
    EXPECT_EQ(strength(backend, a, p), strength(Backend::reference(), a, p));
  }
  // A low threshold keeps the long row's many weak couplings strong.
  const Strength s = strength_pattern(a, {ka::StrengthMeasure::classical, 0.01, 1.0});
  index_t most_points = 0;  // coarse points of S_i in a fine row, the cuda kernels' bound
  for (const bool pmis : {false, true}) {
    SCOPED_TRACE(pmis ? "pmis" : "greedy");
    const std::vector<index_t> cf = split(backend, s, pmis, seed);
    ASSERT_EQ(cf, split(Backend::reference(), s, pmis, seed));
    for (index_t i = 0; i < a.rows; ++i) {
      if (cf[i] == ka::kCoarse) continue;
      index_t points = 0;
      for (index_t q = s.s.row_ptr[i]; q < s.s.row_ptr[i + 1]; ++q) {
        points += cf[s.s.col_idx[q]] == ka::kCoarse ? 1 : 0;
      }
      most_points = std::max(most_points, points);
    }
    std::vector<index_t> coarse_points;
    for (std::size_t i = 0; i < cf.size(); ++i) {
      if (cf[i] == ka::kCoarse) coarse_points.push_back(static_cast<index_t>(i));
    }
    for (const ka::InterpolationParameters p :
         {ka::InterpolationParameters{ka::InterpolationKind::seed, 0, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::direct, 0, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::direct, 40, 0.05},
          ka::InterpolationParameters{ka::InterpolationKind::seed, 3, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::extended_i, 0, 0.0},
          ka::InterpolationParameters{ka::InterpolationKind::extended_i, 40, 0.05}}) {
      SCOPED_TRACE("kind " + std::to_string(int(p.kind)) + " max " +
                   std::to_string(p.max_elements_per_row));

      const HostCsr P = interpolation(backend, a, s, cf, p);
      const HostCsr expected = interpolation(Backend::reference(), a, s, cf, p);

      EXPECT_EQ(P.row_ptr, expected.row_ptr);
      EXPECT_EQ(P.col_idx, expected.col_idx);
      EXPECT_EQ(P.values, expected.values);
      const OnBackend A(backend, a), S(backend, s.s), Pb(backend, expected);
      const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
      const Array<index_t> points = Array<index_t>::from_host(backend, coarse_points);
      Array<double> values(backend, expected.values.size());
      ka::interpolation_values(backend, A.matrix(), S.pattern(), splitting.span(), points.span(),
                               p.kind, Pb.pattern(), values.span().data());
      EXPECT_EQ(values.to_host(), expected.values);
    }
  }
  EXPECT_GT(most_points, 32);
}

/// Every stage of one AMG level on `backend`: S, S^T, the PMIS splitting, P (direct, at most
/// 4 points per row), R = P^T, A P and R (A P). Each stage's input is the previous stage's
/// output from the same backend.
struct LevelStages {
  HostCsr s, st, p, r, ap, rap;
  std::vector<index_t> cf, st_source, r_source;
};

LevelStages level_stages(const Backend& backend, const HostCsr& a, std::uint64_t seed) {
  LevelStages out;
  const auto rows = strength(backend, a, {});
  out.s = HostCsr{a.rows, a.cols, {0}, {}, {}};
  for (const std::set<index_t>& row : rows) {
    out.s.col_idx.insert(out.s.col_idx.end(), row.begin(), row.end());
    out.s.row_ptr.push_back(static_cast<index_t>(out.s.col_idx.size()));
  }
  out.s.values.assign(out.s.col_idx.size(), 1.0);
  out.st = transpose(backend, out.s, out.st_source);
  const Strength s{out.s, out.st};
  out.cf = split(backend, s, true, seed);
  out.p = interpolation(backend, a, s, out.cf, {ka::InterpolationKind::direct, 4, 0.0});
  out.r = transpose(backend, out.p, out.r_source);
  out.ap = spgemm(backend, a, out.p);
  out.rap = spgemm(backend, out.r, out.ap);
  return out;
}

void expect_same(const HostCsr& x, const HostCsr& y, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(x.rows, y.rows);
  EXPECT_EQ(x.cols, y.cols);
  EXPECT_EQ(x.row_ptr, y.row_ptr);
  EXPECT_EQ(x.col_idx, y.col_idx);
  EXPECT_EQ(x.values, y.values);
}

TEST(AmgChain, Poisson3dLevelEqualsReferenceBitForBit) {
  // Strength -> transpose -> PMIS -> interpolation -> transpose -> A P -> R (A P) on 3D Poisson
  // (7-point, 24^3 rows, and 27-point, 14^3 rows), every stage compared bit for bit.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const bool stencil27 : {false, true}) {
    SCOPED_TRACE(stencil27 ? "27-point" : "7-point");
    const HostCsr a = host_csr(stencil27 ? poisson3d27(14) : poisson3d(24));

    const LevelStages got = level_stages(test::backend_under_test(), a, seed);
    const LevelStages expected = level_stages(Backend::reference(), a, seed);

    expect_same(got.s, expected.s, "S");
    expect_same(got.st, expected.st, "S^T");
    EXPECT_EQ(got.st_source, expected.st_source);
    EXPECT_EQ(got.cf, expected.cf);
    expect_same(got.p, expected.p, "P");
    expect_same(got.r, expected.r, "R");
    EXPECT_EQ(got.r_source, expected.r_source);
    expect_same(got.ap, expected.ap, "A P");
    expect_same(got.rap, expected.rap, "R A P");
    EXPECT_GT(expected.rap.rows, 0);
    EXPECT_LT(expected.rap.rows, a.rows);
  }
}

TEST(CsrFromArrays, TakesTheArraysAndChecksLengthsAndRowPointers) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const HostCsr a = host_csr(test::random_sparse(64, 48, 9, true, seed));
  const CsrMatrix expected =
      CsrMatrix::from_host(backend, a.rows, a.cols, a.row_ptr, a.col_idx, a.values);
  const auto arrays = [&](std::vector<index_t> row_ptr, std::size_t nnz) {
    return std::tuple{
        Array<index_t>::from_host(backend, row_ptr),
        Array<index_t>::from_host(backend,
                                  std::vector<index_t>(a.col_idx.begin(), a.col_idx.begin() + nnz)),
        Array<double>::from_host(backend,
                                 std::vector<double>(a.values.begin(), a.values.begin() + nnz))};
  };

  auto [row_ptr, col_idx, values] = arrays(a.row_ptr, a.values.size());
  const CsrMatrix A = CsrMatrix::from_arrays(a.rows, a.cols, std::move(row_ptr), std::move(col_idx),
                                             std::move(values));

  const Vector x = Vector::from_host(backend, test::random_vector(48, seed + 1));
  Vector y(backend, 64), y_expected(backend, 64);
  A.apply(x, y);
  expected.apply(x, y_expected);
  EXPECT_EQ(y.to_host(), y_expected.to_host());
  EXPECT_EQ(A.row_length_stats().max, expected.row_length_stats().max);
  std::vector<index_t> decreasing = a.row_ptr;
  std::swap(decreasing[10], decreasing[11]);
  if (decreasing[10] != decreasing[11]) {
    auto [r, c, v] = arrays(decreasing, a.values.size());
    EXPECT_THROW(CsrMatrix::from_arrays(a.rows, a.cols, std::move(r), std::move(c), std::move(v)),
                 InvalidInput);
  }
  auto [r, c, v] = arrays(a.row_ptr, a.values.size() - 1);
  EXPECT_THROW(CsrMatrix::from_arrays(a.rows, a.cols, std::move(r), std::move(c), std::move(v)),
               InvalidInput);
}

TEST(CsrFromArrays, DeferredPartitionsAreBuiltTogetherAndCheckedThen) {
  // from_arrays(..., deferred): the matrix cannot be applied until build_partitions, which
  // builds several matrices' partitions at once and then applies as from_arrays' matrix does;
  // a bad row_ptr is reported by build_partitions.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  std::vector<HostCsr> hosts;
  hosts.push_back(host_csr(test::random_sparse(64, 48, 9, true, seed)));
  hosts.push_back(host_csr(test::random_sparse(3001, 3001, 40, true, seed + 1)));
  hosts.push_back(host_csr(test::random_sparse(0, 7, 3, false, seed + 2)));
  const auto deferred = [&](const HostCsr& a, std::vector<index_t> row_ptr) {
    return CsrMatrix::from_arrays(a.rows, a.cols, Array<index_t>::from_host(backend, row_ptr),
                                  Array<index_t>::from_host(backend, a.col_idx),
                                  Array<double>::from_host(backend, a.values),
                                  CsrMatrix::Partition::deferred);
  };
  std::vector<CsrMatrix> matrices;
  for (const HostCsr& a : hosts) matrices.push_back(deferred(a, a.row_ptr));
  const Vector x0 = Vector::from_host(backend, test::random_vector(48, seed + 3));
  Vector y0(backend, 64);
  EXPECT_TRUE(matrices[0].partition_deferred());
  EXPECT_THROW(matrices[0].apply(x0, y0), InvalidInput);
  CsrMatrix::build_partitions({&matrices[0], &matrices[1], &matrices[2], nullptr});
  for (std::size_t m = 0; m < hosts.size(); ++m) {
    const HostCsr& a = hosts[m];
    SCOPED_TRACE(std::to_string(a.rows) + " rows");
    EXPECT_FALSE(matrices[m].partition_deferred());
    const CsrMatrix expected =
        CsrMatrix::from_host(backend, a.rows, a.cols, a.row_ptr, a.col_idx, a.values);
    const Vector x = Vector::from_host(backend, test::random_vector(a.cols, seed + 4 + m));
    Vector y(backend, a.rows), y_expected(backend, a.rows);
    matrices[m].apply(x, y);
    expected.apply(x, y_expected);
    EXPECT_EQ(y.to_host(), y_expected.to_host());
    EXPECT_EQ(matrices[m].row_length_stats().min, expected.row_length_stats().min);
    EXPECT_EQ(matrices[m].row_length_stats().max, expected.row_length_stats().max);
    EXPECT_EQ(matrices[m].num_row_blocks(), expected.num_row_blocks());
  }
  std::vector<index_t> decreasing = hosts[1].row_ptr;
  index_t k = 100;
  while (decreasing[k] == decreasing[k + 1]) ++k;
  std::swap(decreasing[k], decreasing[k + 1]);
  CsrMatrix good = deferred(hosts[0], hosts[0].row_ptr);
  CsrMatrix bad = deferred(hosts[1], decreasing);
  try {
    CsrMatrix::build_partitions({&good, &bad});
    ADD_FAILURE() << "a decreasing row_ptr was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("decreases at row " + std::to_string(k + 1)),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(good.partition_deferred());
  EXPECT_TRUE(bad.partition_deferred());
}

TEST(AmgHierarchy, SetupOnTheBackendEqualsReferenceBitForBitWithParallelRegions) {
  // 3D Poisson, 40^3: 440,000 stored entries, enough for the cpu kernels to open parallel
  // regions (kernels/backend/parallel.hpp); PMIS, HMIS and greedy with direct interpolation,
  // PMIS with matrix-product extended+i.
  const CooMatrix coo = poisson3d(40);
  using C = AmgPreconditioner::Coarsening;
  using I = AmgPreconditioner::Interpolation;
  for (const auto& [coarsening, interpolation] :
       {std::pair{C::greedy, I::direct}, std::pair{C::pmis, I::direct},
        std::pair{C::hmis, I::direct}, std::pair{C::pmis, I::mm_extended_i}}) {
    SCOPED_TRACE("interpolation " + std::to_string(int(interpolation)));
    AmgPreconditioner::Parameters p;
    p.coarsening = coarsening;
    p.interpolation = interpolation;
    p.max_elements_per_row = 4;
    const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
    const CsrMatrix A_ref = CsrMatrix::from_coo(Backend::reference(), coo);
    AmgPreconditioner M(p), M_ref(p);

    M.setup(A);
    M_ref.setup(A_ref);

    ASSERT_EQ(M.num_levels(), M_ref.num_levels());
    ASSERT_GE(M.num_levels(), 3u);
    for (std::size_t l = 0; l < M.num_levels(); ++l) {
      SCOPED_TRACE("level " + std::to_string(l));
      EXPECT_EQ(M.splitting(l), M_ref.splitting(l));
      EXPECT_EQ(M.prolongation(l).col_idx().to_host(), M_ref.prolongation(l).col_idx().to_host());
      EXPECT_EQ(M.prolongation(l).values_to_host(), M_ref.prolongation(l).values_to_host());
      EXPECT_EQ(M.level_matrix(l + 1).col_idx().to_host(),
                M_ref.level_matrix(l + 1).col_idx().to_host());
      EXPECT_EQ(M.level_matrix(l + 1).values_to_host(), M_ref.level_matrix(l + 1).values_to_host());
    }
  }
}

/// Aggressive coarsening's first stage on `backend`: S[C, :] and S[:, C] (select_pattern), the
/// pattern of their product (sparse_setup SpGEMM) and the distance-two strength S2 among the
/// coarse points of cf (n_c x n_c, host copy).
HostCsr distance_two_strength(const Backend& backend, const Strength& s,
                              const std::vector<index_t>& cf) {
  const OnBackend S(backend, s.s);
  const auto n = static_cast<std::size_t>(s.s.rows);
  std::vector<index_t> index(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) index[i + 1] = index[i] + (cf[i] == ka::kCoarse ? 1 : 0);
  const auto nc = static_cast<std::size_t>(index[n]);
  const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
  const Array<index_t> coarse_index = Array<index_t>::from_host(backend, index);
  struct Pattern {
    Array<index_t> row_ptr, col_idx;
    ss::PatternView view;
  };
  const auto select = [&](bool coarse_rows, bool coarse_columns) {
    const std::size_t rows = coarse_rows ? nc : n;
    Array<index_t> counts(backend, rows);
    ka::select_pattern_count(backend, S.pattern(), splitting.span(), coarse_index.span(),
                             coarse_rows, coarse_columns, counts.span());
    Pattern p{Array<index_t>(backend, rows + 1), Array<index_t>(), {}};
    const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), p.row_ptr.span());
    p.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
    ka::select_pattern_fill(backend, S.pattern(), splitting.span(), coarse_index.span(),
                            coarse_rows, coarse_columns, p.row_ptr.span().data(),
                            p.col_idx.span().data());
    p.view = {static_cast<index_t>(rows), static_cast<index_t>(coarse_columns ? nc : n),
              p.row_ptr.span().data(), p.col_idx.span().data()};
    return p;
  };
  const Pattern rows = select(true, false);
  const Pattern columns = select(false, true);
  Array<index_t> counts(backend, nc);
  ss::spgemm_count(backend, rows.view, columns.view, counts.span());
  Array<index_t> ss_row_ptr(backend, nc + 1);
  const std::int64_t ss_nnz = ss::exclusive_scan(backend, counts.span(), ss_row_ptr.span());
  Array<index_t> ss_col_idx(backend, static_cast<std::size_t>(ss_nnz));
  ss::spgemm_fill(backend, rows.view, columns.view, ss_row_ptr.span().data(),
                  ss_col_idx.span().data());
  const ss::PatternView SS{static_cast<index_t>(nc), static_cast<index_t>(nc),
                           ss_row_ptr.span().data(), ss_col_idx.span().data()};
  Array<index_t> coarse_counts(backend, nc);
  ka::distance_two_strength_count(backend, S.pattern(), SS, splitting.span(), coarse_index.span(),
                                  coarse_counts.span());
  Array<index_t> row_ptr(backend, nc + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, coarse_counts.span(), row_ptr.span());
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  ka::distance_two_strength_fill(backend, S.pattern(), SS, splitting.span(), coarse_index.span(),
                                 row_ptr.span().data(), col_idx.span().data());
  return {static_cast<index_t>(nc), static_cast<index_t>(nc), row_ptr.to_host(), col_idx.to_host(),
          std::vector<double>(static_cast<std::size_t>(nnz), 1.0)};
}

TEST(AmgKernels, DistanceTwoStrengthMatchesReferenceAndTheDefinition) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Strength s = strength_pattern(host_csr(random_spd(307, seed)), {});
  const std::vector<index_t> cf = split(Backend::reference(), s, true, 5);

  const HostCsr s2 = distance_two_strength(test::backend_under_test(), s, cf);

  const HostCsr expected = distance_two_strength(Backend::reference(), s, cf);
  EXPECT_EQ(s2.row_ptr, expected.row_ptr);
  EXPECT_EQ(s2.col_idx, expected.col_idx);
  // The definition: coarse j != i with j in S_i, or j in S_k for some k in S_i.
  std::vector<index_t> coarse_index(cf.size(), -1);
  std::vector<index_t> coarse_points;
  for (std::size_t i = 0; i < cf.size(); ++i) {
    if (cf[i] != ka::kCoarse) continue;
    coarse_index[i] = static_cast<index_t>(coarse_points.size());
    coarse_points.push_back(static_cast<index_t>(i));
  }
  ASSERT_EQ(s2.rows, static_cast<index_t>(coarse_points.size()));
  std::size_t entries = 0;
  for (const index_t i : coarse_points) {
    std::set<index_t> reached;
    for (index_t q = s.s.row_ptr[i]; q < s.s.row_ptr[i + 1]; ++q) {
      const index_t k = s.s.col_idx[q];
      reached.insert(k);
      for (index_t r = s.s.row_ptr[k]; r < s.s.row_ptr[k + 1]; ++r) reached.insert(s.s.col_idx[r]);
    }
    std::vector<index_t> row;
    for (const index_t j : reached) {
      if (j != i && cf[j] == ka::kCoarse) row.push_back(coarse_index[j]);
    }
    const index_t c = coarse_index[i];
    EXPECT_EQ(std::vector<index_t>(s2.col_idx.begin() + s2.row_ptr[c],
                                   s2.col_idx.begin() + s2.row_ptr[c + 1]),
              row)
        << "coarse row " << c << " (row " << i << ")";
    entries += row.size();
  }
  EXPECT_GT(entries, 0u);
}

TEST(AmgKernels, AggressiveSplittingKeepsTheSecondSplittingsCoarsePoints) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> u = test::random_vector(500, seed);
  std::vector<index_t> first(u.size()), index(u.size() + 1, 0), second;
  for (std::size_t i = 0; i < u.size(); ++i) {
    first[i] = u[i] > 0.2 ? ka::kCoarse : ka::kFine;
    index[i + 1] = index[i] + first[i];
  }
  for (index_t c = 0; c < index.back(); ++c) {
    second.push_back(u[static_cast<std::size_t>(c * 7) % u.size()] > 0.0 ? ka::kCoarse : ka::kFine);
  }
  const Backend backend = test::backend_under_test();
  const Array<index_t> f = Array<index_t>::from_host(backend, first);
  const Array<index_t> fi = Array<index_t>::from_host(backend, index);
  const Array<index_t> sc = Array<index_t>::from_host(backend, second);
  Array<index_t> cf(backend, u.size());

  ka::aggressive_splitting(backend, f.span(), fi.span(), sc.span(), cf.span());

  const std::vector<index_t> out = cf.to_host();
  index_t coarse = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const bool expected = first[i] == ka::kCoarse && second[index[i]] == ka::kCoarse;
    EXPECT_EQ(out[i], expected ? ka::kCoarse : ka::kFine) << "row " << i;
    coarse += expected ? 1 : 0;
  }
  EXPECT_GT(coarse, 0);
}

std::vector<index_t> passes(const Backend& backend, const Strength& s,
                            const std::vector<index_t>& cf, index_t& largest) {
  const OnBackend S(backend, s.s);
  const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
  Array<index_t> pass(backend, cf.size());
  largest = ka::interpolation_passes(backend, S.pattern(), splitting.span(), pass.span());
  return pass.to_host();
}

/// A sparse splitting for multi-pass tests: the coarse points of the aggressive splitting
/// (PMIS of S, then PMIS of S2 among those), computed on the reference.
std::vector<index_t> aggressive_cf(const Strength& s) {
  const std::vector<index_t> first = split(Backend::reference(), s, true, 3);
  const HostCsr s2 = distance_two_strength(Backend::reference(), s, first);
  CooMatrix t;
  t.num_rows = t.num_cols = s2.rows;
  for (index_t i = 0; i < s2.rows; ++i) {
    for (index_t k = s2.row_ptr[i]; k < s2.row_ptr[i + 1]; ++k) t.push_back(s2.col_idx[k], i, 1.0);
  }
  const Strength second_strength{s2, host_csr(t)};
  const std::vector<index_t> second = split(Backend::reference(), second_strength, true, 3);
  std::vector<index_t> cf(first.size(), ka::kFine);
  index_t c = 0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (first[i] == ka::kCoarse && second[c++] == ka::kCoarse) cf[i] = ka::kCoarse;
  }
  return cf;
}

TEST(AmgKernels, InterpolationPassesFollowTheirDefinition) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Strength s = strength_pattern(host_csr(random_spd(401, seed)), {});
  const std::vector<index_t> cf = aggressive_cf(s);
  index_t largest = 0, largest_reference = 0;

  const std::vector<index_t> pass = passes(test::backend_under_test(), s, cf, largest);

  EXPECT_EQ(pass, passes(Backend::reference(), s, cf, largest_reference));
  EXPECT_EQ(largest, largest_reference);
  EXPECT_GE(largest, 2) << "the aggressive splitting leaves rows two strong steps from C";
  EXPECT_EQ(largest, *std::max_element(pass.begin(), pass.end()));
  for (index_t i = 0; i < s.s.rows; ++i) {
    // pass 0: coarse; p >= 1: the smallest pass among S_i's rows is p - 1; -1: none has one.
    index_t smallest = -1;
    for (index_t q = s.s.row_ptr[i]; q < s.s.row_ptr[i + 1]; ++q) {
      const index_t p = pass[s.s.col_idx[q]];
      if (p >= 0 && (smallest < 0 || p < smallest)) smallest = p;
    }
    if (cf[i] == ka::kCoarse) {
      EXPECT_EQ(pass[i], 0) << "row " << i;
    } else if (smallest < 0) {
      EXPECT_EQ(pass[i], -1) << "row " << i;
    } else {
      EXPECT_EQ(pass[i], smallest + 1) << "row " << i;
    }
  }
}

/// W of multi-pass interpolation (multipass_count, a scan, multipass_fill) on `backend`.
HostCsr multipass_w(const Backend& backend, const HostCsr& a, const Strength& s,
                    const std::vector<index_t>& pass, ka::InterpolationKind kind) {
  const OnBackend A(backend, a), S(backend, s.s);
  const Array<index_t> p = Array<index_t>::from_host(backend, pass);
  Array<index_t> counts(backend, pass.size());
  ka::multipass_count(backend, S.pattern(), p.span(), counts.span());
  Array<index_t> row_ptr(backend, pass.size() + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
  Array<index_t> col_idx(backend, static_cast<std::size_t>(nnz));
  Array<double> values(backend, static_cast<std::size_t>(nnz));
  ka::multipass_fill(backend, A.matrix(), S.pattern(), p.span(), kind, row_ptr.span().data(),
                     col_idx.span().data(), values.span().data());
  return HostCsr{a.rows, a.rows, row_ptr.to_host(), col_idx.to_host(), values.to_host()};
}

TEST(AmgKernels, MultipassWeightsMatchReferenceAndTheDirectFormula) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = host_csr(random_spd(353, seed));
  const Strength s = strength_pattern(a, {});
  const std::vector<index_t> cf = aggressive_cf(s);
  index_t largest = 0;
  const std::vector<index_t> pass = passes(Backend::reference(), s, cf, largest);
  for (const ka::InterpolationKind kind :
       {ka::InterpolationKind::direct, ka::InterpolationKind::seed}) {
    SCOPED_TRACE("kind " + std::to_string(int(kind)));
    const HostCsr W = multipass_w(test::backend_under_test(), a, s, pass, kind);

    const HostCsr expected = multipass_w(Backend::reference(), a, s, pass, kind);
    EXPECT_EQ(W.row_ptr, expected.row_ptr);
    EXPECT_EQ(W.col_idx, expected.col_idx);
    EXPECT_EQ(W.values, expected.values);
    for (index_t i = 0; i < a.rows; ++i) {
      std::set<index_t> points;  // Q_i: the strong dependencies of the previous pass
      if (pass[i] == 0) points.insert(i);
      for (index_t q = s.s.row_ptr[i]; pass[i] > 0 && q < s.s.row_ptr[i + 1]; ++q) {
        if (pass[s.s.col_idx[q]] == pass[i] - 1) points.insert(s.s.col_idx[q]);
      }
      ASSERT_EQ(std::vector<index_t>(W.col_idx.begin() + W.row_ptr[i],
                                     W.col_idx.begin() + W.row_ptr[i + 1]),
                std::vector<index_t>(points.begin(), points.end()))
          << "row " << i << " pass " << pass[i];
      const std::map<index_t, double> direct = direct_weights(a, i, points);
      for (index_t k = W.row_ptr[i]; k < W.row_ptr[i + 1]; ++k) {
        const double expected_w = pass[i] == 0 ? 1.0
                                  : kind == ka::InterpolationKind::seed
                                      ? 1.0 / static_cast<double>(points.size())
                                      : direct.at(W.col_idx[k]);
        EXPECT_NEAR(W.values[k], expected_w, 1e-14 * std::max(1.0, std::abs(expected_w)))
            << "row " << i;
      }
    }
  }
}

/// Multi-pass interpolation's P = W P computed row by row in pass order on the host, densely
/// (a row's entries: every coarse column reached, in column order).
HostCsr fixed_point_of_w(const HostCsr& W, const std::vector<index_t>& pass, index_t largest,
                         const std::vector<index_t>& coarse_index, index_t num_coarse) {
  std::vector<std::map<index_t, double>> dense(static_cast<std::size_t>(W.rows));
  for (index_t t = 0; t <= largest; ++t) {
    for (index_t i = 0; i < W.rows; ++i) {
      if (pass[i] != t) continue;
      if (t == 0) {
        dense[i][coarse_index[i]] = 1.0;
        continue;
      }
      for (index_t q = W.row_ptr[i]; q < W.row_ptr[i + 1]; ++q) {
        for (const auto& [c, x] : dense[W.col_idx[q]]) dense[i][c] += W.values[q] * x;
      }
    }
  }
  HostCsr P{W.rows, num_coarse, {0}, {}, {}};
  for (index_t i = 0; i < W.rows; ++i) {
    for (const auto& [c, x] : dense[i]) {
      P.col_idx.push_back(c);
      P.values.push_back(x);
    }
    P.row_ptr.push_back(static_cast<index_t>(P.col_idx.size()));
  }
  return P;
}

TEST(AmgKernels, MultipassProlongationByPassesMatchesReferenceAndTheFixedPointOfW) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Rows of about 18 and of about 50 entries.
  for (const index_t per_row : {9, 25}) {
    SCOPED_TRACE("per row " + std::to_string(per_row));
    const HostCsr a = host_csr(random_spd(353, seed, per_row));
    const Strength s = strength_pattern(a, {});
    const std::vector<index_t> cf = aggressive_cf(s);
    index_t largest = 0;
    const std::vector<index_t> pass = passes(Backend::reference(), s, cf, largest);
    ASSERT_GE(largest, 2);
    std::vector<index_t> coarse_index(cf.size(), -1);
    index_t num_coarse = 0;
    for (std::size_t i = 0; i < cf.size(); ++i) {
      if (cf[i] == ka::kCoarse) coarse_index[i] = num_coarse++;
    }
    for (const ka::InterpolationKind kind :
         {ka::InterpolationKind::direct, ka::InterpolationKind::seed}) {
      SCOPED_TRACE("kind " + std::to_string(int(kind)));
      // W on the reference, and P = W P row by row in pass order on the host, densely.
      const Backend& ref = Backend::reference();
      const HostCsr W = multipass_w(ref, a, s, pass, kind);
      const HostCsr P = fixed_point_of_w(W, pass, largest, coarse_index, num_coarse);
      const auto p_on = [&](const Backend& backend) {
        const OnBackend A(backend, a);
        const Array<index_t> p = Array<index_t>::from_host(backend, pass);
        const Array<index_t> wr = Array<index_t>::from_host(backend, W.row_ptr);
        const Array<index_t> wc = Array<index_t>::from_host(backend, W.col_idx);
        const Array<index_t> pr = Array<index_t>::from_host(backend, P.row_ptr);
        const Array<index_t> pc = Array<index_t>::from_host(backend, P.col_idx);
        Array<double> values = Array<double>::from_host(
            backend, std::vector<double>(P.values.size(), std::nan("")));  // overwritten
        Array<index_t> order(backend, pass.size());
        Array<index_t> offsets(backend, static_cast<std::size_t>(largest) + 3);
        ka::multipass_order(backend, p.span(), largest, order.span(), offsets.span());
        // The rows grouped by pass, each group in increasing order.
        std::vector<index_t> expected_order, expected_offsets{0};
        for (index_t t = -1; t <= largest; ++t) {
          for (index_t i = 0; i < a.rows; ++i) {
            if (pass[i] == t) expected_order.push_back(i);
          }
          expected_offsets.push_back(static_cast<index_t>(expected_order.size()));
        }
        EXPECT_EQ(order.to_host(), expected_order);
        EXPECT_EQ(offsets.to_host(), expected_offsets);
        ka::multipass_prolongation_values(
            backend, A.matrix(), p.span(), largest, order.span(), offsets.span(), kind,
            ss::PatternView{a.rows, a.rows, wr.span().data(), wc.span().data()},
            ss::PatternView{a.rows, num_coarse, pr.span().data(), pc.span().data()},
            values.span().data());
        // The same P pass by pass in slots (multipass_prolongation_slots): P's pattern and the
        // bits above with as many slots as P's longest row; one slot fewer does not fit.
        index_t longest = 0;
        for (index_t i = 0; i < a.rows; ++i) {
          longest = std::max(longest, P.row_ptr[i + 1] - P.row_ptr[i]);
        }
        const ss::PatternView w{a.rows, a.rows, wr.span().data(), wc.span().data()};
        const Array<index_t> index = Array<index_t>::from_host(backend, coarse_index);
        for (const index_t capacity : {longest, longest - 1}) {
          const auto n = static_cast<std::size_t>(a.rows);
          Array<index_t> counts(backend, n);
          Array<index_t> columns(backend, n * static_cast<std::size_t>(capacity));
          Array<double> slots(backend, n * static_cast<std::size_t>(capacity));
          const bool fits = ka::multipass_prolongation_slots(
              backend, A.matrix(), p.span(), largest, order.span(), offsets.span(), kind, w,
              index.span(), capacity, columns.span().data(), slots.span().data(), counts.span());
          EXPECT_EQ(fits, capacity == longest);
          if (!fits) continue;
          const std::vector<index_t> c = counts.to_host();
          std::vector<index_t> row_ptr{0};
          for (const index_t k : c) row_ptr.push_back(row_ptr.back() + k);
          EXPECT_EQ(row_ptr, P.row_ptr);
          const Array<index_t> rp = Array<index_t>::from_host(backend, row_ptr);
          Array<index_t> col_idx(backend, P.col_idx.size());
          Array<double> compact(backend, P.col_idx.size());
          ka::multipass_slots_compact(backend, a.rows, capacity, columns.span().data(),
                                      slots.span().data(), rp.span().data(), col_idx.span().data(),
                                      compact.span().data());
          EXPECT_EQ(col_idx.to_host(), P.col_idx);
          EXPECT_EQ(compact.to_host(), values.to_host());
        }
        return values.to_host();
      };

      const std::vector<double> values = p_on(test::backend_under_test());

      EXPECT_EQ(values, p_on(ref));
      EXPECT_LE(test::relative_max_difference(values, P.values), 1e-13);
    }
  }
}

TEST(AmgSetup, MultipassProlongationOfTheSetupIsTheFixedPointOfW) {
  // The setup forms P's pattern from powers of W's pattern and its values pass by pass
  // (amg_setup::multipass_prolongation); P must be W's fixed point on every backend, its pattern
  // every coarse column a row reaches. Random SPD matrices whose aggressive splitting leaves
  // rows up to several passes from the coarse points (rows of about 18 and 50 entries).
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend& ref = Backend::reference();
  for (const index_t per_row : {9, 25}) {
    SCOPED_TRACE("per row " + std::to_string(per_row));
    const HostCsr a = host_csr(random_spd(353, seed + 1, per_row));
    const Strength s = strength_pattern(a, {});
    const std::vector<index_t> cf = aggressive_cf(s);
    index_t largest = 0;
    const std::vector<index_t> pass = passes(ref, s, cf, largest);
    ASSERT_GE(largest, 2);
    std::vector<index_t> coarse_index(cf.size(), -1);
    index_t num_coarse = 0;
    for (std::size_t i = 0; i < cf.size(); ++i) {
      if (cf[i] == ka::kCoarse) coarse_index[i] = num_coarse++;
    }
    const ka::InterpolationKind kind = ka::InterpolationKind::direct;
    const HostCsr expected = fixed_point_of_w(multipass_w(ref, a, s, pass, kind), pass, largest,
                                              coarse_index, num_coarse);
    const auto setup_p = [&](const Backend& backend) {
      const CsrMatrix A =
          CsrMatrix::from_host(backend, a.rows, a.cols, a.row_ptr, a.col_idx, a.values);
      CsrArrays S;
      S.num_rows = S.num_cols = a.rows;
      S.row_ptr = Array<index_t>::from_host(backend, s.s.row_ptr);
      S.col_idx = Array<index_t>::from_host(backend, s.s.col_idx);
      const Array<index_t> splitting = Array<index_t>::from_host(backend, cf);
      const Array<index_t> index = Array<index_t>::from_host(backend, coarse_index);
      std::unique_ptr<MultipassArrays> kept;
      const CsrArrays P =
          amg_setup::multipass_prolongation(A, S, splitting, index, num_coarse, kind, kept);
      EXPECT_NE(kept, nullptr);
      return HostCsr{P.num_rows, P.num_cols, P.row_ptr.to_host(), P.col_idx.to_host(),
                     P.values.to_host()};
    };

    const HostCsr got = setup_p(test::backend_under_test());

    EXPECT_EQ(got.cols, num_coarse);
    EXPECT_EQ(got.row_ptr, expected.row_ptr);
    EXPECT_EQ(got.col_idx, expected.col_idx);
    EXPECT_LE(test::relative_max_difference(got.values, expected.values), 1e-13);
    EXPECT_EQ(got.values, setup_p(ref).values);
  }
}

TEST(AmgHierarchy, AggressiveLevelsOnTheBackendEqualReferenceBitForBitAndCoarsenMore) {
  const CooMatrix coo = poisson3d(40);
  AmgPreconditioner::Parameters p;
  p.coarsening = AmgPreconditioner::Coarsening::pmis;
  p.smoother = AmgPreconditioner::SmootherKind::chebyshev;
  AmgPreconditioner::Parameters aggressive = p;
  aggressive.aggressive_levels = 2;
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  const CsrMatrix A_ref = CsrMatrix::from_coo(Backend::reference(), coo);
  AmgPreconditioner M(aggressive), M_ref(aggressive), standard(p);

  M.setup(A);
  M_ref.setup(A_ref);
  standard.setup(A);

  ASSERT_EQ(M.num_levels(), M_ref.num_levels());
  ASSERT_GE(M.num_levels(), 2u);
  for (std::size_t l = 0; l < M.num_levels(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    EXPECT_EQ(M.splitting(l), M_ref.splitting(l));
    EXPECT_EQ(M.prolongation(l).col_idx().to_host(), M_ref.prolongation(l).col_idx().to_host());
    EXPECT_EQ(M.prolongation(l).values_to_host(), M_ref.prolongation(l).values_to_host());
    EXPECT_EQ(M.level_matrix(l + 1).values_to_host(), M_ref.level_matrix(l + 1).values_to_host());
  }
  // Aggressive coarsening keeps C2 within C1: fewer than half the coarse rows of the standard
  // splitting on each of the two levels (measured about a quarter on 3D Poisson).
  EXPECT_LT(2 * M.level_matrix(1).num_rows(), standard.level_matrix(1).num_rows());
  EXPECT_LT(M.hierarchy_report().operator_complexity,
            standard.hierarchy_report().operator_complexity);
}

}  // namespace
}  // namespace kryflow
