// CSR kernels of the backend under test against the reference oracle, against a lane-by-lane
// model of the cuda summation order, and (cuda build) against the cpu backend bit for bit.
//
// Every kernel runs with each tile (1024, 2048, 4096) on matrices with empty rows, skewed row
// lengths and very long rows. Tolerances against the reference: row i of A x summed in two
// orders differs by at most (len_i + 1) * eps * sum_k |a_ik x_k| (Higham, Accuracy and Stability
// of Numerical Algorithms, 2nd ed., eq. 3.5, twice γ_len), |b_i| joining the sum for the
// residual; x·y adds (n + 2) * eps * sum |x_i y_i| plus sum |x_i| times the row bounds. Rows no
// longer than the tile are added in stored order on every backend, so they and the diagonal
// must match the reference bit for bit; long rows and x·y must match the model (and the cpu
// backend) bit for bit. Outputs start as NaN, so a skipped row shows up.
//
// Float-stored values: a float32 matrix must give, on every backend and bit for bit, what the
// double kernels give on the double matrix whose values were rounded to float (the contract of
// kernels/spmv/spmv.hpp); through it every check above carries over to float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/spmv/spmv.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/vector.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace spmv = kernels::spmv;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kAllTiles[] = {1024, 2048, 4096};

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

/// One test matrix: CSR on the reference (host) and on the backend under test.
struct TestMatrix {
  std::string name;
  CsrMatrix host;
  CsrMatrix device;
};

TestMatrix make_matrix(const Backend& backend, std::string name, const CooMatrix& coo) {
  CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), coo);
  CsrMatrix device = host.copy_to(backend);
  return {std::move(name), std::move(host), std::move(device)};
}

/// A square matrix with rows of `length` entries at every other column, all other rows empty
/// but the last.
CooMatrix long_row_matrix(index_t num_rows, index_t num_cols, index_t long_row, index_t length,
                          std::uint64_t seed) {
  const std::vector<double> values = test::random_vector(static_cast<std::size_t>(length), seed);
  CooMatrix coo;
  coo.num_rows = num_rows;
  coo.num_cols = num_cols;
  for (index_t k = 0; k < length; ++k) coo.push_back(long_row, (2 * k) % num_cols, values[k]);
  if (num_rows > 1) coo.push_back(num_rows - 1, 0, 2.5);  // and one short row after it
  return coo;
}

/// Rows of lengths just around the tiles and the chunk size, between short rows: the
/// boundaries of the partition and of the long-row chunks.
CooMatrix boundary_lengths_matrix(std::uint64_t seed) {
  const std::vector<index_t> lengths = {3,    1024, 1025, 0, 2048, 2049, 7,   4096,
                                        4097, 8192, 8193, 1, 5000, 300,  300, 300};
  const index_t n = 9001;
  CooMatrix coo;
  coo.num_rows = n;
  coo.num_cols = n;
  const std::vector<double> values = test::random_vector(60000, seed);
  std::size_t v = 0;
  for (index_t i = 0; i < static_cast<index_t>(lengths.size()); ++i) {
    for (index_t k = 0; k < lengths[i]; ++k) coo.push_back(i, (i + k) % n, values[v++]);
  }
  for (index_t i = static_cast<index_t>(lengths.size()); i < n; ++i) {
    coo.push_back(i, i, values[v++]);
    coo.push_back(i, (7 * i) % n == i ? (i + 1) % n : (7 * i) % n, values[v++]);
  }
  return coo;
}

/// Rectangular and square random matrices (empty rows, skewed lengths, some long rows).
std::vector<TestMatrix> test_matrices(const Backend& backend, std::uint64_t seed) {
  std::vector<TestMatrix> m;
  m.push_back(make_matrix(backend, "0x0", test::random_sparse(0, 0, 5, false, seed + 1)));
  m.push_back(make_matrix(backend, "1x1", test::random_sparse(1, 1, 1, false, seed + 2)));
  m.push_back(make_matrix(backend, "31x31", test::random_sparse(31, 31, 12, false, seed + 3)));
  m.push_back(make_matrix(backend, "31x57", test::random_sparse(31, 57, 20, true, seed + 4)));
  m.push_back(
      make_matrix(backend, "1000x1000", test::random_sparse(1000, 1000, 40, true, seed + 5)));
  m.push_back(make_matrix(backend, "1000x333", test::random_sparse(1000, 333, 9, false, seed + 6)));
  m.push_back(make_matrix(backend, "100003x100003 with a long row",
                          test::random_sparse(100003, 100003, 24, true, seed + 7)));
  m.push_back(make_matrix(backend, "9001x9001 rows at the tile boundaries",
                          boundary_lengths_matrix(seed + 8)));
  m.push_back(make_matrix(backend, "poisson3d 17^3", poisson3d(17)));
  CooMatrix empty;
  empty.num_rows = 77;
  empty.num_cols = 77;
  m.push_back(make_matrix(backend, "77x77 without entries", empty));
  return m;
}

index_t row_length(const CsrMatrix& A, index_t i) {
  return A.row_ptr().data()[i + 1] - A.row_ptr().data()[i];
}

/// sum_k |a_ik x_k| of every row (host matrix).
std::vector<double> row_magnitudes(const CsrMatrix& A, const std::vector<double>& x) {
  const index_t* row_ptr = A.row_ptr().data();
  const index_t* col = A.col_idx().data();
  const double* val = A.values().data();
  std::vector<double> m(static_cast<std::size_t>(A.num_rows()), 0.0);
  for (index_t i = 0; i < A.num_rows(); ++i) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) m[i] += std::abs(val[k] * x[col[k]]);
  }
  return m;
}

/// Every row written, within its tolerance, and bit for bit equal where the row is no longer
/// than `tile` (added in stored order on every backend).
void expect_rows_match(const CsrMatrix& A, int tile, const std::vector<double>& actual,
                       const std::vector<double>& expected, const std::vector<double>& tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << "row " << i << " not written";
    ASSERT_LE(std::abs(actual[i] - expected[i]), tolerance[i])
        << "row " << i << ": " << actual[i] << " vs " << expected[i];
    if (row_length(A, static_cast<index_t>(i)) <= tile) {
      ASSERT_EQ(bits(actual[i]), bits(expected[i]))
          << "row " << i << " (not longer than the tile): " << actual[i] << " vs " << expected[i];
    }
  }
}

std::vector<double> product_tolerance(const CsrMatrix& A, const std::vector<double>& x) {
  const std::vector<double> magnitude = row_magnitudes(A, x);
  std::vector<double> tol(magnitude.size());
  for (std::size_t i = 0; i < tol.size(); ++i) {
    tol[i] = (row_length(A, static_cast<index_t>(i)) + 1.0) * kEps * magnitude[i];
  }
  return tol;
}

// ---- A model of the cuda kernels' summation order, simulated thread by thread ----

/// Lane 0 of `for (offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(~0u, v, offset)`:
/// every lane adds the value of lane + offset, or its own where that lane does not exist.
double model_warp_sum(std::array<double, 32> v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    std::array<double, 32> next{};
    for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l + offset < 32 ? l + offset : l];
    v = next;
  }
  return v[0];
}

/// Thread 0 of block_sum over 256 threads: each warp's shuffle sum, then warp 0 sums the eight
/// warp sums (lanes 8..31 contribute 0).
double model_block_sum(const std::array<double, 256>& threads) {
  std::array<double, 32> warp_sums{};
  for (int w = 0; w < 8; ++w) {
    std::array<double, 32> lanes{};
    std::copy_n(threads.begin() + 32 * w, 32, lanes.begin());
    warp_sums[w] = model_warp_sum(lanes);
  }
  return model_warp_sum(warp_sums);
}

/// Thread j adds v[j], v[j + 256], ... starting from 0.0, then block_sum.
double model_grid_sum(const std::vector<double>& v) {
  std::array<double, 256> threads{};
  for (std::size_t q = 0; q < v.size(); ++q) threads[q % 256] = threads[q % 256] + v[q];
  return model_block_sum(threads);
}

/// Row i of A x as the cuda kernels add it: stored order for rows up to `tile` entries,
/// otherwise chunks of 4096 entries over 256 lanes, block sums, then a grid sum of the chunks.
double model_row(const CsrMatrix& A, index_t i, const std::vector<double>& x, int tile) {
  const index_t* row_ptr = A.row_ptr().data();
  const index_t* col = A.col_idx().data();
  const double* val = A.values().data();
  if (row_length(A, i) <= tile) {
    double sum = 0.0;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum = sum + val[k] * x[col[k]];
    return sum;
  }
  std::vector<double> chunk_sums;
  for (index_t begin = row_ptr[i]; begin < row_ptr[i + 1]; begin += 4096) {
    std::array<double, 256> lanes{};
    for (index_t k = begin; k < std::min(begin + 4096, row_ptr[i + 1]); ++k) {
      lanes[(k - begin) % 256] = lanes[(k - begin) % 256] + val[k] * x[col[k]];
    }
    chunk_sums.push_back(model_block_sum(lanes));
  }
  return model_grid_sum(chunk_sums);
}

