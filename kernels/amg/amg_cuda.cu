// CUDA AMG setup kernels: one thread (strength and the prolongation smoother: a group of lanes)
// per row running the per-row formulas of amg_rows.hpp (the same code as the reference and cpu
// kernels, hence the same bits), PMIS and MIS(2) in parallel rounds, and the greedy splitting in
// a single thread (sequential by definition).
//
// Interpolation rows keep their points in per-thread arrays of kLocalPoints entries; a row that
// may have more (more than kLocalPoints coarse points in S_i, or for extended_i in S_i and the
// S_k of its fine points k, see rows::point_capacity) is listed by the first pass and
// computed by a second kernel, one thread per row with its own slice of global scratch (two
// waits in between read how many such rows exist, their largest bound and the scratch they
// need together).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/cub.cuh>
#include <string>

#include "kernels/amg/amg.hpp"
#include "kernels/amg/amg_rows.hpp"
#include "kernels/backend/cooperative.cuh"
#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/backend/lane_group.cuh"
#include "kernels/coloring/coloring.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::amg::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::lane_group_mask;
using kernels::cuda::read_integers;
using size_type = long long;

constexpr int kBlock = 256;
/// Points an interpolation row keeps in per-thread (local-memory) arrays.
constexpr index_t kLocalPoints = 32;
/// Scratch of the second interpolation pass: its long rows run in windows of at most this many
/// bytes of points (see run_rows).
constexpr std::size_t kLongRowScratchBytes = std::size_t{256} << 20;

Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

#define KRYFLOW_FOR_EACH_ROW(i, n)                                                \
  for (size_type i##_ = blockIdx.x * size_type{kBlock} + threadIdx.x; i##_ < (n); \
       i##_ += size_type{gridDim.x} * kBlock)                                     \
    if (const auto i = static_cast<index_t>(i##_); true)

// ---------------------------------------------------------------------------------------------
// Strength: a group of kStrengthLanes lanes per row, consecutive lanes on consecutive entries
// (rows::strength_row's facts by group reductions, then rows::strong_entry per entry and a
// ballot to place the strong ones): coalesced reads and writes where a thread per row read and
// wrote each row alone (slow on the coarse levels' rows of tens of entries).

constexpr int kStrengthLanes = 8;

/// a_ii of row i (rows::diagonal: the row's first entry of column i, 0 when none) found by
/// the group `mask`, consecutive lanes on consecutive entries.
template <int kLanes>
__device__ double group_diagonal(const MatrixView& a, index_t i, unsigned int mask, int lane) {
  const index_t end = a.pattern.row_ptr[i + 1];
  for (index_t k0 = a.pattern.row_ptr[i]; k0 < end; k0 += kLanes) {
    const index_t k = k0 + lane;
    const bool here = k < end && a.pattern.col_idx[k] == i;
    const unsigned int found = __ballot_sync(mask, here) & mask;
    if (found != 0u) return __shfl_sync(mask, here ? a.values[k] : 0.0, __ffs(found) - 1);
  }
  return 0.0;
}

/// rows::strength_row(a, p, i) computed by the group `mask` (the same values: a_ii is the
/// row's first entry of column i, the largest is a maximum that never becomes NaN from 0, and
/// the max_row_sum test sums the row in order in one lane).
template <int kLanes>
__device__ rows::StrengthRow group_strength_row(const MatrixView& a, const StrengthParameters& p,
                                                index_t i, unsigned int mask, int lane) {
  const index_t begin = a.pattern.row_ptr[i];
  const index_t end = a.pattern.row_ptr[i + 1];
  rows::StrengthRow row;
  row.a_ii = group_diagonal<kLanes>(a, i, mask, lane);
  if (p.max_row_sum < 1.0) {
    bool exceeds = false;
    if (lane == 0) exceeds = rows::exceeds_row_sum(a, p, i, row.a_ii);
    row.none = __shfl_sync(mask, exceeds, __ffs(mask) - 1);
    if (row.none) return row;
  }
  if (p.measure == StrengthMeasure::classical) {
    const double sign = rows::classical_sign(row.a_ii);
    double largest = 0.0;
    for (index_t k = begin + lane; k < end; k += kLanes) {
      if (a.pattern.col_idx[k] != i) largest = rows::larger(largest, sign * a.values[k]);
    }
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      largest = rows::larger(largest, __shfl_xor_sync(mask, largest, offset, kLanes));
    }
    row.largest = largest;
    row.none = !(largest > 0.0);
  }
  return row;
}

/// kFill == false: counts[i] = the strong dependencies of row i; kFill == true: their columns
/// at s_col_idx + s_row_ptr[i], in column order.
template <bool kFill>
__global__ void strength_kernel(MatrixView a, StrengthParameters p, index_t* counts,
                                const index_t* s_row_ptr, index_t* s_col_idx) {
  constexpr int kGroups = kBlock / kStrengthLanes;
  const int lane = threadIdx.x % kStrengthLanes;
  const unsigned int mask = lane_group_mask<kStrengthLanes>();
  const unsigned int below = (1u << (threadIdx.x % 32)) - 1u;
  for (size_type r = size_type{blockIdx.x} * kGroups + threadIdx.x / kStrengthLanes;
       r < a.pattern.num_rows; r += size_type{gridDim.x} * kGroups) {
    const auto i = static_cast<index_t>(r);
    const rows::StrengthRow row = group_strength_row<kStrengthLanes>(a, p, i, mask, lane);
    index_t count = 0;
    if (!row.none) {
      const index_t end = a.pattern.row_ptr[i + 1];
      const index_t base = kFill ? s_row_ptr[i] : 0;
      for (index_t k0 = a.pattern.row_ptr[i]; k0 < end; k0 += kStrengthLanes) {
        const index_t k = k0 + lane;
        const bool strong = k < end && rows::strong_entry(a, p, i, row, k);
        const unsigned int ballot = __ballot_sync(mask, strong) & mask;
        if constexpr (kFill) {
          if (strong) s_col_idx[base + count + __popc(ballot & below)] = a.pattern.col_idx[k];
        }
        count += __popc(ballot);
      }
    }
    if (!kFill && lane == 0) counts[i] = count;
  }
}

// ---------------------------------------------------------------------------------------------
// Splittings

/// The reference's loop in one thread: n rows and nnz(S) entries, sequentially (slow on a GPU:
/// about a second for millions of rows; PMIS is the parallel splitting).
__global__ void greedy_kernel(PatternView s, index_t* cf) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  rows::greedy_split(s, cf);
}

/// Row i of PMIS's start: its weight (influences + a random number in [0, 1)), and fine when it
/// influences no row, else undecided.
__device__ void pmis_init_row(const PatternView& st, std::uint64_t seed, index_t i, double* w,
                              index_t* cf) {
  const index_t influences = st.row_ptr[i + 1] - st.row_ptr[i];
  w[i] = influences + pmis_random(seed, i);
  cf[i] = influences == 0 ? kFine : -1;
}

__global__ void pmis_init(PatternView st, std::uint64_t seed, double* w, index_t* cf) {
  KRYFLOW_FOR_EACH_ROW(i, st.num_rows) {
    pmis_init_row(st, seed, i, w, cf);
  }
}

/// As the reference: whether undecided row i's weight beats every undecided neighbour's in
/// `graph` (ties: the larger index wins).
__device__ bool beats_neighbours(const PatternView& graph, const index_t* cf, const double* w,
                                 index_t i) {
  for (index_t q = graph.row_ptr[i]; q < graph.row_ptr[i + 1]; ++q) {
    const index_t j = graph.col_idx[q];
    if (j != i && cf[j] < 0 && (w[j] > w[i] || (w[j] == w[i] && j > i))) return false;
  }
  return true;
}

/// Whether undecided row i joins the round's independent set: its weight beats every undecided
/// neighbour's in S and in S^T.
__device__ bool pmis_selects(const PatternView& s, const PatternView& st, const index_t* cf,
                             const double* w, index_t i) {
  return cf[i] < 0 && beats_neighbours(s, cf, w, i) && beats_neighbours(st, cf, w, i);
}

/// Round, first half: selected_i from the splitting at the start of the round (cf is only
/// read). Work: entries of S and S^T.
__global__ void pmis_select(PatternView s, PatternView st, const index_t* cf, const double* w,
                            unsigned char* selected) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    selected[i] = pmis_selects(s, st, cf, w, i);
  }
}

/// Row i's half of pmis_update: selected turns coarse, undecided with a selected or coarse
/// strong dependency fine; true when it stays undecided.
__device__ bool pmis_update_row(const PatternView& s, const unsigned char* selected, index_t* cf,
                                index_t i) {
  if (selected[i]) {
    cf[i] = kCoarse;
    return false;
  }
  if (cf[i] >= 0) return false;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t j = s.col_idx[q];
    if (selected[j] != 0 || cf[j] == kCoarse) {
      cf[i] = kFine;
      return false;
    }
  }
  return true;
}

/// Round, second half: selected rows become coarse, undecided rows depending on a selected or
/// coarse row fine; counts the rows left undecided. A row writes only its own cf, and the
/// value it reads for j ("coarse?") is the same before and after j's write (j turns coarse
/// only when selected), so the result does not depend on the order of the threads. Work:
/// entries of S.
__global__ void pmis_update(PatternView s, const unsigned char* selected, index_t* cf,
                            unsigned long long* undecided) {
  using BlockReduce = cub::BlockReduce<unsigned int, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned int left = 0;
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    left += pmis_update_row(s, selected, cf, i) ? 1 : 0;
  }
  left = BlockReduce(storage).Sum(left);
  if (threadIdx.x == 0 && left > 0) atomicAdd(undecided, static_cast<unsigned long long>(left));
}

/// Rows up to which PMIS runs in one block (pmis_block_kernel): the splittings of coarse levels
/// and of the aggressive levels' coarse points. There a round of two kernels and the reads of
/// the undecided count between rounds, not the work, set the time (H200, pinned OpenFOAM
/// pressure matrix: 33 rounds over five splittings, 20 waits, 1.2 ms).
constexpr index_t kPmisBlockRows = 8192;
constexpr int kPmisBlockThreads = 1024;

