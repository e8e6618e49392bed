// The identity preconditioner.
#include "kryflow/preconditioners/preconditioner.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow {

std::unique_ptr<HostFactorization> Preconditioner::factor_on_host(const HostCsrMatrix&,
                                                                  std::stop_token) const {
  throw NotSupported("preconditioner " + name() + " has no host factorization");
}

void Preconditioner::install(std::unique_ptr<HostFactorization>, const Backend&) {
  throw NotSupported("preconditioner " + name() + " has no host factorization");
}

void IdentityPreconditioner::setup(const LinearOperator& A) {
  n_ = A.num_rows();
  backend_ = A.backend();
}

void IdentityPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "IdentityPreconditioner::apply");
  copy(r, z);
}

}  // namespace kryflow
