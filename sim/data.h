// Scratch memory for one simulated world (MuJoCo's mjData, Pinocchio's Data): everything the
// pipeline stages compute, allocated once for a Model and overwritten by every call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::sim {

struct Workspace;  // sim/workspace.h

struct Data {
  explicit Data(const Model& model);
  ~Data();
  Data(Data&&) noexcept;
  Data& operator=(Data&&) noexcept;

  // kinematics: body poses at the configuration last given to forwardKinematics
  std::vector<Transform> X;  // parent -> body; X[0] is world -> base
  std::vector<Mat3> R;       // body -> world rotation
  std::vector<Vec3> p;       // body origin in world

  // rnea
  std::vector<Motion> vel, acc;  // body velocities and accelerations, body frames
  std::vector<Force> f;          // forces transmitted to each body by its joint, body frames
  VecX tau;                      // generalized force (bias forces when called with a = 0)

  // crba and the tree-sparse factor H = L^T D L
  std::vector<Inertia> Ic;  // composite inertias, body frames
  // Each joint column's force chain F = Ic_i S_i carried up to the base, level by level (columns
  // from the last body to the first, as crba builds them): crbaVjp runs these backwards.
  std::vector<Force> crbaF;
  MatX H;                   // joint-space inertia matrix, armature included
  MatX LD;                  // strictly lower part: L; diagonal: D

  // contact, one entry per foot. Contact-space vectors are per contact (normal, tangent1,
  // tangent2) = world (z, x, y) for the ground plane, footContact[j].frame's columns on a height
  // field.
  std::vector<Vec3> footCentre;  // sphere centres, world
  VecX depth;                    // penetration depth (> 0 when penetrating): radius - centre height
                                 // on the plane, sim/terrain.h on a height field
  std::vector<SphereContact> footContact;  // on a height field: frame, point, surface per foot
  std::vector<int> active;       // feet in the contact problem, in order
  MatX Jc;                       // 3 nc x nv contact Jacobian (active rows first)
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jpoint;  // one point's world Jacobian (scratch)
  MatX Y;                        // nv x 3 nc: L^-T Jc^T
  MatX Yc;                       // 3 nc x nv: Y^T on each foot's dof path (see delassus)
  MatX G;                        // 3 nc x 3 nc Delassus matrix Jc H^-1 Jc^T
  VecX c;                        // contact velocity without impulses
  VecX impulse;                  // contact impulses (3 nc)
  VecX sigma;                    // sigmoid(depth * kappa) per active contact (1 for hard)
  MatX Ginv;                     // 3 nc x 3: inverse diagonal blocks G_jj^-1 (the r-factors)
  VecX footImpulse;              // 3 per foot: impulse (normal, t1, t2) applied over the last step

  // Gauss-Seidel tape for the backward pass: per update (iteration-major, contact-minor) the
  // impulse of that contact before the update, the s it was updated with and whether it stuck
  // (gaussSeidelUpdate's branch 0). Recorded only when recordGs is set (by stepVjp).
  bool recordGs = false;
  std::vector<Vec3> gsOld, gsS;
  std::vector<bool> gsStick;
  VecX impulseInit;  // the eq. 11 guess
  VecX impulseRaw;   // the impulses after the sweeps, before the sigmoid scaling

  // A fingerprint of the piecewise branches the last step took (contact set, solver branches,
  // penalty regimes): two steps with the same fingerprint are on the same smooth piece. Used to
  // keep finite-difference stencils from straddling a kink.
  std::uint64_t mode = 0;
  void mixMode(std::uint64_t value) { mode = (mode ^ value) * 0x100000001b3ull; }

  // step
  VecX qMid, u, tauJoint, work;

  // Adaptive integration of the soft model (sim/adaptive.h): statistics of the last env step, and
  // a running count of the env steps that hit AdaptiveOptions::maxSteps (never reset by step(): the
  // caller reads, reports and clears it).
  struct AdaptiveStats {
    int accepted = 0, rejected = 0, evaluations = 0;  // steps and dynamics evaluations
    int events = 0;  // accepted steps that end on a located contact switch
    double minStep = 0, maxStep = 0;                  // smallest and largest accepted step [s]
    bool capHit = false;      // maxSteps reached: the rest of the env step was one unchecked step
    bool minStepHit = false;  // a step at minStep failed the error test and was accepted anyway
  } adaptive;
  long long adaptiveCapHits = 0;

  // Scratch of the backward pass and of the adaptive integrator (sim/workspace.h), made on first
  // use: owned here so that it is per world or pool worker, as Data is.
  Workspace& workspace();

 private:
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace diffloco::sim
