// Multicolor block Gauss-Seidel: the coloring and the inverse diagonal blocks at setup, one
// kernel launch per color and sweep direction.
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"

#include <string>
#include <type_traits>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "src/preconditioners/block_view.hpp"

namespace kryflow {

namespace br = kernels::block_relaxation;

const char* to_string(SweepKernel kernel) noexcept {
  switch (kernel) {
    case SweepKernel::coefficient:
      return "coefficient";
    case SweepKernel::warp:
      return "warp";
    case SweepKernel::block_row:
      return "block_row";
    case SweepKernel::automatic:
      break;
  }
  return "automatic";
}

SweepKernel parse_sweep_kernel(const std::string& name) {
  if (name == "coefficient") return SweepKernel::coefficient;
  if (name == "warp") return SweepKernel::warp;
  if (name == "block_row") return SweepKernel::block_row;
  if (name == "automatic") return SweepKernel::automatic;
  throw ConfigError(
      "kernel", "unknown choice '" + name + "' (valid: coefficient, warp, block_row, automatic)");
}

struct MulticolorGaussSeidel::State {
  const LinearOperator* A = nullptr;
  int block_size = 1;
  bool float32_values = false;
  index_t num_block_rows = 0;
  // A reordered by color (kernels/block_relaxation: permute_fill): block row p is block row
  // ordering_.rows[p] of A; position is the inverse permutation.
  Array<index_t> position;
  Array<index_t> row_ptr;
  Array<index_t> col_idx;
  Array<double> values64;
  Array<float> values32;
  detail::InverseBlocks inverse;
  br::SweepVariant variant = br::SweepVariant::block_row;  // the cuda kernel
  mutable Vector b, x;                                     // b and x in the color order

