// Backend construction, allocation and cross-backend copies.
#include "kryflow/core/backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <thread>

#include <unistd.h>

#include "kernels/backend/cuda_runtime.hpp"
#include "kryflow/core/error.hpp"

#ifdef KRYFLOW_WITH_OPENMP
#include <omp.h>
#endif
#ifdef __linux__
#include <sched.h>
#endif

namespace kryflow {
namespace {

/// The cores this process may run on: its affinity mask where the system has one (Linux),
/// otherwise std::thread::hardware_concurrency(); at least 1.
int available_cores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

BackendKind parse_backend_kind(const std::string& name) {
  if (name == "reference") return BackendKind::reference;
  if (name == "cpu") return BackendKind::cpu;
  if (name == "cuda") return BackendKind::cuda;
  throw InvalidInput("unknown backend '" + name + "' (valid: reference, cpu, cuda)");
}

const char* to_string(BackendKind kind) {
  switch (kind) {
    case BackendKind::reference:
      return "reference";
    case BackendKind::cpu:
      return "cpu";
    case BackendKind::cuda:
      return "cuda";
  }
  return "?";
}

Backend Backend::reference() {
  return Backend(BackendKind::reference, 1, nullptr);
}

Backend Backend::cpu(int num_threads) {
#ifdef KRYFLOW_WITH_OPENMP
  if (num_threads <= 0) num_threads = omp_get_max_threads();
  // More threads than cores never helps these memory-bound kernels, and on a loaded machine
  // every extra thread is one more to wait for at each barrier (OMP_NUM_THREADS=8 on 2 cores).
  num_threads = std::clamp(num_threads, 1, available_cores());
#else
  num_threads = 1;
#endif
  return Backend(BackendKind::cpu, num_threads, nullptr);
}

Backend Backend::cuda(int device) {
#ifdef KRYFLOW_WITH_CUDA
  return Backend(BackendKind::cuda, 1, kernels::cuda::create_context(device));
#else
  (void)device;
  throw NotCompiled("the cuda backend is not compiled into this build (configure with nvcc)");
#endif
}

Backend Backend::create(BackendKind kind) {
  switch (kind) {
    case BackendKind::reference:
      return reference();
    case BackendKind::cpu:
      return cpu();
    case BackendKind::cuda:
      return cuda();
  }
  throw InvalidInput("unknown backend kind");
}

std::string Backend::name() const {
  switch (kind_) {
    case BackendKind::reference:
      return "reference";
    case BackendKind::cpu:
      return "cpu (" + std::to_string(num_threads_) + " threads)";
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return "cuda:0 (" + kernels::cuda::device_name(*cuda_) + ")";
#else
      return "cuda";
#endif
  }
  return "?";
}

std::string Backend::device_name() const {
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) return kernels::cuda::device_name(*cuda_);
#endif
  return "host CPU";
}

std::size_t Backend::cache_bytes() const {
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) return kernels::cuda::l2_cache_bytes(*cuda_);
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<std::size_t>(l3);
#endif
  return 0;
}

void* Backend::allocate(std::size_t bytes) const {
  if (bytes == 0) return nullptr;
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) return kernels::cuda::allocate(*cuda_, bytes);
#endif
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw OutOfMemory(bytes, 0, "host");
  return p;
}

std::size_t Backend::available_memory() const {
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) return kernels::cuda::available_memory(*cuda_);
#endif
#ifdef __linux__
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      return static_cast<std::size_t>(std::strtoull(line.c_str() + 13, nullptr, 10)) * 1024;
    }
  }
#endif
  return std::numeric_limits<std::size_t>::max();
}

void Backend::deallocate(void* pointer) const noexcept {
  if (pointer == nullptr) return;
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) {
    kernels::cuda::deallocate(*cuda_, pointer);
    return;
  }
#endif
  std::free(pointer);
}

std::uint64_t Backend::host_waits() const noexcept {
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) return kernels::cuda::host_waits(*cuda_);
#endif
  return 0;
}

void Backend::synchronize() const {
#ifdef KRYFLOW_WITH_CUDA
  if (cuda_) kernels::cuda::synchronize(*cuda_);
#endif
}

void copy_bytes(const Backend& dst_backend, void* dst, const Backend& src_backend, const void* src,
                std::size_t bytes) {
  if (bytes == 0) return;
#ifdef KRYFLOW_WITH_CUDA
  kernels::cuda::Context* context = dst_backend.cuda_context();
  if (context == nullptr) context = src_backend.cuda_context();
  if (context != nullptr) {
    kernels::cuda::copy(*context, dst, dst_backend.is_device(), src, src_backend.is_device(),
                        bytes);
    return;
  }
#endif
  (void)dst_backend;
  (void)src_backend;
  std::memcpy(dst, src, bytes);
}

}  // namespace kryflow
