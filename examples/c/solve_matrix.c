/* Solves A x = b for a Matrix Market matrix through kryflow's C interface, with b = A x* for a
 * pseudo-random x*, and reports the solve and the error against x*:
 *   solve_matrix_c A.mtx[.gz] [preset] [backend]   (defaults: pcg_amg, cuda when there is one) */
#include <kryflow.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    kryflow_status status_ = (call);                                                   \
    if (status_ != KRYFLOW_SUCCESS) {                                                  \
      fprintf(stderr, "%s: %s\n", kryflow_status_name(status_), kryflow_last_error()); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s A.mtx[.gz] [preset] [backend]\n", argv[0]);
    return 1;
  }
  const char* preset = argc > 2 ? argv[2] : "pcg_amg";
  kryflow_backend backend;
  kryflow_matrix A;
  kryflow_solver solver;
  kryflow_vector xs, b, x;
  kryflow_solve_info info;
  int32_t n;
  int64_t nnz;
  char name[128];
  CHECK(kryflow_backend_create(argc > 3 ? argv[3] : NULL, &backend));
  CHECK(kryflow_backend_name(backend, name, (int32_t)sizeof name));
  CHECK(kryflow_matrix_read(backend, argv[1], KRYFLOW_FLOAT64, &A));
  CHECK(kryflow_matrix_size(A, &n, NULL, &nnz));

  double* solution = malloc(sizeof(double) * (size_t)n);
  double* result = malloc(sizeof(double) * (size_t)n);
  uint64_t state = 0x5eedu;
  for (int32_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    solution[i] = (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  CHECK(kryflow_vector_create(backend, n, solution, KRYFLOW_MEMORY_HOST, &xs));
  CHECK(kryflow_vector_create(backend, n, NULL, KRYFLOW_MEMORY_HOST, &b));
  CHECK(kryflow_vector_create(backend, n, NULL, KRYFLOW_MEMORY_HOST, &x));
  CHECK(kryflow_matrix_apply(A, xs, b));

  CHECK(kryflow_solver_create(preset, NULL, 0, &solver));
  CHECK(kryflow_solver_setup(solver, A));
  CHECK(kryflow_solver_solve(solver, b, x, &info));
  CHECK(kryflow_vector_download(x, result, n, KRYFLOW_MEMORY_HOST));

  double error = 0.0;
  for (int32_t i = 0; i < n; ++i) error = fmax(error, fabs(result[i] - solution[i]));
  printf(
      "kryflow %s (C) on %s: %s, %d rows, %lld entries, %s: %s, %d iterations, "
      "true residual %.3e, max error %.3e\n",
      kryflow_version(), name, argv[1], n, (long long)nnz, preset,
      kryflow_solve_status_name(info.status), info.iterations,
      info.true_residual_norm / info.rhs_norm, error);

  free(solution);
  free(result);
  kryflow_vector_destroy(xs);
  kryflow_vector_destroy(b);
  kryflow_vector_destroy(x);
  kryflow_solver_destroy(solver);
  kryflow_matrix_destroy(A);
  kryflow_backend_destroy(backend);
  return info.status == KRYFLOW_SOLVE_CONVERGED ? 0 : 2;
}