/// x·y as the cuda csr_spmv_dot adds it: greedy row blocks (at most 256 rows and `tile`
/// entries; a longer row alone), block sums of x_i y_i, then a grid sum of the blocks (of
/// strided sums beyond 1024 blocks).
double model_dot(const CsrMatrix& A, const std::vector<double>& x, const std::vector<double>& y,
                 int tile) {
  std::vector<std::array<double, 256>> block_terms;  // the terms x_i y_i of each row block
  index_t i = 0;
  while (i < A.num_rows()) {
    std::array<double, 256> terms{};
    const index_t first = i;
    index_t entries = 0;
    if (row_length(A, i) > tile) {
      ++i;
    } else {
      // The split restarts at every segment boundary (spmv::kPartitionSegmentRows).
      const index_t segment_end = std::min<index_t>(
          A.num_rows(), (first / spmv::kPartitionSegmentRows + 1) * spmv::kPartitionSegmentRows);
      while (i < segment_end && i - first < 256 && row_length(A, i) <= tile &&
             entries + row_length(A, i) <= tile) {
        entries += row_length(A, i++);
      }
    }
    for (index_t r = first; r < i; ++r) terms[r - first] = x[r] * y[r];
    block_terms.push_back(terms);
  }
  std::vector<double> block_sums;
  if (block_terms.size() <= 1024) {
    for (std::array<double, 256>& terms : block_terms) block_sums.push_back(model_block_sum(terms));
    return model_grid_sum(block_sums);
  }
  // More than spmv::kLatencyBoundRowBlocks row blocks: G strided sums (one wave on 128 SMs of 8
  // resident blocks, 6 with tile 4096), sum b adding lane by lane the terms of row blocks b,
  // b + G, ... in order.
  const std::size_t strided = tile == 4096 ? 768 : 1024;
  for (std::size_t b = 0; b < strided; ++b) {
    std::array<double, 256> lanes{};
    for (std::size_t g = b; g < block_terms.size(); g += strided) {
      for (std::size_t j = 0; j < 256; ++j) lanes[j] = lanes[j] + block_terms[g][j];
    }
    block_sums.push_back(model_block_sum(lanes));
  }
  return model_grid_sum(block_sums);
}

// ---- Tests ----

class SpmvTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  std::uint64_t seed = test::fresh_seed();
};

TEST_F(SpmvTest, ProductMatchesReferenceForEveryTile) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 100);
    Vector y = Vector::constant(reference, A.host.num_rows(), 0.0);
    A.host.apply(Vector::from_host(reference, x), y);
    const std::vector<double> expected = y.to_host();
    const std::vector<double> tolerance = product_tolerance(A.host, x);
    const Vector x_d = Vector::from_host(backend, x);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector y_d = Vector::constant(backend, A.host.num_rows(), kNaN);

      A.device.apply(x_d, y_d);

      expect_rows_match(A.host, tile, y_d.to_host(), expected, tolerance);
    }
  }
}

TEST_F(SpmvTest, ResidualMatchesReferenceForEveryTile) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 200);
    const std::vector<double> b = test::random_vector(A.host.num_rows(), seed + 300);
    Vector r = Vector::constant(reference, A.host.num_rows(), 0.0);
    A.host.residual(Vector::from_host(reference, b), Vector::from_host(reference, x), r);
    const std::vector<double> expected = r.to_host();
    std::vector<double> tolerance = row_magnitudes(A.host, x);
    for (std::size_t i = 0; i < tolerance.size(); ++i) {
      tolerance[i] = (row_length(A.host, static_cast<index_t>(i)) + 2.0) * kEps *
                     (tolerance[i] + std::abs(b[i]));
    }
    const Vector x_d = Vector::from_host(backend, x);
    const Vector b_d = Vector::from_host(backend, b);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector r_d = Vector::constant(backend, A.host.num_rows(), kNaN);

      A.device.residual(b_d, x_d, r_d);

      expect_rows_match(A.host, tile, r_d.to_host(), expected, tolerance);
    }
  }
}

TEST_F(SpmvTest, FusedProductAndDotMatchReferenceForEveryTile) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;  // x·y needs a square matrix
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 400);
    Vector y = Vector::constant(reference, A.host.num_rows(), 0.0);
    const double expected_dot = A.host.apply_dot(Vector::from_host(reference, x), y);
    const std::vector<double> expected = y.to_host();
    const std::vector<double> tolerance = product_tolerance(A.host, x);
    double dot_tolerance = 0.0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      dot_tolerance +=
          std::abs(x[i]) * tolerance[i] +
          (static_cast<double>(expected.size()) + 2.0) * kEps * std::abs(x[i] * expected[i]);
    }
    const Vector x_d = Vector::from_host(backend, x);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector y_d = Vector::constant(backend, A.host.num_rows(), kNaN);

      const double dot = A.device.apply_dot(x_d, y_d);

      expect_rows_match(A.host, tile, y_d.to_host(), expected, tolerance);
      EXPECT_LE(std::abs(dot - expected_dot), dot_tolerance) << dot << " vs " << expected_dot;
    }
  }
}

TEST_F(SpmvTest, LongRowsAndDotAddInTheModelledCudaOrder) {
  // The backend's bits against the thread-by-thread model above: the cpu backend must emulate
  // the cuda trees exactly, and the cuda backend must implement them.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 500);
    const Vector x_d = Vector::from_host(backend, x);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector y_d = Vector::constant(backend, A.host.num_rows(), kNaN);

      const double dot = A.device.apply_dot(x_d, y_d);

      const std::vector<double> y = y_d.to_host();
      for (index_t i = 0; i < A.host.num_rows(); ++i) {
        const double expected = model_row(A.host, i, x, tile);
        ASSERT_EQ(bits(y[i]), bits(expected)) << "row " << i << ": " << y[i] << " vs " << expected;
      }
      const double expected_dot = model_dot(A.host, x, y, tile);
      EXPECT_EQ(bits(dot), bits(expected_dot)) << dot << " vs " << expected_dot;
    }
  }
}

TEST_F(SpmvTest, FusedDotGivesIdenticalBitsOnRepeatedCalls) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  TestMatrix A =
      make_matrix(backend, "20011x20011", test::random_sparse(20011, 20011, 30, true, seed));
  const Vector x_d = Vector::from_host(backend, test::random_vector(20011, seed + 1));
  Vector y_d = Vector::constant(backend, 20011, 0.0);
  for (int tile : kAllTiles) {
    SCOPED_TRACE("tile " + std::to_string(tile));
    A.device.set_spmv_tile(tile);

    const double first = A.device.apply_dot(x_d, y_d);
    const double second = A.device.apply_dot(x_d, y_d);

    EXPECT_EQ(bits(first), bits(second));
  }
}

TEST_F(SpmvTest, DiagonalMatchesReferenceExactlyForEveryTile) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    Vector d = Vector::constant(reference, A.host.num_rows(), 0.0);
    A.host.diagonal(d);
    const std::vector<double> expected = d.to_host();
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector d_d = Vector::constant(backend, A.host.num_rows(), kNaN);

      A.device.diagonal(d_d);

      const std::vector<double> actual = d_d.to_host();
      for (std::size_t i = 0; i < expected.size(); ++i) {
        ASSERT_EQ(bits(actual[i]), bits(expected[i]))
            << "row " << i << ": " << actual[i] << " vs " << expected[i];
      }
    }
  }
}

TEST_F(SpmvTest, RowWithHalfAMillionEntriesMatchesReference) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const index_t n = 1000003;
  TestMatrix A = make_matrix(backend, "1000003 x 1000003, row 1 with 500002 entries",
                             long_row_matrix(n, n, 1, 500002, seed));
  const std::vector<double> x = test::random_vector(n, seed + 1);
  const std::vector<double> b = test::random_vector(n, seed + 2);
  Vector y = Vector::constant(reference, n, 0.0);
  Vector r = Vector::constant(reference, n, 0.0);
  const double expected_dot = A.host.apply_dot(Vector::from_host(reference, x), y);
  A.host.residual(Vector::from_host(reference, b), Vector::from_host(reference, x), r);
  const std::vector<double> tolerance = product_tolerance(A.host, x);
  std::vector<double> r_tolerance = tolerance;
  for (std::size_t i = 0; i < r_tolerance.size(); ++i)
    r_tolerance[i] += 2.0 * kEps * std::abs(b[i]);
  // x·y: the long row's bound times |x_1|, plus the rounding of adding the (two non-zero)
  // terms in another order.
  const std::vector<double> y_expected = y.to_host();
  double dot_magnitude = 0.0;
  for (index_t i = 0; i < n; ++i) dot_magnitude += std::abs(x[i] * y_expected[i]);
  const double dot_tolerance = std::abs(x[1]) * tolerance[1] + 4.0 * kEps * dot_magnitude;
  const Vector x_d = Vector::from_host(backend, x);
  const Vector b_d = Vector::from_host(backend, b);
  Vector y_d = Vector::constant(backend, n, kNaN);
  Vector r_d = Vector::constant(backend, n, kNaN);

  const double dot = A.device.apply_dot(x_d, y_d);
  A.device.residual(b_d, x_d, r_d);

  expect_rows_match(A.host, A.device.spmv_tile(), y_d.to_host(), y_expected, tolerance);
  expect_rows_match(A.host, A.device.spmv_tile(), r_d.to_host(), r.to_host(), r_tolerance);
  EXPECT_LE(std::abs(dot - expected_dot), dot_tolerance) << dot << " vs " << expected_dot;
}

