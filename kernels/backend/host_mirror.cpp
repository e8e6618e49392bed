// HostMirror on every backend: plain memory and immediate copies on the host; pinned memory,
// asynchronous copies and an event on cuda.
#include "kernels/backend/host_mirror.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "kryflow/core/error.hpp"

namespace kryflow::kernels {

HostMirror::HostMirror(const Backend& backend, std::size_t count)
    : backend_(backend), count_(count) {
  if (backend_.is_device()) {
#ifdef KRYFLOW_WITH_CUDA
    host_ = cuda::allocate_pinned(backend_, std::max<std::size_t>(count_, 1), &event_);
#else
    throw NotCompiled("HostMirror: cuda backend not compiled");
#endif
  } else {
    host_ = static_cast<double*>(std::calloc(std::max<std::size_t>(count_, 1), sizeof(double)));
    if (host_ == nullptr) throw OutOfMemory(count_ * sizeof(double), 0, "host");
  }
}

HostMirror::~HostMirror() {
  if (host_ == nullptr) return;
#ifdef KRYFLOW_WITH_CUDA
  if (event_ != nullptr) {
    cuda::free_pinned(host_, event_);
    return;
  }
#endif
  std::free(host_);
}

HostMirror::HostMirror(HostMirror&& other) noexcept
    : backend_(std::move(other.backend_)),
      count_(std::exchange(other.count_, 0)),
      host_(std::exchange(other.host_, nullptr)),
      event_(std::exchange(other.event_, nullptr)) {}

HostMirror& HostMirror::operator=(HostMirror&& other) noexcept {
  if (this != &other) {
    HostMirror old(std::move(*this));
    backend_ = std::move(other.backend_);
    count_ = std::exchange(other.count_, 0);
    host_ = std::exchange(other.host_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void HostMirror::copy_async(const double* device, std::size_t count) {
  if (count > count_) throw InvalidInput("HostMirror::copy_async: more values than the mirror");
  if (event_ != nullptr) {
#ifdef KRYFLOW_WITH_CUDA
    cuda::copy_to_pinned_async(backend_, host_, device, count, event_);
#endif
    return;
  }
  std::copy(device, device + count, host_);
}

const double* HostMirror::wait() {
#ifdef KRYFLOW_WITH_CUDA
  if (event_ != nullptr) cuda::wait_for_event(backend_, event_);
#endif
  return host_;
}

}  // namespace kryflow::kernels
