#include "robots/robot_tools.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "robots/mesh_feet.h"
#include "sim/data.h"
#include "sim/kinematics.h"
#include "sim/model_edit.h"
#include "sim/stage_step.h"
#include "sim/urdf.h"

namespace diffloco {
namespace fs = std::filesystem;
using sim::Vec3;
using sim::VecX;

double standingHeight(const sim::Model& model, const VecX& jointPos) {
  if (model.nfeet() == 0) throw std::invalid_argument(model.source + ": the robot has no feet");
  VecX q = sim::neutralConfiguration(model);
  q.tail(model.nj()) = jointPos;
  sim::Data data(model);
  sim::forwardKinematics(model, data, q);
  double lowest = 1e300;
  for (const auto& f : model.feet)
    lowest = std::min(lowest, sim::worldPoint(data, f.body, f.offset).z() - f.radius);
  return -lowest;
}

StandOptions standGains(double mass, StandOptions o) {
  if (o.kp <= 0) o.kp = 8 * mass;
  if (o.kd <= 0) o.kd = o.kp / 20;
  if (o.armature <= 0) o.armature = std::max(0.01, 0.002 * mass);
  return o;
}

namespace {

StandResult stand(sim::Model model, const VecX& pose, double height, double torqueLimit,
                  StandOptions o) {
  o = standGains(model.totalMass(), o);
  if (o.torqueLimit <= 0) o.torqueLimit = torqueLimit;
  for (auto& j : model.joints) j.armature = o.armature;
  sim::SimOptions opt;
  opt.dt = o.dt;
  opt.contact.model = sim::ContactModel::Hard;
  opt.actuator.kp = o.kp;
  opt.actuator.kd = o.kd;
  opt.actuator.effort = o.torqueLimit;
  sim::StageStepper stepper(model, opt);  // the stages; throws for a model they lack
  VecX q = sim::neutralConfiguration(model), v = VecX::Zero(model.nv());
  q[2] = height + o.drop;
  q.tail(model.nj()) = pose;
  VecX qn(model.nq()), vn(model.nv());
  StandResult r;
  r.options = o;
  r.minHeight = q[2];
  const int steps = std::max(1, static_cast<int>(std::lround(o.seconds / o.dt)));
  for (int k = 0; k < steps; ++k) {
    if (!stepper.step(q, v, pose, qn, vn)) {
      r.finite = false;
      break;
    }
    q = qn, v = vn;
    r.minHeight = std::min(r.minHeight, q[2]);
    const double tilt = std::acos(std::clamp(sim::baseRotation(q)(2, 2), -1.0, 1.0)) * 180 / M_PI;
    r.maxTiltDeg = std::max(r.maxTiltDeg, tilt);
  }
  r.finalHeight = q[2];
  r.finalSpeed = v.head<3>().norm();
  double fz = 0;
  for (int f = 0; f < model.nfeet() && r.finite; ++f) fz += stepper.sphereImpulse()[3 * f] / o.dt;
  r.weightFraction = fz / (model.totalMass() * -model.gravity.z());
  r.maxJointError = (q.tail(model.nj()) - pose).cwiseAbs().maxCoeff();
  r.stood = r.finite && r.maxTiltDeg < 10 && r.finalHeight > 0.6 * height && r.finalSpeed < 0.05 &&
            std::abs(r.weightFraction - 1) < 0.1;
  return r;
}

std::string num(double x, int precision = 6) {
  std::ostringstream s;
  s << std::setprecision(precision) << x;
  return s.str();
}

void say(std::vector<std::string>* log, const std::string& s) {
  if (log) log->push_back(s);
}

// The model proposeRobotYaml works on, its feet selected, and the URDF the YAML names.
struct FootedModel {
  sim::Model model;
  std::string yamlUrdf;    // the URDF the YAML names: urdfPath, or the one with fitted spheres
  std::string fittedFrom;  // the mesh-feet URDF relative to the YAML; empty for sphere feet
};

FootedModel loadFootedModel(const std::string& urdfPath, const std::string& yamlPath,
                            std::vector<std::string>* log, std::string* sphereFeetUrdf) {
  sim::UrdfReport report;
  sim::Model model = sim::loadUrdf(urdfPath, {}, &report);
  for (const auto& w : report.warnings) say(log, "warning: " + w);
  for (const auto& n : report.notes) say(log, "note: " + n);
  std::vector<std::string> feet = sim::findFeet(model);
  // Mesh feet: a sphere per foot fitted to its mesh, in a copy of the URDF the YAML names.
  std::string yamlUrdf = urdfPath, fittedFrom;
  if (feet.empty()) {
    const std::vector<MeshFootSphere> meshFeet = proposeMeshFootSpheres(urdfPath);
    if (meshFeet.empty())
      throw std::runtime_error(urdfPath +
                               ": no collision sphere and no mesh at the end of any leg: add a "
                               "<sphere> collision to each foot link");
    if (!sphereFeetUrdf)
      throw std::runtime_error(urdfPath +
                               ": the feet are meshes; robot init writes the URDF "
                               "with fitted foot spheres beside the YAML");
    *sphereFeetUrdf = urdfWithFootSpheres(urdfPath, meshFeet);
    yamlUrdf = sphereFeetUrdfPath(yamlPath);
    sim::UrdfReport again;  // the same warnings and notes as above
    model = sim::parseUrdf(*sphereFeetUrdf, yamlUrdf, {}, &again);
    feet = sim::findFeet(model);
    for (const auto& f : meshFeet)
      say(log, "foot sphere on " + f.link + ": radius " + num(f.radius, 4) + " m at (" +
                   num(f.centre.x(), 4) + ", " + num(f.centre.y(), 4) + ", " +
                   num(f.centre.z(), 4) + ") in the link frame, fitted to " + f.mesh);
    fittedFrom =
        fs::relative(fs::absolute(urdfPath), fs::absolute(yamlPath).parent_path()).string();
    if (feet.size() != meshFeet.size())
      throw std::runtime_error(urdfPath + ": " + std::to_string(meshFeet.size()) +
                               " foot spheres fitted, but " + std::to_string(feet.size()) +
                               " found at the ends of the legs");
  }
  return {sim::selectFeet(model, feet), yamlUrdf, fittedFrom};
}

// The largest limit caps every joint, each joint keeping its own limit below it (the drive
// takes the smaller of the two, sim/actuator.h): the smallest would hold a knee to a hip
// abductor's torque (Laikago: 20 N m on knees rated 55).
double proposedTorqueLimit(const sim::Model& model, const std::string& urdfPath) {
  double effort = 0;
  for (const auto& j : model.joints)
    if (j.effort < 1e9) effort = std::max(effort, j.effort);
  if (!(effort > 0))
    throw std::runtime_error(urdfPath +
                             ": no joint has an effort limit (<limit effort=...>): the "
                             "torque limit cannot be proposed");
  return effort;
}

// A bent-knee stance per leg: on the chain of joints to each foot, the last two joints with
// parallel axes (hip and knee) get (s a, -2 s a) (or (s a, 2 s a) for opposite axes), which
// puts the foot under the hip when thigh and shank have similar lengths; other joints stay 0.
// Tried for a = 0.8, 0.6, 1.0 rad and s = +1, -1 within the joint limits; the first pose that
// stands in the settle simulation is kept.
struct Leg {
  int hip = -1, knee = -1;
  double ratio = -2;
};

std::vector<Leg> findLegs(const sim::Model& model, std::vector<std::string>* log) {
  // Joint axes in base coordinates at the zero pose, to recognise hip-knee pairs.
  sim::Data data(model);
  sim::forwardKinematics(model, data, sim::neutralConfiguration(model));
  auto axisOf = [&](int j) { return Vec3(data.R[j + 1] * model.bodies[j + 1].axis); };
  std::vector<Leg> legs;
  for (int f = 0; f < model.nfeet(); ++f) {
    std::vector<int> chain;
    for (int d : model.footDofs[f])
      if (d >= 6) chain.push_back(d - 6);
    Leg leg;
    if (chain.size() >= 2) {
      const int h = chain[chain.size() - 2], k = chain.back();
      const double c = axisOf(h).dot(axisOf(k));
      if (std::abs(c) > 0.99) leg = {h, k, c > 0 ? -2.0 : 2.0};
    }
    if (leg.hip < 0)
      say(log, "note: leg of foot " + model.feet[f].name +
                   ": no hip-knee pair with parallel axes; its joints stay at 0");
    legs.push_back(leg);
  }
  return legs;
}

// The stance kept: its pose, standing height and settle simulation.
struct Stance {
  VecX pose;
  double height = 0;
  StandResult stand;
};

Stance proposeStance(const sim::Model& model, const std::vector<Leg>& legs, double effort,
                     const StandOptions& gains, const std::string& urdfPath,
                     std::vector<std::string>* log) {
  Stance best;
  for (double a : {0.8, 0.6, 1.0}) {
    for (double s : {1.0, -1.0}) {
      VecX pose = VecX::Zero(model.nj());
      for (const auto& leg : legs)
        if (leg.hip >= 0) pose[leg.hip] = s * a, pose[leg.knee] = leg.ratio * s * a;
      bool inLimits = true;
      for (int j = 0; j < model.nj(); ++j)
        inLimits &= pose[j] >= model.joints[j].lower && pose[j] <= model.joints[j].upper;
      if (!inLimits) {
        say(log, "pose hip " + num(s * a) + ": outside the joint limits");
        continue;
      }
      const double h = standingHeight(model, pose);
      const StandResult r = stand(model, pose, h, effort, gains);
      say(log, "pose: hip " + num(s * a) + " rad, knee " + num(-2 * s * a) +
                   " rad (sign flipped for a knee axis opposite to the hip's): standing height " +
                   num(h, 4) + " m, settled at " + num(r.finalHeight, 4) + " m, tilt " +
                   num(r.maxTiltDeg, 3) + " deg: " + (r.stood ? "stands" : "does not stand"));
      if (r.stood) {
        best.pose = pose, best.height = h, best.stand = r;
        break;
      }
    }
    if (best.pose.size()) break;
  }
  if (!best.pose.size())
    throw std::runtime_error(urdfPath +
                             ": no proposed pose stands in the settle simulation; "
                             "write default_joint_pos by hand and run `diffloco robot check`");
  return best;
}

// The robot's own keys: URDF, base, joint order, feet, default pose and height, torque limit.
void writeRobotKeys(std::ostream& y, const FootedModel& footed, const std::string& yamlPath,
                    const Stance& best, double effort) {
  const sim::Model& model = footed.model;
  const std::string rel =
      fs::relative(fs::absolute(footed.yamlUrdf), fs::absolute(yamlPath).parent_path()).string();
  y << "# Proposed by `diffloco robot init` for " << model.name << " (" << num(model.totalMass(), 4)
    << " kg). Review it, then run `diffloco robot check` on this file.\n";
  if (!footed.fittedFrom.empty())
    y << "# " << footed.fittedFrom
      << " with a collision sphere added to each foot link (its feet are meshes): the sphere\n"
         "# centred on the mesh's bounding box that reaches its lowest point\n";
  y << "urdf: " << rel << "\n";
  y << "base_link: " << model.bodies[0].name << "\n";
  y << "# the policy's joint order (here the URDF's tree order; any order with parents first)\n";
  y << "joint_order: [";
  for (int j = 0; j < model.nj(); ++j) y << (j ? ", " : "") << model.joints[j].name;
  y << "]\n# the collision spheres at the ends of the legs\nfeet: [";
  for (int f = 0; f < model.nfeet(); ++f) y << (f ? ", " : "") << model.feet[f].name;
  y << "]\n# a bent-knee stance; a settle simulation in hard contact (kp "
    << num(best.stand.options.kp, 3) << ", kd " << num(best.stand.options.kd, 3) << ", "
    << num(best.stand.options.seconds, 3) << " s) holds it at a base height of "
    << num(best.stand.finalHeight, 4) << " m\n";
  y << "default_joint_pos: {";
  for (int j = 0; j < model.nj(); ++j)
    y << (j ? ", " : "") << model.joints[j].name << ": " << num(best.pose[j], 6);
  y << "}\n# base-origin height [m], base level, default pose, lowest foot-sphere point at z = 0\n";
  y << "default_base_height: " << num(best.height, 6) << "\n";
  y << "# N m, a cap on every joint: the largest <limit effort> of the URDF (each joint keeps its "
       "own below it)\n";
  y << "torque_limit: " << num(effort, 6) << "\n";
}

// What the tasks take from the robot where they set nothing: a starting point to review. The
// drive is the settle simulation's (it holds this robot up), the targets fractions of the
// standing height (ANYmal's velocity task: 0.76, the walk quadruped's: 0.95).
void writeTaskDefaults(std::ostream& y, const sim::Model& model, const Stance& best, double effort,
                       const StandOptions& gains) {
  const double mass = model.totalMass();
  const bool givenKp = gains.kp > 0, givenKd = gains.kd > 0;
  y << "# What the tasks take from this robot where they set nothing themselves (envs::"
       "inlineRobotDefaults).\n# Proposed: review before training. The drive holds the robot up "
       "in the settle simulation:\n# kp "
    << (givenKp ? "as given (robot init --kp)" : "8 N m/rad per kg of the robot's mass") << ", kd "
    << (givenKd ? "as given (robot init --kd)" : "kp / 20")
    << ", the effort limit the torque_limit.\n";
  y << "task_defaults:\n";
  y << "  sim: {dt: 0.005}\n";
  y << "  actuator: {kp: " << num(best.stand.options.kp, 4)
    << ", kd: " << num(best.stand.options.kd, 4) << ", effort: " << num(effort, 6)
    << ", armature: " << num(best.stand.options.armature, 4) << "}\n";
  y << "  action: {scale: 0.25}   # [rad per unit action]\n";
  y << "  rewards:   # base-height targets: 0.8 of the standing height [m]\n";
  y << "    base_height_gauss: {target: " << num(0.8 * best.height, 4) << "}\n";
  y << "    base_height_abs: {target: " << num(0.8 * best.height, 4) << "}\n";
  // The foot-height reference of the velocity task (eq. 19: peak 0.1 m over ANYmal's 0.5885 m
  // standing height), its peak scaled by this robot's standing height, its kernel narrow enough
  // that a foot left on the ground earns at most 70 % of the term at the swing's peak
  // (exp(-peak^2 / sigma) = 0.7). With ANYmal's 0.05 m^2 a standing 13 kg robot earned 82 % there
  // and one training seed of three stood (docs/robots.md).
  // ANYmal's standing height (configs/robots/anymal.yaml, tools/checks/check_urdf.py).
  const double anymalStandingHeight = 0.588510;
  const double footPeak = 0.1 * best.height / anymalStandingHeight;
  const double footSigma = footPeak * footPeak / std::log(1 / 0.7);
  y << "    # the swing's foot-height reference: ANYmal's 0.1 m peak scaled by the standing "
       "height;\n"
       "    # kernel width [m^2]: a foot left on the ground earns <= 70 % of the term at the "
       "peak\n";
  y << "    foot_height_tracking: {height: " << num(footPeak, 3) << ", sigma: " << num(footSigma, 3)
    << "}\n";
  y << "  terminations:   # a fall: the base below half the standing height [m]\n";
  y << "    base_height_below: {height: " << num(0.5 * best.height, 4) << "}\n";
  y << "  randomization:   # +-10 % of the mass [kg]\n";
  y << "    added_base_mass: [" << num(-0.1 * mass, 3) << ", " << num(0.1 * mass, 3) << "]\n";
}

}  // namespace

StandResult standingTest(const Robot& robot, StandOptions options) {
  return stand(robot.model, robot.defaultJointPos, robot.defaultBaseHeight, robot.torqueLimit,
               options);
}

std::string sphereFeetUrdfPath(const std::string& yamlPath) {
  const fs::path y(yamlPath);
  return (y.parent_path() / (y.stem().string() + "_sphere_feet.urdf")).string();
}

std::string proposeRobotYaml(const std::string& urdfPath, const std::string& yamlPath,
                             std::vector<std::string>* log, StandOptions gains,
                             std::string* sphereFeetUrdf) {
  const FootedModel footed = loadFootedModel(urdfPath, yamlPath, log, sphereFeetUrdf);
  const sim::Model& model = footed.model;
  const double effort = proposedTorqueLimit(model, urdfPath);
  const Stance best = proposeStance(model, findLegs(model, log), effort, gains, urdfPath, log);
  std::ostringstream y;
  writeRobotKeys(y, footed, yamlPath, best, effort);
  writeTaskDefaults(y, model, best, effort, gains);
  return y.str();
}

std::string robotReport(const Robot& robot, const RobotReport& report, const StandResult& stand) {
  const sim::Model& m = robot.model;
  std::ostringstream o;
  o << "robot " << robot.name << " (" << robot.yamlPath << "), URDF " << m.source << "\n";
  o << "mass " << num(m.totalMass(), 5) << " kg in " << m.nbodies() << " bodies, " << m.nj()
    << " joints, " << m.nfeet() << " feet\n";
  o << "bodies (fixed links merged): mass [kg], principal moments about the COM [kg m^2]\n";
  for (const auto& b : m.bodies) {
    const Vec3 c = b.inertia.com();
    const sim::Mat3 Ic =
        b.inertia.Io - b.inertia.m * (c.squaredNorm() * sim::Mat3::Identity() - c * c.transpose());
    const Vec3 e = Eigen::SelfAdjointEigenSolver<sim::Mat3>(Ic).eigenvalues();
    o << "  " << std::left << std::setw(24) << b.name << std::right << std::setw(9)
      << num(b.inertia.m, 4) << "   " << num(e[0], 4) << " " << num(e[1], 4) << " " << num(e[2], 4)
      << "\n";
  }
  o << "joints (policy order): default [rad], limits [rad], effort [N m], velocity [rad/s]\n";
  for (int j = 0; j < m.nj(); ++j) {
    const auto& J = m.joints[j];
    auto lim = [](double x) { return std::abs(x) >= 1e9 ? std::string("none") : num(x, 4); };
    o << "  " << std::left << std::setw(24) << J.name << std::right << std::setw(8)
      << num(robot.defaultJointPos[j], 4) << "   [" << lim(J.lower) << ", " << lim(J.upper)
      << "]   " << lim(J.effort) << "   " << lim(J.velocity) << "\n";
  }
  o << "feet:";
  for (const auto& f : m.feet) o << " " << f.name << " (r " << num(f.radius, 4) << ")";
  o << "\n";
  const double h = standingHeight(m, robot.defaultJointPos);
  o << "standing height " << num(h, 6) << " m (default_base_height "
    << num(robot.defaultBaseHeight, 6) << ")\n";
  o << "standing test (hard contact, kp " << num(stand.options.kp, 3) << ", kd "
    << num(stand.options.kd, 3) << ", armature " << num(stand.options.armature, 3) << ", dt "
    << num(stand.options.dt, 3) << " s, " << num(stand.options.seconds, 3) << " s, dropped "
    << num(stand.options.drop, 3) << " m): " << (stand.stood ? "STANDS" : "FAILS") << "\n"
    << "  final height " << num(stand.finalHeight, 4) << " m (lowest " << num(stand.minHeight, 4)
    << "), max tilt " << num(stand.maxTiltDeg, 3) << " deg, final speed "
    << num(stand.finalSpeed, 3) << " m/s, normal force " << num(100 * stand.weightFraction, 4)
    << " % of the weight, largest joint error " << num(stand.maxJointError, 3) << " rad\n";
  std::vector<std::string> warnings = report.warnings;
  if (std::abs(h - robot.defaultBaseHeight) > 1e-3)
    warnings.push_back(robot.yamlPath + ": default_base_height " + num(robot.defaultBaseHeight) +
                       " differs from the standing height " + num(h) + " by more than 1 mm");
  o << warnings.size() << " warning(s)\n";
  for (const auto& w : warnings) o << "  warning: " << w << "\n";
  for (const auto& n : report.notes) o << "  note: " << n << "\n";
  return o.str();
}

}  // namespace diffloco
