// AINV's biconjugation by domain decomposition on the host (AinvParameters::threads).
//
// The rows are cut into `parts` blocks and the rows coupled (in A + A^T) to a later block form
// the separator, so no two block interiors are coupled. With the unknowns ordered interior 0,
// ..., interior parts-1, separator (B = P A P^T), the right-looking biconjugation of B
// (approximate_inverse.cpp) has this shape, which makes its interior steps independent:
//  - an interior column z_i (w_i) of block p only ever holds rows of interior p: the step k of
//    another block q has u_k = B z_k in interior q and the separator, which z_i does not meet;
//  - a separator column z_j, before the separator steps, is e_j plus entries in the interiors,
//    and the step i of block p changes only its entries in interior p, by a coefficient read
//    from them and from the (unit) diagonal alone; the entries in the other interiors, which
//    that step multiplies by zeros, keep their values, and so does the tau test on them.
// So each block runs its interior steps on its own thread, in its local numbering (interior,
// then the separator rows it meets), with its own copy of the separator columns it updates,
// seeded with e_j; the copies are then concatenated in block order (rows increasing) with the
// diagonal last, and one thread runs the separator steps on the merged columns. Every dot
// product and update sums the same terms in the same order as the sequential algorithm on B
// (the skipped terms are exact zeros, and 0 + x * 0 = 0 for finite x), so with fill -1 the
// factors are the sequential ones of B bit for bit while they stay finite. With fill p >= 0 a
// separator column is cut to its p largest entries per block during the interior steps and once
// more after the merge, where the sequential algorithm cuts the whole column after each update:
// that is the only difference. The checks, the scaling and the transpose of ainv_factor run on
// the threads too (the same values); when a check fails, ainv_factor's sequential checks raise
// the exception, so its message is the sequential form's.
#include "src/preconditioners/ainv_parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/backend/parallel.hpp"

#ifdef _OPENMP
#define KRYFLOW_AINV_OMP(directive) _Pragma(directive)
#else
#define KRYFLOW_AINV_OMP(directive)
#endif

namespace kryflow::ainv_detail {

namespace {

std::atomic<index_t> min_rows{kParallelMinRows};

/// ainv_factor's matrix after its checks: S A S by rows and by columns, A's diagonal, S.
struct Scaled {
  index_t n = 0;
  HostCsr a, at;
  std::vector<double> diagonal, scale;
  bool symmetric = true;
};

/// ainv_factor's transpose (the same arrays: each row by increasing column), on `team` threads:
/// the entries are placed through atomic counters, then each row is sorted.
HostCsr parallel_transpose(index_t n, const HostCsr& a, int team) {
  HostCsr t;
  t.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  const auto nnz = static_cast<index_t>(a.col.size());
  index_t* count = t.ptr.data() + 1;
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t k = 0; k < nnz; ++k) {
    KRYFLOW_AINV_OMP("omp atomic")
    ++count[a.col[k]];
  }
  for (index_t i = 0; i < n; ++i) t.ptr[i + 1] += t.ptr[i];
  t.col.resize(a.col.size());
  t.val.resize(a.val.size());
  std::vector<index_t> next(t.ptr.begin(), t.ptr.end() - 1);
  index_t* slots = next.data();
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) {
      index_t s;
      KRYFLOW_AINV_OMP("omp atomic capture")
      s = slots[a.col[k]]++;
      t.col[s] = i;
      t.val[s] = a.val[k];
    }
  }
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t i = 0; i < n; ++i) {  // insertion sort: rows are short
    for (index_t k = t.ptr[i] + 1; k < t.ptr[i + 1]; ++k) {
      const index_t c = t.col[k];
      const double v = t.val[k];
      index_t q = k;
      for (; q > t.ptr[i] && t.col[q - 1] > c; --q) {
        t.col[q] = t.col[q - 1];
        t.val[q] = t.val[q - 1];
      }
      t.col[q] = c;
      t.val[q] = v;
    }
  }
  (void)team;
  return t;
}

