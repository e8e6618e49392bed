// The identity preconditioner.
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

void IdentityPreconditioner::setup(const LinearOperator& A) {
  n_ = A.num_rows();
  backend_ = A.backend();
}

void IdentityPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "IdentityPreconditioner::apply");
  copy(r, z);
}

}  // namespace kryflow
