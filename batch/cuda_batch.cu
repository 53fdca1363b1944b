#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "batch/cuda_batch.h"
#include "sim/soft_step_vjp.h"

namespace diffloco::batch {

using sim::FixedAdjoint;
using sim::fixedSoftStepVjp;
using sim::FixedSoftTape;
using sim::fixedStep;
using sim::fixedStepRecord;
using sim::fixedStepVjp;
using sim::FixedTape;
using sim::setZero;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// Per-world randomisation (CudaBatch::setWorldParams), each null when the batch has none: the
// friction coefficient, the drive's strength (kp and kd scaled, as batch::BatchSim does) and a
// whole model per world (an added base mass).
struct WorldParams {
  const double* mu;
  const double* strength;
  const FixedModel* models;
};

__device__ __forceinline__ FixedOptions worldOptions(FixedOptions o, const WorldParams& p, int w) {
  if (p.mu) o.mu = p.mu[w];
  if (p.strength) {
    o.kp *= p.strength[w];
    o.kd *= p.strength[w];
  }
  return o;
}

// kWorldModels: the model is p.models[w] rather than the kernel's parameter (a separate
// instantiation, so that the common case keeps reading the model from the parameter space).
template <bool kWorldModels>
__device__ __forceinline__ const FixedModel& worldModel(const FixedModel& model,
                                                        const WorldParams& p, int w) {
  return kWorldModels ? p.models[w] : model;
}

// One thread per world; the state is structure-of-arrays (entry k of world w at k * n + w) so that
// a warp's loads and stores of one entry are contiguous.
template <bool kWorldModels>
__device__ __forceinline__ void stepWorld(
    const FixedModel& model, const FixedOptions& opt, const HeightFieldView& field,
    const WorldParams& p, int n, const double* __restrict__ q, const double* __restrict__ v,
    const double* __restrict__ target, double* __restrict__ qn, double* __restrict__ vn,
    int* __restrict__ failed) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= n) return;
  double ql[NQ], vl[NV], tl[NJ], qo[NQ], vo[NV];
  for (int k = 0; k < NQ; ++k) ql[k] = q[k * n + w];
  for (int k = 0; k < NV; ++k) vl[k] = v[k * n + w];
  for (int k = 0; k < NJ; ++k) tl[k] = target[k * n + w];
  failed[w] = !fixedStep(worldModel<kWorldModels>(model, p, w), worldOptions(opt, p, w), field,
                         ql, vl, tl, qo, vo);
  for (int k = 0; k < NQ; ++k) qn[k * n + w] = qo[k];
  for (int k = 0; k < NV; ++k) vn[k * n + w] = vo[k];
}

#define DL_STEP_ARGS                                                                             \
  const __grid_constant__ FixedModel model, const FixedOptions opt, const HeightFieldView field, \
      const WorldParams p, int n, const double *__restrict__ q, const double *__restrict__ v,    \
      const double *__restrict__ target, double *__restrict__ qn, double *__restrict__ vn,       \
      int *__restrict__ failed

// The same kernel with the compiler free to use 255 registers, or capped (by launch bounds) at
// 128 and 64 registers: what register pressure costs against occupancy.
template <bool kWorldModels>
__global__ void stepKernel(DL_STEP_ARGS) {
  stepWorld<kWorldModels>(model, opt, field, p, n, q, v, target, qn, vn, failed);
}
__global__ void __launch_bounds__(128, 4) stepKernel128(DL_STEP_ARGS) {
  stepWorld<false>(model, opt, field, p, n, q, v, target, qn, vn, failed);
}
__global__ void __launch_bounds__(128, 8) stepKernel64(DL_STEP_ARGS) {
  stepWorld<false>(model, opt, field, p, n, q, v, target, qn, vn, failed);
}

// The VJP kernels. Adjoints and seeds are structure-of-arrays like the state; a stored tape is
// word-interleaved (word k of world w at k * n + w) so that a warp's copies are contiguous.
constexpr int kTapeWords = static_cast<int>(sizeof(FixedTape) / sizeof(double));
static_assert(sizeof(FixedTape) % sizeof(double) == 0, "the tape is copied as 8-byte words");

