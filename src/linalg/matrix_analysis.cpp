// Host analysis of a CSR matrix: row lengths, symmetry, diagonal, and a solver suggestion.
#include "kryflow/linalg/matrix_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/block_relaxation/block_rows.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/preconditioners/threshold_ilu.hpp"
#include "src/linalg/format_number.hpp"

namespace kryflow {
namespace {

using detail::format_number;

// The iteration limits and the stagnation window of the shipped presets the advice names
// (configs/*.json and StopCriteria's default window; a unit test compares them).
constexpr std::int64_t kPresetIterations = 1000;             // pcg_jacobi, bicgstab_jacobi
constexpr std::int64_t kGmresPresetIterations = 2000;        // gmres
constexpr std::int64_t kBlockJacobiPresetIterations = 5000;  // bicgstab_block_jacobi
constexpr std::int64_t kMulticolorPresetIterations = 2000;   // bicgstab_mcgs
constexpr std::int64_t kIlutPresetIterations = 2000;         // gmres_ilut
/// GMRES's restart where the advice picks gmres_ilut for weak dominance (the preset's is 30).
constexpr int kWeakDominanceRestart = 200;
constexpr std::int64_t kPresetStagnationWindow = 500;
constexpr std::int64_t kMaxAdvisedIterations = 100000;
constexpr std::int64_t kMaxAdvisedStagnationWindow = 5000;

/// inverse = block^-1 for the B x B diagonal block `block` (row-major, B in 1..8); false when
/// block Jacobi's test finds it singular.
bool block_inverse(int B, const double* block, double* inverse) {
  return kernels::block_relaxation::with_block_size(B, "analyse", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    return kernels::block_relaxation::invert_block<kB>(block, inverse);
  });
}

/// The median of `values` (the mean of the two middle ones for an even count), 0 when empty.
double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

/// MatrixProperties::ilut_growth of the square matrix M (on the host; `values` its values as
/// doubles).
double ilut_growth(const CsrMatrix& M, const std::vector<double>& values) {
  const index_t n = M.num_rows();
  const std::vector<index_t> row_ptr(M.row_ptr().data(), M.row_ptr().data() + n + 1);
  const std::vector<index_t> col(M.col_idx().data(), M.col_idx().data() + M.nnz());
  IlutFactors f;
  try {
    f = ilut_factor(n, row_ptr, col, values, IlutParameters{});
  } catch (const InvalidInput&) {
    return INFINITY;  // a zero or non-finite pivot
  }
  // z = (L U)^-1 A v for v in [-1, 1) from a fixed linear congruential sequence.
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  double v_norm = 0.0;
  for (double& e : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    e = static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
    v_norm = std::max(v_norm, std::abs(e));
  }
  std::vector<double> z(static_cast<std::size_t>(n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) s += values[k] * v[col[k]];
    for (index_t k = f.lower_ptr[i]; k < f.lower_ptr[i + 1]; ++k) {
      s -= f.lower_values[k] * z[f.lower_col[k]];
    }
    z[i] = s;
  }
  double z_norm = 0.0;
  for (index_t i = n - 1; i >= 0; --i) {
    double s = z[i];
    for (index_t k = f.upper_ptr[i]; k < f.upper_ptr[i + 1]; ++k) {
      s -= f.upper_values[k] * z[f.upper_col[k]];
    }
    z[i] = s / f.diagonal[i];
    if (!std::isfinite(z[i])) return INFINITY;
    z_norm = std::max(z_norm, std::abs(z[i]));
  }
  return v_norm > 0.0 ? z_norm / v_norm : 0.0;
}

/// p.block_size and p.singular_diagonal_blocks of the square matrix M (on the host).
void measure_blocks(const CsrMatrix& M, const double* val, MatrixProperties& p) {
  const index_t n = p.num_rows;
  const index_t* row_ptr = M.row_ptr().data();
  const index_t* col = M.col_idx().data();
  p.block_size = detect_block_size(n, n, Span<const index_t>(row_ptr, n + 1),
                                   Span<const index_t>(col, static_cast<std::size_t>(p.nnz)));
  const int B = p.block_size;
  if (B < 2) return;
  std::vector<double> block(static_cast<std::size_t>(B) * B);
  std::vector<double> inverse(static_cast<std::size_t>(B) * B);
  std::vector<double> coupling(static_cast<std::size_t>(n / B), 0.0);
  for (index_t I = 0; I < n / B; ++I) {
    std::fill(block.begin(), block.end(), 0.0);
    for (int r = 0; r < B; ++r) {
      const index_t i = I * B + r;
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const index_t c = col[k] - I * B;
        if (c >= 0 && c < B) block[static_cast<std::size_t>(r * B + c)] += val[k];
      }
    }
    if (!block_inverse(B, block.data(), inverse.data())) {
      ++p.singular_diagonal_blocks;
      continue;
    }
    // The pattern tiles into blocks: each of the block row's B rows holds B consecutive entries
    // per block column, in the same block order.
    const index_t blocks = (row_ptr[I * B + 1] - row_ptr[I * B]) / B;
    for (index_t q = 0; q < blocks; ++q) {
      if (col[row_ptr[I * B] + q * B] / B == I) continue;
      double norm = 0.0;  // ||D_I^-1 A_IJ||_inf
      for (int r = 0; r < B; ++r) {
        double row_sum = 0.0;
        for (int c = 0; c < B; ++c) {
          double x = 0.0;
          for (int m = 0; m < B; ++m) {
            x += inverse[static_cast<std::size_t>(r * B + m)] * val[row_ptr[I * B + m] + q * B + c];
          }
          row_sum += std::abs(x);
        }
        norm = std::max(norm, row_sum);
      }
      coupling[static_cast<std::size_t>(I)] += norm;
    }
  }
  if (p.singular_diagonal_blocks == 0) p.jacobi_coupling = median(coupling);
}