TEST(SpmvPartition, RowBlocksRespectRowAndEntryLimitsAndCoverEveryRow) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), boundary_lengths_matrix(seed));
  const CsrMatrix B = CsrMatrix::from_coo(Backend::reference(),
                                          test::random_sparse(30011, 30011, 60, true, seed + 1));
  for (const CsrMatrix* M : {&A, &B}) {
    const std::span<const index_t> row_ptr(M->row_ptr().data(), M->row_ptr().size());
    for (int tile : kAllTiles) {
      SCOPED_TRACE("tile " + std::to_string(tile));

      const spmv::RowPartition p = spmv::partition_rows(row_ptr, tile);

      ASSERT_EQ(p.row_blocks.front(), 0);
      ASSERT_EQ(p.row_blocks.back(), M->num_rows());
      std::vector<index_t> long_rows;
      std::vector<index_t> chunks_per_row;
      for (std::size_t g = 0; g + 1 < p.row_blocks.size(); ++g) {
        const index_t first = p.row_blocks[g];
        const index_t last = p.row_blocks[g + 1];
        ASSERT_GT(last, first) << "block " << g << " is empty";
        ASSERT_LE(last - first, spmv::kRowBlockRows) << "block " << g;
        // Segments are split independently: no block crosses a segment boundary.
        ASSERT_EQ(first / spmv::kPartitionSegmentRows, (last - 1) / spmv::kPartitionSegmentRows)
            << "block " << g;
        const index_t entries = row_ptr[last] - row_ptr[first];
        // Greedy: an ordinary block stops only at its segment's end, at kRowBlockRows rows, or
        // where the next row would not fit the tile.
        if (entries <= tile && last < M->num_rows() && last % spmv::kPartitionSegmentRows != 0 &&
            last - first < spmv::kRowBlockRows) {
          ASSERT_GT(row_ptr[last + 1] - row_ptr[first], tile) << "block " << g << " stops early";
        }
        if (entries > tile) {
          ASSERT_EQ(last - first, 1) << "block " << g << " holds " << entries << " entries";
          long_rows.push_back(first);
          chunks_per_row.push_back((entries + spmv::kLongRowChunk - 1) / spmv::kLongRowChunk);
        }
      }
      EXPECT_EQ(p.long_rows, long_rows);
      ASSERT_EQ(p.long_row_chunks.size(), long_rows.size() + 1);
      for (std::size_t s = 0; s < long_rows.size(); ++s) {
        EXPECT_EQ(p.long_row_chunks[s + 1] - p.long_row_chunks[s], chunks_per_row[s]);
        for (index_t c = p.long_row_chunks[s]; c < p.long_row_chunks[s + 1]; ++c) {
          EXPECT_EQ(p.chunk_long_row[c], static_cast<index_t>(s));
        }
      }
      EXPECT_EQ(p.chunk_long_row.size(), static_cast<std::size_t>(p.long_row_chunks.back()));
    }
  }
}

TEST(SpmvPartition, BuiltWhereTheMatrixLivesItEqualsTheHostPartitionWithTheRowFacts) {
  // spmv::build_partition on the backend under test (on cuda: device kernels, one thread per
  // segment) against partition_rows on the host, and the row-length facts against a host loop.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  std::vector<CooMatrix> matrices;
  matrices.push_back(boundary_lengths_matrix(seed));
  matrices.push_back(test::random_sparse(30011, 30011, 60, true, seed + 1));
  matrices.push_back(test::random_sparse(70001, 500, 9, false, seed + 2));  // 18 segments
  matrices.push_back(poisson3d(41));
  matrices.push_back(test::random_sparse(0, 0, 5, false, seed + 3));
  CooMatrix empty;
  empty.num_rows = spmv::kPartitionSegmentRows + 5;
  empty.num_cols = 3;
  matrices.push_back(empty);
  for (const CooMatrix& coo : matrices) {
    SCOPED_TRACE(std::to_string(coo.num_rows) + " rows");
    const CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), coo);
    const std::vector<index_t> row_ptr(host.row_ptr().data(),
                                       host.row_ptr().data() + host.row_ptr().size());
    const Array<index_t> on_backend = Array<index_t>::from_host(backend, row_ptr);
    for (int tile : kAllTiles) {
      SCOPED_TRACE("tile " + std::to_string(tile));
      const spmv::RowPartition expected = spmv::partition_rows(row_ptr, tile);
      const spmv::PartitionArrays p = spmv::build_partition(backend, on_backend.span(), tile);
      ASSERT_TRUE(p.facts.valid());
      EXPECT_EQ(p.tile, tile);
      EXPECT_EQ(p.row_blocks.to_host(), expected.row_blocks);
      EXPECT_EQ(p.long_rows.to_host(), expected.long_rows);
      EXPECT_EQ(p.long_row_chunks.to_host(), expected.long_row_chunks);
      EXPECT_EQ(p.chunk_long_row.to_host(), expected.chunk_long_row);
      const RowLengthStats stats = host.row_length_stats();
      EXPECT_EQ(p.facts.first, 0);
      EXPECT_EQ(p.facts.last, host.nnz());
      EXPECT_EQ(p.facts.first_decrease, -1);
      EXPECT_EQ(p.facts.min_length, stats.min);
      EXPECT_EQ(p.facts.max_length, stats.max);
      EXPECT_EQ(p.facts.empty_rows, stats.empty_rows);
    }
  }
}

TEST(SpmvPartition, ManyMatricesBuiltTogetherEqualTheirOwnPartitions) {
  // spmv::build_partitions with more matrices than one launch takes (the cuda tables hold 32),
  // valid and invalid ones mixed: each result equals the host partition and facts, the invalid
  // ones are reported and left empty, and the completion counters are zero.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  std::vector<std::vector<index_t>> row_ptrs;
  for (int m = 0; m < 36; ++m) {
    const index_t rows = m % 9 == 4 ? 0 : static_cast<index_t>(1 + (seed + 977 * m) % 5000);
    const CooMatrix coo =
        test::random_sparse(rows, m % 2 == 0 ? 9000 : 300, 1 + m % 40, m % 2 == 0,
                            seed + static_cast<unsigned>(m));  // even m: a long row
    const CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), coo);
    row_ptrs.emplace_back(host.row_ptr().data(), host.row_ptr().data() + host.row_ptr().size());
  }
  row_ptrs[7][row_ptrs[7].size() / 2] += 1000000;  // a decrease right after it
  row_ptrs[33][0] = 3;                             // not from zero
  std::vector<Array<index_t>> arrays;
  std::vector<spmv::PartitionRequest> requests;
  for (std::size_t m = 0; m < row_ptrs.size(); ++m) {
    arrays.push_back(Array<index_t>::from_host(backend, row_ptrs[m]));
  }
  for (std::size_t m = 0; m < row_ptrs.size(); ++m) {
    requests.push_back({arrays[m].span(), kAllTiles[m % std::size(kAllTiles)]});
  }
  const std::vector<spmv::PartitionArrays> built = spmv::build_partitions(backend, requests);
  ASSERT_EQ(built.size(), requests.size());
  for (std::size_t m = 0; m < requests.size(); ++m) {
    SCOPED_TRACE("matrix " + std::to_string(m));
    const std::vector<index_t>& row_ptr = row_ptrs[m];
    const spmv::PartitionArrays& p = built[m];
    if (m == 7 || m == 33) {
      EXPECT_FALSE(p.facts.valid());
      EXPECT_TRUE(p.row_blocks.empty());
      if (m == 7) EXPECT_EQ(p.facts.first_decrease, static_cast<index_t>(row_ptr.size() / 2));
      if (m == 33) EXPECT_EQ(p.facts.first, 3);
      continue;
    }
    ASSERT_TRUE(p.facts.valid());
    const spmv::RowPartition expected = spmv::partition_rows(row_ptr, requests[m].tile);
    EXPECT_EQ(p.tile, requests[m].tile);
    EXPECT_EQ(p.row_blocks.to_host(), expected.row_blocks);
    EXPECT_EQ(p.long_rows.to_host(), expected.long_rows);
    EXPECT_EQ(p.long_row_chunks.to_host(), expected.long_row_chunks);
    EXPECT_EQ(p.chunk_long_row.to_host(), expected.chunk_long_row);
    EXPECT_EQ(p.counters.to_host(), std::vector<unsigned int>(expected.long_rows.size() + 1, 0u));
    index_t lo = std::numeric_limits<index_t>::max(), hi = 0, empty = 0;
    for (std::size_t i = 0; i + 1 < row_ptr.size(); ++i) {
      const index_t length = row_ptr[i + 1] - row_ptr[i];
      lo = std::min(lo, length);
      hi = std::max(hi, length);
      empty += length == 0 ? 1 : 0;
    }
    if (row_ptr.size() == 1) lo = 0;
    EXPECT_EQ(p.facts.last, row_ptr.back());
    EXPECT_EQ(p.facts.min_length, lo);
    EXPECT_EQ(p.facts.max_length, hi);
    EXPECT_EQ(p.facts.empty_rows, empty);
  }
}

