// Multicolor block Gauss-Seidel: the coloring and the inverse diagonal blocks at setup, one
// kernel launch per color and sweep direction.
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"

#include <string>
#include <type_traits>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "src/preconditioners/color_split.hpp"

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
  detail::ColorSplit split;  // A in the color order: L, U, D
  detail::InverseBlocks inverse;
  br::SweepVariant variant = br::SweepVariant::block_row;  // the cuda kernel
  mutable Vector x;                                        // x in the color order
  mutable Vector w;  // the saved half products (L x or U x) of the last sweep
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
  auto state = std::make_unique<State>();
  state->split.setup(A, parameters_.coloring, parameters_.seed, "multicolor_gauss_seidel");
  const detail::ColorSplit& split = state->split;
  state->variant =
      detail::sweep_variant_of(parameters_.kernel, split.block_size(), split.float32_values());
  split.invert_diagonal(parameters_.inverse_precision, state->inverse, "multicolor_gauss_seidel");
  const auto n = static_cast<std::size_t>(split.num_block_rows()) * split.block_size();
  state->x = Vector(A.backend(), n);
  state->w = Vector(A.backend(), n);
  state->A = &A;
  state_ = std::move(state);
}

void MulticolorGaussSeidel::update_values(const LinearOperator& A) {
  if (state_->A == nullptr || !state_->split.update_values(A)) return setup(A);
  state_->split.invert_diagonal(parameters_.inverse_precision, state_->inverse,
                                "multicolor_gauss_seidel");
  state_->A = &A;
}

const MulticolorOrdering& MulticolorGaussSeidel::ordering() const noexcept {
  return state_->split.ordering();
}

int MulticolorGaussSeidel::block_size() const noexcept {
  return state_->split.block_size();
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

namespace {

/// What the saved-product vector w holds before a sweep: nothing usable, the zero product (x = 0),
/// or the products of the lower or upper part with the current x (file comment of
/// kernels/block_relaxation/block_relaxation.hpp).
enum class Saved { none, zero, lower, upper };

}  // namespace

void MulticolorGaussSeidel::run(const Vector& b, Vector& x, bool x_is_zero, int passes,
                                bool forward, bool backward) const {
  check(b, x);
  const detail::ColorSplit& split = state_->split;
  const Backend& backend = b.backend();
  const int B = split.block_size();
  const index_t colors = split.ordering().num_colors;
  if (colors == 0) return;
  const double omega = parameters_.omega;
  // A backward sweep's first color repeats the forward sweep's last one (its upper part is
  // empty and its saved lower product unchanged): skipped when the update is not damped.
  const bool skip_repeat = omega == 1.0;
  if (!x_is_zero) {
    br::gather_blocks(backend, B, split.ordering().rows.span(), x.span(), state_->x.span());
  }
  Saved saved = x_is_zero ? Saved::zero : Saved::none;
  bool zero_x = x_is_zero;  // the next sweep starts from x = 0: alpha must not read it
  br::SweepVectors base;
  base.b = b.span().data();
  base.b_map = split.order();
  base.x = state_->x.span().data();
  double* w = state_->w.span().data();
  split.visit([&](const auto& lower, const auto& upper, auto*) {
    using View = std::remove_cv_t<std::remove_reference_t<decltype(lower)>>;
    for (int pass = 0; pass < passes; ++pass) {
      const bool last_pass = pass + 1 == passes;
      for (int direction = 0; direction < 2; ++direction) {
        const bool is_forward = direction == 0;
        if (is_forward ? !forward : !backward) continue;
        // The sweep after this one, in the other direction, uses this sweep's saved products.
        const bool next_other = is_forward ? backward : (forward && !last_pass);
        const bool final_sweep = last_pass && (is_forward ? !backward : true);
        const View& part = is_forward ? lower : upper;
        const View& other = is_forward ? upper : lower;
        const Saved usable = is_forward ? Saved::upper : Saved::lower;
        const br::SweepUpdate update{zero_x ? 0.0 : 1.0 - omega, 1.0, 0.0, omega};
        br::SweepVectors v = base;
        const View* second = nullptr;
        if (saved == usable) {
          v.other_in = w;
        } else if (saved != Saved::zero) {
          second = &other;
        }
        if (next_other) v.product_out = w;
        const bool skip_first = !is_forward && skip_repeat && saved == Saved::lower;
        for (index_t step = 0; step < colors; ++step) {
          const index_t c = is_forward ? step : colors - 1 - step;
          if (step == 0 && skip_first) continue;
          br::SweepVectors vc = v;
          // The final values leave through x_out: in the final sweep, and for the color the
          // backward sweep skips, in the forward sweep before it.
          const bool skipped_next = is_forward && next_other && skip_repeat && c == colors - 1;
          if (final_sweep || (last_pass && skipped_next)) {
            vc.x_out = x.span().data();
            vc.out_map = split.order();
          }
          // The last color's upper rows are empty (no later color): u = 0, whatever w holds
          // (the backward sweep that skipped it left its lower product there).
          const bool last_forward = is_forward && c == colors - 1;
          if (last_forward) vc.other_in = nullptr;
          split.sweep_color(part, last_forward ? nullptr : second, state_->variant,
                            &state_->inverse, parameters_.inverse_precision, c, update, vc);
        }
        saved = next_other ? (is_forward ? Saved::lower : Saved::upper) : Saved::none;
        zero_x = false;
      }
    }
  });
}

void MulticolorGaussSeidel::forward(const Vector& b, Vector& x) const {
  run(b, x, false, 1, true, false);
}

void MulticolorGaussSeidel::backward(const Vector& b, Vector& x) const {
  run(b, x, false, 1, false, true);
}

void MulticolorGaussSeidel::relax(const Vector& b, Vector& x, bool x_is_zero) const {
  const bool symmetric = parameters_.symmetric;
  run(b, x, x_is_zero, parameters_.sweeps, symmetric || !parameters_.reverse,
      symmetric || parameters_.reverse);
}

std::string MulticolorGaussSeidel::summary() const {
  const std::string b = std::to_string(block_size());
  return std::string("multicolor ") +
         (parameters_.symmetric ? "symmetric "
          : parameters_.reverse ? "backward "
                                : "forward ") +
         "Gauss-Seidel: " + ordering().summary() + " (" + to_string(parameters_.coloring) + "), " +
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
