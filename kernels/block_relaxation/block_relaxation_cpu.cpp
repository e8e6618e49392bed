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
index_t invert_blocks(const Backend& backend, int block_size, index_t count, const V* blocks,
                      W* inverse) {
  return with_block_size(block_size, "block_relaxation::invert_blocks", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    std::atomic<index_t> first{count};
    parallel::for_each(backend, std::int64_t{count} * kB * kB * kB, count, [&](std::int64_t row) {
      const auto I = static_cast<index_t>(row);
      if (invert_block<kB>(blocks + row * kB * kB, inverse + row * kB * kB)) return;
      index_t seen = first.load();
      while (I < seen && !first.compare_exchange_weak(seen, I)) {
      }
    });
    return first.load() == count ? index_t{-1} : first.load();
  });
}

template <class V, class W>
void triangular_sweep(const Backend& backend, const BsrView<V>& part, const BsrView<V>* second,
                      SweepVariant, const W* inverse, ColorRange color, SweepUpdate update,
                      const SweepVectors& vectors) {
  with_block_size(part.block_size, "block_relaxation::triangular_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    const index_t end = color.first + color.count;
    std::int64_t blocks = part.row_ptr[end] - part.row_ptr[color.first];
    if (second != nullptr) blocks += second->row_ptr[end] - second->row_ptr[color.first];
    parallel::for_each(backend, (blocks + color.count) * kB * kB, color.count, [&](std::int64_t q) {
      sweep_block_row<kB>(part, second, inverse, color.first + static_cast<index_t>(q), update,
                          vectors);
    });
  });
}

template <class V, class W>
void factor_color(const Backend& backend, Factorization kind, const BsrView<V>& lower,
                  const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,
                  index_t* first_bad) {
  with_block_size(lower.block_size, "block_relaxation::factor_color", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    const index_t end = color.first + color.count;
    const std::int64_t blocks = lower.row_ptr[end] - lower.row_ptr[color.first];
    std::atomic_ref<index_t> bad(*first_bad);
    parallel::for_each(backend, (8 * blocks + color.count) * kB * kB * kB, color.count,
                       [&](std::int64_t q) {
                         const index_t I = color.first + static_cast<index_t>(q);
                         const bool ok = kind == Factorization::ilu0
                                             ? ilu0_row<kB>(lower, upper, diagonal, inverse, I)
                                             : dilu_row<kB>(lower, upper, diagonal, inverse, I);
                         if (ok) return;
                         index_t seen = bad.load();
                         while (I < seen && !bad.compare_exchange_weak(seen, I)) {
                         }
                       });
  });
}

void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position) {
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, n, n,
                     [&](std::int64_t p) { position[order[p]] = static_cast<index_t>(p); });
}

void split_lengths(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position, Span<index_t> lower,
                   Span<index_t> upper) {
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, std::int64_t{a.row_ptr[a.num_rows]} + n, n, [&](std::int64_t p) {
    split_row_lengths(a, order.data(), position.data(), static_cast<index_t>(p), lower.data(),
                      upper.data());
  });
}

void split_pattern(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position,
                   const index_t* lower_ptr, const index_t* upper_ptr, index_t* lower_col,
                   index_t* upper_col, index_t* lower_source, index_t* upper_source,
                   index_t* diagonal_source) {
  const auto n = static_cast<std::int64_t>(order.size());
  parallel::for_each(backend, 8 * std::int64_t{a.row_ptr[a.num_rows]} + n, n, [&](std::int64_t q) {
    const auto p = static_cast<index_t>(q);
    diagonal_source[p] = -1;
    for (index_t k = a.row_ptr[order[p]]; k < a.row_ptr[order[p] + 1]; ++k) {
      split_place(a, order.data(), position.data(), p, k, lower_ptr, upper_ptr, lower_col,
                  upper_col, lower_source, upper_source, diagonal_source);
    }
  });
}

template <class V>
void gather_values(const Backend& backend, int block_entries, Span<const index_t> source,
                   const V* in, V* out) {
  const auto n = static_cast<std::int64_t>(source.size());
  parallel::for_each(backend, n * block_entries, n, [&](std::int64_t k) {
    for (int e = 0; e < block_entries; ++e) {
      out[k * block_entries + e] =
          source[k] >= 0 ? in[std::int64_t{source[k]} * block_entries + e] : V(0);
    }
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
