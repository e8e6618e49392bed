// The inverse of an n x n SPD matrix by cuSOLVER / cuBLAS on the H200, each step timed on the
// host around a stream synchronization (three repetitions, the first cold): potrf, then from
// the factor potrs on the n columns of I, potri, trtri + syrk, and one trsm on the n columns.
//   nvcc -O2 -arch=sm_90 -o dense_probe dense_probe.cu -lcusolver -lcublas
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
  cublasHandle_t bh;
  cublasCreate(&bh);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cusolverDnSetStream(h, s);
  cublasSetStream(bh, s);
  const double one = 1.0, zero = 0.0;
  for (int n : {70, 353, 1225, 2000}) {
    double *a, *b, *c, *d, *w;
    int* info;
    cudaMalloc(&a, 8ll * n * n);
    cudaMalloc(&b, 8ll * n * n);
    cudaMalloc(&c, 8ll * n * n);
    cudaMalloc(&d, 8ll * n * n);
    cudaMalloc(&info, 4);
    int lw = 0, lw_inverse = 0;
    cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lw);
    cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lw_inverse);
    size_t dws = 0, hws = 0;
    cusolverDnXtrtri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, CUDA_R_64F, a,
                                n, &dws, &hws);
    const int lw_max = lw > lw_inverse ? lw : lw_inverse;
    cudaMalloc(&w, 8ll * lw_max + dws + 8);
    std::vector<char> hw(hws + 8);
    int blocks = (int)(((long long)n * n + 255) / 256);
    auto us = [](auto x, auto y) {
      return std::chrono::duration<double, std::micro>(y - x).count();
    };
    for (int rep = 0; rep < 3; ++rep) {
      spd<<<blocks, 256, 0, s>>>(n, a);
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info);
      cudaStreamSynchronize(s);
      auto t1 = std::chrono::steady_clock::now();
      cudaMemcpyAsync(c, a, 8ll * n * n, cudaMemcpyDeviceToDevice, s);
      cudaMemcpyAsync(d, a, 8ll * n * n, cudaMemcpyDeviceToDevice, s);
      ident<<<blocks, 256, 0, s>>>(n, b);
      cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, n, a, n, b, n, info);
      cudaStreamSynchronize(s);
      auto t2 = std::chrono::steady_clock::now();
      cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, d, n, w, lw_max, info);
      cudaStreamSynchronize(s);
      auto t3 = std::chrono::steady_clock::now();
      cusolverDnXtrtri(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, CUDA_R_64F, c, n, w, dws,
                       hw.data(), hws, info);
      cublasDsyrk(bh, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, n, &one, c, n, &zero, d, n);
      cudaStreamSynchronize(s);
      auto t4 = std::chrono::steady_clock::now();
      ident<<<blocks, 256, 0, s>>>(n, b);
      cublasDtrsm(bh, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                  n, n, &one, c, n, b, n);
      cudaStreamSynchronize(s);
      auto t5 = std::chrono::steady_clock::now();
      printf(
          "n %5d potrf %8.1f  potrs(n rhs) %8.1f  potri %8.1f  trtri+syrk %8.1f  trsm(n rhs) %8.1f "
          "us\n",
          n, us(t0, t1), us(t1, t2), us(t2, t3), us(t3, t4), us(t4, t5));
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(d);
    cudaFree(w);
    cudaFree(info);
  }
}
