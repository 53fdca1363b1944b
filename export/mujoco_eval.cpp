#include "export/mujoco_eval.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "envs/terrain.h"
#include "io/atomic_file.h"
#include "mujoco/joint_order.h"
#include "mujoco/mujoco_compat.h"
#include "mujoco/mujoco_model.h"
#include "runtime/controller.h"

namespace diffloco::mj {

namespace {

using deploy::RobotState;

// ---- set-up: the MuJoCo options from the file and the caller, the control decimation
MjcfOptions mjcfOptions(const MujocoEvalOptions& o, const deploy::PolicyMetadata& meta) {
  MjcfOptions mo;
  mo.timestep = o.timestep > 0 ? o.timestep : meta.simDt;
  mo.friction = o.friction > 0 ? o.friction : meta.friction;
  mo.integrator = o.integrator, mo.cone = o.cone, mo.solver = o.solver;
  mo.iterations = o.iterations, mo.noslipIterations = o.noslipIterations;
  mo.terrain = o.terrain.get();
  if (o.terrain && o.spawn.empty())
    throw std::invalid_argument("mujoco eval: a terrain needs spawn points");
  return mo;
}

int decimationOf(const deploy::PolicyMetadata& meta, double timestep) {
  const double ratio = meta.controlDt / timestep;
  const int decimation = static_cast<int>(std::lround(ratio));
  if (decimation < 1 || std::abs(ratio - decimation) > 1e-9 * ratio)
    throw std::runtime_error("mujoco eval: the time step " + std::to_string(timestep) +
                             " s does not divide the control period " +
                             std::to_string(meta.controlDt) + " s");
  return decimation;
}

void checkConditions(const MujocoEvalOptions& o) {
  if (o.actionDelaySteps < 0 || !(o.motorStrength > 0) || o.pushVelocity < 0 ||
      !(o.pushIntervalS[0] > 0) || o.pushIntervalS[1] < o.pushIntervalS[0])
    throw std::invalid_argument(
        "mujoco eval: conditions need delay >= 0, motor strength > 0, push velocity >= 0 and a "
        "push interval 0 < a <= b");
}

// As sim::BatchSim::setAddedBaseMass: the base's inertia scales with its mass.
void addBaseMass(MujocoModel& mj, double added) {
  if (added == 0) return;
  const int base = mj.m->jnt_bodyid[0];  // the free joint's body
  const double scale = (mj.m->body_mass[base] + added) / mj.m->body_mass[base];
  if (!(scale > 0))
    throw std::invalid_argument("mujoco eval: an added base mass of " + std::to_string(added) +
                                " kg leaves none");
  mj.m->body_mass[base] *= scale;
  for (int i = 0; i < 3; ++i) mj.m->body_inertia[3 * base + i] *= scale;
}

// What one episode adds up: the metrics of every state a decision is taken in.
struct EpisodeSums {
  double vx = 0, speed = 0, lin = 0, yaw = 0, limitExcess = 0;
  double reach = 0;  // the base's largest distance from its spawn point along x or y [m]
  int face = -1;     // first past the climb distance through a face (1) or near a corner (0)
};

// The episodes of one policy in one MuJoCo model: resets and commands draw from `rng_`, noise
// and pushes from their own streams, so that every condition meets the same episodes.
class Episodes {
 public:
  Episodes(const std::string& policyPath, const sim::Model& robotModel, const MujocoEvalOptions& o)
      : o_(o),
        ctl_(policyPath, controllerConfig(robotModel)),
        meta_(ctl_.metadata()),
        model_(robotModel),
        nj_(robotModel.nj()),
        rng_(o.seed),
        noiseRng_(o.seed ^ 0x6e6f697365ULL),
        pushRng_(o.seed ^ 0x70757368ULL) {
    for (auto& j : model_.joints) j.armature = meta_.armature;  // as LocomotionEnv
    mo_ = mjcfOptions(o, meta_);
    decimation_ = decimationOf(meta_, mo_.timestep);
    const std::string mjcf = toMjcf(model_, mo_);
    if (!o.mjcfPath.empty()) io::writeFileAtomic(o.mjcfPath, mjcf);
    mj_ = std::make_unique<MujocoModel>(mjcf);
    if (o.terrain) loadHeightField(mj_->m, *o.terrain);
    addBaseMass(*mj_, o.addedBaseMass);
    checkConditions(o);
    mj_forward(mj_->m, mj_->d);  // the floor's pose, which the ray casts read
    for (const auto& t : meta_.observations) {
      if (t.name == "height_scan") scan_ = &t;
      noise_[t.name] = o.observationNoise ? t.noise : 0.0;
    }
    // s_.jointPos and the torques are in the model's joint order; MuJoCo's hinge j is model
    // joint mjOrder_[j] (the identity unless the robot file reorders the joints across legs).
    mjOrder_ = mujocoJointOrder(model_);
    const double lengthS = o.episodeLengthS > 0 ? o.episodeLengthS : meta_.episodeLengthS;
    if (!(lengthS > 0))
      throw std::runtime_error(policyPath + ": no episode length (metadata or options)");
    steps_ = std::max(1, static_cast<int>(std::lround(lengthS / meta_.controlDt)));
    // Default configuration: base at the default height, level; default joint angles. A zero
    // action commands the default angles (the delay's fill).
    q0_ = sim::neutralConfiguration(model_);
    q0_[2] = meta_.defaultBaseHeight;
    defaultTarget_.assign(nj_, 0.0);
    for (int i = 0; i < meta_.numJoints(); ++i) {
      q0_[7 + ctl_.robotIndex()[i]] = meta_.defaultJointPos[i];
      defaultTarget_[ctl_.robotIndex()[i]] = meta_.defaultJointPos[i];
    }
    s_.jointPos.resize(nj_);
    s_.jointVel.resize(nj_);
    r_.timestep = mo_.timestep;
    r_.controlDt = meta_.controlDt;
    r_.episodeLengthS = lengthS;
    r_.engineOptions = engineOptions(mj_->m);
  }