  detail::BlockMatrix reordered() const {
    detail::BlockMatrix m;
    m.block_size = block_size;
    m.num_block_rows = num_block_rows;
    m.num_blocks = static_cast<std::int64_t>(col_idx.size());
    m.row_ptr = row_ptr.span().data();
    m.col_idx = col_idx.span().data();
    m.values64 = float32_values ? nullptr : values64.span().data();
    m.values32 = float32_values ? values32.span().data() : nullptr;
    m.backend = &row_ptr.backend();
    return m;
  }
};

MulticolorGaussSeidel::MulticolorGaussSeidel(Parameters parameters)
    : parameters_(parameters), state_(std::make_unique<State>()) {
  if (parameters_.sweeps < 1) throw ConfigError("sweeps", "must be >= 1");
  if (!(parameters_.omega > 0.0 && parameters_.omega < 2.0)) {
    throw ConfigError("omega", "must be in (0, 2)");
  }
}

MulticolorGaussSeidel::~MulticolorGaussSeidel() = default;
MulticolorGaussSeidel::MulticolorGaussSeidel(MulticolorGaussSeidel&&) noexcept = default;
MulticolorGaussSeidel& MulticolorGaussSeidel::operator=(MulticolorGaussSeidel&&) noexcept = default;

namespace {

/// The kernel of `kernel` (automatic: the table's choice for the block size and precision).
br::SweepVariant variant_of(SweepKernel kernel, int block_size, bool float32_values) {
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

/// Copies A's blocks into the state's reordered arrays (pattern and values).
void reorder_values(const detail::BlockMatrix& m, const Array<index_t>& order,
                    const Array<index_t>& position, const Array<index_t>& row_ptr,
                    Array<index_t>& col_idx, Array<double>& values64, Array<float>& values32) {
  const Backend& backend = *m.backend;
  m.visit([&](const auto& view) {
    using V = std::remove_const_t<std::remove_pointer_t<decltype(view.values)>>;
    V* values = nullptr;
    if constexpr (std::is_same_v<V, float>) {
      values = values32.span().data();
    } else {
      values = values64.span().data();
    }
    br::permute_fill(backend, view, order.span(), position.span(), row_ptr.span().data(),
                     col_idx.span().data(), values);
  });
}

}  // namespace

void MulticolorGaussSeidel::setup(const LinearOperator& A) {
  const detail::BlockMatrix m = detail::block_matrix_of(A, "multicolor_gauss_seidel");
  const Backend& backend = A.backend();
  auto state = std::make_unique<State>();
  MulticolorOrdering ordering = color_matrix(A, parameters_.coloring, parameters_.seed);
  const auto n = static_cast<std::size_t>(m.num_block_rows);
  const auto entries = static_cast<std::size_t>(m.num_blocks) * m.block_size * m.block_size;
  state->block_size = m.block_size;
  state->float32_values = m.values32 != nullptr;
  state->num_block_rows = m.num_block_rows;
  state->variant = variant_of(parameters_.kernel, m.block_size, state->float32_values);
  state->position = Array<index_t>(backend, n);
  br::invert_permutation(backend, ordering.rows.span(), state->position.span());
  Array<index_t> counts(backend, n);
  m.visit([&](const auto& view) {
    br::permuted_row_lengths(backend, view, ordering.rows.span(), counts.span());
  });
  state->row_ptr = Array<index_t>(backend, n + 1);
  kernels::sparse_setup::exclusive_scan(backend, counts.span(), state->row_ptr.span());
  state->col_idx = Array<index_t>(backend, static_cast<std::size_t>(m.num_blocks));
  if (state->float32_values) {
    state->values32 = Array<float>(backend, entries);
  } else {
    state->values64 = Array<double>(backend, entries);
  }
  reorder_values(m, ordering.rows, state->position, state->row_ptr, state->col_idx, state->values64,
                 state->values32);
  detail::invert_diagonal_blocks(state->reordered(), parameters_.inverse_precision, state->inverse,
                                 "multicolor_gauss_seidel", &ordering.rows);
  state->b = Vector(backend, n * m.block_size);
  state->x = Vector(backend, n * m.block_size);
  state->A = &A;
  ordering_ = std::move(ordering);
  state_ = std::move(state);
}

void MulticolorGaussSeidel::update_values(const LinearOperator& A) {
  if (state_->A == nullptr || A.num_rows() != state_->A->num_rows()) return setup(A);
  const detail::BlockMatrix m = detail::block_matrix_of(A, "multicolor_gauss_seidel");
  if (m.block_size != state_->block_size || (m.values32 != nullptr) != state_->float32_values ||
      m.num_blocks != static_cast<std::int64_t>(state_->col_idx.size())) {
    return setup(A);
  }
  reorder_values(m, ordering_.rows, state_->position, state_->row_ptr, state_->col_idx,
                 state_->values64, state_->values32);
  detail::invert_diagonal_blocks(state_->reordered(), parameters_.inverse_precision,
                                 state_->inverse, "multicolor_gauss_seidel", &ordering_.rows);
  state_->A = &A;
}

int MulticolorGaussSeidel::block_size() const noexcept {
  return state_->block_size;
}

SweepKernel MulticolorGaussSeidel::effective_kernel() const noexcept {
  switch (state_->variant) {
    case br::SweepVariant::coefficient:
      return SweepKernel::coefficient;
    case br::SweepVariant::warp:
      return SweepKernel::warp;
    case br::SweepVariant::block_row:
      break;
  }
  return SweepKernel::block_row;
}

void MulticolorGaussSeidel::check(const Vector& b, const Vector& x) const {
  const LinearOperator* A = state_->A;
  if (A == nullptr) throw InvalidInput("multicolor_gauss_seidel: setup(A) was not called");
  const auto n = static_cast<std::size_t>(A->num_rows());
  if (b.size() != n || x.size() != n) {
    throw DimensionMismatch("multicolor_gauss_seidel: the operator has " + std::to_string(n) +
                            " rows, b has " + std::to_string(b.size()) + " and x " +
                            std::to_string(x.size()));
  }
  if (!(b.backend() == A->backend()) || !(x.backend() == A->backend())) {
    throw InvalidInput("multicolor_gauss_seidel: b and x must live on the operator's backend");
  }
}

void MulticolorGaussSeidel::sweep(bool forward) const {
  const Backend& backend = state_->row_ptr.backend();
  const br::SweepVariant variant = state_->variant;
  Span<const double> b = state_->b.span();
  Span<double> x = state_->x.span();
  state_->reordered().visit([&](const auto& view) {
    for (index_t step = 0; step < ordering_.num_colors; ++step) {
      const index_t c = forward ? step : ordering_.num_colors - 1 - step;
      const br::ColorRange color{ordering_.color_offsets[c], ordering_.color_size(c)};
      if (parameters_.inverse_precision == Precision::float32) {
        br::multicolor_sweep(backend, view, variant,
                             Span<const float>(state_->inverse.float32.span()), color,
                             parameters_.omega, b, x);
      } else {
        br::multicolor_sweep(backend, view, variant,
                             Span<const double>(state_->inverse.float64.span()), color,
                             parameters_.omega, b, x);
      }
    }
  });
}

void MulticolorGaussSeidel::run(const Vector& b, Vector& x, bool x_is_zero, int passes,
                                bool forward, bool backward) const {
  check(b, x);
  const Backend& backend = b.backend();
  const int B = state_->block_size;
  br::gather_blocks(backend, B, ordering_.rows.span(), b.span(), state_->b.span());
  if (x_is_zero) {
    fill(state_->x, 0.0);
  } else {
    br::gather_blocks(backend, B, ordering_.rows.span(), x.span(), state_->x.span());
  }
  for (int s = 0; s < passes; ++s) {
    if (forward) sweep(true);
    if (backward) sweep(false);
  }
  br::gather_blocks(backend, B, state_->position.span(), state_->x.span(), x.span());
}

void MulticolorGaussSeidel::forward(const Vector& b, Vector& x) const {
  run(b, x, false, 1, true, false);
}

void MulticolorGaussSeidel::backward(const Vector& b, Vector& x) const {
  run(b, x, false, 1, false, true);
}

void MulticolorGaussSeidel::relax(const Vector& b, Vector& x, bool x_is_zero) const {
  run(b, x, x_is_zero, parameters_.sweeps, true, parameters_.symmetric);
}

std::string MulticolorGaussSeidel::summary() const {
  const std::string b = std::to_string(state_->block_size);
  return std::string("multicolor ") + (parameters_.symmetric ? "symmetric " : "") +
         "Gauss-Seidel: " + ordering_.summary() + " (" + to_string(parameters_.coloring) + "), " +
         b + " x " + b + " blocks, inverses in " +
         std::string(to_string(parameters_.inverse_precision)) + ", " +
         std::to_string(parameters_.sweeps) + " sweep(s), omega " +
         std::to_string(parameters_.omega) + ", cuda kernel " + to_string(effective_kernel());
}

MulticolorGaussSeidelPreconditioner::MulticolorGaussSeidelPreconditioner(
    MulticolorGaussSeidel::Parameters parameters)
    : sweeps_(parameters) {}

void MulticolorGaussSeidelPreconditioner::setup(const LinearOperator& A) {
  sweeps_.setup(A);
  n_ = A.num_rows();
  backend_ = A.backend();
}

void MulticolorGaussSeidelPreconditioner::update_values(const LinearOperator& A) {
  sweeps_.update_values(A);
  n_ = A.num_rows();
  backend_ = A.backend();
}

void MulticolorGaussSeidelPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "MulticolorGaussSeidelPreconditioner::apply");
  sweeps_.relax(r, z, true);
}

MulticolorGaussSeidelSmoother::MulticolorGaussSeidelSmoother(
    MulticolorGaussSeidel::Parameters parameters)
    : sweeps_(parameters) {}

}  // namespace kryflow