/// pmis_init and the rounds of pmis_select and pmis_update until no row is undecided, in one
/// block: the same rounds, so the same splitting (a round reads cf as the previous one left
/// it; a barrier separates the halves). `first` (or null): the first round's selected rows,
/// as pmis_from's seeded round. A round decides at least the undecided row of largest weight,
/// so at most n rounds run.
__global__ void __launch_bounds__(kPmisBlockThreads)
    pmis_block_kernel(PatternView s, PatternView st, std::uint64_t seed, const unsigned char* first,
                      double* w, index_t* cf) {
  using BlockReduce = cub::BlockReduce<int, kPmisBlockThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  __shared__ unsigned char selected[kPmisBlockRows];
  __shared__ int left;
  const index_t n = s.num_rows;
  for (index_t i = threadIdx.x; i < n; i += kPmisBlockThreads) {
    pmis_init_row(st, seed, i, w, cf);
    if (first != nullptr) selected[i] = first[i];
  }
  __syncthreads();
  for (index_t round = 0; round <= n; ++round) {
    if (round > 0 || first == nullptr) {
      for (index_t i = threadIdx.x; i < n; i += kPmisBlockThreads) {
        selected[i] = pmis_selects(s, st, cf, w, i);
      }
      __syncthreads();  // selected is complete; cf was only read
    }
    int undecided = 0;
    for (index_t i = threadIdx.x; i < n; i += kPmisBlockThreads) {
      undecided += pmis_update_row(s, selected, cf, i) ? 1 : 0;
    }
    undecided = BlockReduce(storage).Sum(undecided);
    if (threadIdx.x == 0) left = undecided;
    __syncthreads();  // cf and left are complete; selected was only read
    if (left == 0) return;
  }
}

/// PMIS above kPmisBlockRows runs in one cooperative launch (pmis_cooperative_kernel) up to
/// kernels::cuda::cooperative_rows() rows, instead of a launch per half round and a host wait
/// per kPmisRoundsPerWait rounds. Blocks of the cooperative kernels: fewer blocks make cheaper
/// grid barriers.
constexpr int kCooperativeBlock = 1024;

/// pmis_block_kernel on a grid: pmis_init, then the rounds, their halves separated by grid
/// barriers, the undecided rows counted over the grid, until none is left: the same rounds, so
/// the same splitting. `seeded`: selected holds the first round's rows (pmis_from's seeded
/// round).
__global__ void __launch_bounds__(kCooperativeBlock)
    pmis_cooperative_kernel(PatternView s, PatternView st, std::uint64_t seed, bool seeded,
                            unsigned char* selected, double* w, index_t* cf, double* partials) {
  using GridSum = kernels::cuda::GridSum<kCooperativeBlock>;
  __shared__ typename GridSum::Storage storage;
  GridSum grid_sum(storage, partials);
  const index_t n = s.num_rows;
  const auto [first, stride] = kernels::cuda::grid_stride<kCooperativeBlock>();
  for (long long k = first; k < n; k += stride)
    pmis_init_row(st, seed, static_cast<index_t>(k), w, cf);
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  grid.sync();
  for (index_t round = 0; round <= n; ++round) {
    if (round > 0 || !seeded) {
      for (long long k = first; k < n; k += stride) {
        selected[k] = pmis_selects(s, st, cf, w, static_cast<index_t>(k));
      }
      grid.sync();  // selected is complete; cf was only read
    }
    double undecided = 0.0;
    for (long long k = first; k < n; k += stride) {
      undecided += pmis_update_row(s, selected, cf, static_cast<index_t>(k)) ? 1.0 : 0.0;
    }
    if (grid_sum(undecided) == 0.0) return;  // its barrier: cf is complete
  }
}

/// The HMIS first pass (rows::hmis_domain_pass), a warp per domain of kHmisDomainRows rows,
/// its measures and states in shared memory: each step a warp maximum of the keys picks the
/// coarse row, then the lanes share the entries of its rows of S^T (new fine rows, then their
/// rows of S: +1 to the measures of undecided dependencies) and of S (-1), by shared-memory
/// atomics. The measures of undecided rows after a step do not depend on the order of the
/// updates, so the coarse rows are the reference's. first[i] = 1 for them, else 0.
__global__ void hmis_domains(PatternView s, PatternView st, std::uint64_t seed,
                             unsigned char* first) {
  constexpr int kWarps = kBlock / 32;
  __shared__ int lambda_of[kWarps][kHmisDomainRows];
  __shared__ signed char state_of[kWarps][kHmisDomainRows];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const long long lo_wide = (static_cast<long long>(blockIdx.x) * kWarps + warp) * kHmisDomainRows;
  if (lo_wide >= s.num_rows) return;  // the whole warp
  const auto lo = static_cast<index_t>(lo_wide);
  const index_t hi = s.num_rows - lo < kHmisDomainRows ? s.num_rows : lo + kHmisDomainRows;
  const index_t m = hi - lo;
  int* lambda = lambda_of[warp];
  signed char* state = state_of[warp];
  const auto local = [&](index_t j) { return j >= lo && j < hi; };
  for (index_t r = lane; r < m; r += 32) {
    const index_t i = lo + r;
    int count = 0;
    for (index_t q = st.row_ptr[i]; q < st.row_ptr[i + 1]; ++q) {
      count += local(st.col_idx[q]) && st.col_idx[q] != i ? 1 : 0;
    }
    lambda[r] = count;
    state[r] = rows::kHmisUndecided;
    first[i] = 0;
  }
  __syncwarp();
  for (;;) {
    std::uint64_t best = 0;
    for (index_t r = lane; r < m; r += 32) {
      if (state[r] == rows::kHmisUndecided && lambda[r] > 0) {
        const std::uint64_t key = hmis_key(lambda[r], seed, lo + r, r);
        best = key > best ? key : best;
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const std::uint64_t other = __shfl_xor_sync(0xffffffffu, best, offset);
      best = other > best ? other : best;
    }
    if (best == 0) return;  // the same on every lane
    const auto r_i = static_cast<index_t>(best & 0xffff);
    const index_t i = lo + r_i;
    __syncwarp();
    if (lane == 0) {
      state[r_i] = rows::kHmisCoarse;
      first[i] = 1;
    }
    __syncwarp();
    const index_t t_begin = st.row_ptr[i];
    const index_t t_end = st.row_ptr[i + 1];
    for (index_t q = t_begin + lane; q < t_end; q += 32) {
      const index_t j = st.col_idx[q];
      if (local(j) && state[j - lo] == rows::kHmisUndecided) state[j - lo] = rows::kHmisNewFine;
    }
    __syncwarp();
    for (index_t q = t_begin + lane; q < t_end; q += 32) {
      const index_t j = st.col_idx[q];
      if (!local(j) || state[j - lo] != rows::kHmisNewFine) continue;
      state[j - lo] = rows::kHmisFine;
      for (index_t t = s.row_ptr[j]; t < s.row_ptr[j + 1]; ++t) {
        const index_t k = s.col_idx[t];
        if (local(k) && state[k - lo] == rows::kHmisUndecided) atomicAdd(&lambda[k - lo], 1);
      }
    }
    __syncwarp();
    for (index_t q = s.row_ptr[i] + lane; q < s.row_ptr[i + 1]; q += 32) {
      const index_t j = s.col_idx[q];
      if (local(j) && state[j - lo] == rows::kHmisUndecided) atomicSub(&lambda[j - lo], 1);
    }
    __syncwarp();
  }
}

__global__ void coarse_points_kernel(const index_t* cf, const index_t* coarse_index, size_type n,
                                     index_t* coarse_points) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    if (cf[i] == kCoarse) coarse_points[coarse_index[i]] = i;
  }
}

// ---------------------------------------------------------------------------------------------
// Interpolation: a Job gives the storage bound of row i and computes and writes the row.

struct CountJob {
  MatrixView a;
  PatternView s;
  Span<const index_t> cf;
  InterpolationParameters p;
  index_t* counts;
  __device__ index_t capacity(index_t i) const { return rows::point_capacity(s, cf, p.kind, i); }
  __device__ void run(index_t i, rows::PointsView& row) const {
    rows::interpolation_row(a, s, cf, p, i, row, false);
    counts[i] = row.size;
  }
};

struct FillJob {
  MatrixView a;
  PatternView s;
  Span<const index_t> cf;
  Span<const index_t> coarse_index;
  InterpolationParameters p;
  const index_t* p_row_ptr;
  index_t* p_col_idx;
  double* p_values;
  __device__ index_t capacity(index_t i) const { return rows::point_capacity(s, cf, p.kind, i); }
  __device__ void run(index_t i, rows::PointsView& row) const {
    rows::interpolation_row(a, s, cf, p, i, row);
    for (index_t k = 0; k < row.size; ++k) {
      p_col_idx[p_row_ptr[i] + k] = coarse_index[row.columns[k]];
      p_values[p_row_ptr[i] + k] = row.weights[k];
    }
  }
};

struct ValuesJob {
  MatrixView a;
  PatternView s;
  Span<const index_t> cf;
  Span<const index_t> coarse_points;
  InterpolationKind kind;
  PatternView prolongation;
  double* p_values;
  __device__ index_t capacity(index_t i) const {
    return prolongation.row_ptr[i + 1] - prolongation.row_ptr[i];
  }
  __device__ void run(index_t i, rows::PointsView& row) const {
    rows::fixed_pattern_row(a, s, cf, coarse_points, kind, prolongation, i, row);
    for (index_t k = 0; k < row.size; ++k) p_values[prolongation.row_ptr[i] + k] = row.weights[k];
  }
};

