#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <chrono>
#include <cstdio>
#include <vector>
__global__ void spd(int n, double* a) {
  long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (k < (long long)n * n) {
    int r = k % n, c = k / n;
    a[k] = r == c ? 2.0 * n : 1.0 / (1 + r + c);
  }
}
__global__ void ident(int n, double* a) {
  long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (k < (long long)n * n) {
    int r = k % n, c = k / n;
    a[k] = r == c;
  }
}
int main() {
  cusolverDnHandle_t h;
  cusolverDnCreate(&h);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cusolverDnSetStream(h, s);
  for (int n : {70, 353, 1225, 2000}) {
    double *a, *b, *w;
    int* info;
    cudaMalloc(&a, 8ll * n * n);
    cudaMalloc(&b, 8ll * n * n);
    cudaMalloc(&info, 4);
    int lw = 0, lw2 = 0;
    cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lw);
    cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lw2);
    cudaMalloc(&w, 8ll * (lw > lw2 ? lw : lw2) + 8);
    int blocks = (int)(((long long)n * n + 255) / 256);
    for (int rep = 0; rep < 3; ++rep) {
      spd<<<blocks, 256, 0, s>>>(n, a);
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info);
      cudaStreamSynchronize(s);
      auto t1 = std::chrono::steady_clock::now();
      ident<<<blocks, 256, 0, s>>>(n, b);
      cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, n, a, n, b, n, info);
      cudaStreamSynchronize(s);
      auto t2 = std::chrono::steady_clock::now();
      cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw2, info);
      cudaStreamSynchronize(s);
      auto t3 = std::chrono::steady_clock::now();
      auto us = [](auto x, auto y) {
        return std::chrono::duration<double, std::micro>(y - x).count();
      };
      printf("n %5d potrf %8.1f us  potrs(n rhs) %8.1f us  potri %8.1f us\n", n, us(t0, t1),
             us(t1, t2), us(t2, t3));
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(w);
    cudaFree(info);
  }
}
