// Host copies of device-resident scalars that the host waits for only when it reads them.
#pragma once

#include <cstddef>
#include <memory>

#include "kryflow/core/backend.hpp"

namespace kryflow::kernels {

/// `count` doubles of host memory (pinned on cuda) that receive copies of device scalars queued
/// on the backend's stream: copy_async() returns at once, so the device can go on with queued
/// work while the host later waits for this copy alone (wait()), not for everything queued after
/// it. On the host backends the copy happens at once and wait() returns at once.
class HostMirror {
 public:
  HostMirror() = default;
  /// Throws OutOfMemory or BackendError when the pinned buffer or its event cannot be created.
  HostMirror(const Backend& backend, std::size_t count);
  ~HostMirror();
  HostMirror(const HostMirror&) = delete;
  HostMirror& operator=(const HostMirror&) = delete;
  HostMirror(HostMirror&&) noexcept;
  HostMirror& operator=(HostMirror&&) noexcept;

  /// Queues host[0..count) = device[0..count) (count <= size()) after the work queued so far.
  void copy_async(const double* device, std::size_t count);
  /// Waits until the last copy_async has arrived (on cuda one counted host wait, see
  /// Backend::host_waits), then returns the host values.
  const double* wait();
  std::size_t size() const noexcept { return count_; }

 private:
  Backend backend_ = Backend::reference();
  std::size_t count_ = 0;
  double* host_ = nullptr;
  void* event_ = nullptr;
};

namespace cuda {
/// The cuda side of HostMirror (kernels/backend/host_mirror_cuda.cu).
double* allocate_pinned(const Backend& backend, std::size_t count, void** event);
void free_pinned(double* host, void* event) noexcept;
void copy_to_pinned_async(const Backend& backend, double* host, const double* device,
                          std::size_t count, void* event);
void wait_for_event(const Backend& backend, void* event);
}  // namespace cuda

}  // namespace kryflow::kernels
