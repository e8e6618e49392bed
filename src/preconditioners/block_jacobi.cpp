// Block Jacobi: the diagonal blocks inverted once on A's backend, applied as a batched product.
#include "kryflow/preconditioners/block_jacobi.hpp"

#include <string>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kryflow/core/error.hpp"
#include "src/preconditioners/block_view.hpp"

namespace kryflow {

namespace br = kernels::block_relaxation;

void detail::invert_diagonal_blocks(const BlockMatrix& m, Precision precision, InverseBlocks& out,
                                    const std::string& who, const Array<index_t>* order) {
  const Backend& backend = *m.backend;
  const auto size = static_cast<std::size_t>(m.num_block_rows) * m.block_size * m.block_size;
  out = InverseBlocks{};
  const index_t bad = m.visit([&](const auto& view) {
    if (precision == Precision::float32) {
      out.float32 = Array<float>(backend, size);
      return br::invert_diagonal_blocks(backend, view, out.float32.span());
    }
    out.float64 = Array<double>(backend, size);
    return br::invert_diagonal_blocks(backend, view, out.float64.span());
  });
  if (bad >= 0) {
    const index_t row = order != nullptr ? order->to_host()[static_cast<std::size_t>(bad)] : bad;
    const bool point = m.block_size == 1;
    throw InvalidInput(who + ": the diagonal " + (point ? "entry of row " : "block of block row ") +
                       std::to_string(row + 1) + " is " +
                       (point ? "zero, missing or not finite"
                              : "singular, not stored or not finite (" +
                                    std::to_string(m.block_size) + " x " +
                                    std::to_string(m.block_size) + " blocks)"));
  }
}

BlockJacobiPreconditioner::BlockJacobiPreconditioner(Parameters parameters)
    : parameters_(parameters) {
  if (!(parameters_.omega > 0.0)) throw ConfigError("omega", "must be > 0");
}

void BlockJacobiPreconditioner::setup(const LinearOperator& A) {
  const detail::BlockMatrix m = detail::block_matrix_of(A, "block_jacobi");
  detail::InverseBlocks inverse;
  detail::invert_diagonal_blocks(m, parameters_.inverse_precision, inverse, "block_jacobi");
  inverse64_ = std::move(inverse.float64);
  inverse32_ = std::move(inverse.float32);
  n_ = A.num_rows();
  block_size_ = m.block_size;
  backend_ = A.backend();
}

void BlockJacobiPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "BlockJacobiPreconditioner::apply");
  if (parameters_.inverse_precision == Precision::float32) {
    br::block_diagonal_apply(backend_, block_size_, Span<const float>(inverse32_.span()),
                             parameters_.omega, r.span(), z.span());
  } else {
    br::block_diagonal_apply(backend_, block_size_, Span<const double>(inverse64_.span()),
                             parameters_.omega, r.span(), z.span());
  }
}

std::string BlockJacobiPreconditioner::summary() const {
  const std::string b = std::to_string(block_size_);
  return "block Jacobi: " + std::to_string(n_ / block_size_) + " blocks of " + b + " x " + b +
         ", inverses in " + std::string(to_string(parameters_.inverse_precision));
}

}  // namespace kryflow
