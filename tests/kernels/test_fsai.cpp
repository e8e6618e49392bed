// The FSAI setup kernels of the backend under test (kernels/fsai) against the reference oracle on
// random SPD matrices: G's pattern and values (the same bits: the same operations in the same
// order, no fma contraction in the build; kernels/fsai/fsai.hpp), the pattern against its
// definition, the filter, and the row a failing Cholesky factorization reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/fsai/fsai.hpp"
#include "kryflow/core/array.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kf = kernels::fsai;
namespace ss = kernels::sparse_setup;

/// A random symmetric, strictly diagonally dominant (so SPD) n x n CSR matrix on the host: each
/// row gets about `per_row` random off-diagonal entries in [-1, 1] (mirrored), row `long_row`
/// (when >= 0) about half of the columns.
struct HostCsr {
  index_t n = 0;
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
};

HostCsr random_spd(index_t n, int per_row, index_t long_row, std::uint64_t seed,
                   bool nonsymmetric = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<std::vector<std::pair<index_t, double>>> rows(static_cast<std::size_t>(n));
  // nonsymmetric: the mirrored entry gets a value of its own (the same pattern).
  auto add = [&](index_t i, index_t j, double v) {
    rows[i].emplace_back(j, v);
    rows[j].emplace_back(i, nonsymmetric ? uniform(rng) : v);
  };
  for (index_t i = 0; i < n; ++i) {
    const int count = i == long_row ? static_cast<int>(n / 2) : per_row;
    for (int k = 0; k < count; ++k) {
      const index_t j = column(rng);
      if (j != i) add(i, j, uniform(rng));
    }
  }
  HostCsr a;
  a.n = n;
  a.row_ptr.push_back(0);
  for (index_t i = 0; i < n; ++i) {
    std::vector<std::pair<index_t, double>>& row = rows[i];
    std::sort(row.begin(), row.end());
    std::vector<std::pair<index_t, double>> merged;  // duplicates summed
    for (const auto& e : row) {
      if (!merged.empty() && merged.back().first == e.first) {
        merged.back().second += e.second;
      } else {
        merged.push_back(e);
      }
    }
    double sum = 0.0;
    for (const auto& e : merged) sum += std::abs(e.second);
    merged.emplace_back(i, sum + 0.5 + 0.5 * std::abs(uniform(rng)));
    std::sort(merged.begin(), merged.end());
    for (const auto& e : merged) {
      a.col_idx.push_back(e.first);
      a.values.push_back(e.second);
    }
    a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
  }
  return a;
}

/// A's arrays on one backend.
struct DeviceCsr {
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  index_t n;
  DeviceCsr(const Backend& backend, const HostCsr& a)
      : row_ptr(Array<index_t>::from_host(backend, a.row_ptr)),
        col_idx(Array<index_t>::from_host(backend, a.col_idx)),
        values(Array<double>::from_host(backend, a.values)),
        n(a.n) {}
  ss::MatrixView view() const {
    return {{n, n, row_ptr.span().data(), col_idx.span().data()}, values.span().data()};
  }
};

/// G on one backend from A's pattern (as s) and values: pattern_count, a host scan, pattern_fill,
/// factor_values. Returns the failing row (or -1) and fills the host copies.
struct GOnHost {
  index_t longest = 0;
  index_t failed = -1;
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
};

GOnHost build_g(const Backend& backend, const HostCsr& a, index_t max_row_entries,
                double sign = 1.0) {
  const DeviceCsr d(backend, a);
  GOnHost g;
  Array<index_t> counts(backend, static_cast<std::size_t>(a.n));
  g.longest = kf::pattern_count(backend, d.view().pattern, max_row_entries, counts.span());
  const std::vector<index_t> host_counts = counts.to_host();
  g.row_ptr.assign(1, 0);
  for (index_t c : host_counts) g.row_ptr.push_back(g.row_ptr.back() + c);
  const Array<index_t> row_ptr = Array<index_t>::from_host(backend, g.row_ptr);
  Array<index_t> col_idx(backend, static_cast<std::size_t>(g.row_ptr.back()));
  kf::pattern_fill(backend, d.view().pattern, row_ptr.span().data(), col_idx.span().data());
  g.col_idx = col_idx.to_host();
  std::vector<double> initial(g.col_idx.size(), -7.0);  // rows left unwritten keep it
  Array<double> values = Array<double>::from_host(backend, initial);
  const ss::PatternView pattern{a.n, a.n, row_ptr.span().data(), col_idx.span().data()};
  g.failed = kf::factor_values(backend, d.view(), sign, pattern, g.longest, values.span().data());
  g.values = values.to_host();
  return g;
}

