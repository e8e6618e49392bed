// KRYFLOW_HOST_DEVICE marks a function that host code and CUDA kernels share (one definition of
// the math): __host__ __device__ when compiled by nvcc, nothing otherwise.
#pragma once

#ifndef KRYFLOW_HOST_DEVICE
#ifdef __CUDACC__
#define KRYFLOW_HOST_DEVICE __host__ __device__
#else
#define KRYFLOW_HOST_DEVICE
#endif
#endif