/// Whether an entry of S A S differs from its transpose (ainv_factor's first_asymmetry).
bool asymmetric(index_t n, const HostCsr& a, const HostCsr& at, int team) {
  bool differs = false;
  KRYFLOW_AINV_OMP("omp parallel num_threads(team) reduction(|| : differs)") {
    std::vector<std::pair<index_t, double>> row;
    KRYFLOW_AINV_OMP("omp for schedule(static)")
    for (index_t i = 0; i < n; ++i) {
      if (differs) continue;
      if (a.ptr[i + 1] - a.ptr[i] != at.ptr[i + 1] - at.ptr[i]) {
        differs = true;
        continue;
      }
      row.clear();
      for (index_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) row.emplace_back(a.col[k], a.val[k]);
      std::sort(row.begin(), row.end());
      for (std::size_t k = 0; k < row.size(); ++k) {
        const index_t q = at.ptr[i] + static_cast<index_t>(k);
        if (row[k].first != at.col[q] || row[k].second != at.val[q]) differs = true;
      }
    }
  }
  (void)team;
  return differs;
}

/// ainv_factor's checks and scaling on `team` threads (the same values); false when A fails a
/// check.
bool prepare(index_t n, const std::vector<index_t>& row_ptr, const std::vector<index_t>& col_idx,
             const std::vector<double>& values, AinvSymmetry symmetry, int team, Scaled& s) {
  s.n = n;
  s.diagonal.assign(static_cast<std::size_t>(n), 0.0);
  bool bad = false;
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static) reduction(|| : bad)")
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (!std::isfinite(values[k])) bad = true;
      if (col_idx[k] == i) s.diagonal[i] = values[k];
    }
    if (s.diagonal[i] == 0.0) bad = true;
  }
  if (bad) return false;
  s.scale.resize(static_cast<std::size_t>(n));
  s.a.ptr = row_ptr;
  s.a.col = col_idx;
  s.a.val.resize(values.size());
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t i = 0; i < n; ++i) s.scale[i] = 1.0 / std::sqrt(std::abs(s.diagonal[i]));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = s.a.ptr[i]; k < s.a.ptr[i + 1]; ++k) {
      s.a.val[k] = (s.scale[i] * s.scale[s.a.col[k]]) * values[k];
    }
  }
  s.at = parallel_transpose(n, s.a, team);
  s.symmetric = symmetry == AinvSymmetry::symmetric;
  if (symmetry != AinvSymmetry::nonsymmetric) {
    const bool differs = asymmetric(n, s.a, s.at, team);
    if (symmetry == AinvSymmetry::symmetric && differs) return false;
    s.symmetric = !differs;
  }
  (void)team;
  return true;
}

/// The graph of A + A^T through A's rows and A^T's (A^T's alone when A is symmetric).
struct Graph {
  const HostCsr* a;
  const HostCsr* at;
  bool symmetric;
  /// f(c) for the rows c coupled to row r (repeats and r itself included).
  template <class F>
  void for_each_neighbour(index_t r, F&& f) const {
    for (index_t k = at->ptr[r]; k < at->ptr[r + 1]; ++k) f(at->col[k]);
    if (symmetric) return;
    for (index_t k = a->ptr[r]; k < a->ptr[r + 1]; ++k) f(a->col[k]);
  }
};

/// The block of position k of an order of n rows: balanced contiguous blocks.
index_t block_of(index_t k, index_t n, int parts) {
  return static_cast<index_t>(static_cast<std::int64_t>(k) * parts / n);
}

/// separator[r] = 1 for the rows coupled to a row of a later block; returns how many.
index_t mark_separator(const Graph& graph, const std::vector<index_t>& block, int team,
                       std::vector<char>& separator) {
  const auto n = static_cast<index_t>(block.size());
  separator.assign(block.size(), 0);
  index_t count = 0;
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static) reduction(+ : count)")
  for (index_t r = 0; r < n; ++r) {
    bool coupled = false;
    graph.for_each_neighbour(r, [&](index_t c) { coupled = coupled || block[c] > block[r]; });
    separator[r] = coupled ? 1 : 0;
    count += coupled ? 1 : 0;
  }
  (void)team;
  return count;
}

