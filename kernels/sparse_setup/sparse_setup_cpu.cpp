// OpenMP sparse setup kernels: rows of the SpGEMM phases and gathers run in parallel, each
// thread with its own dense marker and accumulator; scans and transposition are one sequential
// pass (memory-bound counting sorts).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sparse_setup::cpu {
namespace {

using size_type = std::int64_t;

/// Work of a SpGEMM phase for the thread count: entries of A plus entries of B.
size_type spgemm_work(const PatternView& a, const PatternView& b) {
  return static_cast<size_type>(a.row_ptr[a.num_rows]) + b.row_ptr[b.num_rows];
}

/// Calls body(i, marker, columns) for every row of A in parallel; marker (b.num_cols entries,
/// all -1 on entry and on exit of each call) and columns (scratch) belong to the thread.
template <class Body>
void for_each_row(const Backend& backend, const PatternView& a, const PatternView& b, Body body) {
  const int threads = parallel::threads_for(backend, spgemm_work(a, b));
  const size_type n = a.num_rows;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<index_t> marker(static_cast<std::size_t>(b.num_cols), -1);
    std::vector<index_t> columns;
#pragma omp for schedule(dynamic, parallel::chunk_for(n, threads))
    for (size_type i = 0; i < n; ++i) body(static_cast<index_t>(i), marker, columns);
  }
}

/// The distinct columns of row i of A B into `columns` (unsorted); marker as in for_each_row.
void collect_columns(const PatternView& a, const PatternView& b, index_t i,
                     std::vector<index_t>& marker, std::vector<index_t>& columns) {
  columns.clear();
  for (index_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
    const index_t k = a.col_idx[p];
    for (index_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
      const index_t j = b.col_idx[q];
      if (marker[j] != i) {
        marker[j] = i;
        columns.push_back(j);
      }
    }
  }
  for (const index_t j : columns) marker[j] = -1;
}

}  // namespace

std::int64_t exclusive_scan(const Backend&, Span<const index_t> counts, Span<index_t> offsets) {
  std::int64_t total = 0;
  offsets[0] = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    total += counts[i];
    if (total > std::numeric_limits<index_t>::max()) {
      throw NotSupported("sparse_setup::exclusive_scan: " + std::to_string(total) +
                         " entries exceed the 32-bit index range");
    }
    offsets[i + 1] = static_cast<index_t>(total);
  }
  return total;
}

void expand_blocks(const Backend& backend, const PatternView& blocks, index_t block_size,
                   index_t* row_ptr, index_t* col_idx, index_t* block_position) {
  // Scalar row r of block row I starts at B^2 row_ptr_b[I] + r B (row_ptr_b[I+1] - row_ptr_b[I]):
  // every row is written independently.
  const index_t B = block_size;
  const size_type rows = static_cast<size_type>(blocks.num_rows) * B;
  row_ptr[0] = 0;
  parallel::for_each(backend, static_cast<size_type>(blocks.row_ptr[blocks.num_rows]) * B * B, rows,
                     [&](size_type row) {
                       const auto I = static_cast<index_t>(row / B);
                       const auto r = static_cast<index_t>(row % B);
                       const index_t begin = blocks.row_ptr[I], end = blocks.row_ptr[I + 1];
                       index_t position = B * B * begin + r * B * (end - begin);
                       for (index_t k = begin; k < end; ++k) {
                         for (index_t c = 0; c < B; ++c, ++position) {
                           col_idx[position] = blocks.col_idx[k] * B + c;
                           block_position[position] = (k * B + r) * B + c;
                         }
                       }
                       row_ptr[row + 1] = position;
                     });
}

index_t first_invalid_row(const Backend& backend, const PatternView& a) {
  // The first invalid row of each chunk of rows, then the first over the chunks.
  constexpr size_type kChunks = 256;
  std::vector<index_t> first(kChunks, -1);
  const size_type rows = a.num_rows;
  parallel::for_each(backend, a.row_ptr[a.num_rows], kChunks, [&](size_type c) {
    for (size_type row = rows * c / kChunks; row < rows * (c + 1) / kChunks; ++row) {
      const auto i = static_cast<index_t>(row);
      bool valid = true;
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1] && valid; ++k) {
        const index_t j = a.col_idx[k];
        valid = j >= 0 && j < a.num_cols && (k == a.row_ptr[i] || j > a.col_idx[k - 1]);
      }
      if (!valid) {
        first[static_cast<std::size_t>(c)] = i;
        return;
      }
    }
  });
  for (const index_t row : first) {
    if (row >= 0) return row;
  }
  return -1;
}

