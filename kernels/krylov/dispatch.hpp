// The dispatch of the fused Krylov kernels (kernels/krylov/<solver>): the shared helper of
// kernels/backend/dispatch.hpp with "krylov" in its messages.
#pragma once

#include "kernels/backend/dispatch.hpp"

#define KRYFLOW_KRYLOV_DISPATCH(name, backend, ...) \
  KRYFLOW_DISPATCH(krylov, name, backend, __VA_ARGS__)
