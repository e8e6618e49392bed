// Where memory lives and kernels run: the reference oracle, OpenMP on the host, or one CUDA device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kryflow {

namespace kernels::cuda {
struct Context;
}

enum class BackendKind { reference, cpu, cuda };

/// Parses "reference", "cpu" or "cuda"; throws InvalidInput on anything else.
BackendKind parse_backend_kind(const std::string& name);
const char* to_string(BackendKind kind);

/// A backend handle. Cheap to copy: copies share one execution context (for CUDA: the device,
/// its stream, the lazily created cuBLAS/cuSPARSE handles and the stream-ordered memory pool).
/// Passed as `const Backend&`; never global.
class Backend {
 public:
  /// The single-threaded oracle every other backend is tested against.
  static Backend reference();
  /// OpenMP on the host; `num_threads` 0 means the OpenMP default (OMP_NUM_THREADS). Never more
  /// threads than the cores the process may run on (its affinity mask), whatever is asked; each
  /// region takes fewer when its work is small (kernels/backend/parallel.hpp, decision 004).
  static Backend cpu(int num_threads = 0);
  /// CUDA device `device`. Throws NotCompiled without CUDA support and BackendError when the
  /// device cannot be opened.
  static Backend cuda(int device = 0);
  /// One of the above by kind.
  static Backend create(BackendKind kind);

  BackendKind kind() const noexcept { return kind_; }
  bool is_device() const noexcept { return kind_ == BackendKind::cuda; }
  int num_threads() const noexcept { return num_threads_; }
  /// "reference", "cpu (16 threads)" or "cuda:0 (NVIDIA H100 80GB HBM3)".
  std::string name() const;
  /// The device's name for cuda, the host's description otherwise.
  std::string device_name() const;

  /// Allocates `bytes` on this backend, 64-byte aligned on the host; null for 0 bytes. Throws
  /// OutOfMemory with the bytes requested and free (free is reported as 0 on the host, where
  /// it is not known). Release with deallocate on the same backend.
  void* allocate(std::size_t bytes) const;
  /// Bytes this backend can still allocate, about: on cuda the device's free memory
  /// (cudaMemGetInfo) plus what the stream-ordered pool holds unused; on the host the
  /// operating system's available memory (MemAvailable of /proc/meminfo on Linux), or
  /// SIZE_MAX where it is not known. For estimates before a large setup (AmgPreconditioner);
  /// an allocation may still fail.
  std::size_t available_memory() const;
  /// The last-level cache that repeated passes over a small working set hit, in bytes: the L2
  /// of the device on cuda (cudaDeviceProp::l2CacheSize), the L3 of the host otherwise
  /// (sysconf(_SC_LEVEL3_CACHE_SIZE)); 0 when unknown. Benchmarks size their inputs beyond it.
  std::size_t cache_bytes() const;
  /// Frees memory from allocate on this backend; null is ignored.
  void deallocate(void* pointer) const noexcept;
  /// Waits until all work queued on this backend has finished (a no-op on the host). Throws
  /// BackendError when queued device work failed.
  void synchronize() const;

  /// How many times the host has waited for this backend's device work so far (stream
  /// synchronizations, synchronous copies and scalar reads); always 0 on the host backends,
  /// whose work is done when a call returns. Copies of a Backend share the count.
  std::uint64_t host_waits() const noexcept;

  /// The CUDA context; null for host backends. Only kernels/ code dereferences it.
  kernels::cuda::Context* cuda_context() const noexcept { return cuda_.get(); }

  bool operator==(const Backend& other) const noexcept {
    return kind_ == other.kind_ && cuda_ == other.cuda_;
  }

 private:
  Backend(BackendKind kind, int num_threads, std::shared_ptr<kernels::cuda::Context> cuda)
      : kind_(kind), num_threads_(num_threads), cuda_(std::move(cuda)) {}
  BackendKind kind_ = BackendKind::reference;
  int num_threads_ = 1;
  std::shared_ptr<kernels::cuda::Context> cuda_;
};

/// Copies `bytes` from `src` (memory of `src_backend`) to `dst` (memory of `dst_backend`); the
/// ranges must not overlap. Returns when the data has arrived. Throws BackendError when a
/// device copy fails.
void copy_bytes(const Backend& dst_backend, void* dst, const Backend& src_backend, const void* src,
                std::size_t bytes);

}  // namespace kryflow
