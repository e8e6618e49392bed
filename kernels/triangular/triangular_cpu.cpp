// cpu sparse triangular solve: the reference's sequential loop (each row needs the rows before
// it in solve order; the level-scheduled solves of IlutPreconditioner are the parallel form).
#include "kernels/triangular/triangular.hpp"

namespace kryflow::kernels::triangular::cpu {

void solve(const Backend& backend, const FactorView& factor, bool lower,
           const double* inverse_diagonal, const double* b, double* x, unsigned int* ready) {
  reference::solve(backend, factor, lower, inverse_diagonal, b, x, ready);
}

}  // namespace kryflow::kernels::triangular::cpu