bool pattern_symmetric(const Backend& backend, const PatternView& a) {
  if (a.num_rows != a.num_cols) return false;
  // Integer sums modulo 2^64 per chunk of rows, then over the chunks: any order, any thread
  // count, the same result.
  constexpr size_type kChunks = 256;
  std::vector<std::uint64_t> forward(kChunks, 0), backward(kChunks, 0);
  const size_type rows = a.num_rows;
  parallel::for_each(backend, a.row_ptr[a.num_rows], kChunks, [&](size_type c) {
    std::uint64_t f = 0, b = 0;
    for (size_type row = rows * c / kChunks; row < rows * (c + 1) / kChunks; ++row) {
      const auto i = static_cast<index_t>(row);
      for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        f += pair_hash(i, a.col_idx[k]);
        b += pair_hash(a.col_idx[k], i);
      }
    }
    forward[static_cast<std::size_t>(c)] = f;
    backward[static_cast<std::size_t>(c)] = b;
  });
  std::uint64_t f = 0, b = 0;
  for (size_type c = 0; c < kChunks; ++c) {
    f += forward[static_cast<std::size_t>(c)];
    b += backward[static_cast<std::size_t>(c)];
  }
  return f == b;
}

void transpose_count(const Backend&, const PatternView& a, Span<index_t> counts) {
  std::fill(counts.begin(), counts.end(), 0);
  const index_t nnz = a.row_ptr[a.num_rows];
  for (index_t k = 0; k < nnz; ++k) ++counts[a.col_idx[k]];
}

void exclusive_scan_bounded(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets, std::int64_t bound) {
  reference::exclusive_scan_bounded(backend, counts, offsets, bound);  // both scans sequential
}

void transpose_fill(const Backend&, const PatternView& a, std::int64_t, const index_t* at_row_ptr,
                    index_t* at_col_idx, index_t* source) {
  std::vector<index_t> next(at_row_ptr, at_row_ptr + a.num_cols);
  for (index_t i = 0; i < a.num_rows; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t position = next[a.col_idx[k]]++;
      at_col_idx[position] = i;
      source[position] = k;
    }
  }
}

void gather(const Backend& backend, Span<const double> x, Span<const index_t> map, Span<double> y) {
  const auto n = static_cast<size_type>(y.size());
  parallel::for_each(backend, n, n, [&](size_type k) { y[k] = x[map[k]]; });
}

void spgemm_count(const Backend& backend, const PatternView& a, const PatternView& b,
                  Span<index_t> counts) {
  for_each_row(backend, a, b,
               [&](index_t i, std::vector<index_t>& marker, std::vector<index_t>& columns) {
                 collect_columns(a, b, i, marker, columns);
                 counts[i] = static_cast<index_t>(columns.size());
               });
}

void spgemm_fill(const Backend& backend, const PatternView& a, const PatternView& b,
                 const index_t* c_row_ptr, index_t* c_col_idx) {
  for_each_row(backend, a, b,
               [&](index_t i, std::vector<index_t>& marker, std::vector<index_t>& columns) {
                 collect_columns(a, b, i, marker, columns);
                 std::sort(columns.begin(), columns.end());
                 std::copy(columns.begin(), columns.end(), c_col_idx + c_row_ptr[i]);
               });
}

void spgemm_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                    const PatternView& c, double* c_values) {
  const int threads = parallel::threads_for(backend, spgemm_work(a.pattern, b.pattern));
  const size_type n = a.pattern.num_rows;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<double> row(static_cast<std::size_t>(b.pattern.num_cols), 0.0);
#pragma omp for schedule(dynamic, parallel::chunk_for(n, threads))
    for (size_type i = 0; i < n; ++i) {
      const PatternView& ap = a.pattern;
      const PatternView& bp = b.pattern;
      for (index_t p = ap.row_ptr[i]; p < ap.row_ptr[i + 1]; ++p) {
        const index_t k = ap.col_idx[p];
        for (index_t q = bp.row_ptr[k]; q < bp.row_ptr[k + 1]; ++q) {
          row[bp.col_idx[q]] += a.values[p] * b.values[q];
        }
      }
      for (index_t p = c.row_ptr[i]; p < c.row_ptr[i + 1]; ++p) {
        c_values[p] = row[c.col_idx[p]];
      }
      for (index_t p = ap.row_ptr[i]; p < ap.row_ptr[i + 1]; ++p) {
        const index_t k = ap.col_idx[p];
        for (index_t q = bp.row_ptr[k]; q < bp.row_ptr[k + 1]; ++q) row[bp.col_idx[q]] = 0.0;
      }
    }
  }
}

void spgemm_fill_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                         const index_t* c_row_ptr, index_t* c_col_idx, double* c_values) {
  cpu::spgemm_fill(backend, a.pattern, b.pattern, c_row_ptr, c_col_idx);
  const PatternView c{a.pattern.num_rows, b.pattern.num_cols, c_row_ptr, c_col_idx};
  cpu::spgemm_numeric(backend, a, b, c, c_values);
}

}  // namespace kryflow::kernels::sparse_setup::cpu
