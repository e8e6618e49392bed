// The one dispatch helper of the fused Krylov kernels (kernels/krylov/<solver>): calls the
// reference, cpu or cuda function of the same name and arguments for the backend's kind.
#pragma once

#include "kryflow/core/backend.hpp"
#include "kryflow/core/error.hpp"

#ifdef KRYFLOW_WITH_CUDA
#define KRYFLOW_KRYLOV_CUDA_CASE(name, ...) return cuda::name(__VA_ARGS__);
#else
#define KRYFLOW_KRYLOV_CUDA_CASE(name, ...) \
  throw NotCompiled("krylov::" #name ": cuda backend not compiled");
#endif

#define KRYFLOW_KRYLOV_DISPATCH(name, backend, ...)        \
  switch ((backend).kind()) {                              \
    case BackendKind::reference:                           \
      return reference::name(backend, __VA_ARGS__);        \
    case BackendKind::cpu:                                 \
      return cpu::name(backend, __VA_ARGS__);              \
    case BackendKind::cuda:                                \
      KRYFLOW_KRYLOV_CUDA_CASE(name, backend, __VA_ARGS__) \
  }                                                        \
  throw NotSupported("krylov::" #name ": unknown backend")