/// First pass: rows whose bound fits kLocalPoints; the others are listed in long_rows with
/// their bounds in long_capacity, info[0] their number and info[1] their largest bound. Work
/// per row: its entries in A and S plus K m for truncating m points to K.
template <class Job>
__global__ void local_rows(Job job, index_t n, index_t* long_rows, long long* long_capacity,
                           unsigned long long* info) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    const index_t capacity = job.capacity(i);
    if (capacity <= kLocalPoints) {
      index_t columns[kLocalPoints];
      double a[kLocalPoints];
      double weights[kLocalPoints];
      rows::PointsView row{columns, a, weights, 0};
      job.run(i, row);
    } else {
      const auto slot = atomicAdd(&info[0], 1ull);
      long_rows[slot] = i;
      long_capacity[slot] = capacity;
      atomicMax(&info[1], static_cast<unsigned long long>(capacity));
    }
  }
}

/// counts[i] = rows::point_capacity: row i's count when nothing is truncated and the kind is
/// seed or direct (interpolation_row then keeps every coarse point of S_i, or {i} for a coarse
/// row). Work: the entries of S.
__global__ void capacity_kernel(PatternView s, Span<const index_t> cf, InterpolationKind kind,
                                index_t* counts) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    counts[i] = rows::point_capacity(s, cf, kind, i);
  }
}

/// Second pass, one thread per long row r: the rows whose slice of the long rows' scratch
/// (offset[r], offset[r] + its bound) starts in the window [first, first + window) are
/// computed, with their points at offset[r] - first of the window's scratch (which holds
/// window + the largest bound points).
template <class Job>
__global__ void long_rows_kernel(Job job, const index_t* long_rows, const long long* offset,
                                 size_type count, long long first, long long window,
                                 index_t* columns, double* a, double* weights) {
  for (size_type r = blockIdx.x * size_type{kBlock} + threadIdx.x; r < count;
       r += size_type{gridDim.x} * kBlock) {
    const long long at = offset[r] - first;
    if (at < 0 || at >= window) continue;
    rows::PointsView row{columns + at, a + at, weights + at, 0};
    job.run(long_rows[r], row);
  }
}

/// Runs job over rows [0, n): rows of at most kLocalPoints points in per-thread arrays, the
/// others one thread each with a slice of global scratch sized by its bound, in windows of
/// at most kLongRowScratchBytes (every long row runs in parallel with the others of its
/// window: on the coarse levels of extended+i most rows are long).
template <class Job>
void run_rows(const Backend& backend, index_t n, const Job& job, const char* name) {
  if (n == 0) return;
  Context& context = context_of(backend);
  const auto rows = static_cast<std::size_t>(n);
  DeviceScratch long_rows(context, sizeof(index_t) * rows);
  // bounds, then (in place) their exclusive scan; one more entry for the total
  DeviceScratch long_capacity(context, sizeof(long long) * (rows + 1));
  DeviceScratch info(context, 2 * sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(info.as<unsigned long long>(), 0,
                                     2 * sizeof(unsigned long long), context.stream));
  local_rows<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(job, n, long_rows.as<index_t>(),
                                                                   long_capacity.as<long long>(),
                                                                   info.as<unsigned long long>());
  check_launch(name);
  long long host_info[2] = {0, 0};
  read_integers(context, reinterpret_cast<const long long*>(info.as<unsigned long long>()), 2,
                host_info);
  const size_type count = host_info[0];
  const size_type bound = host_info[1];
  if (count == 0) return;
  long long* offset = long_capacity.as<long long>();
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(offset + count, 0, sizeof(long long), context.stream));  // for the total
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offset, offset, count + 1,
                                                   context.stream));
  {
    DeviceScratch temp(context, temp_bytes);
    KRYFLOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.as<void>(), temp_bytes, offset, offset,
                                                     count + 1, context.stream));
  }
  long long total = 0;
  read_integers(context, offset + count, 1, &total);
  const auto point_bytes = static_cast<long long>(sizeof(index_t) + 2 * sizeof(double));
  const long long window = std::max<long long>(
      1, std::min<long long>(total, static_cast<long long>(kLongRowScratchBytes) / point_bytes));
  const auto slots = static_cast<std::size_t>(window + bound);
  DeviceScratch columns(context, sizeof(index_t) * slots);
  DeviceScratch a(context, sizeof(double) * slots);
  DeviceScratch weights(context, sizeof(double) * slots);
  for (long long first = 0; first < total; first += window) {
    long_rows_kernel<<<blocks_for(count, kBlock), kBlock, 0, context.stream>>>(
        job, long_rows.as<index_t>(), offset, count, first, window, columns.as<index_t>(),
        a.as<double>(), weights.as<double>());
    check_launch(name);
  }
}

// ---------------------------------------------------------------------------------------------
// Aggregation: MIS(2) in rounds of two propagations, aggregates in two passes.

__global__ void mis2_init(index_t n, std::uint64_t* state, unsigned char* active) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    state[i] = kMis2Undecided;
    active[i] = 1;
  }
}

/// Round, first propagation: first_i = the largest key over i and its neighbours in G, for the
/// active rows: a row whose closed neighbourhood holds no undecided row is marked inactive and
/// skipped in later rounds (states only leave undecided, so it stays so). Its first_i is never
/// read again: mis2_second reads first_j for the neighbours j of undecided rows i, and G is
/// symmetric, so i lies in j's neighbourhood and j is active. Late rounds, with few rows left
/// undecided, then touch little more than the flags.
__global__ void mis2_first(PatternView s, PatternView st, std::uint64_t seed,
                           const std::uint64_t* state, std::uint64_t* first,
                           unsigned char* active) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    if (active[i] == 0) continue;
    bool undecided = false;
    first[i] = rows::largest_neighbour_key(s, st, i, [&](index_t j) {
      const std::uint64_t state_j = state[j];
      undecided = undecided || state_j == kMis2Undecided;
      return mis2_key(state_j, seed, j);
    });
    if (!undecided) active[i] = 0;
  }
}

/// Round, second propagation and update: a row writes only its own state (read by no other
/// row in this kernel: the keys came from first), so the order of the threads does not matter.
/// Counts the rows left undecided.
__global__ void mis2_second(PatternView s, PatternView st, std::uint64_t seed,
                            const std::uint64_t* first, std::uint64_t* state,
                            unsigned long long* undecided) {
  using BlockReduce = cub::BlockReduce<unsigned int, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned int left = 0;
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    if (state[i] == kMis2Undecided) {
      const std::uint64_t largest =
          rows::largest_neighbour_key(s, st, i, [&](index_t j) { return first[j]; });
      if (largest == mis2_key(kMis2Undecided, seed, i)) {
        state[i] = kMis2In;
      } else if ((largest >> 62) == kMis2In) {
        state[i] = kMis2Out;
      } else {
        ++left;
      }
    }
  }
  left = BlockReduce(storage).Sum(left);
  if (threadIdx.x == 0 && left > 0) atomicAdd(undecided, static_cast<unsigned long long>(left));
}

__global__ void mis2_roots_kernel(index_t n, const std::uint64_t* state, index_t* roots) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    roots[i] = state[i] == kMis2In ? 1 : 0;
  }
}

__global__ void aggregates_first(index_t n, const index_t* roots, const index_t* root_index,
                                 index_t* first) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    first[i] = roots[i] != 0 ? root_index[i] : -1;
  }
}

/// A pass of mis2_aggregates: rows without an aggregate in `from` take their largest assigned
/// neighbour's; counts the rows still without one into `left` unless it is null.
__global__ void aggregates_pass(PatternView s, PatternView st, std::uint64_t seed,
                                const index_t* from, index_t* to, unsigned long long* left) {
  using BlockReduce = cub::BlockReduce<unsigned int, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned int missing = 0;
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    const index_t aggregate =
        from[i] >= 0 ? from[i] : rows::aggregate_of_largest_neighbour(s, st, seed, i, from);
    to[i] = aggregate;
    missing += aggregate < 0 ? 1 : 0;
  }
  if (left == nullptr) return;  // uniform over the block: no thread reaches the reduction
  missing = BlockReduce(storage).Sum(missing);
  if (threadIdx.x == 0 && missing > 0) {
    atomicAdd(left, static_cast<unsigned long long>(missing));
  }
}

__global__ void tentative_kernel(const index_t* aggregate, size_type n, index_t* row_ptr,
                                 index_t* col_idx, double* values) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    row_ptr[i] = i;
    col_idx[i] = aggregate[i];
    values[i] = 1.0;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) row_ptr[n] = static_cast<index_t>(n);
}

/// The largest Gershgorin row bound, as the bits of a non-negative double (ordered as
/// unsigned integers).
__global__ void gershgorin_kernel(MatrixView a, unsigned long long* bound) {
  using BlockReduce = cub::BlockReduce<double, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  double largest = 0.0;
  KRYFLOW_FOR_EACH_ROW(i, a.pattern.num_rows) {
    largest = rows::larger(largest, rows::gershgorin_row(a, i));
  }
  largest = BlockReduce(storage).Reduce(largest, [](double x, double y) { return x < y ? y : x; });
  if (threadIdx.x == 0) {
    atomicMax(bound, static_cast<unsigned long long>(__double_as_longlong(largest)));
  }
}

/// Smoothed aggregation's pattern, a thread per row (rows::distinct_aggregate_count and _fill).
__global__ void distinct_aggregates_kernel(PatternView a, const index_t* aggregate, index_t* counts,
                                           const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_FOR_EACH_ROW(i, a.num_rows) {
    if (counts != nullptr) {
      counts[i] = rows::distinct_aggregate_count(a, aggregate, static_cast<index_t>(i));
    } else {
      rows::distinct_aggregate_fill(a, aggregate, static_cast<index_t>(i), col_idx + row_ptr[i]);
    }
  }
}

/// Lanes per row of smoothed_aggregation_kernel.
constexpr int kSmoothingLanes = 8;