/// Computes everything but the suggestion.
MatrixProperties measure(const CsrMatrix& M) {
  const index_t* row_ptr = M.row_ptr().data();
  const index_t* col = M.col_idx().data();
  const std::vector<double> values = M.values_to_host();  // either precision, as doubles
  const double* val = values.data();

  MatrixProperties p;
  p.num_rows = M.num_rows();
  p.num_cols = M.num_cols();
  p.nnz = M.nnz();
  p.row_lengths = M.row_length_stats();
  const bool square = p.num_rows == p.num_cols;
  double max_abs = 0.0;
  double max_asym = 0.0;
  bool pattern_symmetric = square;
  std::vector<double> coupling;  // sum_{j != i} |a_ij| / |a_ii| of the rows with a_ii != 0
  coupling.reserve(static_cast<std::size_t>(p.num_rows));
  for (index_t i = 0; i < p.num_rows; ++i) {
    double diagonal = 0.0;
    double off_sum = 0.0;
    double row_sum = 0.0;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const index_t j = col[k];
      const double v = val[k];
      if (!std::isfinite(v)) p.has_nonfinite = true;
      max_abs = std::max(max_abs, std::abs(v));
      row_sum += v;
      if (j == i) {
        diagonal = v;
      } else {
        off_sum += std::abs(v);
      }
      if (square && j != i) {
        // a_ji by binary search in row j (columns are sorted)
        const index_t* first = col + row_ptr[j];
        const index_t* last = col + row_ptr[j + 1];
        const index_t* it = std::lower_bound(first, last, i);
        double transposed = 0.0;
        if (it != last && *it == i) {
          transposed = val[row_ptr[j] + (it - first)];
        } else {
          pattern_symmetric = false;
        }
        max_asym = std::max(max_asym, std::abs(v - transposed));
      }
    }
    if (diagonal == 0.0) ++p.missing_diagonal;
    if (diagonal > 0.0) ++p.positive_diagonal;
    if (diagonal < 0.0) ++p.negative_diagonal;
    if (diagonal != 0.0 && std::abs(diagonal) >= off_sum) ++p.diagonally_dominant_rows;
    if (diagonal != 0.0) coupling.push_back(off_sum / std::abs(diagonal));
    const double magnitude = std::abs(diagonal) + off_sum;
    if (magnitude > 0.0 &&
        std::abs(row_sum) <= MatrixProperties::zero_row_sum_tolerance * magnitude) {
      ++p.zero_row_sum_rows;
    }
  }
  p.pattern_symmetric = pattern_symmetric;
  p.asymmetry = !square ? INFINITY : (max_abs > 0.0 ? max_asym / max_abs : 0.0);
  p.constant_null_space =
      square && p.num_rows > 0 && !p.has_nonfinite && p.zero_row_sum_rows == p.num_rows;
  if (square && p.num_rows > 0) measure_blocks(M, val, p);
  if (square && p.block_size == 1 && p.missing_diagonal == 0) p.jacobi_coupling = median(coupling);
  if (square && p.num_rows > 0 && !p.has_nonfinite && !p.numerically_symmetric() &&
      p.missing_diagonal == 0 && p.singular_diagonal_blocks == 0 &&
      p.nnz <= MatrixProperties::max_ilut_probe_entries &&
      p.jacobi_coupling > MatrixProperties::weak_coupling_threshold(p.block_size)) {
    p.ilut_growth = ilut_growth(M, values);
  }
  return p;
}

