// Worlds stepped on a CUDA device, one thread per world, by gpu::fixedStep (the function the CPU
// parity test checks). Plain C++ interface: the .cu file behind it includes no Eigen. Host-side
// errors (no device, a failed allocation or launch) throw std::runtime_error.
#pragma once

#include <string>

#include "gpu/fixed_model.h"

namespace diffloco::gpu {

// The first CUDA device's name, or "" when there is none (or no usable driver).
std::string cudaDeviceName();

class CudaBatch {
 public:
  // field: a host height field (its samples are copied to the device) or the plane.
  CudaBatch(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& field,
            int worlds, int threadsPerBlock = 128);
  ~CudaBatch();
  CudaBatch(const CudaBatch&) = delete;
  CudaBatch& operator=(const CudaBatch&) = delete;

  int worlds() const { return n_; }
  void setThreadsPerBlock(int t) { threads_ = t; }
  // 0: the kernel as compiled (up to 255 registers); 128 or 64: a variant capped at that many
  // registers by launch bounds (at most 128 threads per block).
  void setRegisterCap(int cap) { regCap_ = cap; }
  // World-major host arrays (q[w * NQ + k], ...), as gpu/parity.h's WorldSet.
  void upload(const double* q, const double* v, const double* target);
  void download(double* q, double* v) const;
  // Advances every world by `steps` steps, one kernel launch each; returns the worlds that went
  // non-finite in the last step.
  int step(int steps);
  // Milliseconds that `steps` launches take, by CUDA events (after the previous work finished).
  double timeSteps(int steps);

 private:
  void launch();
  FixedModel model_;
  FixedOptions opt_;
  HeightFieldView field_;  // heights on the device
  int n_, threads_, regCap_ = 0;
  double *q_ = nullptr, *v_ = nullptr, *qn_ = nullptr, *vn_ = nullptr, *target_ = nullptr;
  double* heights_ = nullptr;
  int* failed_ = nullptr;
};

}  // namespace diffloco::gpu
