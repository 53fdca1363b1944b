// Marks a function for both the CPU and the GPU: nvcc compiles it as host and device code, a
// plain C++ compiler sees an ordinary inline function. Every stage of the fixed-size step uses it,
// so the code that runs on the GPU is the code the CPU tests check. Also the one scalar helper that
// the host-and-device stages and sim/spatial.h's Eigen code share (norm2).
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DL_HD __host__ __device__ inline
#else
#define DL_HD inline
#endif

// The VJP's large stages, kept out of line on the host: inlined into their one caller (the VJP
// without the parameters' adjoints), they make the batch VJP 2-5 % slower (diffloco bench). The
// device code is inlined as nvcc chooses.
#if defined(__CUDA_ARCH__)
#define DL_HD_OUTLINE DL_HD
#else
#define DL_HD_OUTLINE DL_HD __attribute__((noinline))
#endif

// The small spatial transforms in RNEA's and CRBA's loops, which the host compiler must inline:
// left to its heuristics, GCC keeps one out of line in a translation unit as large as the step's
// with the closest-point contact, and the VJP pays a call per body (7-9 % of it, gpu_check).
#if defined(__CUDA_ARCH__)
#define DL_HD_INLINE DL_HD
#else
#define DL_HD_INLINE DL_HD __attribute__((always_inline))
#endif

namespace diffloco::sim {

// sqrt(a^2 + b^2) without std::hypot's overflow guards (its cost shows in profiles).
DL_HD double norm2(double a, double b) { return sqrt(a * a + b * b); }

}  // namespace diffloco::sim
