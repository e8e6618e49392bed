// Dispatch of the CSR kernels to the backend that owns the data.
#include "kernels/spmv/spmv.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "kernels/backend/dispatch.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::spmv {

RowPartition partition_rows(Span<const index_t> row_ptr, int tile) {
  if (std::find(std::begin(kTiles), std::end(kTiles), tile) == std::end(kTiles)) {
    throw InvalidInput("spmv::partition_rows: tile must be 1024, 2048 or 4096, got " +
                       std::to_string(tile));
  }
  if (row_ptr.empty())
    throw InvalidInput("spmv::partition_rows: row_ptr needs num_rows + 1 entries");
  const index_t num_rows = static_cast<index_t>(row_ptr.size() - 1);
  RowPartition p;
  p.tile = tile;
  p.row_blocks.push_back(0);
  p.long_row_chunks.push_back(0);
  auto length = [&](index_t i) { return row_ptr[i + 1] - row_ptr[i]; };
  index_t i = 0;
  while (i < num_rows) {
    if (length(i) > tile) {
      const auto chunks = static_cast<index_t>(
          (static_cast<std::int64_t>(length(i)) + kLongRowChunk - 1) / kLongRowChunk);
      const auto slot = static_cast<index_t>(p.long_rows.size());
      p.long_rows.push_back(i);
      p.chunk_long_row.insert(p.chunk_long_row.end(), static_cast<std::size_t>(chunks), slot);
      p.long_row_chunks.push_back(p.long_row_chunks.back() + chunks);
      p.row_blocks.push_back(++i);
      continue;
    }
    const index_t first = i;
    index_t entries = 0;
    while (i < num_rows && i - first < kRowBlockRows && length(i) <= tile - entries) {
      entries += length(i);
      ++i;
    }
    p.row_blocks.push_back(i);
  }
  return p;
}

int default_tile(double mean_row_length) {
  return kRowBlockRows * mean_row_length <= 1024 ? 1024 : 2048;
}

namespace {

/// Exactly one of values and values_f32 holds the entries (both may be null without entries).
void require_values(const CsrView& a, const char* name) {
  const bool both = a.values != nullptr && a.values_f32 != nullptr;
  const bool none = a.nnz > 0 && a.values == nullptr && a.values_f32 == nullptr;
  if (both || none) {
    throw InvalidInput(std::string(name) + ": the view needs exactly one of values and " +
                       "values_f32, got " + (both ? "both" : "neither"));
  }
}

/// The cpu and cuda kernels walk the row-block partition; a view without one is misuse.
void require_partition(const Backend& backend, const CsrView& a, const char* name) {
  if (backend.kind() == BackendKind::reference) return;  // the reference reads no partition
  if (a.num_rows > 0 && (a.row_blocks == nullptr || a.num_row_blocks == 0)) {
    throw InvalidInput(std::string(name) + ": the view has no row-block partition");
  }
}

}  // namespace

/// The checks every CSR kernel shares, then the shared dispatch helper.
#define KRYFLOW_SPMV_DISPATCH(name, backend, a, ...) \
  require_values(a, "spmv::" #name);                 \
  require_partition(backend, a, "spmv::" #name);     \
  KRYFLOW_DISPATCH(spmv, name, backend, a, __VA_ARGS__)

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  KRYFLOW_SPMV_DISPATCH(csr_spmv, backend, a, x, y);
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  KRYFLOW_SPMV_DISPATCH(csr_residual, backend, a, b, x, r);
}

void csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                  double* result) {
  KRYFLOW_SPMV_DISPATCH(csr_spmv_dot, backend, a, x, y, result);
}

void csr_spmv_dots(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                   const ProductDots& dots, double* result) {
  if (dots.count < 1 || dots.count > kMaxProductDots) {
    throw InvalidInput("spmv::csr_spmv_dots: 1 to " + std::to_string(kMaxProductDots) +
                       " inner products, got " + std::to_string(dots.count));
  }
  KRYFLOW_SPMV_DISPATCH(csr_spmv_dots, backend, a, x, y, dots, result);
}

int csr_spmv_combination_dot(const Backend& backend, const CsrView& a, const Combination& v,
                             Span<double> y, double* result, bool leave_partials) {
  KRYFLOW_SPMV_DISPATCH(csr_spmv_combination_dot, backend, a, v, y, result, leave_partials);
}

int csr_spmv_shifted_dots(const Backend& backend, const CsrView& a, const ShiftedStep& v,
                          Span<double> y, double* result, bool leave_partials) {
  KRYFLOW_SPMV_DISPATCH(csr_spmv_shifted_dots, backend, a, v, y, result, leave_partials);
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  KRYFLOW_SPMV_DISPATCH(csr_diagonal, backend, a, d);
}

}  // namespace kryflow::kernels::spmv
