// Worlds stepped on a CUDA device, one thread per world, by sim::fixedStep, and their steps' VJP
// by sim::fixedStepRecord and sim::fixedStepVjp (the functions tests/batch checks on the CPU). Plain
// C++ interface: the .cu file behind it includes no Eigen. Host-side errors (no device, a failed
// allocation or launch) throw std::runtime_error.
#pragma once

#include <string>
#include <vector>

#include "batch/sim_names.h"

namespace diffloco::batch {

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
  // World-major host arrays (q[w * NQ + k], ...), as batch/world_set.h's WorldSet and the columns of
  // batch::BatchSim's matrices.
  void upload(const double* q, const double* v, const double* target);
  void download(double* q, double* v) const;

  // The options and ground of the steps from now on. The ground's samples are copied to the device
  // again only when they are other host arrays (or another grid) than the ones copied last: a
  // height field must not change in place while a batch uses it.
  void setStep(const FixedOptions& opt, const HeightFieldView& field);
  // Per-world randomisation, host arrays of worlds() entries, each null for none (and then
  // removed from the device): the friction coefficient (replaces the options' mu), the drive's
  // strength (scales the options' kp and kd, as batch::BatchSim does) and a model per world (an
  // added base mass; the steps then read each world's model from device memory). For the step
  // and the VJP alike.
  void setWorldParams(const double* mu, const double* strength, const FixedModel* models);
  // Each world's failure flag (non-finite, or for the VJP more sweeps or sub-steps than its tape
  // holds) of the last step or VJP.
  void downloadFailed(int* flags) const;
  // Advances every world by `steps` steps, one kernel launch each; returns the worlds that went
  // non-finite in the last step.
  int step(int steps);
  // Milliseconds that `steps` launches take, by CUDA events (after the previous work finished).
  double timeSteps(int steps);

  // The options and ground the VJP kernels differentiate (sim/pack.h's toStepOptionsBackward
  // and backwardView: straight_through's smoothed model, a straight-through terrain); by default
  // the step's own. The split variant's forward kernel records its tape with these too. The
  // ground is copied as setStep's.
  void setVjp(const FixedOptions& opt, const HeightFieldView& field);

  // The VJP. Seeds: the adjoints of (q', v'), world-major (NQ, NV).
  void uploadSeeds(const double* gq, const double* gv);
  // Fused: one kernel records the tape in the thread's local memory and runs the VJP
  // (fixedStepRecord, then fixedStepVjp); for the soft model, fixedSoftStepVjp. Split (hard
  // and smoothed only): a forward kernel stores each world's tape in device memory (word k of
  // world w at k * worlds + w), a second kernel reads it back.
  enum class VjpKind { Fused, Split };
  // The adjoints of every world's step at the uploaded state (the state does not advance);
  // returns the worlds whose forward failed.
  int vjp(VjpKind kind);
  void downloadAdjoints(double* q, double* v, double* target) const;
  // Milliseconds that `steps` launches of one kernel take at the uploaded state (no advance):
  // the plain forward step, the forward storing its tape, the VJP reading that tape (after one
  // recording), or the fused forward + VJP (Record and VjpFromTape: hard and smoothed only).
  enum class Kernel { Forward, Record, VjpFromTape, Fused };
  double timeKernel(Kernel k, int steps);
  // Bytes of one world's tape.
  static size_t tapeBytes();

 private:
  void launch();
  void launchKernel(Kernel k);
  int copyFailedFlags();
  template <bool kWorldModels>
  void launchKernelAs(Kernel k);
  static HeightFieldView toDeviceField(const HeightFieldView& field, double*& heights,
                                       float*& bounds);
  static HeightFieldView deviceField(const HeightFieldView& field, HeightFieldView& copied,
                                     double*& heights, float*& bounds);
  FixedModel model_;
  FixedOptions opt_, vjpOpt_;
  HeightFieldView field_, vjpField_;  // heights and cell bounds on the device
  HeightFieldView hostField_{}, vjpHostField_{};  // the host fields they were copied from
  int n_, threads_, regCap_ = 0;
  double *q_ = nullptr, *v_ = nullptr, *qn_ = nullptr, *vn_ = nullptr, *target_ = nullptr;
  double *heights_ = nullptr, *vjpHeights_ = nullptr;
  float *bounds_ = nullptr, *vjpBounds_ = nullptr;
  int* failed_ = nullptr;
  double *gq_ = nullptr, *gv_ = nullptr, *aq_ = nullptr, *av_ = nullptr, *at_ = nullptr;
  double* tape_ = nullptr;  // allocated on first use
  double* stage_ = nullptr;       // world-major rows on their way in or out
  std::vector<int> failedHost_;  // the last step's or VJP's failure flags
  double *mu_ = nullptr, *strength_ = nullptr;  // per-world parameters, null when none
  FixedModel* models_ = nullptr;
};

}  // namespace diffloco::batch
