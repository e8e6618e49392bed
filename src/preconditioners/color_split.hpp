// Internal: a square CsrMatrix or BsrMatrix reordered by a multicolor ordering and split into its
// strictly lower part L, strictly upper part U and diagonal blocks D (kernels/block_relaxation:
// split_pattern), on A's backend: the storage of multicolor Gauss-Seidel, ILU(0) and DILU.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kryflow/linalg/coloring.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "src/preconditioners/block_view.hpp"

namespace kryflow::detail {

/// The cuda kernel of `kernel` (automatic: the measured table's choice for the block size and
/// value precision).
inline kernels::block_relaxation::SweepVariant sweep_variant_of(SweepKernel kernel, int block_size,
                                                                bool float32_values) {
  namespace br = kernels::block_relaxation;
  switch (kernel) {
    case SweepKernel::coefficient:
      return br::SweepVariant::coefficient;
    case SweepKernel::warp:
      return br::SweepVariant::warp;
    case SweepKernel::block_row:
      return br::SweepVariant::block_row;
    case SweepKernel::automatic:
      break;
  }
  return br::automatic_sweep_variant(block_size, float32_values);
}

class ColorSplit {
 public:
  /// Colors A (color_matrix) and builds the parts on A's backend. Throws as block_matrix_of.
  void setup(const LinearOperator& A, ColoringAlgorithm coloring, std::uint64_t seed,
             const std::string& who);
  /// Gathers A's new values into the parts (same pattern as at setup: same block size,
  /// precision, rows and blocks); false, changing nothing, when A does not match.
  bool update_values(const LinearOperator& A);

  int block_size() const noexcept { return block_size_; }
  bool float32_values() const noexcept { return float32_values_; }
  index_t num_block_rows() const noexcept { return num_block_rows_; }
  const MulticolorOrdering& ordering() const noexcept { return ordering_; }
  /// rows of the ordering: block row p of the parts is block row rows[p] of A.
  const index_t* order() const noexcept { return ordering_.rows.span().data(); }
  kernels::block_relaxation::ColorRange color(index_t c) const {
    return {ordering_.color_offsets[c], ordering_.color_size(c)};
  }
  std::int64_t lower_blocks() const noexcept {
    return static_cast<std::int64_t>(lower_col_.size());
  }
  std::int64_t upper_blocks() const noexcept {
    return static_cast<std::int64_t>(upper_col_.size());
  }
  const Backend& backend() const { return position_.backend(); }

  /// Calls f(lower, upper, diagonal) with the parts as BsrView<V> (num_block_rows rows, their own
  /// row pointers) and the diagonal blocks (num_block_rows B^2 values, row-major, zeros where A
  /// stores none), V the stored precision. The values may be modified (factorizations).
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (float32_values_) {
      return f(part(lower_ptr_, lower_col_, lower32_), part(upper_ptr_, upper_col_, upper32_),
               const_cast<float*>(diagonal32_.span().data()));
    }
    return f(part(lower_ptr_, lower_col_, lower64_), part(upper_ptr_, upper_col_, upper64_),
             const_cast<double*>(diagonal64_.span().data()));
  }

  /// Inverts the diagonal blocks as they are now into `out` (precision of the inverses); throws
  /// InvalidInput "<who>: the diagonal block of block row <I> (1-based, A's numbering) is
  /// singular, not stored or not finite" (for B = 1 "row" and "entry"), with `what` in place of
  /// "diagonal block" when given (e.g. "pivot block of the factorization").
  void invert_diagonal(Precision precision, InverseBlocks& out, const std::string& who,
                       const std::string& what = {}) const;
  /// kernels/block_relaxation::triangular_sweep on color c of `part` (and `second`, null: none)
  /// with the inverse diagonal blocks of `inverse` in `precision`, or none (the identity) when
  /// `inverse` is null. Nothing waits for the device.
  template <class View>
  void sweep_color(const View& part, const View* second,
                   kernels::block_relaxation::SweepVariant variant, const InverseBlocks* inverse,
                   Precision precision, index_t c,
                   const kernels::block_relaxation::SweepUpdate& update,
                   const kernels::block_relaxation::SweepVectors& vectors) const {
    namespace br = kernels::block_relaxation;
    if (inverse == nullptr) {
      br::triangular_sweep(backend(), part, second, variant, static_cast<const double*>(nullptr),
                           color(c), update, vectors);
    } else if (precision == Precision::float32) {
      br::triangular_sweep(backend(), part, second, variant, inverse->float32.span().data(),
                           color(c), update, vectors);
    } else {
      br::triangular_sweep(backend(), part, second, variant, inverse->float64.span().data(),
                           color(c), update, vectors);
    }
  }

  /// Throws the InvalidInput of invert_diagonal for block row p of the color order.
  [[noreturn]] void throw_bad_block(index_t p, const std::string& who,
                                    const std::string& what = {}) const;

 private:
  template <class V>
  kernels::bsr::BsrView<V> part(const Array<index_t>& ptr, const Array<index_t>& col,
                                const Array<V>& values) const {
    kernels::bsr::BsrView<V> v;
    v.num_block_rows = num_block_rows_;
    v.num_block_cols = num_block_rows_;
    v.block_size = block_size_;
    v.num_blocks = static_cast<std::int64_t>(col.size());
    v.row_ptr = ptr.span().data();
    v.col_idx = col.span().data();
    v.values = const_cast<V*>(values.span().data());
    v.stream_values =
        v.num_blocks * block_size_ * block_size_ * static_cast<std::int64_t>(sizeof(V)) >
        kernels::bsr::kStreamValuesBytes;
    return v;
  }
  void gather(const BlockMatrix& m);

  int block_size_ = 1;
  bool float32_values_ = false;
  index_t num_block_rows_ = 0;
  std::int64_t num_blocks_ = 0;  // A's stored blocks
  MulticolorOrdering ordering_;
  Array<index_t> position_;  // position[rows[p]] = p
  Array<index_t> lower_ptr_, lower_col_, lower_source_;
  Array<index_t> upper_ptr_, upper_col_, upper_source_;
  Array<index_t> diagonal_source_;
  Array<double> lower64_, upper64_, diagonal64_;
  Array<float> lower32_, upper32_, diagonal32_;
};

}  // namespace kryflow::detail