  MujocoEpisodes run() {
    for (int ep = 0; ep < o_.episodes; ++ep) episode(ep);
    return std::move(r_);
  }

 private:
  static deploy::ControllerConfig controllerConfig(const sim::Model& robotModel) {
    deploy::ControllerConfig cc;  // the policy's joints mapped onto the model's by name
    for (const auto& j : robotModel.joints) cc.jointNames.push_back(j.name);
    return cc;
  }

  double uniform(std::mt19937_64& g, double lo, double hi) {
    return lo == hi ? lo : std::uniform_real_distribution<double>(lo, hi)(g);
  }

  // Height of the ground under (x, y): a ray cast down onto the ground's geoms (group 0: the
  // hfield and the boxes continuing it; the robot's geoms are in group 3), the plane z = 0
  // without terrain.
  double ground(double x, double y) const {
    if (!o_.terrain) return 0.0;
    static const mjtByte groundOnly[6] = {1, 0, 0, 0, 0, 0};
    const mjtNum from[3] = {x, y, 100.0}, down[3] = {0, 0, -1};
    int geom = -1;
    const mjtNum dist = mj::ray(mj_->m, mj_->d, from, down, groundOnly, true, -1, &geom);
    return geom >= 0 ? 100.0 - dist : 0.0;  // off the ground: its slab's level
  }

  // ---- an episode's start: pose (on the terrain's spawn point), command, controller
  void reset(int ep) {
    VecX q = q0_, v = VecX::Zero(model_.nv());
    for (int j = 0; j < nj_; ++j) q[7 + j] += uniform(rng_, -o_.jointPosNoise, o_.jointPosNoise);
    if (o_.terrain) {
      const auto& p = o_.spawn[ep % o_.spawn.size()];
      q[0] = p[0], q[1] = p[1];
      q[2] += ground(p[0], p[1]);
    }
    spawn_ = {q[0], q[1]};
    if (meta_.commandsEnabled)
      s_.command = {uniform(rng_, meta_.linVelX[0], meta_.linVelX[1]),
                    uniform(rng_, meta_.linVelY[0], meta_.linVelY[1]),
                    uniform(rng_, meta_.angVelZ[0], meta_.angVelZ[1])};
    else
      s_.command = {0, 0, 0};
    if (o_.command) s_.command = *o_.command;  // drawn first: the same resets either way
    mj_resetData(mj_->m, mj_->d);
    toMujocoState(model_, q, v, mj_->d->qpos, mj_->d->qvel);
    mj_forward(mj_->m, mj_->d);
    ctl_.startPolicy();
  }