/// The rows in breadth-first order of the graph, each connected component from a
/// pseudo-peripheral row (George, Liu 1979: from its first row, the last row reached while the
/// depth grows, at most 4 sweeps).
std::vector<index_t> breadth_first_order(const Graph& graph, index_t n) {
  std::vector<index_t> order, trial;
  order.reserve(static_cast<std::size_t>(n));
  std::vector<index_t> level(static_cast<std::size_t>(n), -1);
  // Appends root's component to `queue` by levels; returns its depth.
  const auto sweep = [&](index_t root, std::vector<index_t>& queue) {
    index_t depth = 0;
    level[root] = 0;
    queue.push_back(root);
    for (std::size_t head = queue.size() - 1; head < queue.size(); ++head) {
      const index_t r = queue[head];
      depth = level[r];
      graph.for_each_neighbour(r, [&](index_t c) {
        if (level[c] < 0) {
          level[c] = level[r] + 1;
          queue.push_back(c);
        }
      });
    }
    return depth;
  };
  const auto forget = [&](const std::vector<index_t>& rows) {
    for (index_t r : rows) level[r] = -1;
  };
  for (index_t start = 0; start < n; ++start) {
    if (level[start] >= 0) continue;
    index_t root = start;
    trial.clear();
    index_t depth = sweep(root, trial);
    forget(trial);
    for (int k = 0; k < 3; ++k) {
      const index_t candidate = trial.back();
      trial.clear();
      const index_t d = sweep(candidate, trial);
      forget(trial);
      if (d <= depth) break;
      root = candidate;
      depth = d;
    }
    sweep(root, order);
  }
  return order;
}

/// P A P^T: interiors of the blocks in block order, then the separator; each in the order the
/// blocks were cut from.
struct Partition {
  std::vector<index_t> perm;     // row k of P A P^T is row perm[k] of A
  std::vector<index_t> inverse;  // row r of A is row inverse[r] of P A P^T
  std::vector<index_t> begin;    // block p's interior: [begin[p], begin[p + 1]); separator after
};

Partition make_partition(const Graph& graph, index_t n, int parts, int team) {
  std::vector<index_t> block(static_cast<std::size_t>(n));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t r = 0; r < n; ++r) block[r] = block_of(r, n, parts);
  std::vector<char> separator;
  const index_t contiguous = mark_separator(graph, block, team, separator);
  std::vector<index_t> order;  // empty: A's numbering
  if (contiguous > n / 8) {
    std::vector<index_t> bfs = breadth_first_order(graph, n);
    std::vector<index_t> bfs_block(static_cast<std::size_t>(n));
    KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
    for (index_t k = 0; k < n; ++k) bfs_block[bfs[k]] = block_of(k, n, parts);
    std::vector<char> bfs_separator;
    if (mark_separator(graph, bfs_block, team, bfs_separator) < contiguous) {
      order = std::move(bfs);
      block = std::move(bfs_block);
      separator = std::move(bfs_separator);
    }
  }
  // Block b holds the positions [first(b), first(b + 1)) of the order.
  const auto first = [&](int b) {
    return static_cast<index_t>((static_cast<std::int64_t>(b) * n + parts - 1) / parts);
  };
  const auto row_at = [&](index_t k) { return order.empty() ? k : order[k]; };
  std::vector<index_t> interior(static_cast<std::size_t>(parts) + 1, 0);
  std::vector<index_t> separating(static_cast<std::size_t>(parts) + 1, 0);
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (int b = 0; b < parts; ++b) {
    for (index_t k = first(b); k < first(b + 1); ++k) {
      ++(separator[row_at(k)] ? separating : interior)[b + 1];
    }
  }
  for (int b = 0; b < parts; ++b) {
    interior[b + 1] += interior[b];
    separating[b + 1] += separating[b];
  }
  Partition p;
  p.begin = interior;
  p.perm.resize(static_cast<std::size_t>(n));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (int b = 0; b < parts; ++b) {
    index_t next_interior = interior[b];
    index_t next_separator = interior[parts] + separating[b];
    for (index_t k = first(b); k < first(b + 1); ++k) {
      const index_t r = row_at(k);
      p.perm[separator[r] ? next_separator++ : next_interior++] = r;
    }
  }
  p.inverse.resize(static_cast<std::size_t>(n));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t k = 0; k < n; ++k) p.inverse[p.perm[k]] = k;
  (void)team;
  return p;
}

