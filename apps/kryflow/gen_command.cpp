// `kryflow gen`: write a model problem (finite-difference Poisson) as a Matrix Market file.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/generators.hpp"

namespace kryflow::cli {

int run_gen(const GenOptions& options) {
  CooMatrix A;
  if (options.problem == "poisson2d") {
    A = poisson2d(options.n);
  } else if (options.problem == "poisson3d") {
    A = poisson3d(options.n);
  } else if (options.problem == "poisson3d27") {
    A = poisson3d27(options.n);
  } else {
    throw InvalidInput("unknown problem '" + options.problem +
                       "' (valid: poisson2d, poisson3d, poisson3d27)");
  }
  io::write_matrix_market(options.output, A);
  std::cout << "wrote " << options.problem << "(" << options.n << "): " << A.num_rows << " rows, "
            << A.num_entries() << " nonzeros to " << options.output << "\n";
  return 0;
}

}  // namespace kryflow::cli
