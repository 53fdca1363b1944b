// Scratch of the backward pass (sim/step_vjp.h, sim/adjoint.h) and of the adaptive integrator
// (sim/adaptive.h): one per Data, which owns it (Data::workspace()), so one per world or pool
// worker like Data and never shared between threads. Each stage sizes its part from the Model on
// first use and reuses it afterwards: no step allocates once the sizes are known. Data holds it
// behind a pointer so that this header stays out of sim/data.h; only the sim/ sources that use it
// (and tests calling the building blocks) include it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/adjoint.h"
#include "sim/data.h"
#include "sim/step_vjp.h"

namespace diffloco::sim {

// sim/dynamics_vjp.cpp: per body, biasForcesVjp's force and motion adjoints and crbaVjp's
// composite-inertia adjoints; crbaVjp's path from a body to the base.
struct DynamicsVjpScratch {
  std::vector<Force> fb;
  std::vector<Motion> vb, ab;
  std::vector<InertiaBar> Icb;
  std::vector<int> path;  // body i and its ancestors but the base
};

// sim/contact_vjp.cpp: solveContactsVjp's G adjoint (gathered transposed), impulses and their
// adjoints, per-component weights and sigmoid products, per-contact adjoints of G_jj^-1.
struct ContactVjpScratch {
  MatX GbT;
  VecX p, pb, w, pGs;
  std::vector<Mat3> GinvBar;
};

// sim/step_vjp.cpp: the adjoints of one step (hard, smoothed, and each soft sub-step).
struct StepVjpScratch {
  KinematicsBar bar;
  MatX Hbar, Jbar, Gbar, Gsym;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> W, WG;
  VecX lambda, cbar, sigmaBar, work, dvbar, qmidBar, pbar, qn, vn, vnBar, dv, depthBar;
  // softVjp: the sub-steps' states, the running adjoints and a per-sub-step StepAdjoint.
  std::vector<VecX> qs, vs;
  VecX qBar, vBar, Fbar;
  std::unique_ptr<StepAdjoint> local;
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jw, Jp;
  explicit StepVjpScratch(const Model& m) : bar(m), Jw(3, m.nv()), Jp(3, m.nv()) {}
};

// sim/adaptive.cpp: the adaptive loop's stages on x = (q, v).
struct AdaptiveScratch {
  MatX K;   // nx x 7 stage derivatives
  MatX F;   // 3 nf x 7 stage foot forces
  MatX S;   // 3 nf x 7 stage switching values (rk::footSwitches)
  MatX Vn;  // nf x 7 stage foot normal velocities (d' = -vn)
  VecX x, xs, xn, sc;
  std::uint64_t modes[7] = {};
  int nx = -1, nf = -1;        // the sizes the above were made for
  VecX stageForce, loopForce;  // softDynamics' foot forces, in stages() and in the loop
  VecX x0, x1;                 // adaptiveStep's stacked state
};

// sim/adaptive_vjp.cpp: softDynamicsVjp's adjoints (also touchdownSaltation's kinematics adjoint).
struct SoftDynamicsVjpScratch {
  KinematicsBar bar;
  MatX Hbar, Jbar;
  VecX lambda, bbar, depthBar, qnBar;
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jw, Jp;
  explicit SoftDynamicsVjpScratch(const Model& m) : bar(m), Jw(3, m.nv()), Jp(3, m.nv()) {}
};

// sim/adaptive_vjp.cpp: the tape of one RK step (stage states, derivatives, adjoints and each
// stage's Data: 6 stages + one for the touchdown saltation at the step's end).
struct RkStepTape {
  std::vector<std::unique_ptr<Data>> data;
  MatX X, K, Kbar;
  VecX raw, Xbar;
  int nx = -1;
};

// sim/adaptive_vjp.cpp: the reverse sweep and adaptiveStepVjp's forward re-run.
struct AdaptiveVjpScratch {
  std::unique_ptr<SoftDynamicsVjpScratch> dynamics;
  RkStepTape tape;
  VecX xdot;                    // softDynamics at an RK step's end, for its saltation
  std::unique_ptr<Data> start;  // softDynamics at the env step's start, for its saltation
  std::vector<double> steps;    // accepted step sizes and the states they start from
  std::vector<VecX> checkpoints;
  VecX x0, x1;
};

struct Workspace {
  DynamicsVjpScratch dynamicsVjp;
  ContactVjpScratch contactVjp;
  std::unique_ptr<StepVjpScratch> stepVjp;      // made for the Model on first use
  std::vector<std::unique_ptr<Data>> softTape;  // softVjp: one Data per sub-step
  AdaptiveScratch adaptive;
  AdaptiveVjpScratch adaptiveVjp;
};

}  // namespace diffloco::sim
