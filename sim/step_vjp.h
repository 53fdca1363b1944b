// The hand-written reverse-mode (adjoint) pass of one simulation step.
//
// stepVjp recomputes the forward step from its inputs (nothing is stored between the forward and
// the backward pass except the inputs q, v, qTarget: 49 doubles = 392 bytes per world and step for
// an 18-DoF robot) and propagates the adjoints of (q', v') back through every stage in reverse:
// trapezoidal position update, velocity update, the Gauss-Seidel sweeps unrolled (hard: the branch
// taken by each projection; smoothed: sigmoid scalings too), Delassus matrix and contact Jacobians,
// H^-1 solves (through the identity d(H^-1 z) = -H^-1 dH H^-1 z, so the factorization itself is
// never differentiated), CRBA and RNEA in reverse, forward kinematics, the half step, and the PD
// actuator. The soft model runs the same per sub-step with the penalty forces of eq. 17-18.
//
// Gradients on q are with respect to all 19 coordinates as the step uses them (the quaternion is
// renormalised inside the step, so its adjoint may have a radial part).
#pragma once

#include <vector>

#include "sim/adaptive.h"
#include "sim/adjoint.h"
#include "sim/data.h"
#include "sim/options.h"
#include "sim/param_grad.h"

namespace diffloco::sim {


// Adds to `out` the adjoints of the inputs of step(model, opt, ., q, v, qTarget) given the adjoints
// gqNext, gvNext of its outputs. `data` is scratch (the forward is recomputed in it; the backward's
// own is in data.workspace()). For straight_through these are the smoothed model's adjoints at
// (q, v), not the hard step's; with a contact.backwardTerrain, the adjoints of the step on that
// terrain.
void stepVjp(const Model& model, const SimOptions& opt, Data& data,
             const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
             const Eigen::Ref<const VecX>& qTarget, const Eigen::Ref<const VecX>& gqNext,
             const Eigen::Ref<const VecX>& gvNext, StepAdjoint& out);

}  // namespace diffloco::sim
