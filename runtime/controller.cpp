#include "runtime/controller.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "io/zip_archive.h"
#include "runtime/action_history.h"
#include "runtime/height_scan.h"

namespace diffloco::deploy {

const char* toString(Mode m) {
  switch (m) {
    case Mode::Passive:
      return "passive";
    case Mode::StandUp:
      return "stand_up";
    case Mode::Policy:
      return "policy";
    case Mode::Damping:
      return "damping";
  }
  return "?";
}

namespace {

// Rotation matrix (base -> world) of a unit quaternion (w, x, y, z).
std::array<double, 9> rotation(const std::array<double, 4>& q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}

const std::vector<std::string> kKnownTerms{
    "base_height", "base_quat",  "base_lin_vel", "base_ang_vel",   "projected_gravity",
    "command",     "joint_pos",  "joint_vel",    "base_alignment", "heading_alignment",
    "last_action", "gait_phase", "height_scan",  "action_history"};

double param(const ObservationTerm& t, const char* key, int index) {
  const auto it = t.params.find(key);
  if (it == t.params.end() || static_cast<int>(it->second.size()) <= index)
    throw std::runtime_error(std::string("controller: term '") + t.name + "' has no parameter " +
                             key);
  return it->second[index];
}

}  // namespace

std::vector<std::array<double, 2>> heightScanPoints(const ObservationTerm& t, double x, double y,
                                                    double yaw) {
  const HeightScanGrid g({param(t, "x_range", 0), param(t, "x_range", 1)},
                         {param(t, "y_range", 0), param(t, "y_range", 1)}, param(t, "spacing", 0));
  const double c = std::cos(yaw), sn = std::sin(yaw);
  std::vector<std::array<double, 2>> p = g.local();
  for (auto& [lx, ly] : p) {
    const double wx = x + c * lx - sn * ly, wy = y + sn * lx + c * ly;
    lx = wx, ly = wy;
  }
  return p;
}

Controller::Controller(const std::string& policyPath, ControllerConfig config)
    : cfg_(std::move(config)) {
  // Checked before LibTorch reads it (io/zip_archive.h); loaded from the bytes checked.
  std::istringstream bytes(io::readCheckedZipArchive(policyPath));
  try {
    module_ = torch::jit::load(bytes);
  } catch (const c10::Error& e) {
    throw std::runtime_error(policyPath + ": not a loadable TorchScript file (" +
                             e.what_without_backtrace() + ")");
  } catch (const std::exception& e) {  // TorchScript's frontend errors are not c10::Error
    throw std::runtime_error(policyPath + ": not a loadable TorchScript file (" + e.what() + ")");
  }
  module_.eval();
  if (!module_.hasattr("metadata_json"))
    throw std::runtime_error(policyPath +
                             ": no metadata_json attribute (not written by diffloco export)");
  meta_ = parsePolicyMetadata(module_.attr("metadata_json").toStringRef(),
                              policyPath + " (metadata_json)");
  const int nj = meta_.numJoints();
  if (static_cast<int>(cfg_.jointNames.size()) != nj)
    throw std::runtime_error("controller: the robot has " + std::to_string(cfg_.jointNames.size()) +
                             " joints, the policy " + std::to_string(nj));
  for (int i = 0; i < nj; ++i) {
    const auto it = std::find(cfg_.jointNames.begin(), cfg_.jointNames.end(), meta_.jointNames[i]);
    if (it == cfg_.jointNames.end())
      throw std::runtime_error("controller: the policy's joint '" + meta_.jointNames[i] +
                               "' is not among the robot's joints");
    robotIndex_.push_back(static_cast<int>(it - cfg_.jointNames.begin()));
  }
  for (const auto& t : meta_.observations)
    if (std::find(kKnownTerms.begin(), kKnownTerms.end(), t.name) == kKnownTerms.end())
      throw std::runtime_error(policyPath + ": observation term '" + t.name +
                               "' is not known to the controller");
  if (cfg_.maxTilt <= 0) cfg_.maxTilt = meta_.terminationTilt.value_or(1.0);
  int depth = 1;  // the last actions the terms read: last_action one, action_history `steps`
  for (const auto& t : meta_.observations) {
    if (t.name != "action_history") continue;
    try {
      depth = std::max(depth, actionHistorySteps(param(t, "steps", 0)));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(policyPath + ": " + e.what());
    }
  }
  pastActions_.assign(depth, std::vector<double>(nj, 0.0));
}

void Controller::start() {
  if (mode_ == Mode::Passive) startRequested_ = true;
}

void Controller::startPolicy() {
  mode_ = Mode::Policy;
  fault_.clear();
  startRequested_ = false;
  ticks_ = 0;
  clearPastActions();
}

void Controller::clearPastActions() {
  for (auto& a : pastActions_) std::fill(a.begin(), a.end(), 0.0);
}

std::vector<double> Controller::policyStep(const RobotState& s) {
  const int nj = meta_.numJoints();
  std::vector<double> a = policyAction(observation(s));
  std::vector<double> target(nj, std::nan(""));
  for (int i = 0; i < nj; ++i) {
    a[i] = std::clamp(a[i], -meta_.actionClip, meta_.actionClip);  // NaN stays NaN
    target[robotIndex_[i]] = meta_.defaultJointPos[i] + meta_.actionScale * a[i];
  }
  std::rotate(pastActions_.rbegin(), pastActions_.rbegin() + 1, pastActions_.rend());
  pastActions_.front() = a;
  ++ticks_;
  return target;
}

void Controller::stop() {
  if (mode_ != Mode::Damping) {
    mode_ = Mode::Damping;
    fault_ = "stop requested";
  }
}

void Controller::reset() {
  mode_ = Mode::Passive;
  fault_.clear();
  startRequested_ = false;
  ticks_ = 0;
}

std::vector<float> Controller::observation(const RobotState& s) const {
  const int nj = meta_.numJoints();
  const auto R = rotation(s.baseQuat);
  std::vector<float> obs;
  obs.reserve(meta_.numObs);
  for (const auto& t : meta_.observations) {
    std::vector<double> v;
    if (t.name == "base_height") {
      v = {s.baseHeight};
    } else if (t.name == "base_quat") {
      v = {s.baseQuat[0], s.baseQuat[1], s.baseQuat[2], s.baseQuat[3]};
    } else if (t.name == "base_lin_vel") {
      v = {s.baseLinVel[0], s.baseLinVel[1], s.baseLinVel[2]};
    } else if (t.name == "base_ang_vel") {
      v = {s.baseAngVel[0], s.baseAngVel[1], s.baseAngVel[2]};
    } else if (t.name == "projected_gravity") {  // R^T (0, 0, -1)
      v = {-R[6], -R[7], -R[8]};
    } else if (t.name == "command") {
      v = {s.command[0], s.command[1], s.command[2]};
    } else if (t.name == "joint_pos") {
      for (int i = 0; i < nj; ++i)
        v.push_back(s.jointPos[robotIndex_[i]] - meta_.defaultJointPos[i]);
    } else if (t.name == "joint_vel") {
      for (int i = 0; i < nj; ++i) v.push_back(s.jointVel[robotIndex_[i]]);
    } else if (t.name == "base_alignment") {
      v = {R[8]};
    } else if (t.name == "heading_alignment") {
      v = {R[0]};
    } else if (t.name == "last_action") {
      v = pastActions_.front();
    } else if (t.name == "action_history") {
      for (int k = 0; k < static_cast<int>(param(t, "steps", 0)); ++k)
        v.insert(v.end(), pastActions_[k].begin(), pastActions_[k].end());
    } else if (t.name == "gait_phase") {
      // t = policy ticks * control_dt: the env's episode time at the observation.
      const double time = (mode_ == Mode::Policy ? ticks_ : 0) * meta_.controlDt;
      const auto f = t.params.find("frequency");
      v = {std::sin(2 * M_PI * (f == t.params.end() ? 2.0 : f->second.at(0)) * time)};
    } else if (t.name == "height_scan") {
      const double offset = param(t, "offset", 0), clip = param(t, "clip", 0);
      for (double h : s.heightScan) v.push_back(std::clamp(h - offset, -clip, clip));
    }
    if (static_cast<int>(v.size()) != t.size)
      throw std::runtime_error("controller: term '" + t.name + "' has " + std::to_string(v.size()) +
                               " values, the metadata says " + std::to_string(t.size));
    for (double x : v) obs.push_back(static_cast<float>(x * t.scale));
  }
  return obs;
}

std::vector<double> Controller::policyAction(const std::vector<float>& obs) {
  torch::InferenceMode guard;
  const torch::Tensor x = torch::from_blob(const_cast<float*>(obs.data()),
                                           {1, static_cast<int64_t>(obs.size())}, torch::kFloat32)
                              .clone();
  const torch::Tensor a = module_.forward({x}).toTensor().to(torch::kFloat64).contiguous();
  return std::vector<double>(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
}

std::vector<double> Controller::actuatorTorque(const std::vector<double>& target,
                                               const std::vector<double>& q,
                                               const std::vector<double>& qd,
                                               double gainScale) const {
  // The law of sim/actuator.cpp (and of the module's actuator_torque), robot order. A missing
  // limit is the simulator's default 1e10, so that the torques equal training's bit for bit.
  const int nj = meta_.numJoints();
  const double saturation = meta_.saturation.value_or(1e10);
  const double velocityLimit = meta_.velocityLimit.value_or(1e10);
  std::vector<double> tau(nj, 0.0);
  for (int i = 0; i < nj; ++i) {
    const int r = robotIndex_[i];
    const double effort = meta_.effort[i];
    const double pd = gainScale * (meta_.kp * (target[r] - q[r]) - meta_.kd * qd[r]);
    const double vmax = velocityLimit * (1.0 + effort / saturation);
    const double w = std::clamp(qd[r], -vmax, vmax) / velocityLimit;
    const double hi = std::min(saturation * (1.0 - w), effort);
    const double lo = std::max(saturation * (-1.0 - w), -effort);
    tau[r] = std::clamp(pd, lo, hi);
  }
  return tau;
}

std::string Controller::checkLimits(const RobotState& s) const {
  const int nj = meta_.numJoints();
  if (static_cast<int>(s.jointPos.size()) != nj || static_cast<int>(s.jointVel.size()) != nj)
    return "state has " + std::to_string(s.jointPos.size()) + " joint positions and " +
           std::to_string(s.jointVel.size()) + " velocities for " + std::to_string(nj) + " joints";
  auto finite = [](const auto& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!finite(s.jointPos) || !finite(s.jointVel) || !finite(s.baseQuat) || !finite(s.baseLinVel) ||
      !finite(s.baseAngVel) || !finite(s.command))
    return "non-finite value in the robot state";
  for (int i = 0; i < nj; ++i) {
    const double q = s.jointPos[robotIndex_[i]];
    if (q < meta_.jointLower[i] - cfg_.jointLimitMargin ||
        q > meta_.jointUpper[i] + cfg_.jointLimitMargin)
      return "joint " + meta_.jointNames[i] + " at " + std::to_string(q) +
             " rad is outside its limits [" + std::to_string(meta_.jointLower[i]) + ", " +
             std::to_string(meta_.jointUpper[i]) + "]";
  }
  const auto R = rotation(s.baseQuat);
  const double tilt = std::acos(std::clamp(R[8], -1.0, 1.0));
  if (tilt > cfg_.maxTilt)
    return "base tilt " + std::to_string(tilt) + " rad above " + std::to_string(cfg_.maxTilt);
  return "";
}

ControlOutput Controller::damping(const RobotState& s, const std::string& fault) {
  if (mode_ != Mode::Damping) {
    mode_ = Mode::Damping;
    fault_ = fault;
  }
  const int nj = meta_.numJoints();
  ControlOutput u;
  u.mode = Mode::Damping;
  u.fault = fault_;
  u.jointTarget.assign(nj, 0.0);
  u.kp.assign(nj, 0.0);
  u.kd.assign(nj, cfg_.dampingKd);
  u.torque.assign(nj, 0.0);
  for (int i = 0; i < nj; ++i) {
    const int r = robotIndex_[i];
    const double qd = r < static_cast<int>(s.jointVel.size()) && std::isfinite(s.jointVel[r])
                          ? s.jointVel[r]
                          : 0.0;
    u.jointTarget[r] = r < static_cast<int>(s.jointPos.size()) ? s.jointPos[r] : 0.0;
    u.torque[r] = std::clamp(-cfg_.dampingKd * qd, -meta_.effort[i], meta_.effort[i]);
  }
  return u;
}

ControlOutput Controller::tick(const RobotState& s) {
  const int nj = meta_.numJoints();
  if (mode_ == Mode::Damping) return damping(s, fault_);
  if (mode_ == Mode::Passive) {
    ControlOutput u;
    u.mode = Mode::Passive;
    u.jointTarget = s.jointPos;
    u.kp.assign(nj, 0.0);
    u.kd.assign(nj, 0.0);
    u.torque.assign(nj, 0.0);
    if (!startRequested_) return u;
    const std::string f = checkLimits(s);
    if (!f.empty()) return damping(s, "stand up refused: " + f);
    startRequested_ = false;
    mode_ = Mode::StandUp;
    standStart_ = s.jointPos;
    ticks_ = 0;
  }
  const std::string f = checkLimits(s);
  if (!f.empty()) return damping(s, f);

  ControlOutput u;
  u.jointTarget.assign(nj, 0.0);
  if (mode_ == Mode::StandUp) {
    const double T = std::max(cfg_.standUpDuration, meta_.controlDt);
    const double x = std::min(1.0, (ticks_ + 1) * meta_.controlDt / T);
    const double a = x * x * (3 - 2 * x);  // smoothstep: zero velocity at both ends
    for (int i = 0; i < nj; ++i) {
      const int r = robotIndex_[i];
      u.jointTarget[r] = standStart_[r] + a * (meta_.defaultJointPos[i] - standStart_[r]);
    }
    ++ticks_;
    if (x >= 1.0) {  // the next tick runs the policy
      mode_ = Mode::Policy;
      ticks_ = 0;
      clearPastActions();
    }
    u.mode = Mode::StandUp;
  } else {  // Policy
    u.jointTarget = policyStep(s);
    for (double x : u.jointTarget)
      if (!std::isfinite(x)) return damping(s, "non-finite policy action");
    u.mode = Mode::Policy;
  }
  u.torque = actuatorTorque(u.jointTarget, s.jointPos, s.jointVel);
  for (int i = 0; i < nj; ++i) {
    const double t = u.torque[robotIndex_[i]];
    if (!std::isfinite(t) || std::abs(t) > meta_.effort[i] * (1 + 1e-9))
      return damping(s, "torque of joint " + meta_.jointNames[i] + " out of limits");
  }
  u.kp.assign(nj, meta_.kp);
  u.kd.assign(nj, meta_.kd);
  return u;
}

}  // namespace diffloco::deploy
