// Fitting the PD actuator model of sim/actuator.h to logged joint data (`diffloco fit-actuator`),
// and a generator of synthetic logs from a known drive (`diffloco fit-actuator --synthesize`).
// Eigen and yaml-cpp only: no torch.
//
// Log format (CSV, one joint per file): a header line naming the columns, then one row per
// sample. Columns (any order; names exact):
//   time       [s], strictly increasing
//   q_target   joint position target sent to the drive [rad]
//   q          measured joint position [rad]
//   qd         measured joint velocity [rad/s]
//   tau        measured joint torque [N m] (optional: without it, --inertia is needed and the
//              torque is reconstructed as inertia * qdd + friction)
// Lines starting with '#' and blank lines are skipped. Any other column, a missing column, a
// non-numeric or non-finite cell, a row with the wrong number of cells or a time that does not
// increase is an error naming the file and the line.
//
// Model fitted (the law of sim/actuator.cpp, plus what the simulator's joint does with it):
//   tau = clip(kp (q*(t - delay) - q) - kd qd, lo(qd), hi(qd))
//   hi(qd) = min(saturation (1 - qd / velocity_limit), effort), lo mirrored
//   inertia qdd = tau - friction sign(qd) - damping qd            (a joint on a test bench)
// The fit is a chain of linear least-squares problems: (1) the delay as the whole number of
// samples that minimises the PD residual; (2) kp, kd on the samples where the PD law is not
// clipped (found iteratively: a sample whose PD torque exceeds the measured one by more than 3
// residual sigmas is clipped); (3) effort, saturation and the speed-torque slope on the clipped
// samples, mirrored to one side, as the lower envelope min(line, plateau) fitted by alternating
// assignment; (4) inertia, Coulomb friction and viscous damping from the integral form of the joint
// dynamics over short windows (inertia * delta qd = integral of tau - friction sign(qd) - damping
// qd), which does not differentiate the noisy velocity. Standard errors come from each
// problem's covariance sigma^2 (X^T X)^-1 (delta method for velocity_limit = saturation / slope).
#pragma once

#include <string>
#include <vector>

namespace diffloco::ident {

struct JointLog {
  std::string source;
  std::vector<double> time, qTarget, q, qd, tau;  // tau empty when the log has no torque
  bool hasTorque() const { return !tau.empty(); }
  size_t size() const { return time.size(); }
};

// Reads a log; throws std::runtime_error "file:line: message" on bad input.
JointLog readJointLog(const std::string& path);

// The drive of a synthetic log: the actuator law above on a single joint with the given inertia,
// driven by a target signal (steps and sines large enough to reach the torque limit and the
// speed-torque line), integrated at `simDt` and logged every `logDt` with Gaussian noise.
struct DriveModel {
  double kp = 85, kd = 0.6;
  double effort = 80, saturation = 120, velocityLimit = 7.5;
  double inertia = 0.1;   // armature + load [kg m^2]
  double friction = 0.5;  // Coulomb [N m]
  double damping = 0.05;  // viscous [N m s/rad]
  double delay = 0.002;   // command latency [s]
  double duration = 20, logDt = 0.001, simDt = 1e-4;
  double noiseQ = 1e-4, noiseQd = 5e-3, noiseTau = 0.2;  // standard deviations
  bool withTorque = true;
  unsigned seed = 1;
};

JointLog synthesizeJointLog(const DriveModel& m);
// Writes the log as CSV (atomic: .tmp then rename), with a comment line naming the drive model.
void writeJointLog(const std::string& path, const JointLog& log, const std::string& comment = "");

struct FitOptions {
  double inertia = 0;  // known effective inertia, needed when the log has no torque
  // Known Coulomb friction and viscous damping for the torque reconstruction (no torque); a
  // damping left out shows up in kd.
  double friction = 0, damping = 0;
  double maxDelay = 0.02;  // [s] delays searched: 0 .. maxDelay in whole samples
  // Inertia of what the joint drove on the bench [kg m^2]: armature = fitted inertia - this.
  double loadInertia = 0;
};

struct FitParam {
  std::string name, unit;
  double value = 0, stdError = 0;
  bool fitted = true;  // false: given, or not identifiable from this log (value kept)
};

struct ActuatorFit {
  std::string source;
  double kp = 0, kd = 0, effort = 0, saturation = 0, velocityLimit = 0;
  double inertia = 0, friction = 0, damping = 0, delay = 0;
  double armature = 0;           // inertia - FitOptions::loadInertia
  std::vector<FitParam> params;  // the values above with their standard errors
  double rmsTorque = 0;          // RMS of measured - modelled torque over all samples [N m]
  double rmsTorqueUnclipped = 0;
  double rmsAccelResidual = 0;  // dynamics fit: RMS residual of the windowed momentum [N m s]
  size_t samples = 0, unclipped = 0, clipped = 0;
  std::string report() const;  // a human-readable table
};

ActuatorFit fitActuator(const JointLog& log, const FitOptions& options = {});

// actuator.yaml: the keys a task's `actuator:` section takes (kp, kd, effort, saturation,
// velocity_limit, armature), then a `fit:` section with the errors and standard errors.
// Written atomically.
void writeActuatorYaml(const std::string& path, const ActuatorFit& fit);

}  // namespace diffloco::ident
