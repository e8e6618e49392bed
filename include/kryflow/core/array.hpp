// Owning, move-only buffers that live on one backend, and the spans kernels receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kryflow/core/backend.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {

/// Index type of sparse structures (row pointers, column indices): 32-bit signed.
using index_t = std::int32_t;

/// Non-owning view of contiguous elements on some backend. Dereference only on that backend.
template <class T>
using Span = std::span<T>;

/// A move-only buffer of `size()` elements of T on one backend. Copies are explicit (`copy_to`).
/// Contents are uninitialised after construction with a size. A default-constructed or
/// moved-from Array is empty (size 0, data() null); assign to it or destroy it. Transfers
/// between backends (from_host, copy_to, to_host, assign_from_host) return when the data has
/// arrived and may throw BackendError on cuda.
template <class T>
class Array {
 public:
  Array() = default;
  /// `size` uninitialised elements on `backend` (no allocation when size is 0). Throws
  /// OutOfMemory when they do not fit.
  Array(const Backend& backend, std::size_t size) : backend_(backend), size_(size) {
    if (size_ > 0) data_ = static_cast<T*>(backend_.allocate(size_ * sizeof(T)));
  }
  /// A copy of host data on `backend`. Throws OutOfMemory when it does not fit.
  static Array from_host(const Backend& backend, Span<const T> host) {
    Array a(backend, host.size());
    if (!host.empty()) copy_bytes(backend, a.data_, Backend::reference(), host.data(), a.bytes());
    return a;
  }
  static Array from_host(const Backend& backend, const std::vector<T>& host) {
    return from_host(backend, Span<const T>(host.data(), host.size()));
  }
  ~Array() { release(); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  Array(Array&& other) noexcept
      : backend_(std::move(other.backend_)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  Array& operator=(Array&& other) noexcept {
    if (this != &other) {
      release();
      backend_ = std::move(other.backend_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  /// A deep copy on `target` (which may be this array's backend). Throws OutOfMemory.
  Array copy_to(const Backend& target) const {
    Array a(target, size_);
    if (size_ > 0) copy_bytes(target, a.data_, backend_, data_, bytes());
    return a;
  }
  /// The contents, copied to the host.
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (size_ > 0) copy_bytes(Backend::reference(), host.data(), backend_, data_, bytes());
    return host;
  }
  /// Overwrites the contents from host data of the same length; throws DimensionMismatch (and
  /// changes nothing) for another length.
  void assign_from_host(Span<const T> host) {
    if (host.size() != size_) {
      throw DimensionMismatch("Array::assign_from_host: expected " + std::to_string(size_) +
                              " elements, got " + std::to_string(host.size()));
    }
    if (size_ > 0) copy_bytes(backend_, data_, Backend::reference(), host.data(), bytes());
  }

  const Backend& backend() const noexcept { return backend_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  Span<T> span() noexcept { return {data_, size_}; }
  Span<const T> span() const noexcept { return {data_, size_}; }

 private:
  void release() noexcept {
    if (data_ != nullptr) backend_.deallocate(data_);
    data_ = nullptr;
    size_ = 0;
  }
  Backend backend_ = Backend::reference();
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kryflow
