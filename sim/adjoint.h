// Reverse-mode (adjoint) building blocks of the simulation step, one per forward stage. Each
// function takes the adjoint of a stage's outputs and ADDS the adjoints of its inputs; the forward
// stage must have been run in `data` just before (its results are read, never recomputed here).
// They are assembled into stepVjp (sim/step_vjp.cpp), which is checked as a whole against central
// finite differences (tests/sim/test_step_vjp.cpp; per robot, contact model and horizon by
// experiments/gradcheck.h in tests/experiments/test_gradcheck.cpp).
#pragma once

#include <vector>

#include "sim/data.h"
#include "sim/options.h"
#include "sim/param_grad.h"

namespace diffloco::sim {

struct DynamicsVjpScratch;  // sim/workspace.h
struct ContactVjpScratch;

using Vec4 = Eigen::Vector4d;  // quaternion as (w, x, y, z), the layout of q[3:7]

// Adjoints of the kinematic quantities of a configuration: per body the parent->body rotation E
// (bodies >= 1), the world rotation R and position p, and the body inertia.
struct KinematicsBar {
  std::vector<Mat3> E, R;
  std::vector<Vec3> p;
  std::vector<InertiaBar> inertia;
  explicit KinematicsBar(const Model& model) { reset(model); }
  void reset(const Model& model);
};

// --- kinematics (sim/kinematics_vjp.cpp) ---
// Adjoint of the base rotation matrix R(q[3:7]) (Eigen's formula, no normalisation) -> quaternion.
Vec4 rotationMatrixVjp(const Vec4& quat, const Mat3& Rbar);
// Adjoint of forwardKinematics: bar.E, bar.R, bar.p -> qbar (the configuration it was run at).
// Consumes bar.R and bar.p (they are propagated to the root in place).
void forwardKinematicsVjp(const Model& model, const Data& data, const Eigen::Ref<const VecX>& q,
                          KinematicsBar& bar, Eigen::Ref<VecX> qbar);
// Adjoint of pointJacobian(body, x): Jbar (3 x nv, world rows) -> bar.R, bar.p and xbar.
void pointJacobianVjp(const Model& model, const Data& data, int body, const Vec3& x,
                      const Eigen::Ref<const Eigen::Matrix<double, 3, Eigen::Dynamic>>& Jbar,
                      KinematicsBar& bar, Vec3& xbar);
// Adjoint of integrate(q, dv): qOutBar -> qbar, dvbar.
void integrateVjp(const Model& model, const Eigen::Ref<const VecX>& q,
                  const Eigen::Ref<const VecX>& dv, const Eigen::Ref<const VecX>& qOutBar,
                  Eigen::Ref<VecX> qbar, Eigen::Ref<VecX> dvbar);

// --- dynamics (sim/dynamics_vjp.cpp) ---
// Scratch: the caller's workspace part (sim/workspace.h), sized here on use.
// Adjoint of biasForces (RNEA with a = 0) run at (data's configuration, v): tauBar -> bar, vbar.
void biasForcesVjp(const Model& model, const Data& data, const Eigen::Ref<const VecX>& v,
                   const Eigen::Ref<const VecX>& tauBar, KinematicsBar& bar, Eigen::Ref<VecX> vbar,
                   DynamicsVjpScratch& scratch);
// Adjoint of crba: Hbar (any nv x nv; both triangles count) -> bar.
void crbaVjp(const Model& model, const Data& data, const MatX& Hbar, KinematicsBar& bar,
             DynamicsVjpScratch& scratch);

// --- actuator (sim/actuator.cpp) ---
// Adjoint of actuatorTorque: tauBar -> targetBar, qBar, qdBar, and the gain adjoints.
void actuatorTorqueVjp(const ActuatorOptions& a, double effortLimit, double qTarget, double q,
                       double qd, double tauBar, double& targetBar, double& qBar, double& qdBar,
                       double& kpBar, double& kdBar);

// --- contact (sim/contact_vjp.cpp) ---
// Adjoint of solveContacts, which must have been run with data.gsTape recording: impulseBar (the
// adjoint of data.impulse, 3 nc) -> Gbar (3 nc x 3 nc), cbar (3 nc), sigmaBar (nc), muBar.
void solveContactsVjp(const ContactOptions& opt, const Data& data, const VecX& impulseBar,
                      MatX& Gbar, VecX& cbar, VecX& sigmaBar, double& muBar,
                      ContactVjpScratch& scratch);
// Adjoint of the contact geometry of data.active (sim/contact.h): Jbar (3 rows (n, t1, t2) per
// active contact, at its contact point) and depthBar (one per active contact) -> bar, and the
// feet's body-frame offsets to offsetBar. On a height field this includes the derivative of the
// contact frame and point with respect to where the foot is (sim/terrain.h's sphereContactVjp).
// Jw, Jp: 3 x nv scratch.
void contactGeometryVjp(const Model& model, const ContactOptions& opt, const Data& data,
                        const MatX& Jbar, const VecX& depthBar, KinematicsBar& bar,
                        std::vector<Vec3>& offsetBar, Eigen::Matrix<double, 3, Eigen::Dynamic>& Jw,
                        Eigen::Matrix<double, 3, Eigen::Dynamic>& Jp);

}  // namespace diffloco::sim