/// One block's interior steps: its columns and its copies of the separator columns, in its
/// local numbering (interior rows begin..end-1 as 0..m-1, then `separator` as m, m + 1, ...).
struct Block {
  index_t begin = 0, end = 0;      // the interior, in P A P^T's numbering
  std::vector<index_t> separator;  // the separator rows it meets, P A P^T's numbering, increasing
  Factor z, w;
  std::vector<index_t> shifted;  // rows of A
  bool stopped = false;
  std::exception_ptr error;
  index_t local(index_t k) const {
    if (k >= begin && k < end) return k - begin;
    return (end - begin) +
           static_cast<index_t>(std::lower_bound(separator.begin(), separator.end(), k) -
                                separator.begin());
  }
};

/// Rows [block.begin, block.end) of P M P^T (M = S A S or its transpose, by rows) in the
/// block's local numbering.
HostCsr local_rows(const HostCsr& m, const Partition& p, const Block& block) {
  HostCsr local;
  local.ptr.assign(1, 0);
  local.ptr.reserve(static_cast<std::size_t>(block.end - block.begin) + 1);
  for (index_t k = block.begin; k < block.end; ++k) {
    const index_t r = p.perm[k];
    local.ptr.push_back(local.ptr.back() + m.ptr[r + 1] - m.ptr[r]);
  }
  local.col.resize(static_cast<std::size_t>(local.ptr.back()));
  local.val.resize(static_cast<std::size_t>(local.ptr.back()));
  for (index_t k = block.begin; k < block.end; ++k) {
    const index_t r = p.perm[k];
    index_t s = local.ptr[k - block.begin];
    for (index_t q = m.ptr[r]; q < m.ptr[r + 1]; ++q, ++s) {
      local.col[s] = block.local(p.inverse[m.col[q]]);
      local.val[s] = m.val[q];
    }
  }
  return local;
}

/// Rows of P M P^T in P A P^T's numbering where `needed`, the others empty.
HostCsr permuted_rows(const HostCsr& m, const Partition& p, const std::vector<char>& needed,
                      int team) {
  const auto n = static_cast<index_t>(needed.size());
  HostCsr out;
  out.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t k = 0; k < n; ++k) {
    const index_t r = p.perm[k];
    out.ptr[k + 1] = needed[k] ? m.ptr[r + 1] - m.ptr[r] : 0;
  }
  for (index_t k = 0; k < n; ++k) out.ptr[k + 1] += out.ptr[k];
  out.col.resize(static_cast<std::size_t>(out.ptr[n]));
  out.val.resize(static_cast<std::size_t>(out.ptr[n]));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t k = 0; k < n; ++k) {
    if (!needed[k]) continue;
    const index_t r = p.perm[k];
    index_t s = out.ptr[k];
    for (index_t q = m.ptr[r]; q < m.ptr[r + 1]; ++q, ++s) {
      out.col[s] = p.inverse[m.col[q]];
      out.val[s] = m.val[q];
    }
  }
  (void)team;
  return out;
}

/// The fill limits of the columns of Z and W in P A P^T's numbering (ainv_factor's z_limit and
/// w_limit of P A P^T).
struct Limits {
  std::vector<index_t> z, w;
};

Limits fill_limits(const Scaled& matrix, const Partition& p, int fill, int team) {
  const index_t n = matrix.n;
  Limits limits;
  limits.z.assign(static_cast<std::size_t>(n), fill);
  limits.w.assign(static_cast<std::size_t>(n), fill);
  if (fill != 0) return limits;
  const HostCsr& a = matrix.a;
  const HostCsr& at = matrix.at;
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t j = 0; j < n; ++j) {
    const index_t r = p.perm[j];
    index_t above_z = 0, above_w = 0;
    for (index_t q = at.ptr[r]; q < at.ptr[r + 1]; ++q) above_z += p.inverse[at.col[q]] < j;
    for (index_t q = a.ptr[r]; q < a.ptr[r + 1]; ++q) above_w += p.inverse[a.col[q]] < j;
    limits.z[j] = above_z;
    limits.w[j] = above_w;
  }
  (void)team;
  return limits;
}

