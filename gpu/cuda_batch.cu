#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "gpu/cuda_batch.h"
#include "gpu/fixed_step.h"

namespace diffloco::gpu {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// One thread per world; the state is structure-of-arrays (entry k of world w at k * n + w) so that
// a warp's loads and stores of one entry are contiguous.
__device__ __forceinline__ void stepWorld(const FixedModel& model, const FixedOptions& opt,
                                          const HeightFieldView& field, int n,
                                          const double* __restrict__ q,
                                          const double* __restrict__ v,
                                          const double* __restrict__ target,
                                          double* __restrict__ qn, double* __restrict__ vn,
                                          int* __restrict__ failed) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= n) return;
  double ql[NQ], vl[NV], tl[NJ], qo[NQ], vo[NV];
  for (int k = 0; k < NQ; ++k) ql[k] = q[k * n + w];
  for (int k = 0; k < NV; ++k) vl[k] = v[k * n + w];
  for (int k = 0; k < NJ; ++k) tl[k] = target[k * n + w];
  failed[w] = !fixedStep(model, opt, field, ql, vl, tl, qo, vo);
  for (int k = 0; k < NQ; ++k) qn[k * n + w] = qo[k];
  for (int k = 0; k < NV; ++k) vn[k * n + w] = vo[k];
}

#define DL_STEP_ARGS                                                                       \
  const __grid_constant__ FixedModel model, const FixedOptions opt,                       \
      const HeightFieldView field, int n, const double *__restrict__ q,                   \
      const double *__restrict__ v, const double *__restrict__ target,                    \
      double *__restrict__ qn, double *__restrict__ vn, int *__restrict__ failed

// The same kernel with the compiler free to use 255 registers, or capped (by launch bounds) at
// 128 and 64 registers: what register pressure costs against occupancy.
__global__ void stepKernel(DL_STEP_ARGS) { stepWorld(model, opt, field, n, q, v, target, qn, vn, failed); }
__global__ void __launch_bounds__(128, 4) stepKernel128(DL_STEP_ARGS) {
  stepWorld(model, opt, field, n, q, v, target, qn, vn, failed);
}
__global__ void __launch_bounds__(128, 8) stepKernel64(DL_STEP_ARGS) {
  stepWorld(model, opt, field, n, q, v, target, qn, vn, failed);
}

}  // namespace

std::string cudaDeviceName() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return "";
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  return prop.name;
}

CudaBatch::CudaBatch(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& field,
                     int worlds, int threadsPerBlock)
    : model_(model), opt_(opt), field_(field), n_(worlds), threads_(threadsPerBlock) {
  const size_t n = static_cast<size_t>(worlds);
  check(cudaMalloc(&q_, n * NQ * sizeof(double)), "cudaMalloc q");
  check(cudaMalloc(&qn_, n * NQ * sizeof(double)), "cudaMalloc qn");
  check(cudaMalloc(&v_, n * NV * sizeof(double)), "cudaMalloc v");
  check(cudaMalloc(&vn_, n * NV * sizeof(double)), "cudaMalloc vn");
  check(cudaMalloc(&target_, n * NJ * sizeof(double)), "cudaMalloc target");
  check(cudaMalloc(&failed_, n * sizeof(int)), "cudaMalloc failed");
  if (field.heights) {
    const size_t count = static_cast<size_t>(field.nx) * field.ny;
    check(cudaMalloc(&heights_, count * sizeof(double)), "cudaMalloc heights");
    check(cudaMemcpy(heights_, field.heights, count * sizeof(double), cudaMemcpyHostToDevice),
          "copy heights");
    field_.heights = heights_;
  }
}

CudaBatch::~CudaBatch() {
  for (void* p : {static_cast<void*>(q_), static_cast<void*>(qn_), static_cast<void*>(v_),
                  static_cast<void*>(vn_), static_cast<void*>(target_),
                  static_cast<void*>(heights_), static_cast<void*>(failed_)})
    if (p) cudaFree(p);
}

namespace {

// World-major host rows <-> entry-major device columns.
void toDevice(double* dst, const double* src, int n, int per) {
  std::vector<double> t(static_cast<size_t>(n) * per);
  for (int w = 0; w < n; ++w)
    for (int k = 0; k < per; ++k) t[static_cast<size_t>(k) * n + w] = src[static_cast<size_t>(w) * per + k];
  check(cudaMemcpy(dst, t.data(), t.size() * sizeof(double), cudaMemcpyHostToDevice), "upload");
}

void toHost(double* dst, const double* src, int n, int per) {
  std::vector<double> t(static_cast<size_t>(n) * per);
  check(cudaMemcpy(t.data(), src, t.size() * sizeof(double), cudaMemcpyDeviceToHost), "download");
  for (int w = 0; w < n; ++w)
    for (int k = 0; k < per; ++k) dst[static_cast<size_t>(w) * per + k] = t[static_cast<size_t>(k) * n + w];
}

}  // namespace

void CudaBatch::upload(const double* q, const double* v, const double* target) {
  toDevice(q_, q, n_, NQ);
  toDevice(v_, v, n_, NV);
  toDevice(target_, target, n_, NJ);
}

void CudaBatch::download(double* q, double* v) const {
  toHost(q, q_, n_, NQ);
  toHost(v, v_, n_, NV);
}

void CudaBatch::launch() {
  const int blocks = (n_ + threads_ - 1) / threads_;
  if (regCap_ == 128)
    stepKernel128<<<blocks, threads_>>>(model_, opt_, field_, n_, q_, v_, target_, qn_, vn_, failed_);
  else if (regCap_ == 64)
    stepKernel64<<<blocks, threads_>>>(model_, opt_, field_, n_, q_, v_, target_, qn_, vn_, failed_);
  else
    stepKernel<<<blocks, threads_>>>(model_, opt_, field_, n_, q_, v_, target_, qn_, vn_, failed_);
  std::swap(q_, qn_);
  std::swap(v_, vn_);
}

int CudaBatch::step(int steps) {
  for (int s = 0; s < steps; ++s) launch();
  check(cudaGetLastError(), "step launch");
  check(cudaDeviceSynchronize(), "step");
  std::vector<int> f(n_);
  check(cudaMemcpy(f.data(), failed_, n_ * sizeof(int), cudaMemcpyDeviceToHost), "failed flags");
  int bad = 0;
  for (int x : f) bad += x != 0;
  return bad;
}

double CudaBatch::timeSteps(int steps) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaDeviceSynchronize(), "before timing");
  check(cudaEventRecord(start), "record");
  for (int s = 0; s < steps; ++s) launch();
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "timing");
  check(cudaGetLastError(), "timed launches");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

}  // namespace diffloco::gpu
