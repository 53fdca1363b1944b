// Parameters of a simulation step that are not part of the robot's Model: time step, contact model
// and actuator. Values here are the defaults of the locomotion paper's Table 6.
#pragma once

#include <limits>
#include <memory>
#include <string>

#include "sim/spatial.h"

namespace diffloco::sim {

struct HeightField;  // sim/terrain.h

enum class ContactModel {
  Hard,      // Gauss-Seidel on contacts with penetration d >= 0 at the mid-step
  Smoothed,  // Algorithm 1: all feet, impulses scaled by sigmoid(d * kappa)
  Soft,      // penalty spring-damper (eq. 17-18) at its own sub-step
  // DiffMJX's contacts from distance through the straight-through trick: the forward pass is the
  // hard model (the robot does not hover), the backward pass is the derivative of the smoothed
  // model evaluated along the hard trajectory (informative before contact).
  StraightThrough,
};

ContactModel parseContactModel(const std::string& name);  // throws std::invalid_argument
const char* toString(ContactModel m);

// Where a sphere touches a height field (sim/terrain.h): Vertical, the surface under its centre
// (exact on a plane, first order on a curved surface: a sphere meets a riser only once its centre
// is over the step's edge); Closest, the surface point closest to its centre (exact on any
// surface: a sphere meets a riser at first touch), a few Newton steps more per sphere.
enum class TerrainContact { Vertical, Closest };

TerrainContact parseTerrainContact(const std::string& name);  // throws std::invalid_argument
const char* toString(TerrainContact t);

// Time integration of the soft model inside an env step (the other models ignore it):
// Fixed: softSubsteps equal sub-steps of the Moreau scheme (step.cpp); Adaptive: Dormand-Prince
// 5(4) with a PI step-size controller on the continuous dynamics (sim/adaptive.h, DiffMJX).
// parseIntegrator / toString live in sim/adaptive.h.
enum class Integrator { Fixed, Adaptive };

struct AdaptiveOptions {
  double rtol = 1e-4;        // relative tolerance of the local error
  double atol = 1e-6;        // absolute tolerance (units of q and v)
  double initialStep = 0;    // first step of each env step [s]; 0: Hairer's automatic estimate
  double minStep = 1e-8;     // [s]; a step wanted below it is taken at it and accepted anyway
  double maxStep = 0;        // [s]; 0: the env step dt
  int maxSteps = 2000;       // attempts (accepted + rejected) per env step; see Data::adaptive
  double pcoeff = 0.2;       // PI controller (DiffMJX's P = 0.2, I = 0.4)
  double icoeff = 0.4;
  // Land a step boundary on every contact switch (a foot's depth crossing 0), so that no RK step
  // straddles the kink of the penalty force: without it the stage Jacobians jump by k inside a
  // step and the gradient's error is first order in that step's size (sim/adaptive.h).
  bool locateContacts = true;
  double contactEventTol = 1e-8;  // [m]: depths within it count as "at the switch"
  // Add the touchdown's saltation term to the backward pass (needs locateContacts): the approach
  // damping makes the force jump at touchdown, and the exact flow's derivative has a term there
  // that no step's VJP contains (sim/adaptive.h). false: plain discretise-then-optimise.
  bool saltation = true;
};

struct ContactOptions {
  ContactModel model = ContactModel::Smoothed;
  // The ground: a height field shared by every world of a batch (sim/terrain.h); null: the plane
  // z = 0, the cheapest case.
  std::shared_ptr<const HeightField> terrain;
  // Straight-through terrain: if set, the backward pass differentiates the step on this ground
  // instead (a smoothed copy of `terrain`, smoothHeightField) along the forward's trajectory on
  // `terrain`, as straight_through does for the contact law: step edges keep their forward shape
  // but give the gradient a slope to follow.
  std::shared_ptr<const HeightField> backwardTerrain;
  TerrainContact terrainContact = TerrainContact::Vertical;  // on a height field
  double mu = 0.8;        // friction coefficient
  int iterations = 10;    // Gauss-Seidel sweeps (hard, smoothed)
  double kappa = 300.0;   // sigmoid stiffness [1/m] (smoothed, straight_through's backward)
  // Feet farther than this from the ground stay out of the smoothed problem [m] (the paper's
  // threshold; infinite there). Bounds the reach of straight_through's gradients.
  double cutoff = std::numeric_limits<double>::infinity();
  double softKp = 1.2e4;  // normal stiffness [N/m] (soft)
  double softKd = 30.0;   // normal damping on approach [N s/m] (soft)
  double softKf = 900.0;  // tangential viscous friction [N s/m] (soft)
  int softSubsteps = 20;  // sub-steps per step (soft); the paper's 0.01 s / 0.0005 s
  Integrator integrator = Integrator::Fixed;  // soft only
  AdaptiveOptions adaptive;                   // soft with integrator = Adaptive
};

// PD drive on joint position targets (the same for every joint):
//   tau_pd = kp (q* - q) - kd qd, clipped to [tau_min(qd), tau_max(qd)] with the DC-motor envelope
//   tau_max = min(saturation (1 - qd / vmax), effort), tau_min = max(saturation (-1 - qd / vmax),
//   -effort). saturation = inf (the default) leaves a plain clip at the effort limit.
struct ActuatorOptions {
  double kp = 20.0;
  double kd = 1.0;
  double effort = 1e10;        // torque limit [N m]; the model's URDF limit if smaller
  double saturation = 1e10;    // stall torque of the speed-torque line [N m]
  double velocityLimit = 1e10; // no-load speed of the speed-torque line [rad/s]
};

struct SimOptions {
  double dt = 0.01;
  ContactOptions contact;
  ActuatorOptions actuator;
};

}  // namespace diffloco::sim
