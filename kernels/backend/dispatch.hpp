// The shared dispatch helper of the kernel operations: calls the reference, cpu or cuda function
// of the same name and arguments for the backend's kind.
//
//   KRYFLOW_DISPATCH(op, name, backend, args...)       cuda calls cuda::name, or throws
//                                                       NotCompiled in a build without CUDA
//   KRYFLOW_DISPATCH_HOST(op, name, backend, args...)  for operations whose cuda kernel does
//                                                       not exist yet: cuda throws NotSupported
//                                                       saying so
//
// `op` is the operation's folder name, for messages ("amg", "sparse_setup"). Used inside the
// operation's namespace, where reference::, cpu:: and cuda:: resolve.
#pragma once

#include "kryflow/core/backend.hpp"
#include "kryflow/core/error.hpp"

#ifdef KRYFLOW_WITH_CUDA
#define KRYFLOW_DISPATCH_CUDA_CASE(op, name, ...) return cuda::name(__VA_ARGS__);
#else
#define KRYFLOW_DISPATCH_CUDA_CASE(op, name, ...) \
  throw NotCompiled(#op "::" #name ": cuda backend not compiled");
#endif
#define KRYFLOW_DISPATCH_NO_CUDA_CASE(op, name, ...) \
  throw NotSupported(#op "::" #name " has no cuda kernel yet: use the cpu or reference backend");

/// The switch both forms share; `cuda_case` is one of the two macros above.
#define KRYFLOW_DISPATCH_WITH(cuda_case, op, name, backend, ...) \
  switch ((backend).kind()) {                                    \
    case BackendKind::reference:                                 \
      return reference::name(backend, __VA_ARGS__);              \
    case BackendKind::cpu:                                       \
      return cpu::name(backend, __VA_ARGS__);                    \
    case BackendKind::cuda:                                      \
      cuda_case(op, name, backend, __VA_ARGS__)                  \
  }                                                              \
  throw NotSupported(#op "::" #name ": unknown backend")

#define KRYFLOW_DISPATCH(op, name, backend, ...) \
  KRYFLOW_DISPATCH_WITH(KRYFLOW_DISPATCH_CUDA_CASE, op, name, backend, __VA_ARGS__)

#define KRYFLOW_DISPATCH_HOST(op, name, backend, ...) \
  KRYFLOW_DISPATCH_WITH(KRYFLOW_DISPATCH_NO_CUDA_CASE, op, name, backend, __VA_ARGS__)
