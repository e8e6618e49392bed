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

Context::~Context() {
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

void* allocate(Context& context, std::size_t bytes) {
  KRYFLOW_CUDA_CHECK(cudaSetDevice(context.device));
  void* pointer = nullptr;
  cudaError_t status = cudaMallocAsync(&pointer, bytes, context.stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the error so the context stays usable
    // Give cached pool blocks back and try once more before reporting.
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

void deallocate(Context& context, void* pointer) noexcept {
  cudaSetDevice(context.device);
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
  return free_bytes + static_cast<std::size_t>(reserved > used ? reserved - used : 0);
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