TEST(SpmvPartition, ADecreasingOrShiftedRowPointerIsReportedAndNothingIsBuilt) {
  const Backend backend = test::backend_under_test();
  const index_t segment = spmv::kPartitionSegmentRows;
  std::vector<index_t> row_ptr(static_cast<std::size_t>(3 * segment + 2));
  for (std::size_t i = 0; i < row_ptr.size(); ++i) row_ptr[i] = static_cast<index_t>(3 * i);
  const index_t first_bad = 2 * segment + segment / 5;  // inside the third segment
  const index_t second_bad = 3 * segment - segment / 7;
  row_ptr[first_bad + 1] = row_ptr[first_bad] - 1;  // a negative length
  row_ptr[second_bad + 1] = 0;                      // and another one
  const Array<index_t> decreasing = Array<index_t>::from_host(backend, row_ptr);
  const spmv::PartitionArrays p = spmv::build_partition(backend, decreasing.span(), 1024);
  EXPECT_FALSE(p.facts.valid());
  EXPECT_EQ(p.facts.first_decrease, first_bad);
  EXPECT_TRUE(p.row_blocks.empty());
  std::vector<index_t> shifted = {2, 3, 4};
  const Array<index_t> not_from_zero = Array<index_t>::from_host(backend, shifted);
  const spmv::PartitionArrays q = spmv::build_partition(backend, not_from_zero.span(), 2048);
  EXPECT_FALSE(q.facts.valid());
  EXPECT_EQ(q.facts.first, 2);
  EXPECT_EQ(q.facts.last, 4);
  EXPECT_THROW(spmv::build_partition(backend, not_from_zero.span(), 1000), InvalidInput);
}

TEST(SpmvPartition, RejectsATileTheKernelsAreNotCompiledFor) {
  const std::vector<index_t> row_ptr = {0, 1, 2};

  EXPECT_THROW(spmv::partition_rows(row_ptr, 1000), InvalidInput);
  EXPECT_THROW(spmv::partition_rows(row_ptr, 0), InvalidInput);
}

TEST(SpmvPartition, DefaultTileIsTheSmallerTileThatHoldsAFullBlockOfMeanLengthRows) {
  constexpr std::int64_t kLarge = spmv::kSmallProductEntries + 1;
  EXPECT_EQ(spmv::default_tile(3.0, kLarge), 1024);   // 768 entries per 256 rows
  EXPECT_EQ(spmv::default_tile(6.97, kLarge), 2048);  // 3D Poisson, 7-point: 1784
  EXPECT_EQ(spmv::default_tile(20.0, kLarge), 2048);  // 5120: 2048 all the same
}

TEST(SpmvPartition, DefaultTileOfAProductBoundByLatencyIs1024) {
  EXPECT_EQ(spmv::default_tile(6.97, spmv::kSmallProductEntries), 1024);
  EXPECT_EQ(spmv::default_tile(20.0, 160'000), 1024);  // about openfoam_p_23325's entries
  // At most about kLatencyBoundRowBlocks / 2 row blocks of 1024 entries: still bound by latency.
  EXPECT_LE(spmv::kSmallProductEntries / 1024, spmv::kLatencyBoundRowBlocks / 2);
}

// ---- Float-stored values ----

/// A float64 host matrix with every value rounded to float (still stored in double): the oracle
/// of the float32 kernels, built without CsrMatrix's own conversion.
CsrMatrix rounded_to_float(const CsrMatrix& host) {
  std::vector<double> values = host.values_to_host();
  for (double& v : values) v = static_cast<double>(static_cast<float>(v));
  return CsrMatrix::from_host(Backend::reference(), host.num_rows(), host.num_cols(),
                              host.row_ptr().to_host(), host.col_idx().to_host(), values);
}

/// One matrix three ways: rounded values in double on the host (the oracle) and on the backend,
/// and float32 values on the backend (converted by from_coo).
struct FloatTestMatrix {
  std::string name;
  CsrMatrix rounded_host;
  CsrMatrix rounded_device;
  CsrMatrix float_device;
};

FloatTestMatrix make_float_matrix(const Backend& backend, std::string name, const CooMatrix& coo) {
  CsrMatrix rounded = rounded_to_float(CsrMatrix::from_coo(Backend::reference(), coo));
  CsrMatrix rounded_device = rounded.copy_to(backend);
  CsrMatrix float_device = CsrMatrix::from_coo(backend, coo, Precision::float32);
  return {std::move(name), std::move(rounded), std::move(rounded_device), std::move(float_device)};
}

/// Random values (never zero, not representable in float), skewed row lengths, empty rows and
/// rows longer than every tile and than one long-row chunk (4096 entries).
std::vector<FloatTestMatrix> float_test_matrices(const Backend& backend, std::uint64_t seed) {
  std::vector<FloatTestMatrix> m;
  m.push_back(make_float_matrix(backend, "0x0", test::random_sparse(0, 0, 5, false, seed + 1)));
  m.push_back(
      make_float_matrix(backend, "1000x333", test::random_sparse(1000, 333, 9, false, seed + 2)));
  m.push_back(make_float_matrix(backend, "100003x100003 with a long row",
                                test::random_sparse(100003, 100003, 24, true, seed + 3)));
  m.push_back(make_float_matrix(backend, "9001x9001 rows at the tile boundaries",
                                boundary_lengths_matrix(seed + 4)));
  CooMatrix empty;
  empty.num_rows = 77;
  empty.num_cols = 77;
  m.push_back(make_float_matrix(backend, "77x77 without entries", empty));
  return m;
}

void expect_same_bits(const std::vector<double>& actual, const std::vector<double>& expected,
                      const char* what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(bits(actual[i]), bits(expected[i]))
        << what << ", row " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

TEST_F(SpmvTest, Float32ValuesGiveTheBitsOfDoubleKernelsOnRoundedValues) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (FloatTestMatrix& A : float_test_matrices(backend, seed)) {
    ASSERT_EQ(A.float_device.precision(), Precision::float32);
    const auto rows = static_cast<std::size_t>(A.rounded_host.num_rows());
    const std::vector<double> x = test::random_vector(A.rounded_host.num_cols(), seed + 600);
    const std::vector<double> b = test::random_vector(rows, seed + 700);
    const Vector x_ref = Vector::from_host(reference, x);
    const Vector b_ref = Vector::from_host(reference, b);
    Vector y_ref = Vector::constant(reference, rows, 0.0);
    A.rounded_host.apply(x_ref, y_ref);
    const std::vector<double> y_expected = y_ref.to_host();
    A.rounded_host.residual(b_ref, x_ref, y_ref);
    const std::vector<double> r_expected = y_ref.to_host();
    A.rounded_host.diagonal(y_ref);
    const std::vector<double> d_expected = y_ref.to_host();
    const std::vector<double> tolerance = product_tolerance(A.rounded_host, x);
    std::vector<double> r_tolerance = tolerance;
    for (std::size_t i = 0; i < rows; ++i) r_tolerance[i] += 2.0 * kEps * std::abs(b[i]);
    const Vector x_d = Vector::from_host(backend, x);
    const Vector b_d = Vector::from_host(backend, b);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.rounded_device.set_spmv_tile(tile);
      A.float_device.set_spmv_tile(tile);
      Vector y_f = Vector::constant(backend, rows, kNaN);
      Vector y_d = Vector::constant(backend, rows, kNaN);
      Vector r_f = Vector::constant(backend, rows, kNaN);
      Vector r_d = Vector::constant(backend, rows, kNaN);
      Vector d_f = Vector::constant(backend, rows, kNaN);

      A.float_device.apply(x_d, y_f);
      A.rounded_device.apply(x_d, y_d);
      A.float_device.residual(b_d, x_d, r_f);
      A.rounded_device.residual(b_d, x_d, r_d);
      A.float_device.diagonal(d_f);

      // Same bits as the double kernels on the rounded values, on this backend; the oracle's
      // bits on rows no longer than the tile, its tolerance on long rows (summed in chunks).
      expect_same_bits(y_f.to_host(), y_d.to_host(), "csr_spmv vs double");
      expect_same_bits(r_f.to_host(), r_d.to_host(), "csr_residual vs double");
      expect_rows_match(A.rounded_host, tile, y_f.to_host(), y_expected, tolerance);
      expect_rows_match(A.rounded_host, tile, r_f.to_host(), r_expected, r_tolerance);
      expect_same_bits(d_f.to_host(), d_expected, "csr_diagonal vs reference");
      if (A.rounded_host.num_rows() == A.rounded_host.num_cols()) {
        Vector z_f = Vector::constant(backend, rows, kNaN);
        Vector z_d = Vector::constant(backend, rows, kNaN);
        const double dot_f = A.float_device.apply_dot(x_d, z_f);
        const double dot_d = A.rounded_device.apply_dot(x_d, z_d);
        const std::vector<double> z = z_f.to_host();
        expect_same_bits(z, z_d.to_host(), "csr_spmv_dot vs double");
        EXPECT_EQ(bits(dot_f), bits(dot_d)) << dot_f << " vs " << dot_d;
        // and the modelled cuda order on the rounded values, long rows included
        for (index_t i = 0; i < A.rounded_host.num_rows(); ++i) {
          const double expected = model_row(A.rounded_host, i, x, tile);
          ASSERT_EQ(bits(z[i]), bits(expected))
              << "row " << i << ": " << z[i] << " vs " << expected;
        }
        const double expected_dot = model_dot(A.rounded_host, x, z, tile);
        EXPECT_EQ(bits(dot_f), bits(expected_dot)) << dot_f << " vs " << expected_dot;
      }
    }
  }
}

/// v = s ∘ u + c w (s empty: u + c w) on the host, in the order of spmv.hpp's Combination.
std::vector<double> combination(const std::vector<double>& s, const std::vector<double>& u,
                                double c, const std::vector<double>& w) {
  std::vector<double> v(u.size());
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double su = s.empty() ? u[k] : s[k] * u[k];
    v[k] = su + c * w[k];
  }
  return v;
}