/// The interior steps of `block` (the sequential loop of ainv_factor on its local rows).
void run_block(const Scaled& matrix, const Partition& p, const Limits& limits, double tau,
               std::vector<double>& pivots, Block& block, const std::stop_token& stop) {
  const bool symmetric = matrix.symmetric;
  const index_t nI = p.begin.back();
  // The separator rows the interior rows meet (in A's rows or columns).
  for (index_t k = block.begin; k < block.end; ++k) {
    const index_t r = p.perm[k];
    const auto collect = [&](const HostCsr& m) {
      for (index_t q = m.ptr[r]; q < m.ptr[r + 1]; ++q) {
        const index_t c = p.inverse[m.col[q]];
        if (c >= nI) block.separator.push_back(c);
      }
    };
    collect(matrix.at);
    if (!symmetric) collect(matrix.a);
  }
  std::sort(block.separator.begin(), block.separator.end());
  block.separator.erase(std::unique(block.separator.begin(), block.separator.end()),
                        block.separator.end());
  const index_t m = block.end - block.begin;
  const index_t local_n = m + static_cast<index_t>(block.separator.size());
  const auto global = [&](index_t l) { return l < m ? block.begin + l : block.separator[l - m]; };
  std::vector<index_t> z_limit(static_cast<std::size_t>(local_n));
  std::vector<index_t> w_limit(static_cast<std::size_t>(symmetric ? 0 : local_n));
  for (index_t l = 0; l < local_n; ++l) {
    z_limit[l] = limits.z[global(l)];
    if (!symmetric) w_limit[l] = limits.w[global(l)];
  }
  const HostCsr at = local_rows(matrix.at, p, block);
  const std::vector<double>& diagonal = matrix.diagonal;
  std::vector<index_t> shifted;  // local steps
  block.z = Factor(local_n);
  HostCsr a;
  if (!symmetric) {
    a = local_rows(matrix.a, p, block);
    block.w = Factor(local_n);
  }
  const auto fallback = [&](index_t i) {
    return diagonal[p.perm[block.begin + i]] > 0 ? 1.0 : -1.0;
  };
  if (!conjugation_steps(at, &a, block.z, symmetric ? nullptr : &block.w, 0, m, tau, z_limit,
                         w_limit, fallback, pivots.data() + block.begin, shifted, stop)) {
    block.stopped = true;
    return;
  }
  for (index_t i : shifted) block.shifted.push_back(p.perm[block.begin + i]);
}