  // ---- the robot state from MuJoCo: qvel's linear part is in world axes, the angular part in
  // base axes (free joint). Leaves the base's rotation matrix in R.
  void observe(mjtNum R[9]) {
    const mjtNum* qp = mj_->d->qpos;
    const mjtNum* qv = mj_->d->qvel;
    for (int i = 0; i < 4; ++i) s_.baseQuat[i] = qp[3 + i];
    mju_quat2Mat(R, qp + 3);
    for (int i = 0; i < 3; ++i) {
      s_.baseLinVel[i] = R[0 + i] * qv[0] + R[3 + i] * qv[1] + R[6 + i] * qv[2];  // R^T v
      s_.baseAngVel[i] = qv[3 + i];
    }
    s_.baseHeight = qp[2] - ground(qp[0], qp[1]);
    if (scan_) {
      const auto points = deploy::heightScanPoints(*scan_, qp[0], qp[1], std::atan2(R[3], R[0]));
      s_.heightScan.resize(points.size());
      for (size_t i = 0; i < points.size(); ++i)
        s_.heightScan[i] = qp[2] - ground(points[i][0], points[i][1]);
    }
    for (int j = 0; j < nj_; ++j)
      s_.jointPos[mjOrder_[j]] = qp[7 + j], s_.jointVel[mjOrder_[j]] = qv[6 + j];
  }

  // Adds the state a decision is taken in (the env's convention: after the step) to `sums`;
  // true when it is a fall (or not finite).
  bool measure(const mjtNum R[9], EpisodeSums& sums) const {
    const mjtNum* qv = mj_->d->qvel;
    sums.vx += qv[0];
    const double hx = R[0], hy = R[3], hn = std::hypot(hx, hy);
    sums.speed += hn > 0 ? (qv[0] * hx + qv[1] * hy) / hn : 0.0;
    sums.lin += std::pow(s_.command[0] - s_.baseLinVel[0], 2) +
                std::pow(s_.command[1] - s_.baseLinVel[1], 2);
    sums.yaw += std::pow(s_.command[2] - s_.baseAngVel[2], 2);
    const double tilt = std::acos(std::clamp(R[8], -1.0, 1.0));
    bool finite = std::isfinite(mj_->d->qpos[2]);
    for (int i = 0; i < mj_->m->nv; ++i) finite &= std::isfinite(qv[i]);
    return !finite || (meta_.terminationHeight && s_.baseHeight < *meta_.terminationHeight) ||
           (meta_.terminationTilt && tilt > *meta_.terminationTilt);
  }

  // The state as the policy senses it: the exported noise of each sensed quantity.
  RobotState sensed() {
    RobotState sensed = s_;
    auto perturb = [&](auto& values, const char* term) {
      const double n = noise_.count(term) ? noise_.at(term) : 0.0;
      if (n > 0)
        for (auto& x : values) x += uniform(noiseRng_, -n, n);
    };
    perturb(sensed.baseLinVel, "base_lin_vel");
    perturb(sensed.baseAngVel, "base_ang_vel");
    perturb(sensed.jointPos, "joint_pos");
    perturb(sensed.jointVel, "joint_vel");
    perturb(sensed.heightScan, "height_scan");
    std::array<double, 1> height{sensed.baseHeight};
    perturb(height, "base_height");
    sensed.baseHeight = height[0];
    return sensed;
  }

  // ---- the physics of one control period: the PD law at every MuJoCo step
  void physics(const std::vector<double>& target) {
    for (int sub = 0; sub < decimation_; ++sub) {
      for (int j = 0; j < nj_; ++j)
        s_.jointPos[mjOrder_[j]] = mj_->d->qpos[7 + j],
        s_.jointVel[mjOrder_[j]] = mj_->d->qvel[6 + j];
      const std::vector<double> tau =
          ctl_.actuatorTorque(target, s_.jointPos, s_.jointVel, o_.motorStrength);
      for (int j = 0; j < nj_; ++j) mj_->d->qfrc_applied[6 + j] = tau[mjOrder_[j]];
      mj_step(mj_->m, mj_->d);
    }
  }

