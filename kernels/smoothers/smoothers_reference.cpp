// Reference smoother kernels (the oracle), one template on the stored value type.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/smoothers/lanczos_rows.hpp"
#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::reference {
namespace {

/// -1 when row i stores a negative diagonal entry, else +1 (the sign of the l1 terms).
template <class Value>
double diagonal_sign_of(const MatrixView& a, const Value* values, index_t i) {
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    if (a.pattern.col_idx[k] == i) return static_cast<double>(values[k]) < 0.0 ? -1.0 : 1.0;
  }
  return 1.0;
}

template <class Value>
void l1_row_norms_of(const MatrixView& a, const Value* values, Span<double> d) {
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    const double s = diagonal_sign_of(a, values, i);
    double sum = 0.0;
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      sum += s * std::abs(static_cast<double>(values[k]));
    }
    d[i] = sum;
  }
}

template <class Value>
void gauss_seidel_of(const MatrixView& a, const Value* values, Span<const double> inverse_diagonal,
                     Span<const double> b, Span<double> x, SweepDirection direction) {
  const index_t n = a.pattern.num_rows;
  for (index_t step = 0; step < n; ++step) {
    const index_t i = direction == SweepDirection::forward ? step : n - 1 - step;
    double sum = b[i];
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      const index_t j = a.pattern.col_idx[k];
      if (j != i) sum -= static_cast<double>(values[k]) * x[j];
    }
    x[i] = sum * inverse_diagonal[i];
  }
}

/// The block of row i (blocks of block_rows consecutive rows from row 0).
std::int64_t block_of(index_t i, index_t block_rows) {
  return i / block_rows;
}

template <class Value>
void hybrid_diagonal_of(const MatrixView& a, const Value* values, index_t block_rows, bool l1,
                        Span<double> d) {
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    const double s = l1 ? diagonal_sign_of(a, values, i) : 1.0;
    double sum = 0.0;
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      const index_t j = a.pattern.col_idx[k];
      if (j == i) {
        sum += static_cast<double>(values[k]);
      } else if (l1 && block_of(j, block_rows) != block_of(i, block_rows)) {
        sum += s * std::abs(static_cast<double>(values[k]));
      }
    }
    d[i] = sum;
  }
}

/// The blocks one after another (they are independent: off-block columns read x_start).
template <class Value>
void hybrid_gauss_seidel_of(const MatrixView& a, const Value* values, index_t block_rows, bool l1,
                            Span<const double> inverse_diagonal, Span<const double> b,
                            Span<double> x, Span<double> x_start, SweepDirection direction) {
  const index_t n = a.pattern.num_rows;
  std::copy(x.begin(), x.end(), x_start.begin());
  const std::int64_t blocks = (std::int64_t{n} + block_rows - 1) / block_rows;
  for (std::int64_t g = 0; g < blocks; ++g) {
    const std::int64_t first = g * block_rows;
    const std::int64_t rows = std::min<std::int64_t>(block_rows, n - first);
    for (std::int64_t step = 0; step < rows; ++step) {
      const auto i = static_cast<index_t>(
          direction == SweepDirection::forward ? first + step : first + rows - 1 - step);
      const auto newest = [&](index_t j) {
        return block_of(j, block_rows) == g ? x[j] : x_start[j];
      };
      if (l1) {
        double y = 0.0;
        for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
          y += static_cast<double>(values[k]) * newest(a.pattern.col_idx[k]);
        }
        x[i] = x[i] + inverse_diagonal[i] * (b[i] - y);
      } else {
        double sum = b[i];
        for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
          const index_t j = a.pattern.col_idx[k];
          if (j != i) sum -= static_cast<double>(values[k]) * newest(j);
        }
        x[i] = sum * inverse_diagonal[i];
      }
    }
  }
}

}  // namespace

void l1_row_norms(const Backend&, const MatrixView& a, Span<double> d) {
  with_values(a, [&](const auto* values) { l1_row_norms_of(a, values, d); });
}

void gauss_seidel(const Backend&, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  with_values(a, [&](const auto* values) {
    gauss_seidel_of(a, values, inverse_diagonal, b, x, direction);
  });
}

void hybrid_diagonal(const Backend&, const MatrixView& a, index_t block_rows, bool l1,
                     Span<double> d) {
  with_values(a, [&](const auto* values) { hybrid_diagonal_of(a, values, block_rows, l1, d); });
}

void hybrid_gauss_seidel(const Backend&, const MatrixView& a, index_t block_rows, bool l1,
                         Span<const double> inverse_diagonal, Span<const double> b, Span<double> x,
                         Span<double> x_start, SweepDirection direction) {
  with_values(a, [&](const auto* values) {
    hybrid_gauss_seidel_of(a, values, block_rows, l1, inverse_diagonal, b, x, x_start, direction);
  });
}

void cg_lanczos(const Backend&, const std::vector<LanczosSystem>& systems, int steps) {
  for (const LanczosSystem& s : systems) {
    with_values(s.a, [&](const auto* values) {
      lanczos::steps(s.a, values, s.dinv, steps, s.r, s.p, s.p_next, s.q, s.scalars,
                     [](std::int64_t chunks, auto&& body) {
                       for (std::int64_t c = 0; c < chunks; ++c) body(c);
                     });
    });
  }
}

}  // namespace kryflow::kernels::smoothers::reference
