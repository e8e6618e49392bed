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
                      Span<const W> inverse, ColorRows color, double omega, Span<const double> b,
                      Span<double> x) {
  with_block_size(a.block_size, "block_relaxation::multicolor_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    // Work: the color's share of the stored coefficients, estimated from the average row.
    const std::int64_t per_row =
        a.num_block_rows > 0 ? std::max<std::int64_t>(1, a.num_blocks / a.num_block_rows) : 1;
    parallel::for_each(
        backend, std::int64_t{color.count} * per_row * kB * kB, color.count, [&](std::int64_t q) {
          sweep_block_row<kB>(a, inverse.data(), color.rows[q], omega, b.data(), x.data());
        });
  });
}

#define KRYFLOW_INSTANTIATE(V, W)                                                            \
  template index_t invert_diagonal_blocks<V, W>(const Backend&, const BsrView<V>&, Span<W>); \
  template void multicolor_sweep<V, W>(const Backend&, const BsrView<V>&, SweepVariant,      \
                                       Span<const W>, ColorRows, double, Span<const double>, \
                                       Span<double>);
KRYFLOW_INSTANTIATE(double, double)
KRYFLOW_INSTANTIATE(double, float)
KRYFLOW_INSTANTIATE(float, double)
KRYFLOW_INSTANTIATE(float, float)
#undef KRYFLOW_INSTANTIATE
template void block_diagonal_apply<double>(const Backend&, int, Span<const double>, double,
                                           Span<const double>, Span<double>);
template void block_diagonal_apply<float>(const Backend&, int, Span<const float>, double,
                                          Span<const double>, Span<double>);

}  // namespace kryflow::kernels::block_relaxation::cpu
