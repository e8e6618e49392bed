/* kryflow's C interface: sparse linear solvers for CFD from C, Fortran (bindings/fortran) and
 * any language with a C foreign-function interface.
 *
 * Objects are opaque handles: a backend (where memory lives and kernels run), a matrix (CSR or
 * BSR, 32-bit indices, double values given, stored in float64 or float32), a vector and a solver
 * (a Krylov method and its preconditioner from a preset name or JSON text, with "key=value"
 * overrides as the command line's -p). Every function returns a kryflow_status: KRYFLOW_SUCCESS,
 * or an error code whose message kryflow_last_error() returns. No C++ exception crosses this
 * interface. A solve's numerical outcome (converged, iteration limit, breakdown, ...) is not an
 * error: it is in the kryflow_solve_info the solve fills in. A create function that fails sets
 * its output handle to NULL.
 *
 * Thread safety: handles are not synchronized. Calls on different handles may run on different
 * threads at once, except that the objects of one backend share its device stream, so calls
 * touching one backend should come from one thread at a time. kryflow_last_error() is per
 * thread: it holds the message of the last failed call on the calling thread.
 *
 * Sizes and indices are int32_t (0-based), entry counts int64_t. Arrays passed with
 * KRYFLOW_MEMORY_DEVICE are addresses in the backend's memory (CUDA device pointers on the cuda
 * backend); they are copied on the device, never through the host. Arrays are copied in: the
 * caller keeps ownership of its memory and may free it after the call returns.
 *
 *   kryflow_backend backend;  kryflow_matrix A;  kryflow_solver solver;
 *   kryflow_vector b, x;      kryflow_solve_info info;
 *   kryflow_backend_create("", &backend);                   (cuda when there is a device)
 *   kryflow_matrix_create_csr(backend, n, n, nnz, row_ptr, col_idx, values,
 *                             KRYFLOW_MEMORY_HOST, NULL, &A);
 *   kryflow_solver_create("pcg_amg", NULL, 0, &solver);
 *   kryflow_solver_setup(solver, A);
 *   kryflow_vector_create(backend, n, rhs, KRYFLOW_MEMORY_HOST, &b);
 *   kryflow_vector_create(backend, n, NULL, KRYFLOW_MEMORY_HOST, &x);     (x = 0)
 *   kryflow_solver_solve(solver, b, x, &info);
 *   kryflow_vector_download(x, solution, n, KRYFLOW_MEMORY_HOST);
 *   ... kryflow_*_destroy in any order (a solver keeps its matrix's data alive).
 */
#ifndef KRYFLOW_H
#define KRYFLOW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Return codes. Each error code corresponds to one kryflow exception type. */
typedef enum kryflow_status {
  KRYFLOW_SUCCESS = 0,
  KRYFLOW_ERROR_INVALID_ARGUMENT = 1,   /**< null handle or output pointer, bad enumerator */
  KRYFLOW_ERROR_INVALID_INPUT = 2,      /**< data kryflow cannot use: zero diagonal, NaN, bad CSR */
  KRYFLOW_ERROR_DIMENSION_MISMATCH = 3, /**< sizes that do not agree */
  KRYFLOW_ERROR_PARSE = 4,              /**< a malformed file (message: file and line) */
  KRYFLOW_ERROR_CONFIG = 5,             /**< unknown preset, bad configuration key or value */
  KRYFLOW_ERROR_NOT_SUPPORTED = 6,      /**< a valid request this build does not implement */
  KRYFLOW_ERROR_NOT_COMPILED = 7,       /**< e.g. the cuda backend in a build without CUDA */
  KRYFLOW_ERROR_BACKEND = 8,            /**< the device or a CUDA library reported a failure */
  KRYFLOW_ERROR_OUT_OF_MEMORY = 9,      /**< an allocation failed; the process goes on */
  KRYFLOW_ERROR_INTERNAL = 10           /**< anything else (a bug: please report it) */
} kryflow_status;

/** How a solve ended (kryflow_solve_info.status). */
typedef enum kryflow_solve_status {
  KRYFLOW_SOLVE_CONVERGED = 0,
  KRYFLOW_SOLVE_MAX_ITERATIONS = 1,
  KRYFLOW_SOLVE_BREAKDOWN = 2,
  KRYFLOW_SOLVE_DIVERGED = 3,
  KRYFLOW_SOLVE_STAGNATED = 4,
  KRYFLOW_SOLVE_NAN_DETECTED = 5
} kryflow_solve_status;

