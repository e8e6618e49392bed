// Multicolor block Gauss-Seidel: the coloring and the inverse diagonal blocks at setup, one
// kernel launch per color and sweep direction.
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"

#include <string>

#include "kernels/block_relaxation/block_relaxation.hpp"
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
    case SweepKernel::automatic:
      break;
  }
  return "automatic";
}

SweepKernel parse_sweep_kernel(const std::string& name) {
  if (name == "coefficient") return SweepKernel::coefficient;
  if (name == "warp") return SweepKernel::warp;
  if (name == "automatic") return SweepKernel::automatic;
  throw ConfigError("kernel",
                    "unknown choice '" + name + "' (valid: coefficient, warp, automatic)");
}

struct MulticolorGaussSeidel::State {
  const LinearOperator* A = nullptr;
  int block_size = 1;
  bool float32_values = false;
  detail::InverseBlocks inverse;
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

void MulticolorGaussSeidel::setup(const LinearOperator& A) {
  const detail::BlockMatrix m = detail::block_matrix_of(A, "multicolor_gauss_seidel");
  // The inverses first: a singular block fails before the coloring's cost.
  detail::InverseBlocks inverse;
  detail::invert_diagonal_blocks(m, parameters_.inverse_precision, inverse,
                                 "multicolor_gauss_seidel");
  ordering_ = color_matrix(A, parameters_.coloring, parameters_.seed);
  state_->A = &A;
  state_->block_size = m.block_size;
  state_->float32_values = m.values32 != nullptr;
  state_->inverse = std::move(inverse);
}

void MulticolorGaussSeidel::update_values(const LinearOperator& A) {
  if (state_->A == nullptr || A.num_rows() != state_->A->num_rows()) return setup(A);
  const detail::BlockMatrix m = detail::block_matrix_of(A, "multicolor_gauss_seidel");
  if (m.block_size != state_->block_size) return setup(A);
  detail::invert_diagonal_blocks(m, parameters_.inverse_precision, state_->inverse,
                                 "multicolor_gauss_seidel");
  state_->A = &A;
  state_->float32_values = m.values32 != nullptr;
}

int MulticolorGaussSeidel::block_size() const noexcept {
  return state_->block_size;
}

SweepKernel MulticolorGaussSeidel::effective_kernel() const noexcept {
  if (parameters_.kernel != SweepKernel::automatic) return parameters_.kernel;
  return br::automatic_sweep_variant(state_->block_size, state_->float32_values) ==
                 br::SweepVariant::coefficient
             ? SweepKernel::coefficient
             : SweepKernel::warp;
}

void MulticolorGaussSeidel::sweep(const Vector& b, Vector& x, bool forward) const {
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
  const detail::BlockMatrix m = detail::block_matrix_of(*A, "multicolor_gauss_seidel");
  const br::SweepVariant variant = effective_kernel() == SweepKernel::coefficient
                                       ? br::SweepVariant::coefficient
                                       : br::SweepVariant::warp;
  const index_t* rows = ordering_.rows.span().data();
  m.visit([&](const auto& view) {
    for (index_t step = 0; step < ordering_.num_colors; ++step) {
      const index_t c = forward ? step : ordering_.num_colors - 1 - step;
      const br::ColorRows color{rows + ordering_.color_offsets[c], ordering_.color_size(c)};
      if (parameters_.inverse_precision == Precision::float32) {
        br::multicolor_sweep(A->backend(), view, variant,
                             Span<const float>(state_->inverse.float32.span()), color,
                             parameters_.omega, b.span(), x.span());
      } else {
        br::multicolor_sweep(A->backend(), view, variant,
                             Span<const double>(state_->inverse.float64.span()), color,
                             parameters_.omega, b.span(), x.span());
      }
    }
  });
}

void MulticolorGaussSeidel::forward(const Vector& b, Vector& x) const {
  sweep(b, x, true);
}

void MulticolorGaussSeidel::backward(const Vector& b, Vector& x) const {
  sweep(b, x, false);
}

void MulticolorGaussSeidel::relax(const Vector& b, Vector& x, bool x_is_zero) const {
  if (x_is_zero) fill(x, 0.0);
  for (int s = 0; s < parameters_.sweeps; ++s) {
    sweep(b, x, true);
    if (parameters_.symmetric) sweep(b, x, false);
  }
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
