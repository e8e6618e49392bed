// kryflow/version.hpp.
#include "kryflow/version.hpp"

namespace kryflow {

const char* version() noexcept {
  return KRYFLOW_VERSION;
}

bool built_with_cuda() noexcept {
#ifdef KRYFLOW_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace kryflow