/** Where the arrays given to a call live. */
typedef enum kryflow_memory {
  KRYFLOW_MEMORY_HOST = 0,  /**< host memory */
  KRYFLOW_MEMORY_DEVICE = 1 /**< the backend's memory (CUDA device pointers on cuda) */
} kryflow_memory;

/** How a matrix's values are stored (vectors and arithmetic stay double). */
typedef enum kryflow_precision { KRYFLOW_FLOAT64 = 0, KRYFLOW_FLOAT32 = 1 } kryflow_precision;

typedef struct kryflow_backend_s* kryflow_backend;
typedef struct kryflow_matrix_s* kryflow_matrix;
typedef struct kryflow_vector_s* kryflow_vector;
typedef struct kryflow_solver_s* kryflow_solver;

/** The outcome of a solve. Norms are 2-norms; times in seconds. */
typedef struct kryflow_solve_info {
  kryflow_solve_status status;
  int32_t iterations;           /**< completed iterations */
  double rhs_norm;              /**< ||b|| */
  double initial_residual_norm; /**< ||b - A x0|| */
  double residual_norm;         /**< the method's recursive residual estimate at the end */
  double true_residual_norm;    /**< ||b - A x|| recomputed after the iteration */
  double setup_seconds;         /**< the last setup or value-only re-setup */
  double solve_seconds;
} kryflow_solve_info;

/** The message of the last failed call on this thread ("" when none); valid until the next
 *  failing call on this thread. */
const char* kryflow_last_error(void);
/** "MAJOR.MINOR.PATCH". */
const char* kryflow_version(void);
/** The name of a status code ("KRYFLOW_ERROR_CONFIG", ...); NULL for an unknown code. */
const char* kryflow_status_name(kryflow_status status);
/** "converged", "max_iterations", "breakdown", "diverged", "stagnated" or "nan_detected". */
const char* kryflow_solve_status_name(kryflow_solve_status status);

/* ---- backends ---------------------------------------------------------------------------- */

/** A backend by name: "cuda", "cpu" or "reference"; NULL or "" gives cuda when this build has
 *  it and a device opens, else cpu. Errors: INVALID_INPUT (unknown name), NOT_COMPILED,
 *  BACKEND (the device cannot be opened). */
kryflow_status kryflow_backend_create(const char* name, kryflow_backend* backend);
/** Frees the handle (objects created on it keep the backend alive). NULL is ignored. */
kryflow_status kryflow_backend_destroy(kryflow_backend backend);
/** The backend's description, e.g. "cuda:0 (NVIDIA H200)", into `name` (NUL-terminated,
 *  truncated to `capacity` bytes). */
kryflow_status kryflow_backend_name(kryflow_backend backend, char* name, int32_t capacity);
/** Waits for the work queued on the backend. */
kryflow_status kryflow_backend_synchronize(kryflow_backend backend);

/* ---- matrices ---------------------------------------------------------------------------- */

/** A CSR matrix: row_ptr (num_rows + 1), col_idx and values (nnz each), 0-based, columns sorted
 *  and unique within each row, in `memory`. `format` is "csr" (NULL or "" too), "sell", "bsr"
 *  (block size detected) or "auto" (the format that moves the fewest bytes); values stored in
 *  `precision`. Errors: INVALID_INPUT naming the first invalid row, NOT_SUPPORTED (nnz beyond
 *  32 bits), OUT_OF_MEMORY. */
kryflow_status kryflow_matrix_create_csr(kryflow_backend backend, int32_t num_rows,
                                         int32_t num_cols, int64_t nnz, const int32_t* row_ptr,
                                         const int32_t* col_idx, const double* values,
                                         kryflow_memory memory, const char* format,
                                         kryflow_precision precision, kryflow_matrix* matrix);
/** A BSR matrix of block_size x block_size blocks (1..32): row_ptr (num_block_rows + 1) and
 *  col_idx (nnzb) over blocks, values (nnzb * block_size^2, each block row-major), in `memory`;
 *  stored as BSR. Errors as kryflow_matrix_create_csr. */
kryflow_status kryflow_matrix_create_bsr(kryflow_backend backend, int32_t num_block_rows,
                                         int32_t num_block_cols, int32_t block_size, int64_t nnzb,
                                         const int32_t* row_ptr, const int32_t* col_idx,
                                         const double* values, kryflow_memory memory,
                                         kryflow_precision precision, kryflow_matrix* matrix);
/** A Matrix Market file (plain or gzip), stored as CSR in `precision`. Errors: PARSE naming the
 *  file and line, INVALID_INPUT (cannot open). */
