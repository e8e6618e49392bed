// The color-ordered split of a block matrix (color_split.hpp): the pattern once at setup, the
// values gathered through the saved source indices at setup and on every value update.
#include "src/preconditioners/color_split.hpp"

#include <type_traits>

#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::detail {

namespace br = kernels::block_relaxation;

void ColorSplit::setup(const LinearOperator& A, ColoringAlgorithm coloring, std::uint64_t seed,
                       const std::string& who) {
  const BlockMatrix m = block_matrix_of(A, who);
  const Backend& backend = A.backend();
  ColorSplit s;
  s.ordering_ = color_matrix(A, coloring, seed);
  s.block_size_ = m.block_size;
  s.float32_values_ = m.values32 != nullptr;
  s.num_block_rows_ = m.num_block_rows;
  s.num_blocks_ = m.num_blocks;
  const auto n = static_cast<std::size_t>(m.num_block_rows);
  const Span<const index_t> order = s.ordering_.rows.span();
  s.position_ = Array<index_t>(backend, n);
  br::invert_permutation(backend, order, s.position_.span());
  Array<index_t> lower_counts(backend, n);
  Array<index_t> upper_counts(backend, n);
  br::split_lengths(backend, m.pattern(), order, s.position_.span(), lower_counts.span(),
                    upper_counts.span());
  s.lower_ptr_ = Array<index_t>(backend, n + 1);
  s.upper_ptr_ = Array<index_t>(backend, n + 1);
  namespace ss = kernels::sparse_setup;
  const index_t lower = ss::exclusive_scan(backend, lower_counts.span(), s.lower_ptr_.span());
  const index_t upper = ss::exclusive_scan(backend, upper_counts.span(), s.upper_ptr_.span());
  s.lower_col_ = Array<index_t>(backend, static_cast<std::size_t>(lower));
  s.lower_source_ = Array<index_t>(backend, static_cast<std::size_t>(lower));
  s.upper_col_ = Array<index_t>(backend, static_cast<std::size_t>(upper));
  s.upper_source_ = Array<index_t>(backend, static_cast<std::size_t>(upper));
  s.diagonal_source_ = Array<index_t>(backend, n);
  br::split_pattern(backend, m.pattern(), order, s.position_.span(), s.lower_ptr_.span().data(),
                    s.upper_ptr_.span().data(), s.lower_col_.span().data(),
                    s.upper_col_.span().data(), s.lower_source_.span().data(),
                    s.upper_source_.span().data(), s.diagonal_source_.span().data());
  const std::size_t bb = static_cast<std::size_t>(m.block_size) * m.block_size;
  if (s.float32_values_) {
    s.lower32_ = Array<float>(backend, static_cast<std::size_t>(lower) * bb);
    s.upper32_ = Array<float>(backend, static_cast<std::size_t>(upper) * bb);
    s.diagonal32_ = Array<float>(backend, n * bb);
  } else {
    s.lower64_ = Array<double>(backend, static_cast<std::size_t>(lower) * bb);
    s.upper64_ = Array<double>(backend, static_cast<std::size_t>(upper) * bb);
    s.diagonal64_ = Array<double>(backend, n * bb);
  }
  s.gather(m);
  *this = std::move(s);
}

bool ColorSplit::update_values(const LinearOperator& A) {
  const BlockMatrix m = block_matrix_of(A, "color split");
  if (!(A.backend() == backend()) || m.block_size != block_size_ ||
      (m.values32 != nullptr) != float32_values_ || m.num_block_rows != num_block_rows_ ||
      m.num_blocks != num_blocks_) {
    return false;
  }
  gather(m);
  return true;
}

void ColorSplit::gather(const BlockMatrix& m) {
  const Backend& backend = *m.backend;
  const int bb = m.block_size * m.block_size;
  m.visit([&](const auto& view) {
    using V = std::remove_const_t<std::remove_pointer_t<decltype(view.values)>>;
    auto target = [&](Array<double>& a64, Array<float>& a32) {
      if constexpr (std::is_same_v<V, float>) {
        (void)a64;
        return a32.span().data();
      } else {
        (void)a32;
        return a64.span().data();
      }
    };
    br::gather_values(backend, bb, lower_source_.span(), view.values, target(lower64_, lower32_));
    br::gather_values(backend, bb, upper_source_.span(), view.values, target(upper64_, upper32_));
    br::gather_values(backend, bb, diagonal_source_.span(), view.values,
                      target(diagonal64_, diagonal32_));
  });
}

void ColorSplit::invert_diagonal(Precision precision, InverseBlocks& out, const std::string& who,
                                 const std::string& what) const {
  const Backend& backend = this->backend();
  const auto size = static_cast<std::size_t>(num_block_rows_) * block_size_ * block_size_;
  out = InverseBlocks{};
  const index_t bad = visit([&](const auto&, const auto&, auto* diagonal) {
    if (precision == Precision::float32) {
      out.float32 = Array<float>(backend, size);
      return br::invert_blocks(backend, block_size_, num_block_rows_, diagonal,
                               out.float32.span().data());
    }
    out.float64 = Array<double>(backend, size);
    return br::invert_blocks(backend, block_size_, num_block_rows_, diagonal,
                             out.float64.span().data());
  });
  if (bad >= 0) throw_bad_block(bad, who, what);
}

void ColorSplit::throw_bad_block(index_t p, const std::string& who, const std::string& what) const {
  const index_t row = ordering_.rows.to_host()[static_cast<std::size_t>(p)];
  const bool point = block_size_ == 1;
  const std::string name =
      what.empty() ? (point ? std::string("diagonal entry") : std::string("diagonal block")) : what;
  throw InvalidInput(who + ": the " + name + (point ? " of row " : " of block row ") +
                     std::to_string(row + 1) + " is " +
                     (point ? "zero, missing or not finite"
                            : "singular, not stored or not finite (" + std::to_string(block_size_) +
                                  " x " + std::to_string(block_size_) + " blocks)"));
}

}  // namespace kryflow::detail