/// The preset and why (the first rule of analyse()'s list that matches).
void choose_preset(MatrixProperties& p) {
  const bool symmetric = p.numerically_symmetric();
  if (p.num_rows != p.num_cols) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix is not square; kryflow's Krylov solvers need A square";
  } else if (p.num_rows == 0) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix is empty";
  } else if (p.has_nonfinite) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix holds NaN or Inf values";
  } else if (p.missing_diagonal > 0 && p.block_size >= 2 && p.singular_diagonal_blocks == 0) {
    const std::string B = std::to_string(p.block_size);
    p.suggested_solver = "bicgstab_block_jacobi";
    p.suggested_format = "auto";
    p.suggestion_reason =
        std::to_string(p.missing_diagonal) + (p.missing_diagonal == 1 ? " row has" : " rows have") +
        " a zero or missing diagonal entry, so point Jacobi cannot be used, but the pattern "
        "tiles into " +
        B + " x " + B +
        " blocks (coupled unknowns) and every diagonal block "
        "is invertible: BiCGStab with block Jacobi on the matrix stored as BSR-" +
        B + " (--format auto stores it so)";
  } else if (p.missing_diagonal > 0) {
    p.suggested_solver = "gmres";
    p.suggestion_reason = std::to_string(p.missing_diagonal) +
                          (p.missing_diagonal == 1 ? " row has" : " rows have") +
                          " a zero or missing diagonal entry, so the Jacobi "
                          "preconditioner cannot be used (its setup fails); GMRES without a "
                          "preconditioner is the safe choice";
  } else if (symmetric && p.positive_diagonal == p.num_rows) {
    p.suggested_solver = "pcg_jacobi";
    p.suggestion_reason =
        "symmetric with a positive diagonal, so likely positive definite: "
        "conjugate gradients with Jacobi (CG reports a breakdown if A turns out "
        "to be indefinite)";
  } else if (symmetric && p.negative_diagonal == p.num_rows) {
    p.suggested_solver = "pcg_jacobi";
    p.suggestion_reason =
        "symmetric with a negative diagonal, so likely negative definite: conjugate gradients "
        "with Jacobi as it is (A and the Jacobi preconditioner are then both negative definite, "
        "which CG handles directly; there is no need to negate A and b)";
  } else if (!symmetric && p.ilut_growth > 0.0) {
    // ilut_growth is set only when the dominance is weak (measure()).
    const std::string coupling = format_number("%.3g", p.jacobi_coupling);
    const std::string threshold =
        format_number("%g", MatrixProperties::weak_coupling_threshold(p.block_size));
    const std::string what = p.block_size >= 2 ? "block Jacobi" : "Jacobi";
    const std::string weak = "nonsymmetric with weak diagonal dominance: the coupling " + what +
                             " leaves out, median over the " +
                             (p.block_size >= 2 ? "block rows of sum_J ||D_I^-1 A_IJ||"
                                                : "rows of sum_j |a_ij| / |a_ii|") +
                             ", is " + coupling + " (above " + threshold + "), where " + what +
                             "-preconditioned Krylov methods stagnate or break down";
    const std::string growth = std::isfinite(p.ilut_growth)
                                   ? format_number("%.3g", p.ilut_growth)
                                   : std::string("infinite (a zero pivot or an overflow)");
    if (p.ilut_growth <= MatrixProperties::stable_ilut_growth) {
      p.suggested_solver = "gmres_ilut";
      p.suggested_overrides.push_back("solver.restart=" + std::to_string(kWeakDominanceRestart));
      p.suggestion_reason =
          weak +
          ". ILUT in the natural order is stable on it (||(LU)^-1 A v|| / ||v|| = " + growth +
          "): GMRES with ILUT and a restart of " + std::to_string(kWeakDominanceRestart) +
          " (a short restart stagnates on such systems; the Krylov basis takes " +
          std::to_string(kWeakDominanceRestart * 8) + " bytes per unknown)";
    } else {
      const std::string B = std::to_string(p.block_size);
      p.suggested_solver = "bicgstab_mcgs";
      p.suggested_format = "auto";
      p.suggestion_reason =
          weak + ". ILUT's factors are unstable on it (||(LU)^-1 A v|| / ||v|| = " + growth +
          "), so no incomplete factorization: BiCGStab with forward multicolor " +
          (p.block_size >= 2 ? "block Gauss-Seidel on the matrix stored as BSR-" + B +
                                   " (--format auto stores it so)"
                             : std::string("Gauss-Seidel"));
    }
  } else if (!symmetric && p.block_size >= 2 && p.singular_diagonal_blocks == 0) {
    const std::string B = std::to_string(p.block_size);
    p.suggested_solver = "bicgstab_mcgs";
    p.suggested_format = "auto";
    p.suggestion_reason =
        "nonsymmetric, and the pattern tiles into " + B + " x " + B +
        " blocks (coupled unknowns) with invertible diagonal blocks: BiCGStab with forward "
        "multicolor block Gauss-Seidel on the matrix stored as BSR-" +
        B +
        " (--format auto stores it so), which on the block Jacobians of the test corpus "
        "needs about half the iterations of BiCGStab-Jacobi and less time on a GPU";
  } else if (symmetric) {
    // Diagonal entries of both signs: A is indefinite and CG does not apply.
    p.suggested_solver = "bicgstab_jacobi";
    p.suggestion_reason = "symmetric with diagonal entries of both signs (" +
                          std::to_string(p.positive_diagonal) + " positive, " +
                          std::to_string(p.negative_diagonal) +
                          " negative), so indefinite and unfit for CG: BiCGStab with Jacobi";
  } else {
    p.suggested_solver = "bicgstab_jacobi";
    p.suggestion_reason =
        "nonsymmetric, so CG does not apply: BiCGStab with Jacobi (short recurrences, no "
        "restart to stall; if it breaks down, GMRES with Jacobi and a long restart)";
  }
}

