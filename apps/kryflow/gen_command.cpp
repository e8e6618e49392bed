// `kryflow gen`: write a model problem (finite-difference Poisson) as a Matrix Market file.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/generators.hpp"

namespace kryflow::cli {

namespace {

/// `kryflow gen sequence`: A_0000.mtx, b_0000.mtx, ... in options.output (created).
int write_sequence(const GenOptions& options) {
  const std::filesystem::path directory = options.output;
  std::filesystem::create_directories(directory);
  std::int64_t entries = 0;
  for (int k = 0; k < options.steps; ++k) {
    std::vector<double> b;
    const CooMatrix A = drifting_diffusion(options.n, k, options.speed, options.contrast, &b);
    char name[32];
    std::snprintf(name, sizeof name, "%04d.mtx", k);
    io::write_matrix_market(directory / ("A_" + std::string(name)), A);
    io::write_vector(directory / ("b_" + std::string(name)), Span<const double>(b));
    entries = static_cast<std::int64_t>(A.num_entries());
  }
  std::cout << "wrote " << options.steps << " systems of drifting_diffusion(" << options.n
            << ", speed " << options.speed << ", contrast 10^" << options.contrast
            << "): " << static_cast<std::int64_t>(options.n) * options.n * options.n << " rows, "
            << entries << " nonzeros each, to " << directory.string() << "\n";
  return 0;
}

}  // namespace

int run_gen(const GenOptions& options) {
  if (options.problem == "sequence") return write_sequence(options);
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
