// Solves A x = b for a Matrix Market matrix with a kryflow preset, b = A x* for a random x*:
//   solve_matrix A.mtx[.gz] [preset] [backend]   (defaults: pcg_amg, cuda when there is one)
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/solver.hpp"
#include "kryflow/version.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s A.mtx[.gz] [preset] [backend]\n", argv[0]);
    return 1;
  }
  try {
    const std::string preset = argc > 2 ? argv[2] : "pcg_amg";
    const kryflow::Backend backend = kryflow::backend_by_name(argc > 3 ? argv[3] : "");
    const kryflow::CooMatrix coo = kryflow::io::read_matrix_market(argv[1]);
    const auto n = static_cast<std::size_t>(coo.num_rows);

    kryflow::StoredMatrix A = kryflow::store_matrix(
        kryflow::CsrMatrix::from_coo(kryflow::Backend::reference(), coo), backend);
    kryflow::Solver solver(kryflow::config::resolve_configuration(preset));
    solver.setup(A.op());

    const std::vector<double> solution = kryflow::random_solution(n);
    kryflow::Vector b(backend, n);
    A.op().apply(kryflow::Vector::from_host(backend, solution), b);
    kryflow::Vector x = kryflow::Vector::constant(backend, n, 0.0);
    const kryflow::SolveReport report = solver.solve(b, x);

    // The true residual, on the host, independently of the solver.
    const std::vector<double> xh = x.to_host(), bh = b.to_host();
    std::vector<double> r = bh;
    for (std::size_t k = 0; k < coo.values.size(); ++k) {
      r[coo.row_idx[k]] -= coo.values[k] * xh[coo.col_idx[k]];
    }
    double rr = 0.0, bb = 0.0;
    for (std::size_t i = 0; i < n; ++i) rr += r[i] * r[i], bb += bh[i] * bh[i];
    std::printf("kryflow %s on %s: %s, %s, %d iterations, true residual %.3e\n", kryflow::version(),
                backend.name().c_str(), argv[1], kryflow::to_string(report.status),
                report.iterations, std::sqrt(rr / bb));
    return report.converged() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