/// Row i of smoothed aggregation's P (rows::smoothed_aggregation_row's formula and bits) by a
/// group of kSmoothingLanes lanes: a_ii by group_diagonal, then each lane one entry (i, j) of P
/// at a time, consecutive lanes on consecutive entries, by rows::smoothed_aggregation_entry (the
/// group's lanes read the same entries of A's row together).
__global__ void smoothed_aggregation_kernel(MatrixView a, double factor, const double* bound,
                                            const index_t* aggregate, PatternView p,
                                            double* values) {
  constexpr int kGroups = kBlock / kSmoothingLanes;
  const double omega = factor / *bound;  // correctly rounded: the host's bits
  const int lane = threadIdx.x % kSmoothingLanes;
  const unsigned int mask = lane_group_mask<kSmoothingLanes>();
  for (size_type r = size_type{blockIdx.x} * kGroups + threadIdx.x / kSmoothingLanes;
       r < a.pattern.num_rows; r += size_type{gridDim.x} * kGroups) {
    const auto i = static_cast<index_t>(r);
    const double scale = omega / group_diagonal<kSmoothingLanes>(a, i, mask, lane);
    for (index_t q = p.row_ptr[i] + lane; q < p.row_ptr[i + 1]; q += kSmoothingLanes) {
      values[q] = rows::smoothed_aggregation_entry(a, i, scale, aggregate, p.col_idx[q]);
    }
  }
}

/// R's values from P's (rows::entry_value), a group of kSmoothingLanes lanes per row of R,
/// consecutive lanes on consecutive entries (R's columns read and its values written in
/// coalesced runs; each lane searches its own row of P).
__global__ void restriction_values_kernel(MatrixView p, PatternView r, double* r_values) {
  constexpr int kGroups = kBlock / kSmoothingLanes;
  const int lane = threadIdx.x % kSmoothingLanes;
  for (size_type c = size_type{blockIdx.x} * kGroups + threadIdx.x / kSmoothingLanes;
       c < r.num_rows; c += size_type{gridDim.x} * kGroups) {
    for (index_t k = r.row_ptr[c] + lane; k < r.row_ptr[c + 1]; k += kSmoothingLanes) {
      r_values[k] = rows::entry_value(p, r.col_idx[k], static_cast<index_t>(c));
    }
  }
}

/// R's values as restriction_values_kernel, a thread per entry of R: its row c by a binary
/// search of R's row pointers. For R with few rows (the coarse levels: a few hundred rows of
/// hundreds of entries each, where a group per row left most of the device idle and each group
/// walked its row serially).
__global__ void restriction_entries_kernel(MatrixView p, PatternView r, double* r_values) {
  const size_type nnz = r.row_ptr[r.num_rows];
  for (size_type k = size_type{blockIdx.x} * kBlock + threadIdx.x; k < nnz;
       k += size_type{gridDim.x} * kBlock) {
    r_values[k] = rows::entry_value(p, r.col_idx[k], sparse_setup::row_of_entry(r, k));
  }
}

// ---------------------------------------------------------------------------------------------
// Aggressive coarsening and multi-pass interpolation: a thread per row (rows of a few entries).

template <bool kFill>
__global__ void select_pattern_kernel(PatternView a, const index_t* cf, const index_t* coarse_index,
                                      bool coarse_rows, bool coarse_columns, index_t* counts,
                                      const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_FOR_EACH_ROW(i, a.num_rows) {
    if (coarse_rows && cf[i] != kCoarse) continue;
    const index_t out = coarse_rows ? coarse_index[i] : i;
    if constexpr (kFill) {
      index_t next = row_ptr[out];
      rows::select_row(a, cf, coarse_index, coarse_columns, i,
                       [&](index_t j) { col_idx[next++] = j; });
    } else {
      index_t count = 0;
      rows::select_row(a, cf, coarse_index, coarse_columns, i, [&](index_t) { ++count; });
      counts[out] = count;
    }
  }
}

template <bool kFill>
__global__ void distance_two_kernel(PatternView s, PatternView ss, const index_t* cf,
                                    const index_t* coarse_index, index_t* counts,
                                    const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    if (cf[i] != kCoarse) continue;
    if constexpr (kFill) {
      index_t next = row_ptr[coarse_index[i]];
      rows::distance_two_coarse_row(s, ss, cf, coarse_index, i,
                                    [&](index_t c) { col_idx[next++] = c; });
    } else {
      index_t count = 0;
      rows::distance_two_coarse_row(s, ss, cf, coarse_index, i, [&](index_t) { ++count; });
      counts[coarse_index[i]] = count;
    }
  }
}

__global__ void aggressive_splitting_kernel(const index_t* first, const index_t* first_index,
                                            const index_t* second, size_type n, index_t* cf) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    cf[i] = first[i] == kCoarse && second[first_index[i]] == kCoarse ? kCoarse : kFine;
  }
}

__global__ void passes_init(const index_t* cf, size_type n, index_t* pass) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    pass[i] = cf[i] == kCoarse ? 0 : -1;
  }
}

/// Row i's part of round p: without a pass and reaching a row of pass p - 1, it gets p (in
/// place: a row written in the round holds p, never p - 1, so no read of the round depends on
/// the threads' order); true when it did.
__device__ bool passes_round_row(const PatternView& s, index_t p, index_t* pass, index_t i) {
  if (pass[i] >= 0 || !rows::reaches_pass(s, pass, i, p - 1)) return false;
  pass[i] = p;
  return true;
}

/// Round p (passes_round_row of every row); counts the rows it assigned.
__global__ void passes_round(PatternView s, index_t p, index_t* pass,
                             unsigned long long* assigned) {
  using BlockReduce = cub::BlockReduce<unsigned int, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned int count = 0;
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    count += passes_round_row(s, p, pass, i) ? 1 : 0;
  }
  count = BlockReduce(storage).Sum(count);
  if (threadIdx.x == 0 && count > 0) atomicAdd(assigned, static_cast<unsigned long long>(count));
}

__global__ void multipass_count_kernel(PatternView s, const index_t* pass, index_t* counts) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    counts[i] = rows::multipass_count_row(s, pass, i);
  }
}

/// s given: W's columns and (values not null) weights from S and the passes; s.row_ptr null: the
/// weights on W's fixed pattern w.
__global__ void multipass_kernel(MatrixView a, PatternView s, const index_t* pass, PatternView w,
                                 InterpolationKind kind, const index_t* row_ptr, index_t* col_idx,
                                 double* values) {
  KRYFLOW_FOR_EACH_ROW(i, a.pattern.num_rows) {
    index_t next = row_ptr[i];
    rows::multipass_row(a, s, pass, w, kind, i, [&](index_t k, double weight) {
      if (col_idx != nullptr) col_idx[next] = k;
      if (values != nullptr) values[next] = weight;
      ++next;
    });
  }
}

/// The rows of pass t of multi-pass interpolation's P (rows::multipass_prolongation_row), a
/// thread each: order[offsets[t + 1] .. offsets[t + 2]) (multipass_order), so that every warp
/// with work has all its lanes busy (the rows are latency-bound walks).
__global__ void multipass_prolongation_kernel(MatrixView a, const index_t* pass, index_t t,
                                              const index_t* order, const index_t* offsets,
                                              PatternView w, InterpolationKind kind, PatternView p,
                                              double* values) {
  const index_t begin = offsets[t + 1];
  KRYFLOW_FOR_EACH_ROW(r, offsets[t + 2] - begin) {
    rows::multipass_prolongation_row(a, pass, w, kind, p, values, order[begin + r]);
  }
}

// The passes of multi-pass interpolation and its P's values run in one cooperative launch
// (passes_cooperative_kernel, multipass_prolongation_cooperative_kernel) up to
// kernels::cuda::cooperative_rows() rows: the aggressive level of the pinned OpenFOAM pressure
// matrix (23,325 rows) takes 19 passes, which cost 20 launches and five host waits for the
// passes and 20 launches for P's values.

/// interpolation_passes in one launch: passes_init, then the rounds of passes_round, each ending
/// in a grid barrier with the grid's count of the rows it assigned, until a round assigns none
/// (the same rounds, so the same passes: a round's reads do not depend on the threads' order).
/// *passes = the last pass, or -1 when rows were still assigned after n + 1 rounds.
__global__ void __launch_bounds__(kCooperativeBlock)
    passes_cooperative_kernel(PatternView s, const index_t* cf, index_t* pass, double* partials,
                              index_t* passes) {
  using GridSum = kernels::cuda::GridSum<kCooperativeBlock>;
  __shared__ typename GridSum::Storage storage;
  GridSum grid_sum(storage, partials);
  const index_t n = s.num_rows;
  const auto [first, stride] = kernels::cuda::grid_stride<kCooperativeBlock>();
  for (long long i = first; i < n; i += stride) pass[i] = cf[i] == kCoarse ? 0 : -1;
  cooperative_groups::this_grid().sync();
  const bool writer = blockIdx.x == 0 && threadIdx.x == 0;
  for (index_t p = 1; p <= n + 1; ++p) {
    double count = 0.0;
    for (long long i = first; i < n; i += stride) {
      count += passes_round_row(s, p, pass, static_cast<index_t>(i)) ? 1.0 : 0.0;
    }
    if (grid_sum(count) == 0.0) {
      if (writer) *passes = p - 1;
      return;
    }
  }
  if (writer) *passes = -1;
}

/// multipass_prolongation_values in one launch: the rows of pass t (as
/// multipass_prolongation_kernel), then a grid barrier, for t = 0 .. passes.
__global__ void __launch_bounds__(kCooperativeBlock)
    multipass_prolongation_cooperative_kernel(MatrixView a, const index_t* pass, index_t passes,
                                              const index_t* order, const index_t* offsets,
                                              PatternView w, InterpolationKind kind, PatternView p,
                                              double* values) {
  const auto [first, stride] = kernels::cuda::grid_stride<kCooperativeBlock>();
  for (index_t t = 0; t <= passes; ++t) {
    const index_t begin = offsets[t + 1], end = offsets[t + 2];
    for (long long r = begin + first; r < end; r += stride) {
      rows::multipass_prolongation_row(a, pass, w, kind, p, values, order[r]);
    }
    if (t < passes) cooperative_groups::this_grid().sync();
  }
}

