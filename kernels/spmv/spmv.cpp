// Dispatch of the CSR kernels to the backend that owns the data.
#include "kernels/spmv/spmv.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "kernels/backend/dispatch.hpp"
#include "kernels/spmv/partition_walk.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::spmv {

namespace {

void check_tile(int tile, const char* who) {
  if (std::find(std::begin(kTiles), std::end(kTiles), tile) == std::end(kTiles)) {
    throw InvalidInput(std::string(who) + ": tile must be 1024, 2048 or 4096, got " +
                       std::to_string(tile));
  }
}

/// Collects the blocks and long rows of split_segment into a RowPartition.
struct HostEmitter {
  RowPartition* p;
  void block(index_t end) { p->row_blocks.push_back(end); }
  void long_row(index_t row, index_t chunks) {
    const auto slot = static_cast<index_t>(p->long_rows.size());
    p->long_rows.push_back(row);
    p->chunk_long_row.insert(p->chunk_long_row.end(), static_cast<std::size_t>(chunks), slot);
    p->long_row_chunks.push_back(p->long_row_chunks.back() + chunks);
  }
};

}  // namespace

RowPartition partition_rows(Span<const index_t> row_ptr, int tile) {
  check_tile(tile, "spmv::partition_rows");
  if (row_ptr.empty())
    throw InvalidInput("spmv::partition_rows: row_ptr needs num_rows + 1 entries");
  const index_t num_rows = static_cast<index_t>(row_ptr.size() - 1);
  RowPartition p;
  p.tile = tile;
  p.row_blocks.push_back(0);
  p.long_row_chunks.push_back(0);
  HostEmitter emit{&p};
  for (index_t first = 0; first < num_rows; first += kPartitionSegmentRows) {
    split_segment(row_ptr.data(), first, partition_segment_end(first, num_rows), tile, emit);
  }
  return p;
}

namespace {

/// build_partition on the host backends (arguments checked by the dispatch): the facts in one
/// pass, then partition_rows.
PartitionArrays host_build_partition(const Backend& backend, Span<const index_t> row_ptr,
                                     int tile) {
  const index_t num_rows = static_cast<index_t>(row_ptr.size() - 1);
  PartitionArrays out;
  out.tile = tile;
  RowPointerFacts& f = out.facts;
  f.first = row_ptr[0];
  f.last = row_ptr[num_rows];
  if (num_rows > 0) {
    f.min_length = std::numeric_limits<index_t>::max();
    f.max_length = std::numeric_limits<index_t>::min();
  }
  for (index_t i = 0; i < num_rows; ++i) {
    const index_t length = row_ptr[i + 1] - row_ptr[i];
    if (length < 0 && f.first_decrease < 0) f.first_decrease = i;
    f.min_length = std::min(f.min_length, length);
    f.max_length = std::max(f.max_length, length);
    if (length == 0) ++f.empty_rows;
  }
  if (!f.valid()) return out;
  const RowPartition p = partition_rows(row_ptr, tile);
  out.row_blocks = Array<index_t>::from_host(backend, p.row_blocks);
  out.long_rows = Array<index_t>::from_host(backend, p.long_rows);
  out.long_row_chunks = Array<index_t>::from_host(backend, p.long_row_chunks);
  out.chunk_long_row = Array<index_t>::from_host(backend, p.chunk_long_row);
  out.counters = Array<unsigned int>::from_host(
      backend, std::vector<unsigned int>(p.long_rows.size() + 1, 0u));
  return out;
}

}  // namespace

namespace reference {
std::vector<PartitionArrays> build_partitions(const Backend& backend,
                                              const std::vector<PartitionRequest>& requests) {
  std::vector<PartitionArrays> out;
  for (const PartitionRequest& r : requests) {
    out.push_back(host_build_partition(backend, r.row_ptr, r.tile));
  }
  return out;
}
}  // namespace reference
namespace cpu {
std::vector<PartitionArrays> build_partitions(const Backend& backend,
                                              const std::vector<PartitionRequest>& requests) {
  return reference::build_partitions(backend, requests);
}
}  // namespace cpu

std::vector<PartitionArrays> build_partitions(const Backend& backend,
                                              const std::vector<PartitionRequest>& requests) {
  for (const PartitionRequest& r : requests) {
    check_tile(r.tile, "spmv::build_partitions");
    if (r.row_ptr.empty())
      throw InvalidInput("spmv::build_partitions: row_ptr needs num_rows + 1 entries");
  }
  if (requests.empty()) return {};
  KRYFLOW_DISPATCH(spmv, build_partitions, backend, requests);
}

PartitionArrays build_partition(const Backend& backend, Span<const index_t> row_ptr, int tile) {
  check_tile(tile, "spmv::build_partition");
  if (row_ptr.empty())
    throw InvalidInput("spmv::build_partition: row_ptr needs num_rows + 1 entries");
  return std::move(build_partitions(backend, {PartitionRequest{row_ptr, tile}}).front());
}

int default_tile(double mean_row_length, std::int64_t nnz) {
  return nnz <= kSmallProductEntries || kRowBlockRows * mean_row_length <= 1024 ? 1024 : 2048;
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

void csr_chebyshev_step(const Backend& backend, const CsrView& a, Span<const double> b,
                        Span<const double> x, Span<const double> dinv, double alpha, double beta,
                        Span<double> d, Span<double> y) {
  KRYFLOW_SPMV_DISPATCH(csr_chebyshev_step, backend, a, b, x, dinv, alpha, beta, d, y);
}

void csr_chebyshev_first_steps(const Backend& backend, const CsrView& a, Span<const double> b,
                               Span<const double> dinv, double alpha0, double alpha, double beta,
                               Span<double> d, Span<double> y) {
  KRYFLOW_SPMV_DISPATCH(csr_chebyshev_first_steps, backend, a, b, dinv, alpha0, alpha, beta, d, y);
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
