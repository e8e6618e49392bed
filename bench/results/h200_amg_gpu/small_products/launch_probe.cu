#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
__global__ void tiny(int* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1;
}
__global__ void small(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
int main() {
  int* d;
  cudaMalloc(&d, 1 << 24);
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int w = 0; w < 3; ++w) {
    for (int kind = 0; kind < 3; ++kind) {
      int N = 1000;
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < N; ++i) {
        if (kind == 0)
          tiny<<<1, 32, 0, s>>>(d);
        else if (kind == 1)
          small<<<92, 256, 0, s>>>(d, 23325);
        else {
          small<<<92, 256, 0, s>>>(d, 23325);
          if (i % 10 == 9) {
            int h;
            cudaMemcpyAsync(&h, d, 4, cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
          }
        }
      }
      cudaStreamSynchronize(s);
      auto t1 = std::chrono::steady_clock::now();
      double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / N;
      printf("kind %d: %.2f us per launch%s\n", kind, us, kind == 2 ? " (a wait per 10)" : "");
    }
  }
  // one wait cost
  cudaStreamSynchronize(s);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    small<<<92, 256, 0, s>>>(d, 23325);
    int h;
    cudaMemcpyAsync(&h, d, 4, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
  }
  auto t1 = std::chrono::steady_clock::now();
  printf("launch+readback+wait: %.2f us\n",
         std::chrono::duration<double, std::micro>(t1 - t0).count() / 1000);
  // malloc async
  cudaMemPool_t pool;
  cudaDeviceGetDefaultMemPool(&pool, 0);
  uint64_t thr = UINT64_MAX;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    void* p;
    cudaMallocAsync(&p, 100000, s);
    small<<<92, 256, 0, s>>>(d, 23325);
    cudaFreeAsync(p, s);
  }
  cudaStreamSynchronize(s);
  t1 = std::chrono::steady_clock::now();
  printf("mallocAsync+launch+freeAsync: %.2f us\n",
         std::chrono::duration<double, std::micro>(t1 - t0).count() / 1000);
}