/// Row i of multipass_prolongation_slots (rows::multipass_slot_row); a row that does not fit
/// sets *overflow.
__device__ void multipass_slot_row(const MatrixView& a, const index_t* pass, const PatternView& w,
                                   InterpolationKind kind, const index_t* coarse_index,
                                   index_t capacity, index_t* slot_columns, double* slot_values,
                                   index_t* counts, unsigned long long* overflow, index_t i) {
  const index_t count = rows::multipass_slot_row(a, pass, w, kind, coarse_index, capacity,
                                                 slot_columns, slot_values, counts, i);
  counts[i] = count;
  if (count > capacity) atomicExch(overflow, 1ull);
}

/// The rows of group t (pass t; t = -1: the rows without a pass, no entries), one launch each
/// (above the cooperative rows).
__global__ void multipass_slots_kernel(MatrixView a, const index_t* pass, index_t t,
                                       const index_t* order, const index_t* offsets, PatternView w,
                                       InterpolationKind kind, const index_t* coarse_index,
                                       index_t capacity, index_t* slot_columns, double* slot_values,
                                       index_t* counts, unsigned long long* overflow) {
  const index_t begin = offsets[t + 1];
  KRYFLOW_FOR_EACH_ROW(r, offsets[t + 2] - begin) {
    multipass_slot_row(a, pass, w, kind, coarse_index, capacity, slot_columns, slot_values, counts,
                       overflow, order[begin + r]);
  }
}

/// multipass_prolongation_slots in one launch: the rows of group t (t = -1: those without a
/// pass), then a grid barrier before each pass t = 1 .. passes reads the one before (as
/// multipass_prolongation_cooperative_kernel).
__global__ void __launch_bounds__(kCooperativeBlock)
    multipass_slots_cooperative_kernel(MatrixView a, const index_t* pass, index_t passes,
                                       const index_t* order, const index_t* offsets, PatternView w,
                                       InterpolationKind kind, const index_t* coarse_index,
                                       index_t capacity, index_t* slot_columns, double* slot_values,
                                       index_t* counts, unsigned long long* overflow) {
  const auto [first, stride] = kernels::cuda::grid_stride<kCooperativeBlock>();
  for (index_t t = -1; t <= passes; ++t) {
    const index_t begin = offsets[t + 1], end = offsets[t + 2];
    for (long long r = begin + first; r < end; r += stride) {
      multipass_slot_row(a, pass, w, kind, coarse_index, capacity, slot_columns, slot_values,
                         counts, overflow, order[r]);
    }
    if (t >= 0 && t < passes) cooperative_groups::this_grid().sync();
  }
}

/// Row i of P from its slots (multipass_slots_compact).
__global__ void multipass_slots_compact_kernel(index_t n, index_t capacity,
                                               const index_t* slot_columns,
                                               const double* slot_values, const index_t* row_ptr,
                                               index_t* col_idx, double* values) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    rows::multipass_slots_compact_row(capacity, slot_columns, slot_values, row_ptr, col_idx, values,
                                      i);
  }
}

/// keys[i] = pass[i] + 1 (0 for a row without a pass): the colors multipass_order groups by.
__global__ void pass_keys_kernel(const index_t* pass, index_t n, index_t* keys) {
  KRYFLOW_FOR_EACH_ROW(i, n) {
    keys[i] = pass[i] + 1;
  }
}

__global__ void mm_extended_count_kernel(PatternView s, const index_t* cf, index_t* left_counts,
                                         index_t* right_counts) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    const rows::MmExtendedCounts c = rows::mm_extended_counts(s, cf, i);
    left_counts[i] = c.left;
    right_counts[i] = c.right;
  }
}

/// Fine rows with more strong points than this take a warp in mm_extended_coarse_sums and
/// mm_extended_fill: a thread runs a row's binary searches one after the other, and the coarse
/// levels' rows of tens to hundreds of entries set those kernels' length (0.2-0.5 ms each on
/// levels of a few thousand rows at 7-point 200^3 with a thread per row).
/// On a level whose fine rows all fit one wave of warps every fine row takes a warp (threshold
/// -1): there the threads' chains of binary searches, not the number of rows, set the kernels'
/// length (H200, OpenFOAM pressure matrix: the fill on its levels of 353 to 3,292 rows took
/// 50-106 us with a thread per row of at most 8 strong points).
constexpr index_t kMmExtendedWarpRow = 8;

/// The strong-point threshold of mm_extended_warp_row for a level of `rows` rows.
index_t mm_extended_warp_threshold(const Context& context, index_t rows) {
  const long long wave = static_cast<long long>(context.properties.multiProcessorCount) *
                         context.properties.maxThreadsPerMultiProcessor / 32;
  return rows <= wave ? -1 : kMmExtendedWarpRow;
}

__device__ __forceinline__ bool mm_extended_warp_row(const PatternView& s, const index_t* cf,
                                                     index_t i, index_t threshold) {
  return cf[i] != kCoarse && s.row_ptr[i + 1] - s.row_ptr[i] > threshold;
}

/// sum + the values of the lanes with `adds` set, added one at a time in lane order (the bits
/// of a sequential sum over the lanes' entries); every lane of the full warp gets the result.
__device__ __forceinline__ double add_in_lane_order(double sum, double value, bool adds) {
  unsigned int adding = __ballot_sync(0xffffffffu, adds);
  while (adding != 0u) {  // the same on every lane
    sum += __shfl_sync(0xffffffffu, value, __ffs(adding) - 1);
    adding &= adding - 1u;
  }
  return sum;
}

__global__ void mm_extended_coarse_sums_kernel(MatrixView a, PatternView s, const index_t* cf,
                                               index_t threshold, double* coarse_sum) {
  KRYFLOW_FOR_EACH_ROW(k, s.num_rows) {
    if (!mm_extended_warp_row(s, cf, k, threshold))
      coarse_sum[k] = rows::strong_coarse_sum(a, s, cf, k);
  }
}

/// beta_k of the rows of mm_extended_warp_row, a warp each: the coarse points of S_k split over
/// the lanes (a_kl by a binary search), added in column order (rows::strong_coarse_sum's bits).
__global__ void mm_extended_coarse_sums_warp_kernel(MatrixView a, PatternView s, const index_t* cf,
                                                    index_t threshold, double* coarse_sum) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const size_type warps = size_type{gridDim.x} * (kBlock / 32);
  for (size_type w = size_type{blockIdx.x} * (kBlock / 32) + threadIdx.x / 32;
       w < size_type(s.num_rows); w += warps) {
    const auto k = static_cast<index_t>(w);
    if (!mm_extended_warp_row(s, cf, k, threshold)) continue;  // the whole warp
    double sum = 0.0;
    for (index_t q0 = s.row_ptr[k]; q0 < s.row_ptr[k + 1]; q0 += 32) {
      const index_t q = q0 + lane;
      const bool coarse = q < s.row_ptr[k + 1] && cf[s.col_idx[q]] == kCoarse;
      sum = add_in_lane_order(sum, coarse ? rows::sorted_entry(a, k, s.col_idx[q]) : 0.0, coarse);
    }
    if (lane == 0) coarse_sum[k] = sum;
  }
}

__global__ void mm_extended_fill_kernel(MatrixView a, PatternView s, const index_t* cf,
                                        index_t threshold, const index_t* coarse_index,
                                        const double* coarse_sum, const index_t* left_row_ptr,
                                        index_t* left_col_idx, double* left_values,
                                        const index_t* right_row_ptr, index_t* right_col_idx,
                                        double* right_values) {
  KRYFLOW_FOR_EACH_ROW(i, s.num_rows) {
    if (mm_extended_warp_row(s, cf, i, threshold)) continue;  // mm_extended_fill_warp_kernel
    rows::mm_extended_fill_row(a, s, cf, coarse_index, coarse_sum, left_row_ptr, left_col_idx,
                               left_values, right_row_ptr, right_col_idx, right_values, i);
  }
}

/// Strong point q of fine row i (q < s_end): k, a_ik, a_ki [i in S_k] and d_ik = beta_k + a_ki
/// (rows::mm_extended_left_row); fine / coarse false past the row's end.
struct MmExtendedPoint {
  bool fine = false, coarse = false;
  index_t k = 0;
  double a_ik = 0.0, a_ki = 0.0, d = 0.0;
};

__device__ __forceinline__ MmExtendedPoint mm_extended_point(const MatrixView& a,
                                                             const PatternView& s,
                                                             const index_t* cf,
                                                             const double* coarse_sum, index_t i,
                                                             index_t s_end, index_t q) {
  MmExtendedPoint p;
  if (q >= s_end) return p;
  p.k = s.col_idx[q];
  p.a_ik = rows::sorted_entry(a, i, p.k);
  if (cf[p.k] == kCoarse) {
    p.coarse = true;
    return p;
  }
  p.fine = true;
  const rows::MmExtendedCoupling c = rows::mm_extended_coupling(a, s, coarse_sum, i, p.k);
  p.a_ki = c.a_ki;
  p.d = c.d;
  return p;
}

