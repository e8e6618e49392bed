// CUDA context, stream-ordered memory pool and copies for the cuda Backend.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"

namespace kryflow::kernels::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw BackendError(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                       cudaGetErrorString(status));
  }
}

void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
}

void wait_for_stream(Context& context) {
  ++context.host_waits;
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(context.stream));
}

namespace {

/// The small-block class of a request of `bytes`, or -1 when it is larger than the largest.
int small_block_class(std::size_t bytes) {
  int k = 0;
  while (k < kSmallBlockClasses && (kSmallBlockBytes << k) < bytes) ++k;
  return k < kSmallBlockClasses ? k : -1;
}

/// Gives every free cached block back to the pool (stream-ordered).
void release_cached_blocks(Context& context) {
  std::lock_guard<std::mutex> lock(context.small_blocks.mutex);
  SmallBlockCache& cache = context.small_blocks;
  for (auto& list : cache.free) {
    for (void* block : list) {
      cache.class_of.erase(block);
      cudaFreeAsync(block, context.stream);
    }
    list.clear();
  }
  cache.free_bytes = 0;
}

/// cudaMallocAsync of `bytes`; on failure the cached blocks and the pool's reserve are given
/// back to the driver and it is tried once more. Throws OutOfMemory or BackendError.
void* pool_allocate(Context& context, std::size_t bytes) {
  void* pointer = nullptr;
  cudaError_t status = cudaMallocAsync(&pointer, bytes, context.stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the error so the context stays usable
    // Give cached blocks back and try once more before reporting.
    release_cached_blocks(context);
    cudaStreamSynchronize(context.stream);
    cudaMemPoolTrimTo(context.pool, 0);
    status = cudaMallocAsync(&pointer, bytes, context.stream);
  }
  if (status != cudaSuccess) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_bytes, &total_bytes);
    // A request beyond the device's memory may be refused as an invalid value: still OOM.
    if (status == cudaErrorMemoryAllocation ||
        (status == cudaErrorInvalidValue && bytes > free_bytes)) {
      throw OutOfMemory(bytes, free_bytes, "cuda:" + std::to_string(context.device));
    }
  }
  check(status, "cudaMallocAsync");
  return pointer;
}

}  // namespace

Context::~Context() {
  if (stream != nullptr) {
    for (auto& [block, k] : small_blocks.class_of) cudaFreeAsync(block, stream);
    small_blocks.class_of.clear();
  }
  if (cublas != nullptr) cublasDestroy(cublas);
  if (cusparse != nullptr) cusparseDestroy(cusparse);
  if (cusolver != nullptr) cusolverDnDestroy(cusolver);
  if (stream != nullptr) {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  if (reduction_partials != nullptr) cudaFree(reduction_partials);
  if (reduction_counter != nullptr) cudaFree(reduction_counter);
  if (first_index != nullptr) cudaFree(first_index);
  if (host_results != nullptr) cudaFreeHost(host_results);
  if (staging != nullptr) cudaFreeHost(staging);
}

std::shared_ptr<Context> create_context(int device) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw BackendError("no CUDA device available (" + std::string(cudaGetErrorString(status)) +
                       ")");
  }
  if (device < 0 || device >= count) {
    throw BackendError("CUDA device " + std::to_string(device) + " does not exist (" +
                       std::to_string(count) + " found)");
  }
  auto context = std::make_shared<Context>();
  context->device = device;
  KRYFLOW_CUDA_CHECK(cudaSetDevice(device));
  KRYFLOW_CUDA_CHECK(cudaGetDeviceProperties(&context->properties, device));
  KRYFLOW_CUDA_CHECK(cudaStreamCreateWithFlags(&context->stream, cudaStreamNonBlocking));
  KRYFLOW_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&context->pool, device));
  // Keep freed blocks in the pool instead of returning them to the driver at each sync.
  std::uint64_t threshold = UINT64_MAX;
  KRYFLOW_CUDA_CHECK(
      cudaMemPoolSetAttribute(context->pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  // Reduction buffers: partial sums per block, the block counter (starts at 0 and is reset by
  // the last block of every reduction) and mapped pinned memory the final block writes into.
  KRYFLOW_CUDA_CHECK(cudaMalloc(&context->reduction_partials,
                                sizeof(double) * kMaxReductionValues * kMaxReductionBlocks));
  KRYFLOW_CUDA_CHECK(cudaMalloc(&context->reduction_counter, sizeof(unsigned int)));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(context->reduction_counter, 0, sizeof(unsigned int), context->stream));
  KRYFLOW_CUDA_CHECK(cudaMalloc(&context->first_index, sizeof(unsigned int)));
  KRYFLOW_CUDA_CHECK(cudaHostAlloc(
      &context->host_results, sizeof(double) * (kMaxReductionValues + 1), cudaHostAllocMapped));
  KRYFLOW_CUDA_CHECK(cudaHostGetDevicePointer(
      reinterpret_cast<void**>(&context->host_results_on_device), context->host_results, 0));
  KRYFLOW_CUDA_CHECK(
      cudaHostAlloc(&context->staging, sizeof(double) * kStagingValues, cudaHostAllocDefault));
  return context;
}

std::string device_name(const Context& context) {
  return context.properties.name;
}

