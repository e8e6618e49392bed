// The version of the kryflow library and what this build of it holds.
#pragma once

namespace kryflow {

/// The library's version, "MAJOR.MINOR.PATCH" (the CMake project version).
const char* version() noexcept;

/// Whether this build holds the cuda backend (KRYFLOW_WITH_CUDA); a device may still be absent
/// at run time (Backend::cuda then throws BackendError).
bool built_with_cuda() noexcept;

}  // namespace kryflow
