// Block ILU(0) and DILU in multicolor order: the split of A by color (color_split.hpp), the
// factorization one color at a time, and the two triangular solves (kernels/block_relaxation).
#include "kryflow/preconditioners/incomplete_lu.hpp"

#include <string>
#include <type_traits>
#include <vector>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kryflow/core/error.hpp"
#include "src/preconditioners/color_split.hpp"

namespace kryflow {

namespace br = kernels::block_relaxation;

const char* to_string(IluFactorization factorization) noexcept {
  return factorization == IluFactorization::dilu ? "dilu" : "ilu0";
}

IluFactorization parse_ilu_factorization(const std::string& name) {
  if (name == "ilu0") return IluFactorization::ilu0;
  if (name == "dilu") return IluFactorization::dilu;
  throw ConfigError("factorization", "unknown choice '" + name + "' (valid: ilu0, dilu)");
}

struct MulticolorIluPreconditioner::State {
  detail::ColorSplit split;       // A by color; ILU(0) overwrites its values with L and U
  detail::InverseBlocks inverse;  // of the pivot blocks
  br::SweepVariant variant = br::SweepVariant::block_row;
  mutable Vector y;  // the forward solve's result, in the color order
};

MulticolorIluPreconditioner::MulticolorIluPreconditioner(Parameters parameters)
    : parameters_(parameters), state_(std::make_unique<State>()) {}

MulticolorIluPreconditioner::MulticolorIluPreconditioner()
    : MulticolorIluPreconditioner(Parameters{}) {}

MulticolorIluPreconditioner::~MulticolorIluPreconditioner() = default;

const MulticolorOrdering& MulticolorIluPreconditioner::ordering() const {
  return state_->split.ordering();
}

void MulticolorIluPreconditioner::setup(const LinearOperator& A) {
  auto state = std::make_unique<State>();
  const std::string who = to_string(parameters_.factorization);
  state->split.setup(A, parameters_.coloring, parameters_.seed, who);
  state->variant = detail::sweep_variant_of(parameters_.kernel, state->split.block_size(),
                                            state->split.float32_values());
  state->y = Vector(A.backend(), static_cast<std::size_t>(A.num_rows()));
  state_ = std::move(state);
  n_ = A.num_rows();
  backend_ = A.backend();
  factor();
}

void MulticolorIluPreconditioner::update_values(const LinearOperator& A) {
  if (n_ != A.num_rows() || !state_->split.update_values(A)) return setup(A);
  factor();
}

void MulticolorIluPreconditioner::factor() {
  const detail::ColorSplit& split = state_->split;
  const Backend& backend = split.backend();
  const index_t n = split.num_block_rows();
  const auto size = static_cast<std::size_t>(n) * split.block_size() * split.block_size();
  detail::InverseBlocks& inverse = state_->inverse;
  inverse = detail::InverseBlocks{};
  const bool float32 = parameters_.inverse_precision == Precision::float32;
  if (float32) {
    inverse.float32 = Array<float>(backend, size);
  } else {
    inverse.float64 = Array<double>(backend, size);
  }
  const br::Factorization kind = parameters_.factorization == IluFactorization::ilu0
                                     ? br::Factorization::ilu0
                                     : br::Factorization::dilu;
  Array<index_t> first_bad = Array<index_t>::from_host(backend, std::vector<index_t>{n});
  split.visit([&](const auto& lower, const auto& upper, auto* diagonal) {
    for (index_t c = 0; c < split.ordering().num_colors; ++c) {
      if (float32) {
        br::factor_color(backend, kind, lower, upper, diagonal, inverse.float32.span().data(),
                         split.color(c), first_bad.span().data());
      } else {
        br::factor_color(backend, kind, lower, upper, diagonal, inverse.float64.span().data(),
                         split.color(c), first_bad.span().data());
      }
    }
  });
  const index_t bad = first_bad.to_host()[0];
  if (bad < n) split.throw_bad_block(bad, to_string(parameters_.factorization), "pivot block");
}

void MulticolorIluPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "MulticolorIluPreconditioner::apply");
  const detail::ColorSplit& split = state_->split;
  const index_t colors = split.ordering().num_colors;
  if (colors == 0) return;
  const bool dilu = parameters_.factorization == IluFactorization::dilu;
  const detail::InverseBlocks* inverse = &state_->inverse;
  double* y = state_->y.span().data();
  split.visit([&](const auto& lower, const auto& upper, auto*) {
    using View = std::remove_cv_t<std::remove_reference_t<decltype(lower)>>;
    const View* none = nullptr;
    // Forward: y_I = b_I - (L y)_I (ILU(0), L unit) or D'_I^-1 (b_I - (L y)_I) (DILU).
    for (index_t c = 0; c < colors; ++c) {
      br::SweepVectors v;
      v.b = r.span().data();
      v.b_map = split.order();
      v.x = y;
      if (dilu && c == colors - 1) {  // DILU's backward solve leaves the last color as it is
        v.x_out = z.span().data();
        v.out_map = split.order();
      }
      split.sweep_color(lower, none, state_->variant, dilu ? inverse : nullptr,
                        parameters_.inverse_precision, c, br::SweepUpdate{0.0, 1.0, 0.0, 1.0}, v);
    }
    // Backward: x_I = U_II^-1 (y_I - (U x)_I) (ILU(0)) or y_I - D'_I^-1 (U x)_I (DILU), in place.
    const br::SweepUpdate backward =
        dilu ? br::SweepUpdate{1.0, 0.0, 0.0, 1.0} : br::SweepUpdate{0.0, 0.0, 1.0, 1.0};
    for (index_t c = colors - 1; c >= 0; --c) {
      if (dilu && c == colors - 1) continue;  // its upper rows are empty
      br::SweepVectors v;
      v.x = y;
      v.x_out = z.span().data();
      v.out_map = split.order();
      split.sweep_color(upper, none, state_->variant, inverse, parameters_.inverse_precision, c,
                        backward, v);
    }
  });
}

std::string MulticolorIluPreconditioner::summary() const {
  const detail::ColorSplit& split = state_->split;
  const std::string b = std::to_string(split.block_size());
  return std::string(parameters_.factorization == IluFactorization::ilu0 ? "block ILU(0)"
                                                                         : "block DILU") +
         " in multicolor order: " + split.ordering().summary() + " (" +
         to_string(parameters_.coloring) + "), " + b + " x " + b + " blocks, " +
         std::to_string(split.lower_blocks() + split.upper_blocks()) +
         " off-diagonal blocks, pivot inverses in " +
         std::string(to_string(parameters_.inverse_precision));
}

}  // namespace kryflow