#define DL_LOAD_WORLD                                  \
  const int w = blockIdx.x * blockDim.x + threadIdx.x; \
  if (w >= n) return;                                  \
  double ql[NQ], vl[NV], tl[NJ];                       \
  for (int k = 0; k < NQ; ++k) ql[k] = q[k * n + w];   \
  for (int k = 0; k < NV; ++k) vl[k] = v[k * n + w];   \
  for (int k = 0; k < NJ; ++k) tl[k] = target[k * n + w];

// A world whose forward failed (non-finite, or sweeps its tape does not hold) gets zero adjoints.
__device__ __forceinline__ void vjpAndStore(const FixedModel& model, const FixedOptions& opt,
                                            const HeightFieldView& field, int n, int w, bool ok,
                                            const double* ql, const double* vl, const double* tl,
                                            const FixedTape& t, const double* __restrict__ gq,
                                            const double* __restrict__ gv, double* __restrict__ aq,
                                            double* __restrict__ av, double* __restrict__ at) {
  double gql[NQ], gvl[NV];
  for (int k = 0; k < NQ; ++k) gql[k] = gq[k * n + w];
  for (int k = 0; k < NV; ++k) gvl[k] = gv[k * n + w];
  FixedAdjoint a;
  setZero(a);
  if (ok) fixedStepVjp(model, opt, field, ql, vl, tl, t, gql, gvl, a);
  for (int k = 0; k < NQ; ++k) aq[k * n + w] = a.q[k];
  for (int k = 0; k < NV; ++k) av[k * n + w] = a.v[k];
  for (int k = 0; k < NJ; ++k) at[k * n + w] = a.qTarget[k];
}

#define DL_VJP_ARGS                                                                              \
  const __grid_constant__ FixedModel model, const FixedOptions opt, const HeightFieldView field, \
      const WorldParams p, int n, const double *__restrict__ q, const double *__restrict__ v,    \
      const double *__restrict__ target, const double *__restrict__ gq,                          \
      const double *__restrict__ gv, double *__restrict__ aq, double *__restrict__ av,           \
      double *__restrict__ at, double *__restrict__ qn, double *__restrict__ vn,                 \
      double *__restrict__ tape, int *__restrict__ failed

// The world's model and options (DL_LOAD_WORLD's w).
#define DL_WORLD                                             \
  const FixedModel& wm = worldModel<kWorldModels>(model, p, w); \
  const FixedOptions wo = worldOptions(opt, p, w);

template <bool kWorldModels>
__global__ void fusedVjpKernel(DL_VJP_ARGS) {
  DL_LOAD_WORLD
  DL_WORLD
  FixedTape t;
  double qo[NQ], vo[NV];
  const bool ok = fixedStepRecord(wm, wo, field, ql, vl, tl, qo, vo, t);
  failed[w] = !ok;
  vjpAndStore(wm, wo, field, n, w, ok, ql, vl, tl, t, gq, gv, aq, av, at);
}

// The soft model: the checkpointed VJP in the thread's local memory (no split variant).
template <bool kWorldModels>
__global__ void softVjpKernel(DL_VJP_ARGS) {
  DL_LOAD_WORLD
  DL_WORLD
  double gql[NQ], gvl[NV];
  for (int k = 0; k < NQ; ++k) gql[k] = gq[k * n + w];
  for (int k = 0; k < NV; ++k) gvl[k] = gv[k * n + w];
  FixedSoftTape t;
  FixedAdjoint a;
  setZero(a);
  failed[w] = !fixedSoftStepVjp(wm, wo, field, ql, vl, tl, gql, gvl, t, a);
  for (int k = 0; k < NQ; ++k) aq[k * n + w] = a.q[k];
  for (int k = 0; k < NV; ++k) av[k * n + w] = a.v[k];
  for (int k = 0; k < NJ; ++k) at[k * n + w] = a.qTarget[k];
}

template <bool kWorldModels>
__global__ void recordKernel(DL_VJP_ARGS) {
  DL_LOAD_WORLD
  DL_WORLD
  FixedTape t;
  double qo[NQ], vo[NV];
  failed[w] = !fixedStepRecord(wm, wo, field, ql, vl, tl, qo, vo, t);
  const double* words = reinterpret_cast<const double*>(&t);
  for (int k = 0; k < kTapeWords; ++k) tape[static_cast<size_t>(k) * n + w] = words[k];
  for (int k = 0; k < NQ; ++k) qn[k * n + w] = qo[k];
  for (int k = 0; k < NV; ++k) vn[k * n + w] = vo[k];
}

