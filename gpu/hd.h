// Marks a function for both the CPU and the GPU: nvcc compiles it as host and device code, a
// plain C++ compiler sees an ordinary inline function. Every stage of the fixed-size step uses it,
// so the code that runs on the GPU is the code the CPU tests check.
#pragma once

#if defined(__CUDACC__)
#define DL_HD __host__ __device__ inline
#else
#define DL_HD inline
#endif