/// The separator columns of Z (or W) after the interior steps: the blocks' copies concatenated
/// in block order (their rows in P A P^T's numbering), the diagonal last, cut to the fill
/// limit, with a row index of them (which may list an entry the cut dropped, as the row index
/// of the sequential form may); `needed`: the rows they hold (every row they can come to hold in
/// the separator steps), for the rows of A that these steps read. The blocks' copies are
/// released.
Factor merge_separator(index_t n, index_t nI, std::vector<Block>& blocks, bool w,
                       const std::vector<index_t>& limit, int team, std::vector<char>& needed) {
  const auto parts = static_cast<int>(blocks.size());
  const auto local = [&](Block& block) -> Factor& { return w ? block.w : block.z; };
  // The copies of each separator column, in block order: (block, its local column).
  std::vector<index_t> copies_ptr(static_cast<std::size_t>(n - nI) + 1, 0);
  for (const Block& block : blocks) {
    for (index_t j : block.separator) ++copies_ptr[j - nI + 1];
  }
  for (index_t j = 0; j < n - nI; ++j) copies_ptr[j + 1] += copies_ptr[j];
  std::vector<std::pair<int, index_t>> copies(static_cast<std::size_t>(copies_ptr.back()));
  {
    std::vector<index_t> next(copies_ptr.begin(), copies_ptr.end() - 1);
    for (int b = 0; b < parts; ++b) {
      const index_t m = blocks[b].end - blocks[b].begin;
      for (std::size_t s = 0; s < blocks[b].separator.size(); ++s) {
        copies[next[blocks[b].separator[s] - nI]++] = {b, m + static_cast<index_t>(s)};
      }
    }
  }
  Factor merged;
  merged.columns.resize(static_cast<std::size_t>(n));
  merged.rows.resize(static_cast<std::size_t>(n));
  needed.assign(static_cast<std::size_t>(n), 0);
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1024)")
  for (index_t j = nI; j < n; ++j) {
    Column& column = merged.columns[j];
    for (index_t c = copies_ptr[j - nI]; c < copies_ptr[j - nI + 1]; ++c) {
      Block& block = blocks[copies[c].first];
      const Column& copy = local(block).columns[copies[c].second];
      for (std::size_t k = 0; k + 1 < copy.size(); ++k) {  // all but the diagonal, last
        column.push_back({block.begin + copy[k].row, copy[k].value});
      }
    }
    column.push_back({j, 1.0});
    keep_largest(column, limit[j]);
    merged.rows[j].push_back(j);
    needed[j] = 1;
  }
  // The row index and `needed` in the interiors, block by block (the rows of block b's copies
  // are in its interior), then the copies released.
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1)")
  for (int b = 0; b < parts; ++b) {
    Block& block = blocks[b];
    const index_t m = block.end - block.begin;
    for (std::size_t s = 0; s < block.separator.size(); ++s) {
      Column& copy = local(block).columns[static_cast<std::size_t>(m) + s];
      for (std::size_t k = 0; k + 1 < copy.size(); ++k) {
        const index_t row = block.begin + copy[k].row;
        merged.rows[row].push_back(block.separator[s]);
        needed[row] = 1;
      }
      Column().swap(copy);
    }
  }
  (void)team;
  return merged;
}

/// Z (or W) by columns in P A P^T's numbering: the blocks' interior columns, then `separator`'s.
void flatten(index_t n, const std::vector<Block>& blocks, const Factor& separator, bool w, int team,
             std::vector<index_t>& ptr, std::vector<index_t>& row, std::vector<double>& values) {
  const auto column_of = [&](const Block& block, index_t j) -> const Column& {
    return (w ? block.w : block.z).columns[j - block.begin];
  };
  const auto parts = static_cast<int>(blocks.size());
  const index_t nI = blocks.back().end;
  ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1)")
  for (int b = 0; b < parts; ++b) {
    const Block& block = blocks[b];
    for (index_t j = block.begin; j < block.end; ++j) {
      ptr[j + 1] = static_cast<index_t>(column_of(block, j).size());
    }
  }
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t j = nI; j < n; ++j) ptr[j + 1] = static_cast<index_t>(separator.columns[j].size());
  for (index_t j = 0; j < n; ++j) ptr[j + 1] += ptr[j];
  row.resize(static_cast<std::size_t>(ptr[n]));
  values.resize(static_cast<std::size_t>(ptr[n]));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1)")
  for (int b = 0; b < parts; ++b) {
    const Block& block = blocks[b];
    for (index_t j = block.begin; j < block.end; ++j) {
      index_t s = ptr[j];
      for (const Entry& e : column_of(block, j)) {
        row[s] = block.begin + e.row;
        values[s++] = e.value;
      }
    }
  }
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t j = nI; j < n; ++j) {
    index_t s = ptr[j];
    for (const Entry& e : separator.columns[j]) {
      row[s] = e.row;
      values[s++] = e.value;
    }
  }
  (void)team;
}

}  // namespace

index_t parallel_min_rows() noexcept {
  return min_rows.load();
}

void set_parallel_min_rows(index_t rows) noexcept {
  min_rows.store(rows);
}

int resolve_parts(int threads) noexcept {
  if (threads > 0) return threads;
#ifdef _OPENMP
  return std::max(1, omp_get_max_threads());
#else
  return 1;
#endif
}