/// The fine rows of mm_extended_warp_row, a warp each: rows::mm_extended_left_row and
/// mm_extended_right_row with the strong points of row i split over the lanes 32 at a time
/// (a_ik and a_ki by binary searches), t's terms added in column order (add_in_lane_order)
/// and each entry placed by a ballot of the lanes before it: the thread kernel's bits.
__global__ void mm_extended_fill_warp_kernel(MatrixView a, PatternView s, const index_t* cf,
                                             index_t threshold, const index_t* coarse_index,
                                             const double* coarse_sum, const index_t* left_row_ptr,
                                             index_t* left_col_idx, double* left_values,
                                             const index_t* right_row_ptr, index_t* right_col_idx,
                                             double* right_values) {
  constexpr unsigned int kAll = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const unsigned int lower = (1u << lane) - 1u;
  const size_type warps = size_type{gridDim.x} * (kBlock / 32);
  for (size_type w = size_type{blockIdx.x} * (kBlock / 32) + threadIdx.x / 32;
       w < size_type(s.num_rows); w += warps) {
    const auto i = static_cast<index_t>(w);
    if (!mm_extended_warp_row(s, cf, i, threshold)) continue;  // the whole warp
    const index_t a_begin = a.pattern.row_ptr[i], a_end = a.pattern.row_ptr[i + 1];
    const index_t s_begin = s.row_ptr[i], s_end = s.row_ptr[i + 1];
    double t = 0.0;  // a_ii and the weak couplings, in column order
    for (index_t e0 = a_begin; e0 < a_end; e0 += 32) {
      const index_t e = e0 + lane;
      bool weak = false;
      double v = 0.0;
      if (e < a_end) {
        const index_t j = a.pattern.col_idx[e];
        const index_t q = rows::sorted_lower_bound(s.col_idx, s_begin, s_end, j);
        weak = !(q < s_end && s.col_idx[q] == j);
        v = a.values[e];
      }
      t = add_in_lane_order(t, v, weak);
    }
    for (index_t q0 = s_begin; q0 < s_end; q0 += 32) {
      const MmExtendedPoint p = mm_extended_point(a, s, cf, coarse_sum, i, s_end, q0 + lane);
      t = add_in_lane_order(t, p.d != 0.0 ? p.a_ki * (p.a_ik / p.d) : p.a_ik, p.fine);
    }
    const double scale = t != 0.0 ? -1.0 / t : 0.0;
    index_t left_next = left_row_ptr[i];
    index_t right_next = right_row_ptr[i];
    bool diagonal = false;
    for (index_t q0 = s_begin; q0 < s_end; q0 += 32) {
      const MmExtendedPoint p = mm_extended_point(a, s, cf, coarse_sum, i, s_end, q0 + lane);
      const unsigned int fine = __ballot_sync(kAll, p.fine);
      const unsigned int coarse = __ballot_sync(kAll, p.coarse);
      const unsigned int after = __ballot_sync(kAll, p.fine && p.k > i);
      const bool insert = !diagonal && after != 0u;  // the diagonal goes in this chunk
      if (insert && lane == 0) {
        const index_t at = left_next + __popc(fine & ~after);
        left_col_idx[at] = i;
        left_values[at] = scale;
      }
      if (p.fine) {
        const index_t at = left_next + __popc(fine & lower) + (insert && p.k > i ? 1 : 0);
        left_col_idx[at] = p.k;
        left_values[at] = p.d != 0.0 ? scale * (p.a_ik / p.d) : 0.0;
      }
      if (p.coarse) {
        const index_t at = right_next + __popc(coarse & lower);
        right_col_idx[at] = coarse_index[p.k];
        right_values[at] = p.a_ik;
      }
      left_next += __popc(fine) + (insert ? 1 : 0);
      right_next += __popc(coarse);
      diagonal = diagonal || insert;
    }
    if (!diagonal && lane == 0) {
      left_col_idx[left_next] = i;
      left_values[left_next] = scale;
    }
  }
}

__global__ void truncation_count_kernel(MatrixView p, InterpolationParameters params,
                                        index_t* counts) {
  KRYFLOW_FOR_EACH_ROW(i, p.pattern.num_rows) {
    counts[i] = rows::truncated_count(p, params, i);
  }
}

__global__ void truncation_fill_kernel(MatrixView p, InterpolationParameters params,
                                       const index_t* row_ptr, index_t* col_idx, double* values) {
  KRYFLOW_FOR_EACH_ROW(i, p.pattern.num_rows) {
    index_t next = row_ptr[i];
    rows::truncated_row(p, params, i, [&](index_t j, double v) {
      col_idx[next] = j;
      values[next++] = v;
    });
  }
}

__global__ void truncation_values_kernel(MatrixView p, PatternView t, double* values) {
  KRYFLOW_FOR_EACH_ROW(i, t.num_rows) {
    index_t next = t.row_ptr[i];
    rows::truncated_row_values(p, t, i, [&](double v) { values[next++] = v; });
  }
}

/// Runs `round(left)` (the kernels of one round; `left` a device counter of the rows still
/// undecided, cleared before the round) until a round leaves none, reading the counter after
/// every `rounds_per_wait` rounds: one wait per round unless a round once none are left is a
/// no-op (then several rounds per wait save waits, which bound the setup of small levels). A
/// round decides at least one row, so at most n + 1 rounds; past them, BackendError.
template <class Round>
void until_none_left(Context& context, index_t n, const char* name, Round round,
                     index_t rounds_per_wait = 1) {
  DeviceScratch left(context, sizeof(unsigned long long));
  for (index_t r = 0; r <= n;) {
    for (index_t k = 0; k < rounds_per_wait && r <= n; ++k, ++r) {
      KRYFLOW_CUDA_CHECK(cudaMemsetAsync(left.as<unsigned long long>(), 0,
                                         sizeof(unsigned long long), context.stream));
      round(left.as<unsigned long long>());
    }
    long long undecided = 0;
    read_integers(context, reinterpret_cast<const long long*>(left.as<unsigned long long>()), 1,
                  &undecided);
    if (undecided == 0) return;
  }
  throw BackendError(std::string(name) + ": rows left undecided after " + std::to_string(n + 1) +
                     " rounds");
}

}  // namespace

void strength_count(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                    Span<index_t> counts) {
  if (a.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  strength_kernel<false>
      <<<blocks_for(a.pattern.num_rows, kBlock / kStrengthLanes), kBlock, 0, context.stream>>>(
          a, p, counts.data(), nullptr, nullptr);
  check_launch("amg::strength_count");
}

void strength_fill(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                   const index_t* s_row_ptr, index_t* s_col_idx) {
  if (a.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  strength_kernel<true>
      <<<blocks_for(a.pattern.num_rows, kBlock / kStrengthLanes), kBlock, 0, context.stream>>>(
          a, p, nullptr, s_row_ptr, s_col_idx);
  check_launch("amg::strength_fill");
}

void greedy_splitting(const Backend& backend, const PatternView& s, Span<index_t> cf) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  greedy_kernel<<<1, 1, 0, context.stream>>>(s, cf.data());
  check_launch("amg::greedy_splitting");
}

namespace {

/// PMIS rounds between two reads of the undecided count.
constexpr index_t kPmisRoundsPerWait = 3;
/// Multi-pass rounds between two reads of their counters. The aggressive level of the OpenFOAM
/// pressure matrix takes 19 passes, each a wait of about 13 us on the H200 when read one by one.
constexpr index_t kPassRoundsPerWait = 4;

/// PMIS with the rows of `first` (n flags on the device, or null) as its first independent set
/// (the reference's pmis_from). A round once every row is decided changes nothing, so the
/// rounds run kPmisRoundsPerWait at a time between waits (PMIS takes a few rounds per level).
void pmis_from(Context& context, const PatternView& s, const PatternView& st, std::uint64_t seed,
               unsigned char* first, Span<index_t> cf, const char* name) {
  const index_t n = s.num_rows;
  const unsigned int blocks = blocks_for(n, kBlock);
  DeviceScratch w(context, sizeof(double) * static_cast<std::size_t>(n));
  if (n <= kPmisBlockRows) {
    pmis_block_kernel<<<1, kPmisBlockThreads, 0, context.stream>>>(s, st, seed, first,
                                                                   w.as<double>(), cf.data());
    check_launch(name);
    return;
  }
  DeviceScratch own(context, first != nullptr ? 0 : static_cast<std::size_t>(n));
  unsigned char* selected = first != nullptr ? first : own.as<unsigned char>();
  if (n <= kernels::cuda::cooperative_rows()) {
    const unsigned int grid =
        kernels::cuda::cooperative_blocks(context, pmis_cooperative_kernel, kCooperativeBlock, n);
    DeviceScratch partials(context, 2 * sizeof(double) * grid);
    kernels::cuda::launch_cooperative(context, pmis_cooperative_kernel, grid, kCooperativeBlock,
                                      name, s, st, seed, first != nullptr, selected, w.as<double>(),
                                      cf.data(), partials.as<double>());
    return;
  }
  pmis_init<<<blocks, kBlock, 0, context.stream>>>(st, seed, w.as<double>(), cf.data());
  check_launch(name);
  bool seeded = first != nullptr;
  // Each round makes the undecided row of largest weight coarse; in practice a few rounds.
  until_none_left(
      context, n, name,
      [&](unsigned long long* undecided) {
        if (!seeded) {
          pmis_select<<<blocks, kBlock, 0, context.stream>>>(s, st, cf.data(), w.as<double>(),
                                                             selected);
          check_launch(name);
        }
        seeded = false;
        pmis_update<<<blocks, kBlock, 0, context.stream>>>(s, selected, cf.data(), undecided);
        check_launch(name);
      },
      kPmisRoundsPerWait);
}

}  // namespace

void pmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  if (s.num_rows == 0) return;
  pmis_from(context_of(backend), s, st, seed, nullptr, cf, "amg::pmis_splitting");
}

void hmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  const index_t n = s.num_rows;
  if (n == 0) return;
  Context& context = context_of(backend);
  DeviceScratch first(context, static_cast<std::size_t>(n));
  const long long domains = (static_cast<long long>(n) + kHmisDomainRows - 1) / kHmisDomainRows;
  hmis_domains<<<static_cast<unsigned int>((domains + kBlock / 32 - 1) / (kBlock / 32)), kBlock, 0,
                 context.stream>>>(s, st, seed, first.as<unsigned char>());
  check_launch("amg::hmis_splitting (first pass)");
  pmis_from(context, s, st, seed, first.as<unsigned char>(), cf, "amg::hmis_splitting");
}

void coarse_points(const Backend& backend, Span<const index_t> cf, Span<const index_t> coarse_index,
                   Span<index_t> coarse_points) {
  const auto n = static_cast<size_type>(cf.size());
  if (n == 0) return;
  Context& context = context_of(backend);
  coarse_points_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(
      cf.data(), coarse_index.data(), n, coarse_points.data());
  check_launch("amg::coarse_points");
}