TEST(FsaiKernels, PatternAndValuesMatchTheReference) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    index_t n;
    int per_row;
    index_t long_row;
    index_t max_row_entries;
  };
  // Odd sizes, a row that reaches past a warp (and past the cut), rows longer than 32 and a cut
  // of one (G diagonal).
  // (Case{2500, 6, 2400, 150}: a row of 150 entries, one warp per block and 91 KB of shared
  // memory on cuda.)
  for (const Case c : {Case{0, 0, -1, 150}, Case{1, 0, -1, 150}, Case{7, 2, -1, 150},
                       Case{203, 4, 101, 150}, Case{203, 4, 150, 40}, Case{1001, 3, -1, 1},
                       Case{2500, 6, 2400, 120}, Case{2500, 6, 2400, 150}}) {
    SCOPED_TRACE("n " + std::to_string(c.n) + ", cut " + std::to_string(c.max_row_entries));
    const HostCsr a = random_spd(c.n, c.per_row, c.long_row, seed + c.n);
    const GOnHost ref = build_g(Backend::reference(), a, c.max_row_entries);
    const GOnHost got = build_g(backend, a, c.max_row_entries);
    ASSERT_EQ(ref.failed, -1);
    EXPECT_EQ(got.failed, -1);
    EXPECT_EQ(got.longest, ref.longest);
    EXPECT_LE(ref.longest, c.max_row_entries);
    ASSERT_EQ(got.row_ptr, ref.row_ptr);
    ASSERT_EQ(got.col_idx, ref.col_idx);
    EXPECT_EQ(got.values, ref.values);
    // The pattern by its definition: the last min(cut, count) columns <= i of row i of A.
    std::vector<index_t> expected;
    for (index_t i = 0; i < c.n; ++i) {
      std::vector<index_t> lower;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (a.col_idx[k] <= i) lower.push_back(a.col_idx[k]);
      }
      const std::size_t keep = std::min<std::size_t>(lower.size(), c.max_row_entries);
      expected.insert(expected.end(), lower.end() - static_cast<std::ptrdiff_t>(keep), lower.end());
    }
    EXPECT_EQ(ref.col_idx, expected);
    // Every row ends at its diagonal, whose value g_ii = 1 / L_mm is positive.
    for (index_t i = 0; i < c.n; ++i) {
      ASSERT_EQ(ref.col_idx[ref.row_ptr[i + 1] - 1], i);
      EXPECT_GT(ref.values[ref.row_ptr[i + 1] - 1], 0.0);
    }
  }
}

