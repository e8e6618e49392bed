// Reference (oracle) block relaxation kernels: one block row after another.
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/block_relaxation/block_rows.hpp"

namespace kryflow::kernels::block_relaxation::reference {

template <class V, class W>
index_t invert_diagonal_blocks(const Backend&, const BsrView<V>& a, Span<W> inverse) {
  return with_block_size(a.block_size, "block_relaxation::invert_diagonal_blocks", [&](auto b) {
    constexpr int kB = decltype(b)::value;
    for (index_t I = 0; I < a.num_block_rows; ++I) {
      const index_t k = diagonal_block(a, I);
      if (k < 0) return I;
      if (!invert_block<kB>(a.values + static_cast<std::int64_t>(k) * kB * kB,
                            inverse.data() + static_cast<std::int64_t>(I) * kB * kB)) {
        return I;
      }
    }
    return index_t{-1};
  });
}

template <class W>
void block_diagonal_apply(const Backend&, int block_size, Span<const W> inverse, double omega,
                          Span<const double> r, Span<double> z) {
  with_block_size(block_size, "block_relaxation::block_diagonal_apply", [&](auto b) {
    constexpr int kB = decltype(b)::value;
    const auto rows = static_cast<std::int64_t>(r.size()) / kB;
    for (std::int64_t I = 0; I < rows; ++I) {
      apply_block<kB>(inverse.data() + I * kB * kB, omega, r.data() + I * kB, z.data() + I * kB);
    }
  });
}

template <class V, class W>
void multicolor_sweep(const Backend&, const BsrView<V>& a, SweepVariant, Span<const W> inverse,
                      ColorRange color, double omega, Span<const double> b, Span<double> x) {
  with_block_size(a.block_size, "block_relaxation::multicolor_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    for (index_t I = color.first; I < color.first + color.count; ++I) {
      sweep_block_row<kB>(a, inverse.data(), I, omega, b.data(), x.data());
    }
  });
}

void invert_permutation(const Backend&, Span<const index_t> order, Span<index_t> position) {
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<index_t>(p);
}

template <class V>
void permuted_row_lengths(const Backend&, const BsrView<V>& a, Span<const index_t> order,
                          Span<index_t> counts) {
  for (std::size_t p = 0; p < order.size(); ++p) {
    counts[p] = a.row_ptr[order[p] + 1] - a.row_ptr[order[p]];
  }
}

template <class V>
void permute_fill(const Backend&, const BsrView<V>& a, Span<const index_t> order,
                  Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,
                  V* values) {
  const std::int64_t BB = std::int64_t{a.block_size} * a.block_size;
  for (std::size_t p = 0; p < order.size(); ++p) {
    permute_block_row(a, order[p], position.data(), row_ptr[p], BB, col_idx, values);
  }
}

void gather_blocks(const Backend&, int block_size, Span<const index_t> map, Span<const double> in,
                   Span<double> out) {
  const std::size_t rows = out.size() / static_cast<std::size_t>(block_size);
  for (std::size_t p = 0; p < rows; ++p) {
    for (int i = 0; i < block_size; ++i) {
      out[p * block_size + i] = in[static_cast<std::size_t>(map[p]) * block_size + i];
    }
  }
}

KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::reference