TEST_F(SpmvTest, StridedDotsOfManyRowBlocksAddInTheModelledCudaOrder) {
  // More than spmv::kLatencyBoundRowBlocks row blocks at every tile, several row blocks per
  // strided sum (1024 of them; 768 with tile 4096): x·y against the model, and the fused
  // combination against the product of the stored combination (same bits).
  SCOPED_TRACE("seed " + std::to_string(seed));
  TestMatrix A = make_matrix(backend, "500009x500009",
                             test::random_sparse(500009, 500009, 60, true, seed + 900));
  const auto n = static_cast<std::size_t>(A.host.num_rows());
  const std::vector<double> x = test::random_vector(n, seed + 901);
  const std::vector<double> w = test::random_vector(n, seed + 902);
  const double c = 0.625;
  const Vector x_d = Vector::from_host(backend, x);
  const Vector w_d = Vector::from_host(backend, w);
  const Vector v_d = Vector::from_host(backend, combination({}, x, c, w));
  DeviceScalars scalars(backend, 3);
  const double host_c[1] = {c};
  scalars.write(0, host_c);
  for (int tile : kAllTiles) {
    SCOPED_TRACE("tile " + std::to_string(tile));
    A.device.set_spmv_tile(tile);
    const index_t strided = tile == 4096 ? 768 : 1024;
    ASSERT_GE(A.device.num_row_blocks(), 2 * strided);
    Vector y_d = Vector::constant(backend, n, kNaN);

    const double dot = A.device.apply_dot(x_d, y_d);

    const double expected = model_dot(A.host, x, y_d.to_host(), tile);
    EXPECT_EQ(bits(dot), bits(expected)) << dot << " vs " << expected;
    Vector y = Vector::constant(backend, n, kNaN);
    Vector y_stored = Vector::constant(backend, n, kNaN);
    A.device.apply_combination_dot(nullptr, x_d, scalars.slot(0), w_d, y, scalars.slot(1));
    A.device.apply_dot(v_d, y_stored, scalars.slot(2));
    std::vector<double> dots(3);
    scalars.read(0, dots);
    expect_same_bits(y.to_host(), y_stored.to_host(), "apply_combination_dot");
    EXPECT_EQ(bits(dots[1]), bits(dots[2])) << dots[1] << " vs " << dots[2];
  }
}

TEST_F(SpmvTest, FusedCombinationGivesTheBitsOfTheStoredCombination) {
  // apply_combination_dot (v = s ∘ u + c w formed on the fly) against apply_dot on v stored
  // first, on the backend under test and on the reference: same bits, every tile, with and
  // without the scale.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;
    const auto n = static_cast<std::size_t>(A.host.num_rows());
    const std::vector<double> u = test::random_vector(n, seed + 600);
    const std::vector<double> w = test::random_vector(n, seed + 601);
    const std::vector<double> scale = test::random_vector(n, seed + 602);
    const double c = test::random_vector(1, seed + 603)[0];
    for (const bool scaled : {true, false}) {
      const std::vector<double> v = combination(scaled ? scale : std::vector<double>{}, u, c, w);
      for (const Backend* on : {&backend, &reference}) {
        CsrMatrix& M = on == &backend ? A.device : A.host;
        const Vector u_d = Vector::from_host(*on, u);
        const Vector w_d = Vector::from_host(*on, w);
        const Vector s_d = Vector::from_host(*on, scale);
        const Vector v_d = Vector::from_host(*on, v);
        DeviceScalars scalars(*on, 3);
        const double host_c[1] = {c};
        scalars.write(0, host_c);
        for (int tile : kAllTiles) {
          SCOPED_TRACE(A.name + ", tile " + std::to_string(tile) + (scaled ? ", scaled" : "") +
                       " on " + on->name());
          if (on == &backend) M.set_spmv_tile(tile);
          Vector y = Vector::constant(*on, n, kNaN);
          Vector y_stored = Vector::constant(*on, n, kNaN);

          M.apply_combination_dot(scaled ? &s_d : nullptr, u_d, scalars.slot(0), w_d, y,
                                  scalars.slot(1));
          M.apply_dot(v_d, y_stored, scalars.slot(2));

          std::vector<double> dots(3);
          scalars.read(0, dots);
          expect_same_bits(y.to_host(), y_stored.to_host(), "apply_combination_dot");
          EXPECT_EQ(bits(dots[1]), bits(dots[2])) << dots[1] << " vs " << dots[2];

          // Partial sums allowed: the same product, and the same sum once added in order.
          Vector y_partials = Vector::constant(*on, n, kNaN);
          const DeviceSum sum =
              M.apply_combination_dot(scaled ? &s_d : nullptr, u_d, scalars.slot(0), w_d,
                                      y_partials, scalars.slot(1), true);
          const double added = read_sum(*on, sum);
          expect_same_bits(y_partials.to_host(), y_stored.to_host(), "with partials");
          EXPECT_EQ(bits(added), bits(dots[2])) << added << " vs " << dots[2];
          if (on != &backend) break;  // the reference has no tiles
        }
      }
    }
  }
}

TEST_F(SpmvTest, FusedDotsWithOtherVectorsAddInTheModelledCudaOrder) {
  // apply_dots: y = A x with w·y, or with y·y and w·y; the product's bits are those of apply,
  // each dot's those of the modelled cuda order (as x·y of csr_spmv_dot).
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;
    const auto n = static_cast<std::size_t>(A.host.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + 700);
    const std::vector<double> w = test::random_vector(n, seed + 701);
    const Vector x_d = Vector::from_host(backend, x);
    const Vector w_d = Vector::from_host(backend, w);
    DeviceScalars scalars(backend, 3);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector y_d = Vector::constant(backend, n, kNaN);
      Vector y_plain = Vector::constant(backend, n, kNaN);
      A.device.apply(x_d, y_plain);
      const std::vector<double> expected_y = y_plain.to_host();

      const Vector* one[] = {&w_d};
      A.device.apply_dots(x_d, y_d, one, scalars.slot(0));
      const Vector* two[] = {nullptr, &w_d};
      A.device.apply_dots(x_d, y_d, two, scalars.slot(1));

      std::vector<double> dots(3);
      scalars.read(0, dots);
      const std::vector<double> y = y_d.to_host();
      expect_same_bits(y, expected_y, "apply_dots product");
      const double w_y = model_dot(A.host, w, y, tile);
      const double y_y = model_dot(A.host, y, y, tile);
      EXPECT_EQ(bits(dots[0]), bits(w_y)) << "w·y " << dots[0] << " vs " << w_y;
      EXPECT_EQ(bits(dots[1]), bits(y_y)) << "y·y " << dots[1] << " vs " << y_y;
      EXPECT_EQ(bits(dots[2]), bits(w_y)) << "second w·y " << dots[2] << " vs " << w_y;
    }
  }
}