TEST(FsaiKernels, NonsymmetricFactorsMatchTheReference) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t cut : {1, 20, 150}) {
    SCOPED_TRACE("cut " + std::to_string(cut));
    const HostCsr a = random_spd(1200, 5, 600, seed + cut, true);  // row-dominant, nonsymmetric
    // G's pattern from the reference, then W' and Z^T on both backends.
    const GOnHost g = build_g(Backend::reference(), a, cut);
    const auto factors = [&](const Backend& b, index_t& failed) {
      const DeviceCsr d(b, a);
      const Array<index_t> row_ptr = Array<index_t>::from_host(b, g.row_ptr);
      const Array<index_t> col_idx = Array<index_t>::from_host(b, g.col_idx);
      Array<double> w(b, g.col_idx.size()), z(b, g.col_idx.size());
      const ss::PatternView pattern{a.n, a.n, row_ptr.span().data(), col_idx.span().data()};
      failed = kf::factor_values_nonsymmetric(b, d.view(), pattern, g.longest, w.span().data(),
                                              z.span().data());
      return std::make_pair(w.to_host(), z.to_host());
    };
    index_t ref_failed = 0, got_failed = 0;
    const auto ref = factors(Backend::reference(), ref_failed);
    const auto got = factors(backend, got_failed);
    ASSERT_EQ(ref_failed, -1);
    EXPECT_EQ(got_failed, -1);
    EXPECT_EQ(got.first, ref.first);
    EXPECT_EQ(got.second, ref.second);
  }
  // A zero pivot: rows 0 and 1 hold [[1, 1], [1, 1]], singular, so row 1's elimination fails.
  HostCsr singular;
  singular.n = 3;
  singular.row_ptr = {0, 2, 4, 5};
  singular.col_idx = {0, 1, 0, 1, 2};
  singular.values = {1.0, 1.0, 1.0, 1.0, 2.0};
  for (const Backend& b : {Backend::reference(), backend}) {
    const GOnHost g = build_g(Backend::reference(), singular, 10);
    const DeviceCsr d(b, singular);
    const Array<index_t> row_ptr = Array<index_t>::from_host(b, g.row_ptr);
    const Array<index_t> col_idx = Array<index_t>::from_host(b, g.col_idx);
    Array<double> w(b, g.col_idx.size()), z(b, g.col_idx.size());
    const ss::PatternView pattern{3, 3, row_ptr.span().data(), col_idx.span().data()};
    EXPECT_EQ(kf::factor_values_nonsymmetric(b, d.view(), pattern, g.longest, w.span().data(),
                                             z.span().data()),
              1);
  }
}

TEST(FsaiKernels, FilterMatchesTheReference) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = random_spd(1500, 6, 700, seed);
  const GOnHost g = build_g(Backend::reference(), a, 150);
  ASSERT_EQ(g.failed, -1);
  std::vector<double> diagonal(static_cast<std::size_t>(a.n));
  for (index_t i = 0; i < a.n; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (a.col_idx[k] == i) diagonal[i] = a.values[k];
    }
  }
  // A second factor in G's pattern (as Z^T of the nonsymmetric form): G's values permuted.
  std::vector<double> other(g.values.rbegin(), g.values.rend());
  struct Filtered {
    index_t longest;
    std::vector<index_t> row_ptr, col_idx;
    bool operator==(const Filtered&) const = default;
  };
  // The filter on the reference's G on both backends (the same inputs, so the same bits).
  const auto filtered = [&](const Backend& b, double tolerance, bool with_other) {
    const Array<index_t> row_ptr = Array<index_t>::from_host(b, g.row_ptr);
    const Array<index_t> col_idx = Array<index_t>::from_host(b, g.col_idx);
    const Array<double> values = Array<double>::from_host(b, g.values);
    const Array<double> second = Array<double>::from_host(b, other);
    const double* o = with_other ? second.span().data() : nullptr;
    const Array<double> d = Array<double>::from_host(b, diagonal);
    const ss::PatternView pattern{a.n, a.n, row_ptr.span().data(), col_idx.span().data()};
    Array<index_t> counts(b, static_cast<std::size_t>(a.n));
    Filtered f;
    f.longest = kf::filter_count(b, pattern, values.span().data(), o, d.span().data(), tolerance,
                                 counts.span());
    f.row_ptr.push_back(0);
    for (index_t c : counts.to_host()) f.row_ptr.push_back(f.row_ptr.back() + c);
    const Array<index_t> f_ptr = Array<index_t>::from_host(b, f.row_ptr);
    Array<index_t> f_col(b, static_cast<std::size_t>(f.row_ptr.back()));
    kf::filter_fill(b, pattern, values.span().data(), o, d.span().data(), tolerance,
                    f_ptr.span().data(), f_col.span().data());
    f.col_idx = f_col.to_host();
    return f;
  };
  // The definition, on the host: the diagonal always, the others by the scaled test on G (or on
  // the second factor).
  const auto passes = [&](const std::vector<double>& v, index_t i, index_t k, double tolerance) {
    const double vii = v[g.row_ptr[i + 1] - 1];
    return std::abs(v[k]) * std::sqrt(diagonal[g.col_idx[k]]) >=
           tolerance * std::abs(vii) * std::sqrt(diagonal[i]);
  };
  for (const bool with_other : {false, true}) {
    for (const double tolerance : {0.0, 0.05, 0.3, 1e9}) {
      SCOPED_TRACE("tolerance " + std::to_string(tolerance) + (with_other ? ", two factors" : ""));
      const Filtered ref = filtered(Backend::reference(), tolerance, with_other);
      EXPECT_EQ(filtered(backend, tolerance, with_other), ref);
      std::vector<index_t> expected;
      index_t longest = 0;
      for (index_t i = 0; i < a.n; ++i) {
        index_t count = 0;
        for (index_t k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
          if (g.col_idx[k] == i || passes(g.values, i, k, tolerance) ||
              (with_other && passes(other, i, k, tolerance))) {
            expected.push_back(g.col_idx[k]);
            ++count;
          }
        }
        longest = std::max(longest, count);
      }
      EXPECT_EQ(ref.col_idx, expected);
      EXPECT_EQ(ref.longest, longest);
      if (tolerance == 0.0) EXPECT_EQ(ref.col_idx, g.col_idx);
      if (tolerance == 1e9) EXPECT_EQ(ref.col_idx.size(), static_cast<std::size_t>(a.n));
    }
  }
}