template <bool kWorldModels>
__global__ void vjpFromTapeKernel(DL_VJP_ARGS) {
  DL_LOAD_WORLD
  DL_WORLD
  FixedTape t;
  double* words = reinterpret_cast<double*>(&t);
  for (int k = 0; k < kTapeWords; ++k) words[k] = tape[static_cast<size_t>(k) * n + w];
  vjpAndStore(wm, wo, field, n, w, !failed[w], ql, vl, tl, t, gq, gv, aq, av, at);
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
  check(cudaMalloc(&gq_, n * NQ * sizeof(double)), "cudaMalloc gq");
  check(cudaMalloc(&gv_, n * NV * sizeof(double)), "cudaMalloc gv");
  check(cudaMalloc(&aq_, n * NQ * sizeof(double)), "cudaMalloc aq");
  check(cudaMalloc(&av_, n * NV * sizeof(double)), "cudaMalloc av");
  check(cudaMalloc(&at_, n * NJ * sizeof(double)), "cudaMalloc at");
  static_assert(NQ >= NV && NQ >= NJ, "the staging buffer holds the longest rows");
  check(cudaMalloc(&stage_, n * NQ * sizeof(double)), "cudaMalloc staging");
  setStep(opt, field);
  setVjp(opt, field);
}

void CudaBatch::setStep(const FixedOptions& opt, const HeightFieldView& field) {
  opt_ = opt;
  field_ = deviceField(field, hostField_, heights_, bounds_);
}

void CudaBatch::setVjp(const FixedOptions& opt, const HeightFieldView& field) {
  vjpOpt_ = opt;
  vjpField_ = deviceField(field, vjpHostField_, vjpHeights_, vjpBounds_);
}

// The device view of a host field: its samples copied unless `copied` says they are the ones on
// the device already (the same host arrays and grid).
HeightFieldView CudaBatch::deviceField(const HeightFieldView& field, HeightFieldView& copied,
                                       double*& heights, float*& bounds) {
  const bool same = field.heights == copied.heights && field.cellBounds == copied.cellBounds &&
                    field.nx == copied.nx && field.ny == copied.ny;
  if (!same) {
    if (heights) cudaFree(heights);
    if (bounds) cudaFree(bounds);
    heights = nullptr;
    bounds = nullptr;
    copied = field;
    return toDeviceField(field, heights, bounds);
  }
  HeightFieldView f = field;
  if (field.heights) f.heights = heights;
  if (field.cellBounds) f.cellBounds = bounds;
  return f;
}

namespace {

// A host array of `count` T on the device (freed and null when src is null).
template <typename T>
void uploadOptional(T*& dst, const T* src, size_t count, const char* what) {
  if (!src) {
    if (dst) cudaFree(dst);
    dst = nullptr;
    return;
  }
  if (!dst) check(cudaMalloc(&dst, count * sizeof(T)), what);
  check(cudaMemcpy(dst, src, count * sizeof(T), cudaMemcpyHostToDevice), what);
}

}  // namespace

void CudaBatch::setWorldParams(const double* mu, const double* strength,
                               const FixedModel* models) {
  const size_t n = static_cast<size_t>(n_);
  uploadOptional(mu_, mu, n, "world friction");
  uploadOptional(strength_, strength, n, "world motor strength");
  uploadOptional(models_, models, n, "world models");
}

void CudaBatch::downloadFailed(int* flags) const {
  std::copy(failedHost_.begin(), failedHost_.end(), flags);
}

// The last step's or VJP's failure flags into failedHost_ (one copy per call, which
// downloadFailed reads); returns how many worlds failed.
int CudaBatch::copyFailedFlags() {
  failedHost_.resize(n_);
  check(cudaMemcpy(failedHost_.data(), failed_, n_ * sizeof(int), cudaMemcpyDeviceToHost),
        "failed flags");
  int bad = 0;
  for (int x : failedHost_) bad += x != 0;
  return bad;
}

