#include "export/mujoco_eval.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include "io/atomic_file.h"
#include "mujoco/joint_order.h"
#include "mujoco/mujoco_model.h"
#include "runtime/controller.h"

namespace diffloco::mj {

MujocoEpisodes evaluateInMujoco(const std::string& policyPath, const sim::Model& robotModel,
                                const MujocoEvalOptions& o) {
  // The controller maps the policy's joints onto the model's by name.
  deploy::ControllerConfig cc;
  for (const auto& j : robotModel.joints) cc.jointNames.push_back(j.name);
  deploy::Controller ctl(policyPath, cc);
  const deploy::PolicyMetadata& meta = ctl.metadata();
  const int nj = robotModel.nj();

  sim::Model model = robotModel;
  for (auto& j : model.joints) j.armature = meta.armature;  // as LocomotionEnv
  MjcfOptions mo;
  mo.timestep = o.timestep > 0 ? o.timestep : meta.simDt;
  mo.friction = o.friction > 0 ? o.friction : meta.friction;
  mo.integrator = o.integrator, mo.cone = o.cone, mo.solver = o.solver;
  mo.iterations = o.iterations, mo.noslipIterations = o.noslipIterations;
  mo.terrain = o.terrain.get();
  if (o.terrain && o.spawn.empty())
    throw std::invalid_argument("mujoco eval: a terrain needs spawn points");
  const double ratio = meta.controlDt / mo.timestep;
  const int decimation = static_cast<int>(std::lround(ratio));
  if (decimation < 1 || std::abs(ratio - decimation) > 1e-9 * ratio)
    throw std::runtime_error("mujoco eval: the time step " + std::to_string(mo.timestep) +
                             " s does not divide the control period " +
                             std::to_string(meta.controlDt) + " s");
  const std::string mjcf = toMjcf(model, mo);
  if (!o.mjcfPath.empty()) io::writeFileAtomic(o.mjcfPath, mjcf);
  MujocoModel mj(mjcf);
  if (o.terrain) loadHeightField(mj.m, *o.terrain);
  if (o.addedBaseMass != 0) {  // as sim::BatchSim::setAddedBaseMass: the inertia scales with m
    const int base = mj.m->jnt_bodyid[0];  // the free joint's body
    const double scale = (mj.m->body_mass[base] + o.addedBaseMass) / mj.m->body_mass[base];
    if (!(scale > 0))
      throw std::invalid_argument("mujoco eval: an added base mass of " +
                                  std::to_string(o.addedBaseMass) + " kg leaves none");
    mj.m->body_mass[base] *= scale;
    for (int i = 0; i < 3; ++i) mj.m->body_inertia[3 * base + i] *= scale;
  }
  if (o.actionDelaySteps < 0 || !(o.motorStrength > 0) || o.pushVelocity < 0 ||
      !(o.pushIntervalS[0] > 0) || o.pushIntervalS[1] < o.pushIntervalS[0])
    throw std::invalid_argument(
        "mujoco eval: conditions need delay >= 0, motor strength > 0, push velocity >= 0 and a "
        "push interval 0 < a <= b");
  mj_forward(mj.m, mj.d);  // the floor's pose, which the ray casts below read
  // Height of the ground under (x, y): a ray cast down onto the floor geom (group 0; the robot's
  // geoms are in group 3), the plane z = 0 without terrain.
  const int floor = mj_name2id(mj.m, mjOBJ_GEOM, "floor");
  const mjtByte groundOnly[6] = {1, 0, 0, 0, 0, 0};
  auto ground = [&](double x, double y) {
    if (!o.terrain) return 0.0;
    const mjtNum from[3] = {x, y, 100.0}, down[3] = {0, 0, -1};
    int geom = -1;
    const mjtNum dist = mj_ray(mj.m, mj.d, from, down, groundOnly, 1, -1, &geom);
    return geom == floor ? 100.0 - dist : 0.0;  // off the hfield: its slab's level
  };
  const deploy::ObservationTerm* scan = nullptr;
  for (const auto& t : meta.observations)
    if (t.name == "height_scan") scan = &t;
  // s.jointPos and the torques are in the model's joint order; MuJoCo's hinge j is model joint
  // mjOrder[j] (the identity unless the robot file reorders the joints across legs).
  const std::vector<int> mjOrder = mujocoJointOrder(model);
  const double lengthS = o.episodeLengthS > 0 ? o.episodeLengthS : meta.episodeLengthS;
  if (!(lengthS > 0))
    throw std::runtime_error(policyPath + ": no episode length (metadata or options)");
  const int steps = std::max(1, static_cast<int>(std::lround(lengthS / meta.controlDt)));

  // Default configuration: base at the default height, level; default joint angles.
  VecX q0 = sim::neutralConfiguration(model), v0 = VecX::Zero(model.nv());
  q0[2] = meta.defaultBaseHeight;
  for (int i = 0; i < meta.numJoints(); ++i) q0[7 + ctl.robotIndex()[i]] = meta.defaultJointPos[i];

  // Resets and commands draw from `rng`, noise and pushes from their own streams, so that every
  // condition meets the same episodes.
  std::mt19937_64 rng(o.seed), noiseRng(o.seed ^ 0x6e6f697365ULL), pushRng(o.seed ^ 0x70757368ULL);
  auto uniformOf = [](std::mt19937_64& g, double lo, double hi) {
    return lo == hi ? lo : std::uniform_real_distribution<double>(lo, hi)(g);
  };
  auto uniform = [&](double lo, double hi) { return uniformOf(rng, lo, hi); };
  // The exported noise of each sensed quantity (observationNoise).
  std::map<std::string, double> noise;
  for (const auto& t : meta.observations) noise[t.name] = o.observationNoise ? t.noise : 0.0;
  auto perturb = [&](auto& values, const char* term) {
    const double n = noise.count(term) ? noise.at(term) : 0.0;
    if (n > 0)
      for (auto& x : values) x += uniformOf(noiseRng, -n, n);
  };
  std::vector<double> defaultTarget(nj);  // what a zero action commands (the delay's fill)
  for (int i = 0; i < meta.numJoints(); ++i)
    defaultTarget[ctl.robotIndex()[i]] = meta.defaultJointPos[i];
  MujocoEpisodes r;
  r.timestep = mo.timestep;
  r.controlDt = meta.controlDt;
  r.episodeLengthS = lengthS;
  r.engineOptions = engineOptions(mj.m);
  deploy::RobotState s;
  s.jointPos.resize(nj);
  s.jointVel.resize(nj);
  for (int ep = 0; ep < o.episodes; ++ep) {
    VecX q = q0, v = v0;
    for (int j = 0; j < nj; ++j) q[7 + j] += uniform(-o.jointPosNoise, o.jointPosNoise);
    if (o.terrain) {
      const auto& p = o.spawn[ep % o.spawn.size()];
      q[0] = p[0], q[1] = p[1];
      q[2] += ground(p[0], p[1]);
    }
    if (meta.commandsEnabled)
      s.command = {uniform(meta.linVelX[0], meta.linVelX[1]),
                   uniform(meta.linVelY[0], meta.linVelY[1]),
                   uniform(meta.angVelZ[0], meta.angVelZ[1])};
    else
      s.command = {0, 0, 0};
    mj_resetData(mj.m, mj.d);
    toMujocoState(model, q, v, mj.d->qpos, mj.d->qvel);
    mj_forward(mj.m, mj.d);
    ctl.startPolicy();
    std::deque<std::vector<double>> pending(o.actionDelaySteps, defaultTarget);
    double nextPush = o.pushVelocity > 0
                          ? uniformOf(pushRng, o.pushIntervalS[0], o.pushIntervalS[1])
                          : std::numeric_limits<double>::infinity();
    double sumVx = 0, sumSpeed = 0, sumLin = 0, sumYaw = 0, limitExcess = 0;
    int k = 0;
    bool fell = false;
    for (; k < steps && !fell; ++k) {
      // The robot state from MuJoCo: qvel's linear part is in world axes, the angular part in
      // base axes (free joint).
      const mjtNum* qp = mj.d->qpos;
      const mjtNum* qv = mj.d->qvel;
      for (int i = 0; i < 4; ++i) s.baseQuat[i] = qp[3 + i];
      mjtNum R[9];
      mju_quat2Mat(R, qp + 3);
      for (int i = 0; i < 3; ++i) {
        s.baseLinVel[i] = R[0 + i] * qv[0] + R[3 + i] * qv[1] + R[6 + i] * qv[2];  // R^T v
        s.baseAngVel[i] = qv[3 + i];
      }
      s.baseHeight = qp[2] - ground(qp[0], qp[1]);
      if (scan) {
        const auto points = deploy::heightScanPoints(*scan, qp[0], qp[1], std::atan2(R[3], R[0]));
        s.heightScan.resize(points.size());
        for (size_t i = 0; i < points.size(); ++i)
          s.heightScan[i] = qp[2] - ground(points[i][0], points[i][1]);
      }
      for (int j = 0; j < nj; ++j)
        s.jointPos[mjOrder[j]] = qp[7 + j], s.jointVel[mjOrder[j]] = qv[6 + j];
      if (o.onDecision) {
        VecX qOurs, vOurs;  // in the model's joint order, as the callers read them
        fromMujocoState(model, qp, qv, qOurs, vOurs);
        o.onDecision(ep, k, qOurs, vOurs, s.command);
      }
      // Metrics of the state the decision is taken at (the env's convention: after the step).
      if (k > 0) {
        sumVx += qv[0];
        const double hx = R[0], hy = R[3], hn = std::hypot(hx, hy);
        sumSpeed += hn > 0 ? (qv[0] * hx + qv[1] * hy) / hn : 0.0;
        sumLin += std::pow(s.command[0] - s.baseLinVel[0], 2) +
                  std::pow(s.command[1] - s.baseLinVel[1], 2);
        sumYaw += std::pow(s.command[2] - s.baseAngVel[2], 2);
        const double tilt = std::acos(std::clamp(R[8], -1.0, 1.0));
        bool finite = std::isfinite(qp[2]);
        for (int i = 0; i < mj.m->nv; ++i) finite &= std::isfinite(qv[i]);
        if (!finite || (meta.terminationHeight && s.baseHeight < *meta.terminationHeight) ||
            (meta.terminationTilt && tilt > *meta.terminationTilt)) {
          fell = true;
          break;
        }
      }
      for (int i = 0; i < nj; ++i) {
        const auto& joint = model.joints[i];
        limitExcess =
            std::max({limitExcess, joint.lower - s.jointPos[i], s.jointPos[i] - joint.upper});
      }
      deploy::RobotState sensed = s;
      perturb(sensed.baseLinVel, "base_lin_vel");
      perturb(sensed.baseAngVel, "base_ang_vel");
      perturb(sensed.jointPos, "joint_pos");
      perturb(sensed.jointVel, "joint_vel");
      perturb(sensed.heightScan, "height_scan");
      std::array<double, 1> height{sensed.baseHeight};
      perturb(height, "base_height");
      sensed.baseHeight = height[0];
      pending.push_back(ctl.policyStep(sensed));
      const std::vector<double> target = pending.front();
      pending.pop_front();
      if (k * meta.controlDt >= nextPush) {  // a push: the base's world velocity jumps
        mj.d->qvel[0] += uniformOf(pushRng, -o.pushVelocity, o.pushVelocity);
        mj.d->qvel[1] += uniformOf(pushRng, -o.pushVelocity, o.pushVelocity);
        nextPush += uniformOf(pushRng, o.pushIntervalS[0], o.pushIntervalS[1]);
      }
      for (int sub = 0; sub < decimation; ++sub) {
        for (int j = 0; j < nj; ++j)
          s.jointPos[mjOrder[j]] = mj.d->qpos[7 + j], s.jointVel[mjOrder[j]] = mj.d->qvel[6 + j];
        const std::vector<double> tau =
            ctl.actuatorTorque(target, s.jointPos, s.jointVel, o.motorStrength);
        for (int j = 0; j < nj; ++j) mj.d->qfrc_applied[6 + j] = tau[mjOrder[j]];
        mj_step(mj.m, mj.d);
      }
    }
    // A full contact buffer drops contacts (MuJoCo 2.x warns and goes on): not a valid episode.
    if (mj.d->warning[mjWARN_CONTACTFULL].number > 0 || mj.d->warning[mjWARN_CNSTRFULL].number > 0)
      throw std::runtime_error("MuJoCo's contact or constraint buffer overflowed (nconmax " +
                               std::to_string(mj.m->nconmax) + ", njmax " +
                               std::to_string(mj.m->njmax) + "): the episode dropped contacts");
    const int n = std::max(1, fell ? k : k - 1);  // states measured (after each decision)
    r.lengthS.push_back(k * meta.controlDt);
    r.fell.push_back(fell ? 1 : 0);
    r.meanVx.push_back(sumVx / n);
    r.meanSpeed.push_back(sumSpeed / n);
    r.linVelErr2.push_back(sumLin / n);
    r.yawRateErr2.push_back(sumYaw / n);
    r.limitExcess.push_back(limitExcess);
    for (int i = 0; i < 3; ++i) r.command[i].push_back(s.command[i]);
  }
  return r;
}

}  // namespace diffloco::mj