TEST_F(SpmvTest, FusedHalfStepGivesTheBitsOfTheStoredHalfStep) {
  // apply_shifted_dots (s = u - alpha w, z = d ∘ s, y = A z, s·s, y·y, y·s in one pass) against
  // s and z formed on the host with the same operations, y = A z by apply, and each sum in the
  // modelled cuda order; every tile.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;
    const auto n = static_cast<std::size_t>(A.host.num_rows());
    const std::vector<double> u = test::random_vector(n, seed + 800);
    const std::vector<double> w = test::random_vector(n, seed + 801);
    const std::vector<double> d = test::random_vector(n, seed + 802);
    const std::vector<double> fraction = test::random_vector(2, seed + 803);
    const double numerator = fraction[0];
    const double denominator = fraction[1] + 2.0;  // away from 0
    const double c = -(numerator / denominator);
    std::vector<double> s(n);
    std::vector<double> z(n);
    for (std::size_t k = 0; k < n; ++k) {
      s[k] = u[k] + c * w[k];
      z[k] = d[k] * s[k];
    }
    const Vector u_d = Vector::from_host(backend, u);
    const Vector w_d = Vector::from_host(backend, w);
    const Vector d_d = Vector::from_host(backend, d);
    const Vector z_stored = Vector::from_host(backend, z);
    DeviceScalars scalars(backend, 5);
    const double fraction_host[2] = {numerator, denominator};
    scalars.write(0, fraction_host);
    for (int tile : kAllTiles) {
      SCOPED_TRACE(A.name + ", tile " + std::to_string(tile));
      A.device.set_spmv_tile(tile);
      Vector s_d = Vector::constant(backend, n, kNaN);
      Vector z_d = Vector::constant(backend, n, kNaN);
      Vector y_d = Vector::constant(backend, n, kNaN);
      Vector y_plain = Vector::constant(backend, n, kNaN);
      A.device.apply(z_stored, y_plain);
      A.device.apply_shifted_dots(d_d, u_d, scalars.slot(0), scalars.slot(1), w_d, s_d, z_d, y_d,
                                  scalars.slot(2));
      std::vector<double> sums(5);
      scalars.read(0, sums);
      const std::vector<double> y = y_d.to_host();
      expect_same_bits(s_d.to_host(), s, "s");
      expect_same_bits(z_d.to_host(), z, "z");
      expect_same_bits(y, y_plain.to_host(), "y = A z");
      const double s_s = model_dot(A.host, s, s, tile);
      const double y_y = model_dot(A.host, y, y, tile);
      const double y_s = model_dot(A.host, s, y, tile);
      EXPECT_EQ(bits(sums[2]), bits(s_s)) << "s·s " << sums[2] << " vs " << s_s;
      EXPECT_EQ(bits(sums[3]), bits(y_y)) << "y·y " << sums[3] << " vs " << y_y;
      EXPECT_EQ(bits(sums[4]), bits(y_s)) << "y·s " << sums[4] << " vs " << y_s;

      // Partial sums allowed (cuda, few row blocks): the same vectors, and the same sums once
      // added in order.
      const DeviceSum partial = A.device.apply_shifted_dots(
          d_d, u_d, scalars.slot(0), scalars.slot(1), w_d, s_d, z_d, y_d, scalars.slot(2), true);
      expect_same_bits(y_d.to_host(), y, "y with partials");
      for (int k = 0; k < 3; ++k) {
        const DeviceSum one = partial.count == 0
                                  ? DeviceSum{partial.values + k, 0}
                                  : DeviceSum{partial.values + k * partial.count, partial.count};
        const double added = read_sum(backend, one);
        EXPECT_EQ(bits(added), bits(sums[2 + static_cast<std::size_t>(k)]))
            << "sum " << k << " with partials: " << added;
      }
    }
    // The reference kernel: the same vectors, the sums within rounding of the model.
    const CsrMatrix& R = A.host;
    const Vector u_r = Vector::from_host(reference, u);
    const Vector w_r = Vector::from_host(reference, w);
    const Vector d_r = Vector::from_host(reference, d);
    Vector s_r = Vector::constant(reference, n, kNaN);
    Vector z_r = Vector::constant(reference, n, kNaN);
    Vector y_r = Vector::constant(reference, n, kNaN);
    DeviceScalars on_reference(reference, 5);
    on_reference.write(0, fraction_host);
    R.apply_shifted_dots(d_r, u_r, on_reference.slot(0), on_reference.slot(1), w_r, s_r, z_r, y_r,
                         on_reference.slot(2));
    std::vector<double> sums(5);
    on_reference.read(0, sums);
    expect_same_bits(s_r.to_host(), s, "reference s");
    expect_same_bits(z_r.to_host(), z, "reference z");
    const double s_s = model_dot(A.host, s, s, kAllTiles[0]);
    EXPECT_NEAR(sums[2], s_s, 1e-12 * std::abs(s_s) * static_cast<double>(n)) << "reference s·s";
  }
}

/// The square matrices of test_matrices and float_test_matrices (seed + 5), both as TestMatrix.
std::vector<TestMatrix> square_test_matrices_both_precisions(const Backend& backend,
                                                             std::uint64_t seed) {
  std::vector<TestMatrix> matrices;
  for (TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() == A.host.num_cols()) matrices.push_back(std::move(A));
  }
  for (FloatTestMatrix& F : float_test_matrices(backend, seed + 5)) {
    if (F.rounded_host.num_rows() != F.rounded_host.num_cols()) continue;
    matrices.push_back(
        {F.name + " (float32)", std::move(F.rounded_host), std::move(F.float_device)});
  }
  return matrices;
}

TEST_F(SpmvTest, FusedChebyshevStepGivesTheBitsOfResidualThenUpdate) {
  // chebyshev_step (r = b - A x, d = alpha D^-1 r + beta d, y = d + x in one pass) against the
  // residual of the same backend and the update formed on the host with the same operations;
  // every tile, both value precisions, beta zero (d not read: poisoned) and not; and
  // LinearOperator's unfused default on an operator that only forwards its products.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : square_test_matrices_both_precisions(backend, seed)) {
    const auto n = static_cast<std::size_t>(A.host.num_rows());
    const std::vector<double> x = test::random_vector(n, seed + 900);
    const std::vector<double> b = test::random_vector(n, seed + 901);
    const std::vector<double> dinv = test::random_vector(n, seed + 902);
    const std::vector<double> d0 = test::random_vector(n, seed + 903);
    const Vector x_d = Vector::from_host(backend, x);
    const Vector b_d = Vector::from_host(backend, b);
    const Vector dinv_d = Vector::from_host(backend, dinv);
    const test::ApplyOnlyOperator unfused(A.device);
    for (int tile : kAllTiles) {
      A.device.set_spmv_tile(tile);
      Vector r_d = Vector::constant(backend, n, kNaN);
      A.device.residual(b_d, x_d, r_d);
      const std::vector<double> r = r_d.to_host();
      for (const double beta : {0.0, -0.375}) {
        SCOPED_TRACE(A.name + ", tile " + std::to_string(tile) + ", beta " + std::to_string(beta));
        const double alpha = 1.25;
        std::vector<double> d_expected(n), y_expected(n);
        for (std::size_t i = 0; i < n; ++i) {
          const double z = dinv[i] * r[i];
          d_expected[i] = beta == 0.0 ? alpha * z : alpha * z + beta * d0[i];
          y_expected[i] = d_expected[i] + x[i];
        }
        const std::vector<double> d_start = beta == 0.0 ? std::vector<double>(n, kNaN) : d0;
        Vector d_d = Vector::from_host(backend, d_start);
        Vector y_d = Vector::constant(backend, n, kNaN);
        A.device.chebyshev_step(b_d, x_d, dinv_d, alpha, beta, d_d, y_d);
        expect_same_bits(d_d.to_host(), d_expected, "fused d");
        expect_same_bits(y_d.to_host(), y_expected, "fused y");

        Vector d_u = Vector::from_host(backend, d_start);
        Vector y_u = Vector::constant(backend, n, kNaN);
        unfused.chebyshev_step(b_d, x_d, dinv_d, alpha, beta, d_u, y_u);
        expect_same_bits(d_u.to_host(), d_expected, "unfused d");
        expect_same_bits(y_u.to_host(), y_expected, "unfused y");
      }
    }
  }
}

TEST_F(SpmvTest, ChebyshevFirstStepsEqualTheZeroStartUpdateThenTheStepBitForBit) {
  // csr_chebyshev_first_steps against blas::chebyshev_update (x_is_zero) into x_1 and d_0
  // followed by chebyshev_step from x_1, both on the backend under test: every tile, both
  // value precisions, beta zero and not; d starts poisoned (only written).
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (TestMatrix& A : square_test_matrices_both_precisions(backend, seed)) {
    const auto n = static_cast<std::size_t>(A.host.num_rows());
    const Vector b = Vector::from_host(backend, test::random_vector(n, seed + 910));
    const Vector dinv = Vector::from_host(backend, test::random_vector(n, seed + 911));
    for (int tile : kAllTiles) {
      A.device.set_spmv_tile(tile);
      for (const double beta : {0.0, 0.4375}) {
        SCOPED_TRACE(A.name + ", tile " + std::to_string(tile) + ", beta " + std::to_string(beta));
        const double alpha0 = 0.8125, alpha = 1.375;
        Vector d_expected = Vector::constant(backend, n, kNaN);
        Vector x1 = Vector::constant(backend, n, kNaN);
        Vector y_expected = Vector::constant(backend, n, kNaN);
        kernels::blas::chebyshev_update(backend, dinv.span(), b.span(), alpha0, 0.0,
                                        d_expected.span(), x1.span(), true);
        A.device.chebyshev_step(b, x1, dinv, alpha, beta, d_expected, y_expected);
        Vector d = Vector::constant(backend, n, kNaN);
        Vector y = Vector::constant(backend, n, kNaN);
        A.device.chebyshev_first_steps(b, dinv, alpha0, alpha, beta, d, y);
        expect_same_bits(d.to_host(), d_expected.to_host(), "d");
        expect_same_bits(y.to_host(), y_expected.to_host(), "y");
      }
    }
  }
}

