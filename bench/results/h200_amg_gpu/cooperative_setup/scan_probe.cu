// scan variants: time per launch (500 back-to-back launches) for one-block scans
#include <cuda_runtime.h>
#include <cstdio>
#include <cub/block/block_scan.cuh>
#include <functional>
#include <vector>
typedef int index_t;
__device__ __forceinline__ int staged_slot(int i) {
  return i + i / 32;
}
template <int T, int I, cub::BlockScanAlgorithm ALG, class Item = long long>
__global__ void __launch_bounds__(T)
    scan_k(const index_t* counts, long long n, index_t* offsets, unsigned long long* total) {
  constexpr int kTile = T * I;
  using Scan = cub::BlockScan<Item, T, ALG>;
  __shared__ typename Scan::TempStorage storage;
  __shared__ index_t staged[kTile + kTile / 32];
  __shared__ long long carry;
  if (threadIdx.x == 0) {
    carry = 0;
    offsets[0] = 0;
  }
  for (long long base = 0; base < n; base += kTile) {
#pragma unroll
    for (int k = 0; k < I; ++k) {
      const int i = k * T + threadIdx.x;
      staged[staged_slot(i)] = base + i < n ? counts[base + i] : 0;
    }
    __syncthreads();
    Item items[I];
    const int first = threadIdx.x * I;
#pragma unroll
    for (int k = 0; k < I; ++k) items[k] = staged[staged_slot(first + k)];
    Item tile_total = 0;
    Scan(storage).InclusiveSum(items, items, tile_total);
    const long long prefix = carry;
#pragma unroll
    for (int k = 0; k < I; ++k) staged[staged_slot(first + k)] = (index_t)(prefix + items[k]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < I; ++k) {
      const int i = k * T + threadIdx.x;
      if (base + i < n) offsets[base + i + 1] = staged[staged_slot(i)];
    }
    if (threadIdx.x == 0) carry = prefix + tile_total;
    __syncthreads();
  }
  if (threadIdx.x == 0 && total) *total = carry;
}
template <class F>
float timeit(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 20; ++i) f();
  cudaEventRecord(a);
  for (int i = 0; i < 500; ++i) f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  return ms * 1000 / 500;
}
// latency: launch + wait each time (host measured)
#include <chrono>
template <class F>
double waited(F f) {
  for (int i = 0; i < 20; ++i) {
    f();
    cudaDeviceSynchronize();
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 300; ++i) {
    f();
    cudaDeviceSynchronize();
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         300;
}
int main() {
  long long sizes[] = {300, 2000, 8000, 23325, 32000};
  index_t *c, *o;
  unsigned long long* t;
  cudaMalloc(&c, 40000 * 4);
  cudaMalloc(&o, 40001 * 4);
  cudaMalloc(&t, 8);
  std::vector<index_t> h(40000);
  for (int i = 0; i < 40000; ++i) h[i] = (i * 7919) % 13;
  cudaMemcpy(c, h.data(), 40000 * 4, cudaMemcpyHostToDevice);
  std::vector<index_t> ref(40001), got(40001);
  printf("%8s %10s %10s %10s %10s %10s %10s | waited: %8s %8s %8s\n", "n", "1024x8 R", "1024x8 WS",
         "512x8 WS", "256x8 WS", "256x4 WS", "512x8 int", "1024x8R", "256x8WS", "512x8i");
  for (long long n : sizes) {
    auto v0 = [&] { scan_k<1024, 8, cub::BLOCK_SCAN_RAKING><<<1, 1024>>>(c, n, o, t); };
    auto v1 = [&] { scan_k<1024, 8, cub::BLOCK_SCAN_WARP_SCANS><<<1, 1024>>>(c, n, o, t); };
    auto v2 = [&] { scan_k<512, 8, cub::BLOCK_SCAN_WARP_SCANS><<<1, 512>>>(c, n, o, t); };
    auto v3 = [&] { scan_k<256, 8, cub::BLOCK_SCAN_WARP_SCANS><<<1, 256>>>(c, n, o, t); };
    auto v4 = [&] { scan_k<256, 4, cub::BLOCK_SCAN_WARP_SCANS><<<1, 256>>>(c, n, o, t); };
    auto v5 = [&] { scan_k<512, 8, cub::BLOCK_SCAN_WARP_SCANS, int><<<1, 512>>>(c, n, o, t); };
    v0();
    cudaMemcpy(ref.data(), o, (n + 1) * 4, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (auto f : {std::function<void()>(v1), std::function<void()>(v2), std::function<void()>(v3),
                   std::function<void()>(v4), std::function<void()>(v5)}) {
      f();
      cudaMemcpy(got.data(), o, (n + 1) * 4, cudaMemcpyDeviceToHost);
      for (long long i = 0; i <= n; ++i) bad += got[i] != ref[i];
    }
    printf("%8lld %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f | %8.2f %8.2f %8.2f  bad=%d\n", n,
           timeit(v0), timeit(v1), timeit(v2), timeit(v3), timeit(v4), timeit(v5), waited(v0),
           waited(v3), waited(v5), bad);
  }
}