kryflow_status kryflow_matrix_read(kryflow_backend backend, const char* path,
                                   kryflow_precision precision, kryflow_matrix* matrix);
/** Frees the handle. NULL is ignored. */
kryflow_status kryflow_matrix_destroy(kryflow_matrix matrix);
/** Rows, columns and stored entries (as given: nnz of CSR, nnzb * block_size^2 of BSR). */
kryflow_status kryflow_matrix_size(kryflow_matrix matrix, int32_t* num_rows, int32_t* num_cols,
                                   int64_t* nnz);
/** Replaces the values in place (same pattern): `nnz` values in the order the matrix was created
 *  with (CSR order, or BSR's blocks), in `memory`. A solver set up on the matrix then needs
 *  kryflow_solver_update_values. Errors: DIMENSION_MISMATCH (another count). */
kryflow_status kryflow_matrix_update_values(kryflow_matrix matrix, int64_t nnz,
                                            const double* values, kryflow_memory memory);
/** y = A x. */
kryflow_status kryflow_matrix_apply(kryflow_matrix matrix, kryflow_vector x, kryflow_vector y);

/* ---- vectors ----------------------------------------------------------------------------- */

/** A vector of `size` doubles on the backend, copied from `values` in `memory`, or zero when
 *  `values` is NULL. */
kryflow_status kryflow_vector_create(kryflow_backend backend, int64_t size, const double* values,
                                     kryflow_memory memory, kryflow_vector* vector);
/** Frees the handle. NULL is ignored. */
kryflow_status kryflow_vector_destroy(kryflow_vector vector);
kryflow_status kryflow_vector_size(kryflow_vector vector, int64_t* size);
/** Copies `size` values from `values` in `memory` into the vector. Errors: DIMENSION_MISMATCH. */
kryflow_status kryflow_vector_upload(kryflow_vector vector, const double* values, int64_t size,
                                     kryflow_memory memory);
/** Copies the vector into `values` (`size` entries) in `memory`. Errors: DIMENSION_MISMATCH. */
kryflow_status kryflow_vector_download(kryflow_vector vector, double* values, int64_t size,
                                       kryflow_memory memory);

/* ---- solvers ----------------------------------------------------------------------------- */

/** A solver from `configuration`: a preset name ("pcg_amg"; `kryflow` --help lists them), JSON
 *  text ("{\"solver\": {\"type\": \"pcg\"}}"), a .json file, or NULL/"" for the defaults; then
 *  `num_overrides` "key=value" overrides in order ("solver.relative_tolerance=1e-10"). Errors:
 *  CONFIG naming the JSON path of a bad key or value, or the available presets. */
kryflow_status kryflow_solver_create(const char* configuration, const char* const* overrides,
                                     int32_t num_overrides, kryflow_solver* solver);
/** Frees the handle. NULL is ignored. */
kryflow_status kryflow_solver_destroy(kryflow_solver solver);
/** The resolved configuration as JSON text (every default filled in) into `json`
 *  (NUL-terminated); `*length` receives the full length, so a call with capacity 0 sizes it. */
kryflow_status kryflow_solver_configuration(kryflow_solver solver, char* json, int32_t capacity,
                                            int32_t* length);
/** Sets the preconditioner up on `matrix` (kept alive by the solver until the next setup).
 *  Errors: INVALID_INPUT (zero diagonal, singular block, NaN), OUT_OF_MEMORY. */
kryflow_status kryflow_solver_setup(kryflow_solver solver, kryflow_matrix matrix);
/** Value-only re-setup after kryflow_matrix_update_values on the set-up matrix. Errors:
 *  INVALID_INPUT (no setup yet, or the new values are unusable). */
kryflow_status kryflow_solver_update_values(kryflow_solver solver);
/** Solves A x = b from the initial guess in x; `info` (may be NULL) receives the outcome. A
 *  solve that does not converge still returns KRYFLOW_SUCCESS: check info->status. Errors:
 *  INVALID_INPUT (no setup, or vectors on another backend than the matrix),
 *  DIMENSION_MISMATCH. */
kryflow_status kryflow_solver_solve(kryflow_solver solver, kryflow_vector b, kryflow_vector x,
                                    kryflow_solve_info* info);
/** The reason of the last solve's outcome, one sentence (into `text`, NUL-terminated,
 *  truncated to `capacity`). */
kryflow_status kryflow_solver_reason(kryflow_solver solver, char* text, int32_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KRYFLOW_H */