void interpolation_count(const Backend& backend, const MatrixView& a, const PatternView& s,
                         Span<const index_t> cf, const InterpolationParameters& p,
                         Span<index_t> counts) {
  if (p.truncation_factor <= 0.0 && p.max_elements_per_row <= 0 &&
      p.kind != InterpolationKind::extended_i) {
    // Without truncation a row keeps every point it collects: the count is the storage bound
    // (not for extended_i, whose bound counts a point reached through two fine points twice).
    const index_t n = a.pattern.num_rows;
    if (n == 0) return;
    Context& context = context_of(backend);
    capacity_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(s, cf, p.kind,
                                                                          counts.data());
    check_launch("amg::interpolation_count");
    return;
  }
  run_rows(backend, a.pattern.num_rows, CountJob{a, s, cf, p, counts.data()},
           "amg::interpolation_count");
}

void interpolation_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                        Span<const index_t> cf, Span<const index_t> coarse_index,
                        const InterpolationParameters& p, const index_t* p_row_ptr,
                        index_t* p_col_idx, double* p_values) {
  run_rows(backend, a.pattern.num_rows,
           FillJob{a, s, cf, coarse_index, p, p_row_ptr, p_col_idx, p_values},
           "amg::interpolation_fill");
}

void interpolation_values(const Backend& backend, const MatrixView& a, const PatternView& s,
                          Span<const index_t> cf, Span<const index_t> coarse_points,
                          InterpolationKind kind, const PatternView& prolongation,
                          double* p_values) {
  run_rows(backend, a.pattern.num_rows,
           ValuesJob{a, s, cf, coarse_points, kind, prolongation, p_values},
           "amg::interpolation_values");
}

void mis2_roots(const Backend& backend, const PatternView& s, const PatternView& st,
                std::uint64_t seed, Span<index_t> roots) {
  const index_t n = s.num_rows;
  if (n == 0) return;
  Context& context = context_of(backend);
  const unsigned int blocks = blocks_for(n, kBlock);
  DeviceScratch state(context, sizeof(std::uint64_t) * static_cast<std::size_t>(n));
  DeviceScratch first(context, sizeof(std::uint64_t) * static_cast<std::size_t>(n));
  DeviceScratch active(context, static_cast<std::size_t>(n));
  mis2_init<<<blocks, kBlock, 0, context.stream>>>(n, state.as<std::uint64_t>(),
                                                   active.as<unsigned char>());
  check_launch("amg::mis2_roots (init)");
  // The undecided row of largest key joins the set in every round; in practice a few rounds.
  until_none_left(context, n, "amg::mis2_roots", [&](unsigned long long* undecided) {
    mis2_first<<<blocks, kBlock, 0, context.stream>>>(s, st, seed, state.as<std::uint64_t>(),
                                                      first.as<std::uint64_t>(),
                                                      active.as<unsigned char>());
    check_launch("amg::mis2_roots (first propagation)");
    mis2_second<<<blocks, kBlock, 0, context.stream>>>(s, st, seed, first.as<std::uint64_t>(),
                                                       state.as<std::uint64_t>(), undecided);
    check_launch("amg::mis2_roots (second propagation)");
  });
  mis2_roots_kernel<<<blocks, kBlock, 0, context.stream>>>(n, state.as<std::uint64_t>(),
                                                           roots.data());
  check_launch("amg::mis2_roots (roots)");
}

index_t mis2_aggregates(const Backend& backend, const PatternView& s, const PatternView& st,
                        std::uint64_t seed, Span<const index_t> roots,
                        Span<const index_t> root_index, Span<index_t> aggregate) {
  const index_t n = s.num_rows;
  if (n == 0) return 0;
  Context& context = context_of(backend);
  const unsigned int blocks = blocks_for(n, kBlock);
  DeviceScratch first(context, sizeof(index_t) * static_cast<std::size_t>(n));
  DeviceScratch adjacent(context, sizeof(index_t) * static_cast<std::size_t>(n));
  DeviceScratch left(context, sizeof(unsigned long long));
  aggregates_first<<<blocks, kBlock, 0, context.stream>>>(n, roots.data(), root_index.data(),
                                                          first.as<index_t>());
  check_launch("amg::mis2_aggregates (roots)");
  aggregates_pass<<<blocks, kBlock, 0, context.stream>>>(s, st, seed, first.as<index_t>(),
                                                         adjacent.as<index_t>(), nullptr);
  check_launch("amg::mis2_aggregates (first pass)");
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(left.as<unsigned long long>(), 0, sizeof(unsigned long long),
                                     context.stream));
  aggregates_pass<<<blocks, kBlock, 0, context.stream>>>(
      s, st, seed, adjacent.as<index_t>(), aggregate.data(), left.as<unsigned long long>());
  check_launch("amg::mis2_aggregates (second pass)");
  long long missing = 0;
  read_integers(context, reinterpret_cast<const long long*>(left.as<unsigned long long>()), 1,
                &missing);
  return static_cast<index_t>(missing);
}

void tentative_prolongation(const Backend& backend, Span<const index_t> aggregate, index_t* row_ptr,
                            index_t* col_idx, double* values) {
  const auto n = static_cast<size_type>(aggregate.size());
  Context& context = context_of(backend);
  tentative_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(aggregate.data(), n,
                                                                         row_ptr, col_idx, values);
  check_launch("amg::tentative_prolongation");
}

void gershgorin_bound(const Backend& backend, const MatrixView& a, double* bound) {
  Context& context = context_of(backend);
  // Non-negative doubles order as their bits: an atomicMax on the bits from 0.
  auto* bits = reinterpret_cast<unsigned long long*>(bound);
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned long long), context.stream));
  if (a.pattern.num_rows == 0) return;
  gershgorin_kernel<<<blocks_for(a.pattern.num_rows, kBlock), kBlock, 0, context.stream>>>(a, bits);
  check_launch("amg::gershgorin_bound");
}

void restriction_values(const Backend& backend, const MatrixView& p, const PatternView& r,
                        double* r_values) {
  if (r.num_rows == 0) return;
  Context& context = context_of(backend);
  // A group per row on the finest levels, a thread per entry on the coarser ones, whose few
  // long rows left most of the device idle (H200, pcg_sa on 7-point 200^3: 716k rows of R 0.45
  // ms by groups, 0.90 by entries; 10k rows 0.18 ms by groups, 0.09 by entries; 100 rows 0.17
  // ms and 0.006).
  const long long few_rows =
      32LL * (kBlock / kSmoothingLanes) * context.properties.multiProcessorCount;
  if (r.num_rows >= few_rows) {
    restriction_values_kernel<<<blocks_for(r.num_rows, kBlock / kSmoothingLanes), kBlock, 0,
                                context.stream>>>(p, r, r_values);
  } else {
    // R's entries are known on the device only: a grid of a few blocks per multiprocessor
    // strides over them.
    restriction_entries_kernel<<<4 * context.properties.multiProcessorCount, kBlock, 0,
                                 context.stream>>>(p, r, r_values);
  }
  check_launch("amg::restriction_values");
}

void smoothed_aggregation_count(const Backend& backend, const PatternView& a,
                                Span<const index_t> aggregate, Span<index_t> counts) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  distinct_aggregates_kernel<<<blocks_for(a.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, aggregate.data(), counts.data(), nullptr, nullptr);
  check_launch("amg::smoothed_aggregation_count");
}

void smoothed_aggregation_fill(const Backend& backend, const PatternView& a,
                               Span<const index_t> aggregate, const index_t* row_ptr,
                               index_t* col_idx) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  distinct_aggregates_kernel<<<blocks_for(a.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, aggregate.data(), nullptr, row_ptr, col_idx);
  check_launch("amg::smoothed_aggregation_fill");
}

void smoothed_aggregation_values(const Backend& backend, const MatrixView& a, double factor,
                                 const double* bound, Span<const index_t> aggregate,
                                 const PatternView& p, double* values) {
  if (a.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  smoothed_aggregation_kernel<<<blocks_for(a.pattern.num_rows, kBlock / kSmoothingLanes), kBlock, 0,
                                context.stream>>>(a, factor, bound, aggregate.data(), p, values);
  check_launch("amg::smoothed_aggregation_values");
}

void select_pattern_count(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                          Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                          Span<index_t> counts) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  select_pattern_kernel<false><<<blocks_for(a.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, cf.data(), coarse_index.data(), coarse_rows, coarse_columns, counts.data(), nullptr,
      nullptr);
  check_launch("amg::select_pattern_count");
}

void select_pattern_fill(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                         Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                         const index_t* row_ptr, index_t* col_idx) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  select_pattern_kernel<true><<<blocks_for(a.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, cf.data(), coarse_index.data(), coarse_rows, coarse_columns, nullptr, row_ptr, col_idx);
  check_launch("amg::select_pattern_fill");
}

void distance_two_strength_count(const Backend& backend, const PatternView& s,
                                 const PatternView& ss, Span<const index_t> cf,
                                 Span<const index_t> coarse_index, Span<index_t> counts) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  distance_two_kernel<false><<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      s, ss, cf.data(), coarse_index.data(), counts.data(), nullptr, nullptr);
  check_launch("amg::distance_two_strength_count");
}

void distance_two_strength_fill(const Backend& backend, const PatternView& s, const PatternView& ss,
                                Span<const index_t> cf, Span<const index_t> coarse_index,
                                const index_t* row_ptr, index_t* col_idx) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  distance_two_kernel<true><<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      s, ss, cf.data(), coarse_index.data(), nullptr, row_ptr, col_idx);
  check_launch("amg::distance_two_strength_fill");
}

void aggressive_splitting(const Backend& backend, Span<const index_t> first,
                          Span<const index_t> first_index, Span<const index_t> second,
                          Span<index_t> cf) {
  const auto n = static_cast<size_type>(first.size());
  if (n == 0) return;
  Context& context = context_of(backend);
  aggressive_splitting_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(
      first.data(), first_index.data(), second.data(), n, cf.data());
  check_launch("amg::aggressive_splitting");
}

