// OpenMP block relaxation kernels: the reference's per-block-row formulas (block_rows.hpp), the
// block rows (of one color, for the sweep) in parallel; the same bits as the reference.
#include <algorithm>
#include <atomic>

#include "kernels/backend/parallel.hpp"
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/block_relaxation/block_rows.hpp"

namespace kryflow::kernels::block_relaxation::cpu {

template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse) {
  return with_block_size(a.block_size, "block_relaxation::invert_diagonal_blocks", [&](auto b) {
    constexpr int kB = decltype(b)::value;
    std::atomic<index_t> first{a.num_block_rows};
    parallel::for_each(backend, std::int64_t{a.num_block_rows} * kB * kB * kB, a.num_block_rows,
                       [&](std::int64_t row) {
                         const auto I = static_cast<index_t>(row);
                         const index_t k = diagonal_block(a, I);
                         const bool ok =
                             k >= 0 && invert_block<kB>(a.values + std::int64_t{k} * kB * kB,
                                                        inverse.data() + row * kB * kB);
                         if (ok) return;
                         index_t seen = first.load();
                         while (I < seen && !first.compare_exchange_weak(seen, I)) {
                         }
                       });
    return first.load() == a.num_block_rows ? index_t{-1} : first.load();
  });
}

template <class W>
void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,
                          double omega, Span<const double> r, Span<double> z) {
  with_block_size(block_size, "block_relaxation::block_diagonal_apply", [&](auto b) {
    constexpr int kB = decltype(b)::value;
    const auto rows = static_cast<std::int64_t>(r.size()) / kB;
    parallel::for_each(backend, rows * kB * (kB + 2), rows, [&](std::int64_t I) {
      apply_block<kB>(inverse.data() + I * kB * kB, omega, r.data() + I * kB, z.data() + I * kB);
    });
  });
}

template <class V, class W>
void multicolor_sweep(const Backend& backend, const BsrView<V>& a, SweepVariant,
                      Span<const W> inverse, ColorRange color, double omega, Span<const double> b,
                      Span<double> x) {
  with_block_size(a.block_size, "block_relaxation::multicolor_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    const std::int64_t work =
        std::int64_t{a.row_ptr[color.first + color.count] - a.row_ptr[color.first]} * kB * kB;
    parallel::for_each(backend, work, color.count, [&](std::int64_t q) {
      sweep_block_row<kB>(a, inverse.data(), color.first + static_cast<index_t>(q), omega, b.data(),
                          x.data());
    });
  });
}

void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position) {
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, n, n,
                     [&](std::int64_t p) { position[order[p]] = static_cast<index_t>(p); });
}

template <class V>
void permuted_row_lengths(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                          Span<index_t> counts) {
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, n, n, [&](std::int64_t p) {
    counts[p] = a.row_ptr[order[p] + 1] - a.row_ptr[order[p]];
  });
}

template <class V>
void permute_fill(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                  Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,
                  V* values) {
  const std::int64_t BB = std::int64_t{a.block_size} * a.block_size;
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, a.num_blocks * BB, n, [&](std::int64_t p) {
    permute_block_row(a, order[p], position.data(), row_ptr[p], BB, col_idx, values);
  });
}

void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  parallel::for_each(backend, n, n / block_size, [&](std::int64_t p) {
    for (int i = 0; i < block_size; ++i) {
      out[p * block_size + i] = in[static_cast<std::int64_t>(map[p]) * block_size + i];
    }
  });
}

KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cpu
