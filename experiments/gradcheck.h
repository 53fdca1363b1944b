// Gradient check of the simulator's hand-written backward pass, the stages' (sim::stageRolloutVjp),
// against central finite differences of their forward in double precision, over a horizon of H
// steps: the gradient of a scalar loss of the final state (fixed random weights on q_H and v_H)
// with respect to the initial state, every step's joint targets and the parameters (body masses,
// mu, kappa, kp, kd; the soft model's kp, kd, kf), the feet's offsets and the bodies' inertia
// entries (shape identification, ident/sysid.h).
#pragma once

#include <string>
#include <vector>

#include "robots/robot.h"
#include "sim/options.h"

namespace diffloco {

struct GradcheckOptions {
  std::string state = "contact";  // "contact": feet ~15 mm in, pressing; "distance": ~2 cm above
  // The ground (gradcheckTerrains()): "flat" (the plane), "slope" (a 15 % incline, the robot
  // tilted onto it; --slide slides along it), "bump" (smooth 3 cm bumps: every foot on a curved
  // patch), "step" (a 3 cm step edge under the front feet, on the interpolant's steepest cells).
  std::string terrain = "flat";
  int horizon = 1;
  double eps = 1e-6;  // finite-difference step
  double slide = 0;   // initial forward base speed [m/s] (feet sliding when in contact)
  unsigned seed = 7;
};

struct GradcheckGroup {
  std::string name;
  int size = 0;
  // ||vjp - fd||_inf / max(||fd||_inf, 1e-3 max over groups of ||fd||_inf): a group whose gradient
  // is a thousandth of the largest is judged at that scale, above the differences' own noise.
  double relError = 0;
  double gradNorm = 0;  // ||fd||_inf
  int excluded = 0;     // coordinates whose stencil stayed on a kink (see gradcheck.cpp)
};

struct GradcheckReport {
  std::vector<GradcheckGroup> groups;
  double worst = 0;
  int activeContacts = 0;  // contacts in the first step
};

// The terrain names of GradcheckOptions::terrain.
const std::vector<std::string>& gradcheckTerrains();

// The scenario is built from the robot's standing pose with seeded random perturbations; on a
// height field the robot is lifted so that its feet are on average 15 mm in ("contact") or 2 cm
// above ("distance") the surface under them. `opt`'s terrain is replaced by the named one. The
// robot must fit a size class of the stages (sim::Quadruped or sim::SingleBody) and the options
// their VJP (sim::notInStepVjp); std::invalid_argument with the reason otherwise.
GradcheckReport gradcheck(const Robot& robot, const sim::SimOptions& opt,
                          const GradcheckOptions& o);

// Simulation options for a robot as the tasks use them (anymal: dt 5 ms, PD 85/0.6, armature 0.1;
// quadruped: dt 10 ms, PD 20/1, armature 0.01).
sim::SimOptions defaultSimOptions(Robot& robot, sim::ContactModel cm);

}  // namespace diffloco