std::size_t l2_cache_bytes(const Context& context) {
  return static_cast<std::size_t>(std::max(context.properties.l2CacheSize, 0));
}

// Small blocks come from the context's cache. A setup of a multigrid hierarchy allocates and
// releases hundreds of small arrays (per-row counts, row pointers, scan totals); on the H200's
// host a cudaMallocAsync / cudaFreeAsync pair around a launch took 12.6 us against 3.4 us for
// the launch alone, and the cache took about 0.6 ms off the 6-7 ms AMG setup of the pinned
// OpenFOAM pressure matrix. From the cache a pair costs a lock and a hash lookup.
// Blocks are only used on the context's one stream, so reuse needs no event: work enqueued
// after the block is handed out again runs after the work enqueued before it was released.
void* allocate(Context& context, std::size_t bytes) {
  KRYFLOW_CUDA_CHECK(cudaSetDevice(context.device));
  const int k = context.capturing.load() > 0 ? -1 : small_block_class(bytes);
  if (k < 0) return pool_allocate(context, bytes);
  SmallBlockCache& cache = context.small_blocks;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto& list = cache.free[static_cast<std::size_t>(k)];
    if (!list.empty()) {
      void* block = list.back();
      list.pop_back();
      cache.free_bytes -= kSmallBlockBytes << k;
      return block;
    }
  }
  void* block = pool_allocate(context, kSmallBlockBytes << k);
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.class_of.emplace(block, k);
  return block;
}

void deallocate(Context& context, void* pointer) noexcept {
  cudaSetDevice(context.device);
  SmallBlockCache& cache = context.small_blocks;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    const auto found = cache.class_of.find(pointer);
    if (found != cache.class_of.end()) {
      const std::size_t bytes = kSmallBlockBytes << found->second;
      if (cache.free_bytes + bytes <= kMaxCachedBytes) {
        cache.free[static_cast<std::size_t>(found->second)].push_back(pointer);
        cache.free_bytes += bytes;
        return;
      }
      cache.class_of.erase(found);
    }
  }
  cudaFreeAsync(pointer, context.stream);
}

std::size_t available_memory(Context& context) {
  KRYFLOW_CUDA_CHECK(cudaSetDevice(context.device));
  std::size_t free_bytes = 0, total_bytes = 0;
  KRYFLOW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t reserved = 0, used = 0;
  KRYFLOW_CUDA_CHECK(
      cudaMemPoolGetAttribute(context.pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  KRYFLOW_CUDA_CHECK(cudaMemPoolGetAttribute(context.pool, cudaMemPoolAttrUsedMemCurrent, &used));
  std::size_t cached = 0;
  {
    std::lock_guard<std::mutex> lock(context.small_blocks.mutex);
    cached = context.small_blocks.free_bytes;
  }
  // The cache's free blocks count as used by the pool: give them back as available.
  return free_bytes + static_cast<std::size_t>(reserved > used ? reserved - used : 0) + cached;
}

void synchronize(Context& context) {
  wait_for_stream(context);
}

void read_to_host(Context& context, double* host, const double* device, std::size_t count) {
  for (std::size_t done = 0; done < count; done += kStagingValues) {
    const std::size_t part = std::min(kStagingValues, count - done);
    KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(context.staging, device + done, sizeof(double) * part,
                                       cudaMemcpyDeviceToHost, context.stream));
    wait_for_stream(context);
    std::memcpy(host + done, context.staging, sizeof(double) * part);
  }
}

std::uint64_t host_waits(const Context& context) {
  return context.host_waits;
}

void copy(Context& context, void* dst, bool dst_on_device, const void* src, bool src_on_device,
          std::size_t bytes) {
  cudaMemcpyKind kind = cudaMemcpyDefault;
  if (dst_on_device && src_on_device) kind = cudaMemcpyDeviceToDevice;
  if (dst_on_device && !src_on_device) kind = cudaMemcpyHostToDevice;
  if (!dst_on_device && src_on_device) kind = cudaMemcpyDeviceToHost;
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, context.stream));
  wait_for_stream(context);
}

cublasHandle_t cublas_handle(Context& context) {
  if (context.cublas == nullptr) {
    if (cublasCreate(&context.cublas) != CUBLAS_STATUS_SUCCESS) {
      throw BackendError("cublasCreate failed");
    }
    cublasSetStream(context.cublas, context.stream);
  }
  return context.cublas;
}

cusparseHandle_t cusparse_handle(Context& context) {
  if (context.cusparse == nullptr) {
    if (cusparseCreate(&context.cusparse) != CUSPARSE_STATUS_SUCCESS) {
      throw BackendError("cusparseCreate failed");
    }
    cusparseSetStream(context.cusparse, context.stream);
  }
  return context.cusparse;
}

cusolverDnHandle_t cusolver_handle(Context& context) {
  if (context.cusolver == nullptr) {
    if (cusolverDnCreate(&context.cusolver) != CUSOLVER_STATUS_SUCCESS) {
      context.cusolver = nullptr;
      throw BackendError("cusolverDnCreate failed");
    }
    if (cusolverDnSetStream(context.cusolver, context.stream) != CUSOLVER_STATUS_SUCCESS) {
      throw BackendError("cusolverDnSetStream failed");
    }
  }
  return context.cusolver;
}

}  // namespace kryflow::kernels::cuda