// A copy of the field's samples and cell bounds on the device, and the view of it.
HeightFieldView CudaBatch::toDeviceField(const HeightFieldView& field, double*& heights,
                                         float*& bounds) {
  HeightFieldView f = field;
  if (!field.heights) return f;
  const size_t count = static_cast<size_t>(field.nx) * field.ny;
  check(cudaMalloc(&heights, count * sizeof(double)), "cudaMalloc heights");
  check(cudaMemcpy(heights, field.heights, count * sizeof(double), cudaMemcpyHostToDevice),
        "copy heights");
  f.heights = heights;
  if (field.cellBounds) {
    const size_t cells = 2 * static_cast<size_t>(field.nx + 4) * (field.ny + 4);
    check(cudaMalloc(&bounds, cells * sizeof(float)), "cudaMalloc cell bounds");
    check(cudaMemcpy(bounds, field.cellBounds, cells * sizeof(float), cudaMemcpyHostToDevice),
          "copy cell bounds");
    f.cellBounds = bounds;
  }
  return f;
}

CudaBatch::~CudaBatch() {
  for (void* p :
       {static_cast<void*>(q_), static_cast<void*>(qn_), static_cast<void*>(v_),
        static_cast<void*>(vn_), static_cast<void*>(target_), static_cast<void*>(heights_),
        static_cast<void*>(vjpHeights_), static_cast<void*>(bounds_),
        static_cast<void*>(vjpBounds_), static_cast<void*>(failed_), static_cast<void*>(gq_),
        static_cast<void*>(gv_), static_cast<void*>(aq_), static_cast<void*>(av_),
        static_cast<void*>(at_), static_cast<void*>(tape_), static_cast<void*>(mu_),
        static_cast<void*>(strength_), static_cast<void*>(models_), static_cast<void*>(stage_)})
    if (p) cudaFree(p);
}

namespace {

// World-major rows (entry k of world w at w * per + k) <-> entry-major columns (at k * n + w), on
// the device: the host copies whole arrays, the device reorders them.
__global__ void toEntryMajor(const double* __restrict__ src, double* __restrict__ dst, int n,
                             int per) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<size_t>(n) * per) return;
  dst[(i % per) * n + i / per] = src[i];
}

__global__ void toWorldMajor(const double* __restrict__ src, double* __restrict__ dst, int n,
                             int per) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<size_t>(n) * per) return;
  dst[i] = src[(i % per) * n + i / per];
}

unsigned blocksFor(size_t count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

// Host world-major rows into device columns through the staging buffer, and back. The legacy
// default stream orders each copy after the previous reordering kernel.
void toDevice(double* dst, const double* src, double* stage, int n, int per) {
  const size_t count = static_cast<size_t>(n) * per;
  check(cudaMemcpy(stage, src, count * sizeof(double), cudaMemcpyHostToDevice), "upload");
  toEntryMajor<<<blocksFor(count, 256), 256>>>(stage, dst, n, per);
  check(cudaGetLastError(), "reorder upload");
}

void toHost(double* dst, const double* src, double* stage, int n, int per) {
  const size_t count = static_cast<size_t>(n) * per;
  toWorldMajor<<<blocksFor(count, 256), 256>>>(src, stage, n, per);
  check(cudaGetLastError(), "reorder download");
  check(cudaMemcpy(dst, stage, count * sizeof(double), cudaMemcpyDeviceToHost), "download");
}

}  // namespace

void CudaBatch::upload(const double* q, const double* v, const double* target) {
  toDevice(q_, q, stage_, n_, NQ);
  toDevice(v_, v, stage_, n_, NV);
  toDevice(target_, target, stage_, n_, NJ);
}

void CudaBatch::download(double* q, double* v) const {
  toHost(q, q_, stage_, n_, NQ);
  toHost(v, v_, stage_, n_, NV);
}