/// The iteration limit and stagnation window of analyse()'s budget, where they exceed the
/// preset's, and the pinned unknown of a constant null space.
void add_budget(MatrixProperties& p) {
  if (p.suggested_solver == "none") return;
  const bool cg = p.suggested_solver == "pcg_jacobi";
  const std::int64_t n = p.num_rows;
  const std::int64_t preset_iterations =
      p.suggested_solver == "gmres"                   ? kGmresPresetIterations
      : p.suggested_solver == "bicgstab_block_jacobi" ? kBlockJacobiPresetIterations
      : p.suggested_solver == "bicgstab_mcgs"         ? kMulticolorPresetIterations
      : p.suggested_solver == "gmres_ilut"            ? kIlutPresetIterations
                                                      : kPresetIterations;
  const std::int64_t iterations =
      std::clamp<std::int64_t>(cg ? 4 * n : n, preset_iterations, kMaxAdvisedIterations);
  std::string budget;
  if (iterations > preset_iterations) {
    p.suggested_overrides.push_back("solver.max_iterations=" + std::to_string(iterations));
    budget = iterations == kMaxAdvisedIterations
                 ? std::string("an iteration limit of 100000 (the most the advice sets)")
                 : "an iteration limit of " + std::string(cg ? "4n" : "n") + " = " +
                       std::to_string(iterations) +
                       (cg ? " (4 per unknown)" : " (one per unknown)");
  }
  // Every solver's residual can plateau for long on a slow problem: the preset's window (a
  // factor 1e-3 within 500 iterations) is about the average rate of BiCGStab-Jacobi on
  // ex19_cavity_257 (1e-8 in 900-1500 iterations), so a plateau there read as stagnation.
  const std::int64_t window =
      std::clamp<std::int64_t>(n, kPresetStagnationWindow, kMaxAdvisedStagnationWindow);
  if (window > kPresetStagnationWindow) {
    p.suggested_overrides.push_back("solver.stagnation_window=" + std::to_string(window));
    budget += (budget.empty() ? "" : " and ") + std::string("a stagnation window of ") +
              std::to_string(window) + " (the residual can plateau for long)";
  }
  if (!budget.empty()) p.suggestion_reason += "; " + budget;
  if (p.constant_null_space) {
    p.suggested_pin_unknown = 1;
    p.suggestion_reason +=
        "; every row sums to zero (A 1 = 0), so A is singular with the constants in its null "
        "space: fix one unknown with --pin-unknown 1";
  }
}

}  // namespace

MatrixProperties analyse(const CsrMatrix& A) {
  const CsrMatrix host =
      A.backend().kind() == BackendKind::reference ? CsrMatrix() : A.copy_to(Backend::reference());
  MatrixProperties p = measure(A.backend().kind() == BackendKind::reference ? A : host);
  choose_preset(p);
  add_budget(p);
  return p;
}

}  // namespace kryflow