TEST_F(SpmvTest, ChebyshevStepRejectsMisuse) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, test::random_sparse(50, 50, 5, false, seed));
  const CsrMatrix rect = CsrMatrix::from_coo(backend, test::random_sparse(50, 40, 5, false, seed));
  const Vector b = Vector::constant(backend, 50, 1.0);
  const Vector dinv = Vector::constant(backend, 50, 0.5);
  Vector x = Vector::constant(backend, 50, 1.0);
  Vector d = Vector::constant(backend, 50, 0.0);
  Vector y = Vector::constant(backend, 50, 0.0);
  Vector short_d = Vector::constant(backend, 49, 0.0);
  EXPECT_THROW(A.chebyshev_step(b, x, dinv, 1.0, 0.0, d, x), InvalidInput);
  // chebyshev_first_steps: y distinct from b, dinv and d; d distinct from b and dinv.
  EXPECT_THROW(A.chebyshev_first_steps(b, dinv, 1.0, 1.0, 0.0, d, d), InvalidInput);
  EXPECT_THROW(A.chebyshev_first_steps(x, dinv, 1.0, 1.0, 0.0, x, y), InvalidInput);
  EXPECT_THROW(A.chebyshev_first_steps(b, x, 1.0, 1.0, 0.0, x, y), InvalidInput);
  EXPECT_THROW(A.chebyshev_first_steps(b, dinv, 1.0, 1.0, 0.0, short_d, y), DimensionMismatch);
  EXPECT_THROW(A.chebyshev_step(b, x, dinv, 1.0, 0.0, d, d), InvalidInput);
  EXPECT_THROW(A.chebyshev_step(b, x, dinv, 1.0, 0.0, short_d, y), DimensionMismatch);
  EXPECT_THROW(rect.chebyshev_step(b, x, dinv, 1.0, 0.0, d, y), DimensionMismatch);
  const test::ApplyOnlyOperator unfused(A);
  EXPECT_THROW(unfused.chebyshev_step(b, x, dinv, 1.0, 0.0, d, x), InvalidInput);
}

TEST_F(SpmvTest, FusedHalfStepRejectsAliasedOperands) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, test::random_sparse(50, 50, 5, false, seed));
  const Vector d = Vector::constant(backend, 50, 1.0);
  const Vector u = Vector::constant(backend, 50, 1.0);
  Vector s = Vector::constant(backend, 50, 0.0);
  Vector y = Vector::constant(backend, 50, 0.0);
  Vector short_z = Vector::constant(backend, 49, 0.0);
  DeviceScalars scalars(backend, 5);
  EXPECT_THROW(
      A.apply_shifted_dots(d, u, scalars.slot(0), scalars.slot(1), u, s, s, y, scalars.slot(2)),
      InvalidInput);
  EXPECT_THROW(
      A.apply_shifted_dots(d, u, scalars.slot(0), scalars.slot(1), u, s, y, y, scalars.slot(2)),
      InvalidInput);
  EXPECT_THROW(A.apply_shifted_dots(d, u, scalars.slot(0), scalars.slot(1), u, s, short_z, y,
                                    scalars.slot(2)),
               DimensionMismatch);
}

TEST_F(SpmvTest, ApplyDotsRejectsMisuse) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, test::random_sparse(50, 50, 5, false, seed));
  const CsrMatrix rect = CsrMatrix::from_coo(backend, test::random_sparse(50, 40, 5, false, seed));
  const Vector x = Vector::constant(backend, 50, 1.0);
  const Vector x40 = Vector::constant(backend, 40, 1.0);
  const Vector w_short = Vector::constant(backend, 49, 1.0);
  Vector y = Vector::constant(backend, 50, 0.0);
  DeviceScalars scalars(backend, 3);
  const Vector* three[] = {nullptr, nullptr, nullptr};
  const Vector* short_w[] = {&w_short};
  const Vector* same[] = {&y};
  const Vector* none[] = {nullptr};
  EXPECT_THROW(A.apply_dots(x, y, three, scalars.slot(0)), InvalidInput);
  EXPECT_THROW(A.apply_dots(x, y, short_w, scalars.slot(0)), DimensionMismatch);
  EXPECT_THROW(A.apply_dots(x, y, same, scalars.slot(0)), InvalidInput);
  EXPECT_THROW(rect.apply_dots(x40, y, none, scalars.slot(0)), DimensionMismatch);
}

TEST_F(SpmvTest, ReferenceKernelsOnFloat32EqualReferenceOnRoundedDoubles) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = test::random_sparse(20011, 20011, 30, true, seed);
  const CsrMatrix rounded = rounded_to_float(CsrMatrix::from_coo(reference, coo));
  const CsrMatrix stored = CsrMatrix::from_coo(reference, coo, Precision::float32);
  const std::vector<double> x_host = test::random_vector(20011, seed + 1);
  const Vector x = Vector::from_host(reference, x_host);
  const Vector b = Vector::from_host(reference, test::random_vector(20011, seed + 2));
  Vector expected = Vector::constant(reference, 20011, kNaN);
  Vector actual = Vector::constant(reference, 20011, kNaN);

  const double dot_expected = rounded.apply_dot(x, expected);
  const double dot_actual = stored.apply_dot(x, actual);
  EXPECT_EQ(bits(dot_actual), bits(dot_expected));
  expect_same_bits(actual.to_host(), expected.to_host(), "csr_spmv_dot");
  rounded.residual(b, x, expected);
  stored.residual(b, x, actual);
  expect_same_bits(actual.to_host(), expected.to_host(), "csr_residual");
  rounded.diagonal(expected);
  stored.diagonal(actual);
  expect_same_bits(actual.to_host(), expected.to_host(), "csr_diagonal");
}

TEST_F(SpmvTest, WithPrecisionRoundsToFloatAndBackExactly) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = test::random_sparse(1000, 1000, 40, true, seed);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  const std::vector<double> rounded = rounded_to_float(A.copy_to(reference)).values_to_host();

  const CsrMatrix F = A.with_precision(Precision::float32);
  const CsrMatrix D = F.with_precision(Precision::float64);

  EXPECT_EQ(A.precision(), Precision::float64);
  EXPECT_EQ(F.precision(), Precision::float32);
  EXPECT_EQ(D.precision(), Precision::float64);
  EXPECT_TRUE(F.backend() == backend);
  EXPECT_EQ(F.nnz(), A.nnz());
  EXPECT_EQ(F.spmv_tile(), A.spmv_tile());
  EXPECT_EQ(F.row_ptr().to_host(), A.row_ptr().to_host());
  EXPECT_EQ(F.col_idx().to_host(), A.col_idx().to_host());
  expect_same_bits(F.values_to_host(), rounded, "float32 values");
  expect_same_bits(D.values().to_host(), rounded, "float32 -> float64 values");
  expect_same_bits(F.copy_to(reference).values_to_host(), rounded, "copy_to keeps float32");
  EXPECT_EQ(F.copy_to(reference).precision(), Precision::float32);
  expect_same_bits(F.with_precision(Precision::float32).values_to_host(), rounded,
                   "same precision");
  // 8 bytes per entry instead of 12: the values halve
  EXPECT_DOUBLE_EQ(A.spmv_bytes() - F.spmv_bytes(), 4.0 * static_cast<double>(A.nnz()));
}

TEST_F(SpmvTest, Float32ConversionRoundsToNearestAndKeepsInfAndNan) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23 (to even: 1); just above it rounds up; the
  // largest double below FLT_MAX + ulp/2 rounds to FLT_MAX; Inf, NaN and denormals convert.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {
      1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-52, 0x1.fffffefffffffp127, -inf, kNaN, 1e-300};
  const auto n = static_cast<index_t>(values.size());
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1);
  std::vector<index_t> col_idx(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    row_ptr[i + 1] = i + 1;
    col_idx[i] = i;
  }

  const CsrMatrix A =
      CsrMatrix::from_host(backend, n, n, row_ptr, col_idx, values, Precision::float32);

  const std::vector<float> stored = A.values_float32().to_host();
  EXPECT_EQ(stored[0], 1.0f);
  EXPECT_EQ(stored[1], 1.0f + 0x1p-23f);
  EXPECT_EQ(stored[2], std::numeric_limits<float>::max());
  EXPECT_EQ(stored[3], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(stored[4]));
  EXPECT_EQ(stored[5], 0.0f);
}

TEST_F(SpmvTest, ValueAccessorsThrowNotSupportedForTheOtherPrecision) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson3d(4));
  const CsrMatrix F = A.with_precision(Precision::float32);

  EXPECT_THROW(F.values(), NotSupported);
  EXPECT_THROW(A.values_float32(), NotSupported);
  try {
    F.values();
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(A.values_to_host(), F.values_to_host());  // Poisson's values are floats already
}

TEST_F(SpmvTest, Float32OverflowThrowsInvalidInputNamingRowAndColumn) {
  // Row 3 (1-based), column 5: a finite double beyond the float range. Rows 1 and 2 are empty.
  CooMatrix coo;
  coo.num_rows = 4;
  coo.num_cols = 6;
  coo.push_back(2, 1, 1.0);
  coo.push_back(2, 4, -1e39);
  coo.push_back(3, 0, 2.0);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  auto expect_names_entry = [](const auto& call) {
    try {
      call();
      ADD_FAILURE() << "no InvalidInput";
    } catch (const InvalidInput& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("row 3, column 5"), std::string::npos) << message;
    }
  };

  expect_names_entry([&] { (void)CsrMatrix::from_coo(backend, coo, Precision::float32); });
  expect_names_entry([&] { (void)A.with_precision(Precision::float32); });
  coo.values[1] = 0x1.ffffffp127;  // exactly FLT_MAX + ulp/2: rounds to infinity
  expect_names_entry([&] { (void)CsrMatrix::from_coo(backend, coo, Precision::float32); });
}