  void episode(int ep) {
    reset(ep);
    std::deque<std::vector<double>> pending(o_.actionDelaySteps, defaultTarget_);
    double nextPush = o_.pushVelocity > 0
                          ? uniform(pushRng_, o_.pushIntervalS[0], o_.pushIntervalS[1])
                          : std::numeric_limits<double>::infinity();
    EpisodeSums sums;
    int k = 0;
    bool fell = false;
    for (; k < steps_ && !fell; ++k) {
      mjtNum R[9];
      observe(R);
      if (o_.onDecision) {
        VecX qOurs, vOurs;  // in the model's joint order, as the callers read them
        fromMujocoState(model_, mj_->d->qpos, mj_->d->qvel, qOurs, vOurs);
        o_.onDecision(ep, k, qOurs, vOurs, s_.command);
      }
      if (k > 0 && measure(R, sums)) {
        fell = true;
        break;
      }
      const double dx = std::abs(mj_->d->qpos[0] - spawn_[0]);
      const double dy = std::abs(mj_->d->qpos[1] - spawn_[1]);
      sums.reach = std::max({sums.reach, dx, dy});
      if (sums.face < 0 && o_.climbDistance > 0 && sums.reach >= o_.climbDistance)
        sums.face = envs::throughTileFace(dx, dy) ? 1 : 0;
      for (int i = 0; i < nj_; ++i) {
        const auto& joint = model_.joints[i];
        sums.limitExcess = std::max(
            {sums.limitExcess, joint.lower - s_.jointPos[i], s_.jointPos[i] - joint.upper});
      }
      pending.push_back(ctl_.policyStep(sensed()));
      const std::vector<double> target = pending.front();
      pending.pop_front();
      if (k * meta_.controlDt >= nextPush) {  // a push: the base's world velocity jumps
        mj_->d->qvel[0] += uniform(pushRng_, -o_.pushVelocity, o_.pushVelocity);
        mj_->d->qvel[1] += uniform(pushRng_, -o_.pushVelocity, o_.pushVelocity);
        nextPush += uniform(pushRng_, o_.pushIntervalS[0], o_.pushIntervalS[1]);
      }
      physics(target);
    }
    // MuJoCo warns and goes on where its memory for contacts or constraints runs out: not a valid
    // episode. 2.2.2: more than nconmax contacts (the rest dropped) or njmax constraint rows (the
    // solver skipped). From 3.x on: more than nconmax contacts (still a cap) or the arena, sized
    // by njmax, full when the contacts (dropped) or the constraints (the solver skipped; Newton
    // falls back to CG) are allocated. mj_resetData clears the counts every episode.
    if (mj_->d->warning[mjWARN_CONTACTFULL].number > 0 ||
        mj_->d->warning[mjWARN_CNSTRFULL].number > 0)
      throw std::runtime_error("MuJoCo's contact or constraint memory ran out (nconmax " +
                               std::to_string(mj_->m->nconmax) + ", njmax " +
                               std::to_string(mj_->m->njmax) +
                               "): the episode dropped contacts or constraints");
    const int n = std::max(1, fell ? k : k - 1);  // states measured (after each decision)
    r_.lengthS.push_back(k * meta_.controlDt);
    r_.fell.push_back(fell ? 1 : 0);
    r_.meanVx.push_back(sums.vx / n);
    r_.meanSpeed.push_back(sums.speed / n);
    r_.linVelErr2.push_back(sums.lin / n);
    r_.yawRateErr2.push_back(sums.yaw / n);
    r_.limitExcess.push_back(sums.limitExcess);
    for (int i = 0; i < 3; ++i) r_.command[i].push_back(s_.command[i]);
    r_.climbed.push_back(o_.climbDistance > 0 && sums.reach >= o_.climbDistance ? 1 : 0);
    r_.climbedFace.push_back(sums.face == 1 ? 1 : 0);
  }

  const MujocoEvalOptions& o_;
  deploy::Controller ctl_;
  const deploy::PolicyMetadata& meta_;
  sim::Model model_;
  const int nj_;
  MjcfOptions mo_;
  int decimation_ = 1, steps_ = 1;
  std::unique_ptr<MujocoModel> mj_;
  const deploy::ObservationTerm* scan_ = nullptr;
  std::map<std::string, double> noise_;  // the exported noise of each term (observationNoise)
  std::vector<int> mjOrder_;
  VecX q0_;
  std::vector<double> defaultTarget_;
  std::mt19937_64 rng_, noiseRng_, pushRng_;
  RobotState s_;
  std::array<double, 2> spawn_{};  // the episode's base (x, y) at reset
  MujocoEpisodes r_;
};

}  // namespace

MujocoEpisodes evaluateInMujoco(const std::string& policyPath, const sim::Model& robotModel,
                                const MujocoEvalOptions& o) {
  return Episodes(policyPath, robotModel, o).run();
}

}  // namespace diffloco::mj
