// The identity preconditioner and the default fused step of Preconditioner.
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

void Preconditioner::apply_update(const Vector& r, double alpha, double beta, Vector& d, Vector& x,
                                  bool x_is_zero, Vector& z) const {
  apply(r, z);
  axpby(alpha, z, beta, d);
  if (x_is_zero) {
    copy(d, x);
  } else {
    axpby(1.0, d, 1.0, x);
  }
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
