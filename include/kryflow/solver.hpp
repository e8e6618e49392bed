// The one way to build a solve, shared by the command-line tool and every binding (C, Python,
// Fortran): a matrix stored for its products (format, value precision, backend), a configured
// solver and preconditioner (a preset, a JSON file or JSON text, plus `-p`-style overrides),
// setup, value-only re-setup and solve.
//
//   const Backend backend = default_backend();
//   StoredMatrix A = store_matrix(CsrMatrix::from_coo(Backend::reference(), coo), backend);
//   Solver solver(config::resolve_configuration("pcg_amg", {"solver.relative_tolerance=1e-10"}));
//   solver.setup(A.op());
//   Vector x = Vector::constant(backend, n, 0.0);
//   const SolveReport report = solver.solve(b, x);  // b: a Vector on `backend`
//   A.update_values(new_values);  solver.update_values();  solver.solve(b, x);
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/config/registry.hpp"
#include "kryflow/core/backend.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow {

/// The backend a caller gets without asking for one: cuda when this build has it and a device
/// opens, else cpu (all cores of the process's affinity mask).
Backend default_backend();

/// The backend named "cuda", "cpu" or "reference"; an empty name gives default_backend().
/// Throws InvalidInput for another name, NotCompiled for cuda in a build without it and
/// BackendError when the device cannot be opened.
Backend backend_by_name(const std::string& name);

/// How a matrix is stored for its products (Saad, Iterative Methods, sec. 3.4: CSR; BSR for
/// block-coupled systems; SELL-C-sigma of Kreutzer et al. 2014 for irregular rows).
struct StorageOptions {
  /// "csr", "sell", "bsr" or "auto" (advise_format: the format that moves the fewest bytes).
  std::string format = "csr";
  /// The block size of "bsr"; 0 detects it (advise_format). Ignored by csr and sell.
  int block_size = 0;
  /// How the values are stored; vectors and arithmetic stay double (float32 halves the value
  /// bytes of every product).
  Precision precision = Precision::float64;
};

/// A matrix stored for its products on one backend, with how it was stored and why. Its values
/// are replaced in CSR order (the order of the CsrMatrix it was stored from), whatever the
/// format. Move-only.
class StoredMatrix {
 public:
  StoredMatrix() = default;
  /// The operator the solver takes (a CsrMatrix, BsrMatrix or SellMatrix).
  const LinearOperator& op() const;
  /// "CSR (float64 values)", "BSR-4 (float32 values)", "SELL-32-1 (float64 values)".
  const std::string& format() const noexcept { return format_; }
  /// "chosen with --format csr", or the advisor's reason for "auto".
  const std::string& format_reason() const noexcept { return format_reason_; }
  /// Bytes one product moves at least (the bandwidth floor's numerator).
  double spmv_bytes() const noexcept { return spmv_bytes_; }
  /// Stored entries of the CSR matrix it was stored from (the length update_values takes).
  std::int64_t csr_nnz() const noexcept { return csr_nnz_; }
  /// Replaces the values (same pattern): `csr_values` holds csr_nnz() doubles in CSR order, on
  /// any backend (copied to the matrix's; rounded to float for float32 storage). A solver set
  /// up on op() then needs Solver::update_values. Throws DimensionMismatch for another length;
  /// InvalidInput when float32 storage would overflow.
  void update_values(const Array<double>& csr_values);

 private:
  friend StoredMatrix store_matrix(CsrMatrix A, const Backend& backend,
                                   const StorageOptions& options, const std::string& name);
  std::unique_ptr<LinearOperator> op_;
  std::string kind_;  // csr, sell or bsr
  std::string format_;
  std::string format_reason_;
  double spmv_bytes_ = 0.0;
  std::int64_t csr_nnz_ = 0;
};

/// A (any backend; e.g. compressed on the reference backend from a file) stored on `backend` as
/// `options` say. The format and precision conversions run on `backend`. `name` (a file, or
/// empty) is named first in the messages of InvalidInput. Throws InvalidInput for an unknown
/// format, a matrix that does not tile into blocks of the requested size, a bsr request without
/// a block size where none is detected, or float32 overflow; OutOfMemory when it does not fit.
StoredMatrix store_matrix(CsrMatrix A, const Backend& backend, const StorageOptions& options = {},
                          const std::string& name = "");

/// A Krylov solver and its preconditioner built from a configuration (config::build_solver; keys
/// in docs/config.md), set up on an operator, re-set up when the operator's values change, and
/// run on right-hand sides. Move-only; one solve at a time (the workspaces are the solver's).
class Solver {
 public:
  /// Builds the solver and preconditioner `configuration` describes. Throws ConfigError naming
  /// the JSON path of an unknown key, a wrong type or an out-of-range value.
  explicit Solver(const nlohmann::json& configuration);
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;
  ~Solver();

  /// The configuration with every default filled in: Solver(configuration()) builds the same.
  const nlohmann::json& configuration() const noexcept { return setup_.resolved; }

  /// Sets the preconditioner up on A and remembers A, which must stay alive and unmoved until the
  /// next setup. Throws what the preconditioner's setup throws (InvalidInput for a zero diagonal,
  /// a singular block, NaN; OutOfMemory), leaving the solver without an operator.
  void setup(const LinearOperator& A);
  /// The operator's values changed in place (same pattern, e.g. StoredMatrix::update_values):
  /// value-only re-setup of the preconditioner (Preconditioner::update_values). Throws
  /// InvalidInput when setup has not run, and what the re-setup throws.
  void update_values();
  /// Solves A x = b from the initial guess in x (b and x: num_rows entries on A's backend).
  /// Numerical outcomes (converged, max_iterations, breakdown, divergence, stagnation) are in the
  /// report, never thrown; the report's setup_seconds is the last setup's or re-setup's. Throws
  /// InvalidInput when setup has not run, DimensionMismatch for wrong sizes.
  SolveReport solve(const Vector& b, Vector& x);

  /// The operator of the last setup; null before it.
  const LinearOperator* op() const noexcept { return A_; }
  KrylovSolver& krylov() noexcept { return *setup_.solver; }
  Preconditioner& preconditioner() noexcept { return *setup_.preconditioner; }
  /// The preconditioner's own report (AMG hierarchy, colors, fill) after setup; may be empty.
  std::string preconditioner_summary() const;
  /// Seconds of the last setup or update_values (the backend's queue drained).
  double setup_seconds() const noexcept { return setup_seconds_; }

 private:
  config::SolverSetup setup_;
  const LinearOperator* A_ = nullptr;
  double setup_seconds_ = 0.0;
};

/// The backend's measured copy bandwidth (bytes read plus written per second), the roofline of
/// memory-bound products, or why there is none.
struct CopyBandwidth {
  std::optional<double> bytes_per_second;
  std::size_t buffer_bytes = 0;  ///< size of each of the two buffers copied
  std::string note;              ///< why there is no measurement ("" when measured)
};

/// Copies between two buffers of `bytes` each on `backend` (the median of timed repeats: a
/// device-to-device copy on cuda, an OpenMP copy loop on cpu). `bytes` 0 skips it; a failed
/// allocation leaves it unavailable with the reason instead of throwing. Takes up to seconds.
CopyBandwidth measure_copy_bandwidth(const Backend& backend, std::size_t bytes);

}  // namespace kryflow