index_t interpolation_passes(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                             Span<index_t> pass) {
  const index_t n = s.num_rows;
  if (n == 0) return 0;
  Context& context = context_of(backend);
  if (n <= kernels::cuda::cooperative_rows()) {
    const unsigned int grid =
        kernels::cuda::cooperative_blocks(context, passes_cooperative_kernel, kCooperativeBlock, n);
    DeviceScratch scratch(context, 2 * sizeof(double) * grid + sizeof(long long));
    auto* last = reinterpret_cast<index_t*>(scratch.as<double>() + 2 * grid);
    kernels::cuda::launch_cooperative(context, passes_cooperative_kernel, grid, kCooperativeBlock,
                                      "amg::interpolation_passes", s, cf.data(), pass.data(),
                                      scratch.as<double>(), last);
    index_t passes = 0;
    kernels::cuda::copy(context, &passes, false, last, true, sizeof(index_t));
    if (passes < 0) {
      throw BackendError("amg::interpolation_passes: rows left without a pass after " +
                         std::to_string(n + 1) + " rounds");
    }
    return passes;
  }
  const unsigned int blocks = blocks_for(n, kBlock);
  passes_init<<<blocks, kBlock, 0, context.stream>>>(cf.data(), n, pass.data());
  check_launch("amg::interpolation_passes (init)");
  // Each round counts the rows it assigned in its own counter; the passes end before the first
  // round that assigns none. kPassRoundsPerWait rounds run between two reads of the counters: a
  // round after that one assigns none either (no row of its previous pass exists), so the extra
  // rounds of the last batch change nothing.
  DeviceScratch assigned(context, sizeof(unsigned long long) * kPassRoundsPerWait);
  auto* counters = assigned.as<unsigned long long>();
  for (index_t first = 1; first <= n + 1; first += kPassRoundsPerWait) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(unsigned long long) * kPassRoundsPerWait,
                                       context.stream));
    for (index_t k = 0; k < kPassRoundsPerWait; ++k) {
      passes_round<<<blocks, kBlock, 0, context.stream>>>(s, first + k, pass.data(), counters + k);
      check_launch("amg::interpolation_passes (round)");
    }
    long long host[kPassRoundsPerWait] = {};
    read_integers(context, reinterpret_cast<const long long*>(counters), kPassRoundsPerWait, host);
    for (index_t k = 0; k < kPassRoundsPerWait; ++k) {
      if (host[k] == 0) return first + k - 1;
    }
  }
  throw BackendError("amg::interpolation_passes: rows left without a pass after " +
                     std::to_string(n + 1) + " rounds");
}

void multipass_count(const Backend& backend, const PatternView& s, Span<const index_t> pass,
                     Span<index_t> counts) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  multipass_count_kernel<<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      s, pass.data(), counts.data());
  check_launch("amg::multipass_count");
}

void multipass_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                    Span<const index_t> pass, InterpolationKind kind, const index_t* row_ptr,
                    index_t* col_idx, double* values) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  multipass_kernel<<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, s, pass.data(), PatternView{}, kind, row_ptr, col_idx, values);
  check_launch("amg::multipass_fill");
}

void multipass_prolongation_values(const Backend& backend, const MatrixView& a,
                                   Span<const index_t> pass, index_t passes,
                                   Span<const index_t> order, Span<const index_t> offsets,
                                   InterpolationKind kind, const PatternView& w,
                                   const PatternView& p, double* values) {
  if (p.num_rows == 0) return;
  Context& context = context_of(backend);
  if (p.num_rows <= kernels::cuda::cooperative_rows()) {
    const unsigned int grid = kernels::cuda::cooperative_blocks(
        context, multipass_prolongation_cooperative_kernel, kCooperativeBlock, p.num_rows);
    kernels::cuda::launch_cooperative(context, multipass_prolongation_cooperative_kernel, grid,
                                      kCooperativeBlock, "amg::multipass_prolongation_values", a,
                                      pass.data(), passes, order.data(), offsets.data(), w, kind, p,
                                      values);
    return;
  }
  for (index_t t = 0; t <= passes; ++t) {
    multipass_prolongation_kernel<<<blocks_for(p.num_rows, kBlock), kBlock, 0, context.stream>>>(
        a, pass.data(), t, order.data(), offsets.data(), w, kind, p, values);
    check_launch("amg::multipass_prolongation_values");
  }
}

bool multipass_prolongation_slots(const Backend& backend, const MatrixView& a,
                                  Span<const index_t> pass, index_t passes,
                                  Span<const index_t> order, Span<const index_t> offsets,
                                  InterpolationKind kind, const PatternView& w,
                                  Span<const index_t> coarse_index, index_t capacity,
                                  index_t* slot_columns, double* slot_values,
                                  Span<index_t> counts) {
  const index_t n = a.pattern.num_rows;
  if (n == 0) return true;
  Context& context = context_of(backend);
  DeviceScratch overflow(context, sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(overflow.as<void>(), 0, sizeof(unsigned long long), context.stream));
  if (n <= kernels::cuda::cooperative_rows()) {
    const unsigned int grid = kernels::cuda::cooperative_blocks(
        context, multipass_slots_cooperative_kernel, kCooperativeBlock, n);
    kernels::cuda::launch_cooperative(context, multipass_slots_cooperative_kernel, grid,
                                      kCooperativeBlock, "amg::multipass_prolongation_slots", a,
                                      pass.data(), passes, order.data(), offsets.data(), w, kind,
                                      coarse_index.data(), capacity, slot_columns, slot_values,
                                      counts.data(), overflow.as<unsigned long long>());
  } else {
    for (index_t t = -1; t <= passes; ++t) {
      multipass_slots_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(
          a, pass.data(), t, order.data(), offsets.data(), w, kind, coarse_index.data(), capacity,
          slot_columns, slot_values, counts.data(), overflow.as<unsigned long long>());
      check_launch("amg::multipass_prolongation_slots");
    }
  }
  long long host = 0;
  read_integers(context, reinterpret_cast<const long long*>(overflow.as<unsigned long long>()), 1,
                &host);
  return host == 0;
}

void multipass_slots_compact(const Backend& backend, index_t n, index_t capacity,
                             const index_t* slot_columns, const double* slot_values,
                             const index_t* row_ptr, index_t* col_idx, double* values) {
  if (n == 0) return;
  Context& context = context_of(backend);
  multipass_slots_compact_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(
      n, capacity, slot_columns, slot_values, row_ptr, col_idx, values);
  check_launch("amg::multipass_slots_compact");
}

void multipass_order(const Backend& backend, Span<const index_t> pass, index_t passes,
                     Span<index_t> order, Span<index_t> offsets) {
  const auto n = static_cast<index_t>(pass.size());
  Context& context = context_of(backend);
  DeviceScratch keys(context, sizeof(index_t) * static_cast<std::size_t>(n));
  if (n > 0) {
    pass_keys_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(pass.data(), n,
                                                                           keys.as<index_t>());
    check_launch("amg::multipass_order (keys)");
  }
  coloring::cuda::group_by_color(
      backend, Span<const index_t>(keys.as<index_t>(), static_cast<std::size_t>(n)), passes + 2,
      offsets, order);
}

void mm_extended_coarse_sums(const Backend& backend, const MatrixView& a, const PatternView& s,
                             Span<const index_t> cf, Span<double> coarse_sum) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  const index_t threshold = mm_extended_warp_threshold(context, s.num_rows);
  mm_extended_coarse_sums_kernel<<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, s, cf.data(), threshold, coarse_sum.data());
  check_launch("amg::mm_extended_coarse_sums");
  mm_extended_coarse_sums_warp_kernel<<<blocks_for(s.num_rows, kBlock / 32), kBlock, 0,
                                        context.stream>>>(a, s, cf.data(), threshold,
                                                          coarse_sum.data());
  check_launch("amg::mm_extended_coarse_sums (warp rows)");
}

void mm_extended_count(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                       Span<index_t> left_counts, Span<index_t> right_counts) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  mm_extended_count_kernel<<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      s, cf.data(), left_counts.data(), right_counts.data());
  check_launch("amg::mm_extended_count");
}

void mm_extended_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                      Span<const index_t> cf, Span<const index_t> coarse_index,
                      Span<const double> coarse_sum, const index_t* left_row_ptr,
                      index_t* left_col_idx, double* left_values, const index_t* right_row_ptr,
                      index_t* right_col_idx, double* right_values) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  const index_t threshold = mm_extended_warp_threshold(context, s.num_rows);
  mm_extended_fill_kernel<<<blocks_for(s.num_rows, kBlock), kBlock, 0, context.stream>>>(
      a, s, cf.data(), threshold, coarse_index.data(), coarse_sum.data(), left_row_ptr,
      left_col_idx, left_values, right_row_ptr, right_col_idx, right_values);
  check_launch("amg::mm_extended_fill");
  mm_extended_fill_warp_kernel<<<blocks_for(s.num_rows, kBlock / 32), kBlock, 0, context.stream>>>(
      a, s, cf.data(), threshold, coarse_index.data(), coarse_sum.data(), left_row_ptr,
      left_col_idx, left_values, right_row_ptr, right_col_idx, right_values);
  check_launch("amg::mm_extended_fill (warp rows)");
}

void truncation_count(const Backend& backend, const MatrixView& p,
                      const InterpolationParameters& params, Span<index_t> counts) {
  if (p.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  truncation_count_kernel<<<blocks_for(p.pattern.num_rows, kBlock), kBlock, 0, context.stream>>>(
      p, params, counts.data());
  check_launch("amg::truncation_count");
}

void truncation_fill(const Backend& backend, const MatrixView& p,
                     const InterpolationParameters& params, const index_t* row_ptr,
                     index_t* col_idx, double* values) {
  if (p.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  truncation_fill_kernel<<<blocks_for(p.pattern.num_rows, kBlock), kBlock, 0, context.stream>>>(
      p, params, row_ptr, col_idx, values);
  check_launch("amg::truncation_fill");
}

void truncation_values(const Backend& backend, const MatrixView& p, const PatternView& t,
                       double* values) {
  if (t.num_rows == 0) return;
  Context& context = context_of(backend);
  truncation_values_kernel<<<blocks_for(t.num_rows, kBlock), kBlock, 0, context.stream>>>(p, t,
                                                                                          values);
  check_launch("amg::truncation_values");
}

}  // namespace kryflow::kernels::amg::cuda
