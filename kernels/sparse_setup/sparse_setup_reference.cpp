// Reference sparse setup kernels: single-threaded, written for clarity (the oracle).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sparse_setup::reference {

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

bool pattern_symmetric(const Backend&, const PatternView& a) {
  if (a.num_rows != a.num_cols) return false;
  // Row j of a^T lists the i with a_ij stored, in increasing i: compare with row j of a.
  std::vector<index_t> counts(static_cast<std::size_t>(a.num_cols) + 1, 0);
  const index_t nnz = a.row_ptr[a.num_rows];
  for (index_t k = 0; k < nnz; ++k) ++counts[static_cast<std::size_t>(a.col_idx[k]) + 1];
  for (index_t j = 0; j < a.num_cols; ++j) counts[j + 1] += counts[j];
  std::vector<index_t> transposed(static_cast<std::size_t>(nnz));
  std::vector<index_t> next(counts.begin(), counts.end() - 1);
  for (index_t i = 0; i < a.num_rows; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) transposed[next[a.col_idx[k]]++] = i;
  }
  for (index_t i = 0; i < a.num_rows; ++i) {
    if (counts[i + 1] - counts[i] != a.row_ptr[i + 1] - a.row_ptr[i]) return false;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (transposed[counts[i] + (k - a.row_ptr[i])] != a.col_idx[k]) return false;
    }
  }
  return true;
}

void expand_blocks(const Backend&, const PatternView& blocks, index_t block_size, index_t* row_ptr,
                   index_t* col_idx, index_t* block_position) {
  const index_t B = block_size;
  index_t position = 0;
  row_ptr[0] = 0;
  for (index_t I = 0; I < blocks.num_rows; ++I) {
    for (index_t r = 0; r < B; ++r) {
      for (index_t k = blocks.row_ptr[I]; k < blocks.row_ptr[I + 1]; ++k) {
        for (index_t c = 0; c < B; ++c) {
          col_idx[position] = blocks.col_idx[k] * B + c;
          block_position[position] = (k * B + r) * B + c;
          ++position;
        }
      }
      row_ptr[I * B + r + 1] = position;
    }
  }
}

index_t first_invalid_row(const Backend&, const PatternView& a) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      if (j < 0 || j >= a.num_cols || (k > a.row_ptr[i] && j <= a.col_idx[k - 1])) return i;
    }
  }
  return -1;
}

void transpose_count(const Backend&, const PatternView& a, Span<index_t> counts) {
  std::fill(counts.begin(), counts.end(), 0);
  for (index_t k = 0; k < a.row_ptr[a.num_rows]; ++k) ++counts[a.col_idx[k]];
}

void exclusive_scan_bounded(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets, std::int64_t bound) {
  const std::int64_t total = exclusive_scan(backend, counts, offsets);
  if (total > bound) {
    throw BackendError("sparse_setup::exclusive_scan_bounded: the counts add up to " +
                       std::to_string(total) + ", more than the bound " + std::to_string(bound) +
                       " the caller gave");
  }
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

void gather(const Backend&, Span<const double> x, Span<const index_t> map, Span<double> y) {
  for (std::size_t k = 0; k < y.size(); ++k) y[k] = x[map[k]];
}

namespace {

/// The sorted distinct columns of row i of A B.
std::vector<index_t> product_row_columns(const PatternView& a, const PatternView& b, index_t i) {
  std::vector<index_t> columns;
  for (index_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
    const index_t k = a.col_idx[p];
    columns.insert(columns.end(), b.col_idx + b.row_ptr[k], b.col_idx + b.row_ptr[k + 1]);
  }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  return columns;
}

}  // namespace

void spgemm_count(const Backend&, const PatternView& a, const PatternView& b,
                  Span<index_t> counts) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    counts[i] = static_cast<index_t>(product_row_columns(a, b, i).size());
  }
}

void spgemm_fill(const Backend&, const PatternView& a, const PatternView& b,
                 const index_t* c_row_ptr, index_t* c_col_idx) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    const std::vector<index_t> columns = product_row_columns(a, b, i);
    std::copy(columns.begin(), columns.end(), c_col_idx + c_row_ptr[i]);
  }
}

void spgemm_numeric(const Backend&, const MatrixView& a, const MatrixView& b, const PatternView& c,
                    double* c_values) {
  std::vector<double> row(static_cast<std::size_t>(b.pattern.num_cols), 0.0);
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    for (index_t p = a.pattern.row_ptr[i]; p < a.pattern.row_ptr[i + 1]; ++p) {
      const index_t k = a.pattern.col_idx[p];
      for (index_t q = b.pattern.row_ptr[k]; q < b.pattern.row_ptr[k + 1]; ++q) {
        row[b.pattern.col_idx[q]] += a.values[p] * b.values[q];
      }
    }
    for (index_t p = c.row_ptr[i]; p < c.row_ptr[i + 1]; ++p) c_values[p] = row[c.col_idx[p]];
    for (index_t p = a.pattern.row_ptr[i]; p < a.pattern.row_ptr[i + 1]; ++p) {
      const index_t k = a.pattern.col_idx[p];
      for (index_t q = b.pattern.row_ptr[k]; q < b.pattern.row_ptr[k + 1]; ++q) {
        row[b.pattern.col_idx[q]] = 0.0;
      }
    }
  }
}

void spgemm_fill_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                         const index_t* c_row_ptr, index_t* c_col_idx, double* c_values) {
  reference::spgemm_fill(backend, a.pattern, b.pattern, c_row_ptr, c_col_idx);
  const PatternView c{a.pattern.num_rows, b.pattern.num_cols, c_row_ptr, c_col_idx};
  reference::spgemm_numeric(backend, a, b, c, c_values);
}

}  // namespace kryflow::kernels::sparse_setup::reference
