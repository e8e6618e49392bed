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
index_t invert_blocks(const Backend&, int block_size, index_t count, const V* blocks, W* inverse) {
  return with_block_size(block_size, "block_relaxation::invert_blocks", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    for (index_t I = 0; I < count; ++I) {
      if (!invert_block<kB>(blocks + std::int64_t{I} * kB * kB,
                            inverse + std::int64_t{I} * kB * kB)) {
        return I;
      }
    }
    return index_t{-1};
  });
}

template <class V, class W>
void triangular_sweep(const Backend&, const BsrView<V>& part, const BsrView<V>* second,
                      SweepVariant, const W* inverse, ColorRange color, SweepUpdate update,
                      const SweepVectors& vectors) {
  with_block_size(part.block_size, "block_relaxation::triangular_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    for (index_t I = color.first; I < color.first + color.count; ++I) {
      sweep_block_row<kB>(part, second, inverse, I, update, vectors);
    }
  });
}

template <class V, class W>
void factor_color(const Backend&, Factorization kind, const BsrView<V>& lower,
                  const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,
                  index_t* first_bad) {
  with_block_size(lower.block_size, "block_relaxation::factor_color", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    for (index_t I = color.first; I < color.first + color.count; ++I) {
      const bool ok = kind == Factorization::ilu0
                          ? ilu0_row<kB>(lower, upper, diagonal, inverse, I)
                          : dilu_row<kB>(lower, upper, diagonal, inverse, I);
      if (!ok && I < *first_bad) *first_bad = I;
    }
  });
}

void invert_permutation(const Backend&, Span<const index_t> order, Span<index_t> position) {
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<index_t>(p);
}

void split_lengths(const Backend&, const sparse_setup::PatternView& a, Span<const index_t> order,
                   Span<const index_t> position, Span<index_t> lower, Span<index_t> upper) {
  for (std::size_t p = 0; p < order.size(); ++p) {
    split_row_lengths(a, order.data(), position.data(), static_cast<index_t>(p), lower.data(),
                      upper.data());
  }
}

void split_pattern(const Backend&, const sparse_setup::PatternView& a, Span<const index_t> order,
                   Span<const index_t> position, const index_t* lower_ptr, const index_t* upper_ptr,
                   index_t* lower_col, index_t* upper_col, index_t* lower_source,
                   index_t* upper_source, index_t* diagonal_source) {
  for (std::size_t q = 0; q < order.size(); ++q) {
    const auto p = static_cast<index_t>(q);
    diagonal_source[p] = -1;
    for (index_t k = a.row_ptr[order[p]]; k < a.row_ptr[order[p] + 1]; ++k) {
      split_place(a, order.data(), position.data(), p, k, lower_ptr, upper_ptr, lower_col,
                  upper_col, lower_source, upper_source, diagonal_source);
    }
  }
}

template <class V>
void gather_values(const Backend&, int block_entries, Span<const index_t> source, const V* in,
                   V* out) {
  for (std::size_t k = 0; k < source.size(); ++k) {
    for (int e = 0; e < block_entries; ++e) {
      out[k * block_entries + e] =
          source[k] >= 0 ? in[std::int64_t{source[k]} * block_entries + e] : V(0);
    }
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