TEST(FsaiKernels, ANegativeDefiniteMatrixWithSignMinusOneGivesThePositiveOnesBits) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const HostCsr a = random_spd(300, 5, 17, seed);
  HostCsr negated = a;
  for (double& v : negated.values) v = -v;
  const GOnHost positive = build_g(backend, a, 64);
  const GOnHost negative = build_g(backend, negated, 64, -1.0);
  EXPECT_EQ(negative.failed, -1);
  EXPECT_EQ(negative.values, positive.values);         // -1 * -v = v exactly
  EXPECT_EQ(build_g(backend, negated, 64).failed, 0);  // sign +1: row 0's pivot is negative
}

TEST(FsaiKernels, TheFirstIndefiniteRowIsReported) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  HostCsr a = random_spd(500, 4, -1, seed);
  // Rows 137 and 311 lose their diagonal's sign: any pattern through them is indefinite.
  for (const index_t bad : {311, 137}) {
    for (index_t k = a.row_ptr[bad]; k < a.row_ptr[bad + 1]; ++k) {
      if (a.col_idx[k] == bad) a.values[k] = -a.values[k];
    }
  }
  const GOnHost ref = build_g(Backend::reference(), a, 64);
  const GOnHost got = build_g(backend, a, 64);
  EXPECT_GE(ref.failed, 0);
  EXPECT_EQ(ref.failed, 137);  // no earlier row's pattern reaches column 137 (J_i <= i)
  EXPECT_EQ(got.failed, ref.failed);
  // A NaN on the diagonal fails its row too.
  HostCsr b = random_spd(40, 3, -1, seed + 1);
  for (index_t k = b.row_ptr[0]; k < b.row_ptr[1]; ++k) {
    if (b.col_idx[k] == 0) b.values[k] = std::nan("");
  }
  EXPECT_EQ(build_g(backend, b, 64).failed, 0);
  // An empty row (no diagonal) fails; a matrix with no entries at all fails at row 0.
  HostCsr e = random_spd(50, 3, -1, seed + 2);
  HostCsr holed;
  holed.n = e.n;
  holed.row_ptr.push_back(0);
  for (index_t i = 0; i < e.n; ++i) {
    for (index_t k = e.row_ptr[i]; k < e.row_ptr[i + 1]; ++k) {
      if (i != 23 && e.col_idx[k] != 23) {
        holed.col_idx.push_back(e.col_idx[k]);
        holed.values.push_back(e.values[k]);
      }
    }
    holed.row_ptr.push_back(static_cast<index_t>(holed.col_idx.size()));
  }
  EXPECT_EQ(build_g(Backend::reference(), holed, 64).failed, 23);
  EXPECT_EQ(build_g(backend, holed, 64).failed, 23);
  HostCsr none;
  none.n = 5;
  none.row_ptr.assign(6, 0);
  EXPECT_EQ(build_g(Backend::reference(), none, 64).failed, 0);
  EXPECT_EQ(build_g(backend, none, 64).failed, 0);
}

}  // namespace
}  // namespace kryflow