void CudaBatch::launch() {
  const int blocks = (n_ + threads_ - 1) / threads_;
  const WorldParams p{mu_, strength_, models_};
  if (models_)
    stepKernel<true><<<blocks, threads_>>>(model_, opt_, field_, p, n_, q_, v_, target_, qn_, vn_,
                                           failed_);
  else if (regCap_ == 128)
    stepKernel128<<<blocks, threads_>>>(model_, opt_, field_, p, n_, q_, v_, target_, qn_, vn_,
                                        failed_);
  else if (regCap_ == 64)
    stepKernel64<<<blocks, threads_>>>(model_, opt_, field_, p, n_, q_, v_, target_, qn_, vn_,
                                       failed_);
  else
    stepKernel<false><<<blocks, threads_>>>(model_, opt_, field_, p, n_, q_, v_, target_, qn_, vn_,
                                            failed_);
  std::swap(q_, qn_);
  std::swap(v_, vn_);
}

int CudaBatch::step(int steps) {
  for (int s = 0; s < steps; ++s) launch();
  check(cudaGetLastError(), "step launch");
  check(cudaDeviceSynchronize(), "step");
  return copyFailedFlags();
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

void CudaBatch::uploadSeeds(const double* gq, const double* gv) {
  toDevice(gq_, gq, stage_, n_, NQ);
  toDevice(gv_, gv, stage_, n_, NV);
}

void CudaBatch::downloadAdjoints(double* q, double* v, double* target) const {
  toHost(q, aq_, stage_, n_, NQ);
  toHost(v, av_, stage_, n_, NV);
  toHost(target, at_, stage_, n_, NJ);
}

size_t CudaBatch::tapeBytes() {
  return sizeof(FixedTape);
}

template <bool kWorldModels>
void CudaBatch::launchKernelAs(Kernel k) {
  const int blocks = (n_ + threads_ - 1) / threads_;
  const WorldParams p{mu_, strength_, models_};
  if ((k == Kernel::Record || k == Kernel::VjpFromTape) && !tape_)
    check(cudaMalloc(&tape_, static_cast<size_t>(n_) * sizeof(FixedTape)), "cudaMalloc tape");
#define DL_VJP_CALL(kernel)                                                                  \
  kernel<kWorldModels><<<blocks, threads_>>>(model_, vjpOpt_, vjpField_, p, n_, q_, v_, target_, \
                                             gq_, gv_, aq_, av_, at_, qn_, vn_, tape_, failed_)
  switch (k) {
    case Kernel::Forward:
      stepKernel<kWorldModels><<<blocks, threads_>>>(model_, opt_, field_, p, n_, q_, v_, target_,
                                                     qn_, vn_, failed_);
      break;
    case Kernel::Record:
      DL_VJP_CALL(recordKernel);
      break;
    case Kernel::VjpFromTape:
      DL_VJP_CALL(vjpFromTapeKernel);
      break;
    case Kernel::Fused:
      if (vjpOpt_.model == FixedContact::Soft)
        DL_VJP_CALL(softVjpKernel);
      else
        DL_VJP_CALL(fusedVjpKernel);
      break;
  }
#undef DL_VJP_CALL
}

void CudaBatch::launchKernel(Kernel k) {
  if (models_)
    launchKernelAs<true>(k);
  else
    launchKernelAs<false>(k);
}

int CudaBatch::vjp(VjpKind kind) {
  if (vjpOpt_.model == FixedContact::Soft && kind == VjpKind::Split)
    throw std::runtime_error("CudaBatch::vjp: the soft model has no split VJP");
  if (kind == VjpKind::Fused) {
    launchKernel(Kernel::Fused);
  } else {
    launchKernel(Kernel::Record);
    launchKernel(Kernel::VjpFromTape);
  }
  check(cudaGetLastError(), "vjp launch");
  check(cudaDeviceSynchronize(), "vjp");
  return copyFailedFlags();
}

double CudaBatch::timeKernel(Kernel k, int steps) {
  if (vjpOpt_.model == FixedContact::Soft && (k == Kernel::Record || k == Kernel::VjpFromTape))
    throw std::runtime_error("CudaBatch::timeKernel: the soft model has no stored tape");
  if (k == Kernel::VjpFromTape) launchKernel(Kernel::Record);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaDeviceSynchronize(), "before timing");
  check(cudaEventRecord(start), "record");
  for (int s = 0; s < steps; ++s) launchKernel(k);
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "timing");
  check(cudaGetLastError(), "timed launches");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

}  // namespace diffloco::batch