std::optional<AinvFactors> factor_parallel(index_t n, const std::vector<index_t>& row_ptr,
                                           const std::vector<index_t>& col_idx,
                                           const std::vector<double>& values,
                                           const AinvParameters& parameters, int parts,
                                           std::stop_token stop) {
  parts = static_cast<int>(std::min<index_t>(parts, n));
  const int team = parts;
#ifdef KRYFLOW_WITH_OPENMP
  kernels::parallel::wait_passively();
#endif
  Scaled matrix;
  if (!prepare(n, row_ptr, col_idx, values, parameters.symmetry, team, matrix)) {
    return std::nullopt;
  }
  const Graph graph{&matrix.a, &matrix.at, matrix.symmetric};
  const Partition p = make_partition(graph, n, parts, team);
  const index_t nI = p.begin.back();
  const Limits limits = fill_limits(matrix, p, parameters.fill, team);
  const double tau = parameters.drop_tolerance;
  AinvFactors f;
  f.n = n;
  f.symmetric = matrix.symmetric;
  f.pivots.resize(static_cast<std::size_t>(n));
  // The interior steps, one block per thread.
  std::vector<Block> blocks(static_cast<std::size_t>(parts));
  for (int b = 0; b < parts; ++b) {
    blocks[b].begin = p.begin[b];
    blocks[b].end = p.begin[b + 1];
  }
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1)")
  for (int b = 0; b < parts; ++b) {
    try {
      run_block(matrix, p, limits, tau, f.pivots, blocks[b], stop);
    } catch (...) {
      blocks[b].error = std::current_exception();
    }
  }
  for (const Block& block : blocks) {
    if (block.error) std::rethrow_exception(block.error);
  }
  for (const Block& block : blocks) {
    if (block.stopped) return AinvFactors{};
  }
  // The separator steps on the merged separator columns, with the rows of S A S (and its
  // transpose) that they read.
  std::vector<char> needed;
  Factor z = merge_separator(n, nI, blocks, false, limits.z, team, needed);
  const HostCsr at = permuted_rows(matrix.at, p, needed, team);
  Factor w;
  HostCsr a;
  if (!matrix.symmetric) {
    w = merge_separator(n, nI, blocks, true, limits.w, team, needed);
    a = permuted_rows(matrix.a, p, needed, team);
  }
  std::vector<index_t> shifted;  // rows of A
  for (const Block& block : blocks) {
    shifted.insert(shifted.end(), block.shifted.begin(), block.shifted.end());
  }
  std::vector<index_t> separator_shifted;  // steps of P A P^T
  const auto fallback = [&](index_t i) { return matrix.diagonal[p.perm[i]] > 0 ? 1.0 : -1.0; };
  if (!conjugation_steps(at, &a, z, matrix.symmetric ? nullptr : &w, nI, n, tau, limits.z, limits.w,
                         fallback, f.pivots.data(), separator_shifted, stop)) {
    return AinvFactors{};
  }
  if (!matrix.symmetric) flatten(n, blocks, w, true, team, f.w_ptr, f.w_row, f.w_values);
  flatten(n, blocks, z, false, team, f.z_ptr, f.z_row, f.z_values);
  // Millions of small columns: released on the threads too.
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(dynamic, 1)")
  for (int b = 0; b < parts; ++b) {
    blocks[b].z = Factor();
    blocks[b].w = Factor();
  }
  const auto release = [&](Factor& factor) {
    if (factor.columns.empty()) return;
    KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
    for (index_t j = 0; j < n; ++j) {
      Column().swap(factor.columns[j]);
      std::vector<index_t>().swap(factor.rows[j]);
    }
  };
  release(z);
  release(w);
  for (index_t i : separator_shifted) shifted.push_back(p.perm[i]);
  std::sort(shifted.begin(), shifted.end());
  f.shifted = std::move(shifted);
  f.scale.resize(static_cast<std::size_t>(n));
  KRYFLOW_AINV_OMP("omp parallel for num_threads(team) schedule(static)")
  for (index_t k = 0; k < n; ++k) f.scale[k] = matrix.scale[p.perm[k]];
  f.permutation = p.perm;
  return f;
}

}  // namespace kryflow::ainv_detail