TEST_F(SpmvTest, UpdateValuesOfFloat32MatrixRoundsAndRejectsOverflowChangingNothing) {
  CooMatrix coo;
  coo.num_rows = 4;
  coo.num_cols = 6;
  coo.push_back(2, 1, 1.0);
  coo.push_back(2, 4, 3.0);
  coo.push_back(3, 0, 2.0);
  CsrMatrix A = CsrMatrix::from_coo(backend, coo, Precision::float32);
  const std::vector<double> rounded = {0.1f, 0.2f, 0.3f};

  A.update_values(Array<double>::from_host(backend, std::vector<double>{0.1, 0.2, 0.3}));

  EXPECT_EQ(A.values_to_host(), rounded);
  try {
    A.update_values(Array<double>::from_host(reference, std::vector<double>{5.0, -1e39, 7.0}));
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 3, column 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(A.values_to_host(), rounded);
  EXPECT_THROW(A.update_values(Array<double>::from_host(reference, std::vector<double>{1.0})),
               DimensionMismatch);
}

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
/// The cuda kernel results and the cpu kernel results, bit for bit, on one matrix and tile.
void expect_cuda_equals_cpu(const CooMatrix& coo, const std::string& name, int tile,
                            std::uint64_t seed, Precision precision = Precision::float64) {
  SCOPED_TRACE(name + ", tile " + std::to_string(tile) + ", " + std::string(to_string(precision)));
  const Backend cpu = Backend::cpu();
  const Backend gpu = Backend::cuda();
  CsrMatrix A_cpu = CsrMatrix::from_coo(cpu, coo, precision);
  CsrMatrix A_gpu = CsrMatrix::from_coo(gpu, coo, precision);
  A_cpu.set_spmv_tile(tile);
  A_gpu.set_spmv_tile(tile);
  const std::size_t rows = static_cast<std::size_t>(coo.num_rows);
  const std::vector<double> x = test::random_vector(static_cast<std::size_t>(coo.num_cols), seed);
  const std::vector<double> b = test::random_vector(rows, seed + 1);
  auto expect_same = [&](const Vector& on_cpu, const Vector& on_gpu, const char* what) {
    const std::vector<double> c = on_cpu.to_host();
    const std::vector<double> g = on_gpu.to_host();
    ASSERT_EQ(c.size(), g.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      ASSERT_EQ(bits(g[i]), bits(c[i])) << what << ", row " << i << ": " << g[i] << " vs " << c[i];
    }
  };
  const Vector x_c = Vector::from_host(cpu, x);
  const Vector x_g = Vector::from_host(gpu, x);
  const Vector b_c = Vector::from_host(cpu, b);
  const Vector b_g = Vector::from_host(gpu, b);
  Vector y_c = Vector::constant(cpu, rows, kNaN);
  Vector y_g = Vector::constant(gpu, rows, kNaN);

  A_cpu.apply(x_c, y_c);
  A_gpu.apply(x_g, y_g);
  expect_same(y_c, y_g, "csr_spmv");

  A_cpu.residual(b_c, x_c, y_c);
  A_gpu.residual(b_g, x_g, y_g);
  expect_same(y_c, y_g, "csr_residual");

  A_cpu.diagonal(y_c);
  A_gpu.diagonal(y_g);
  expect_same(y_c, y_g, "csr_diagonal");

  if (coo.num_rows == coo.num_cols) {
    const std::vector<double> dinv = test::random_vector(rows, seed + 2);
    const std::vector<double> d0 = test::random_vector(rows, seed + 3);
    const Vector dinv_c = Vector::from_host(cpu, dinv);
    const Vector dinv_g = Vector::from_host(gpu, dinv);
    Vector d_c = Vector::from_host(cpu, d0);
    Vector d_g = Vector::from_host(gpu, d0);
    A_cpu.chebyshev_step(b_c, x_c, dinv_c, 0.75, -0.25, d_c, y_c);
    A_gpu.chebyshev_step(b_g, x_g, dinv_g, 0.75, -0.25, d_g, y_g);
    expect_same(d_c, d_g, "csr_chebyshev_step d");
    expect_same(y_c, y_g, "csr_chebyshev_step y");
  }

  if (coo.num_rows == coo.num_cols) {
    const double dot_c = A_cpu.apply_dot(x_c, y_c);
    const double dot_g = A_gpu.apply_dot(x_g, y_g);
    expect_same(y_c, y_g, "csr_spmv_dot");
    EXPECT_EQ(bits(dot_g), bits(dot_c)) << "csr_spmv_dot: " << dot_g << " vs " << dot_c;

    const std::vector<double> w = test::random_vector(rows, seed + 2);
    const Vector w_c = Vector::from_host(cpu, w);
    const Vector w_g = Vector::from_host(gpu, w);
    DeviceScalars s_c(cpu, 2);
    DeviceScalars s_g(gpu, 2);
    const double c[2] = {-0.75, 0.0};
    s_c.write(0, c);
    s_g.write(0, c);
    A_cpu.apply_combination_dot(&b_c, x_c, s_c.slot(0), w_c, y_c, s_c.slot(1));
    A_gpu.apply_combination_dot(&b_g, x_g, s_g.slot(0), w_g, y_g, s_g.slot(1));
    std::vector<double> combined_c(2);
    std::vector<double> combined_g(2);
    s_c.read(0, combined_c);
    s_g.read(0, combined_g);
    expect_same(y_c, y_g, "csr_spmv_combination_dot");
    EXPECT_EQ(bits(combined_g[1]), bits(combined_c[1]))
        << "csr_spmv_combination_dot: " << combined_g[1] << " vs " << combined_c[1];

    // The fused half step: s, z, y and the three sums.
    DeviceScalars h_c(cpu, 5);
    DeviceScalars h_g(gpu, 5);
    const double fraction[2] = {0.375, -1.25};
    h_c.write(0, fraction);
    h_g.write(0, fraction);
    Vector half_c = Vector::constant(cpu, rows, kNaN);
    Vector half_g = Vector::constant(gpu, rows, kNaN);
    Vector z_c = Vector::constant(cpu, rows, kNaN);
    Vector z_g = Vector::constant(gpu, rows, kNaN);
    A_cpu.apply_shifted_dots(b_c, x_c, h_c.slot(0), h_c.slot(1), w_c, half_c, z_c, y_c,
                             h_c.slot(2));
    A_gpu.apply_shifted_dots(b_g, x_g, h_g.slot(0), h_g.slot(1), w_g, half_g, z_g, y_g,
                             h_g.slot(2));
    std::vector<double> sums_c(5);
    std::vector<double> sums_g(5);
    h_c.read(0, sums_c);
    h_g.read(0, sums_g);
    expect_same(half_c, half_g, "csr_spmv_shifted_dots s");
    expect_same(z_c, z_g, "csr_spmv_shifted_dots z");
    expect_same(y_c, y_g, "csr_spmv_shifted_dots y");
    for (std::size_t k = 2; k < 5; ++k) {
      EXPECT_EQ(bits(sums_g[k]), bits(sums_c[k]))
          << "csr_spmv_shifted_dots sum " << k - 2 << ": " << sums_g[k] << " vs " << sums_c[k];
    }
  }
}

TEST_F(SpmvTest, CudaKernelsEqualCpuKernelsBitForBit) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int tile : kAllTiles) {
    expect_cuda_equals_cpu(test::random_sparse(100003, 100003, 24, true, seed + 1),
                           "100003x100003 skewed, empty and one long row", tile, seed + 10);
    expect_cuda_equals_cpu(test::random_sparse(1000, 333, 9, false, seed + 2), "1000x333", tile,
                           seed + 20);
    expect_cuda_equals_cpu(boundary_lengths_matrix(seed + 3), "rows at the tile boundaries", tile,
                           seed + 30);
    expect_cuda_equals_cpu(long_row_matrix(1000003, 1000003, 1, 500002, seed + 4),
                           "a row of 500002 entries", tile, seed + 40);
    expect_cuda_equals_cpu(poisson3d(64), "poisson3d 64^3", tile, seed + 50);
    expect_cuda_equals_cpu(test::random_sparse(500009, 500009, 60, true, seed + 5),
                           "500009x500009, strided dots at every tile", tile, seed + 55);
    expect_cuda_equals_cpu(test::random_sparse(100003, 100003, 24, true, seed + 6),
                           "100003x100003 skewed, empty and one long row", tile, seed + 60,
                           Precision::float32);
    expect_cuda_equals_cpu(boundary_lengths_matrix(seed + 7), "rows at the tile boundaries", tile,
                           seed + 70, Precision::float32);
  }
}
#endif

}  // namespace
}  // namespace kryflow
