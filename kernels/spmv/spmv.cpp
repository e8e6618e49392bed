// Dispatch of the CSR kernels to the backend that owns the data.
#include "kernels/spmv/spmv.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

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
void require_partition(const CsrView& a, const char* name) {
  if (a.num_rows > 0 && (a.row_blocks == nullptr || a.num_row_blocks == 0)) {
    throw InvalidInput(std::string(name) + ": the view has no row-block partition");
  }
}

}  // namespace

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  require_values(a, "spmv::csr_spmv");
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv(backend, a, x, y);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_spmv");
      return cpu::csr_spmv(backend, a, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_spmv");
      return cuda::csr_spmv(backend, a, x, y);
#else
      throw NotCompiled("spmv::csr_spmv: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv: unknown backend");
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  require_values(a, "spmv::csr_residual");
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_residual(backend, a, b, x, r);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_residual");
      return cpu::csr_residual(backend, a, b, x, r);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_residual");
      return cuda::csr_residual(backend, a, b, x, r);
#else
      throw NotCompiled("spmv::csr_residual: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_residual: unknown backend");
}

void csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                  double* result) {
  require_values(a, "spmv::csr_spmv_dot");
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv_dot(backend, a, x, y, result);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_spmv_dot");
      return cpu::csr_spmv_dot(backend, a, x, y, result);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_spmv_dot");
      return cuda::csr_spmv_dot(backend, a, x, y, result);
#else
      throw NotCompiled("spmv::csr_spmv_dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv_dot: unknown backend");
}

void csr_spmv_dots(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                   const ProductDots& dots, double* result) {
  require_values(a, "spmv::csr_spmv_dots");
  if (dots.count < 1 || dots.count > kMaxProductDots) {
    throw InvalidInput("spmv::csr_spmv_dots: 1 to " + std::to_string(kMaxProductDots) +
                       " inner products, got " + std::to_string(dots.count));
  }
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv_dots(backend, a, x, y, dots, result);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_spmv_dots");
      return cpu::csr_spmv_dots(backend, a, x, y, dots, result);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_spmv_dots");
      return cuda::csr_spmv_dots(backend, a, x, y, dots, result);
#else
      throw NotCompiled("spmv::csr_spmv_dots: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv_dots: unknown backend");
}

int csr_spmv_combination_dot(const Backend& backend, const CsrView& a, const Combination& v,
                             Span<double> y, double* result, bool leave_partials) {
  require_values(a, "spmv::csr_spmv_combination_dot");
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv_combination_dot(backend, a, v, y, result, leave_partials);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_spmv_combination_dot");
      return cpu::csr_spmv_combination_dot(backend, a, v, y, result, leave_partials);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_spmv_combination_dot");
      return cuda::csr_spmv_combination_dot(backend, a, v, y, result, leave_partials);
#else
      throw NotCompiled("spmv::csr_spmv_combination_dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv_combination_dot: unknown backend");
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  require_values(a, "spmv::csr_diagonal");
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_diagonal(backend, a, d);
    case BackendKind::cpu:
      require_partition(a, "spmv::csr_diagonal");
      return cpu::csr_diagonal(backend, a, d);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      require_partition(a, "spmv::csr_diagonal");
      return cuda::csr_diagonal(backend, a, d);
#else
      throw NotCompiled("spmv::csr_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_diagonal: unknown backend");
}

}  // namespace kryflow::kernels::spmv
