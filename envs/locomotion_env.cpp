#include "envs/locomotion_env.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "config/did_you_mean.h"
#include "envs/random_stream.h"
#include "sim/kinematics.h"
#include "sim/pack.h"

namespace diffloco::envs {

using torch::Tensor;

namespace {

const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);
const auto kI64 = torch::TensorOptions().dtype(torch::kLong);

std::vector<std::int64_t> toVector(const Tensor& ids) {
  const Tensor c = ids.contiguous();
  const std::int64_t* p = c.data_ptr<std::int64_t>();
  return {p, p + c.numel()};
}

Tensor fromEigen(const sim::VecX& x) {
  return torch::from_blob(const_cast<double*>(x.data()), {x.size()}, kF64).clone();
}

std::string formatParams(const TermParams& p) {
  std::string s;
  for (const auto& [k, v] : p.values()) {
    s += (s.empty() ? "" : ", ") + k + "=";
    if (v.size() == 1) {
      s += fmt::format("{:g}", v[0]);
    } else {
      s += "[";
      for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:g}", i ? ", " : "", v[i]);
      s += "]";
    }
  }
  return s;
}

// A stair tread narrower than the robot's foot cannot hold it: a task error naming the key.
void checkTreads(const TaskConfig& task, const sim::Model& m) {
  double foot = 0;
  for (const auto& f : m.feet) foot = std::max(foot, 2 * f.radius);
  for (const auto& t : task.terrain.types)
    if ((t.name == "pyramid_stairs" || t.name == "pyramid_stairs_inverted") && t.run < foot)
      throw std::runtime_error(
          fmt::format("{}: terrain.types.{}.run: a tread of {} m is narrower than the robot's "
                      "foot ({} m across)",
                      task.source, t.name, t.run, foot));
}

// The differentiable mode runs the stages' VJP, whose tape holds a bounded number of Gauss-Seidel
// sweeps and soft sub-steps (sim::notInStepVjp): a task error naming the key.
void checkStepVjp(const TaskConfig& task) {
  if (sim::notInStepVjp<sim::Quadruped>(task.sim).empty()) return;
  const sim::ContactOptions& c = task.sim.contact;
  const bool soft = c.model == sim::ContactModel::Soft;
  throw std::runtime_error(fmt::format(
      "{}: sim.{}: {} is more than the differentiable mode's VJP holds (at most {})", task.source,
      soft ? "soft_substeps" : "iterations", soft ? c.softSubsteps : c.iterations,
      soft ? sim::Quadruped::MAXSOFTSUBSTEPS : sim::Quadruped::MAXGSITER));
}

}  // namespace

LocomotionEnv::LocomotionEnv(TaskConfig task, const EnvOptions& options)
    : task_(std::move(task)), options_(options), robot_(loadRobot(task_.robot)) {
  n_ = options.numEnvs;
  if (n_ < 1) throw std::invalid_argument("LocomotionEnv: numEnvs must be >= 1");
  if (options.firstEnv < 0) throw std::invalid_argument("LocomotionEnv: firstEnv must be >= 0");
  streams_.resize(n_);
  seed(options.seed);
  sim::Model& m = robot_.model;
  for (auto& j : m.joints) j.armature = task_.armature;
  if (task_.sim.actuator.effort <= 0) task_.sim.actuator.effort = robot_.torqueLimit;
  decimation_ = task_.decimation();
  maxSteps_ = task_.maxEpisodeSteps();
  if (task_.terrain.enabled) {
    checkTreads(task_, m);
    terrain_ = generateTerrain(task_.terrain);
    task_.sim.contact.terrain = terrain_.field;
    if (task_.terrain.backwardSmoothing > 0)
      task_.sim.contact.backwardTerrain = std::make_shared<const sim::HeightField>(
          sim::smoothHeightField(*terrain_.field, task_.terrain.backwardSmoothing));
  }
  link_ = std::make_unique<SimLink>(m, task_.sim, n_, options.threads, options.simPath);

  initConstants();
  const std::int64_t historyDepth = initTerms();
  initState(historyDepth);
  reset();
  setDifferentiable(options.differentiable);
  if (options.printSummary) {
    std::istringstream lines(summary());
    for (std::string line; std::getline(lines, line);) spdlog::info("{}", line);
  }
}

// The task's constants that the terms read (TermContext::k).
void LocomotionEnv::initConstants() {
  const sim::Model& m = robot_.model;
  const int nj = m.nj();
  k_.defaultJointPos = fromEigen(robot_.defaultJointPos);
  k_.effort = torch::empty({nj}, kF64);
  for (int j = 0; j < nj; ++j)
    k_.effort[j] = std::min(task_.sim.actuator.effort, m.joints[j].effort);
  k_.jointLower = torch::empty({nj}, kF64);
  k_.jointUpper = torch::empty({nj}, kF64);
  for (int j = 0; j < nj; ++j) {
    k_.jointLower[j] = m.joints[j].lower;
    k_.jointUpper[j] = m.joints[j].upper;
  }
  k_.footRadius = torch::empty({m.nfeet()}, kF64);
  for (int f = 0; f < m.nfeet(); ++f) k_.footRadius[f] = m.feet[f].radius;
  const int nl = static_cast<int>(m.legSpheres.size());
  k_.legSphereRadius = torch::empty({nl}, kF64);
  for (int l = 0; l < nl; ++l) k_.legSphereRadius[l] = m.legSpheres[l].radius;
  k_.actuator = task_.sim.actuator;
  k_.envDt = task_.envDt;
  k_.link = link_.get();
  k_.terrain = terrain_.field;
  k_.terrainSlopes = task_.sim.contact.backwardTerrain;
}

// Sizes, per-column observation scale and noise, reward weights, what the terms read; returns
// the number of last actions to keep (the deepest latency or action_history term).
std::int64_t LocomotionEnv::initTerms() {
  const sim::Model& m = robot_.model;
  const int nj = m.nj();
  std::vector<double> scale, noise;
  for (const auto& t : task_.observations) {
    int dim = 0;
    try {  // a term's parameters that give no size (height_scan's grid, action_history's steps)
      dim = observationSize(*t.def, t.params, nj, m.nfeet());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(task_.source + ": " + e.what());
    }
    numObs_ += dim;
    scale.insert(scale.end(), dim, t.scale);
    noise.insert(noise.end(), dim, t.noise);
  }
  if (std::any_of(scale.begin(), scale.end(), [](double s) { return s != 1; }))
    obsScale_ = torch::tensor(scale, kF64);
  std::vector<double> criticScale;
  for (const auto& t : task_.criticObservations) {
    int dim = 0;
    try {
      dim = observationSize(*t.def, t.params, nj, m.nfeet());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(task_.source + ": critic_observations: " + e.what());
    }
    numCriticObs_ += dim;
    criticScale.insert(criticScale.end(), dim, t.scale);
    int from = -1;
    for (size_t j = 0; j < task_.observations.size() && from < 0; ++j)
      if (task_.observations[j].name == t.name &&
          task_.observations[j].params.values() == t.params.values())
        from = static_cast<int>(j);
    criticFromPolicy_.push_back(from);
  }
  if (std::any_of(criticScale.begin(), criticScale.end(), [](double s) { return s != 1; }))
    criticObsScale_ = torch::tensor(criticScale, kF64);
  if (task_.randomization.observationNoise &&
      std::any_of(noise.begin(), noise.end(), [](double s) { return s > 0; }))
    obsNoise_ = torch::tensor(noise, kF64);
  std::vector<double> weights;
  for (const auto& t : task_.rewards) {
    weights.push_back(t.weight);
    rewardNames_.push_back(t.name);
  }
  rewardWeights_ = torch::tensor(weights, kF64);
  // The last actions: as many as the deepest latency or action_history term needs.
  std::int64_t historyDepth = 0;
  if (task_.randomization.actionDelay)
    historyDepth = static_cast<std::int64_t>(task_.randomization.actionDelaySteps.hi) + 1;
  for (const auto* list :
       {&task_.observations, &task_.criticObservations, &task_.rewards, &task_.terminations})
    for (const auto& t : *list) {
      needs_ |= t.def->needs;
      const auto& p = t.params.values();
      auto it = p.find("phase_offsets");
      if (it != p.end() && static_cast<int>(it->second.size()) != m.nfeet())
        throw std::runtime_error(task_.source + ": " + t.name +
                                 ".phase_offsets needs one entry per foot (" +
                                 std::to_string(m.nfeet()) + ")");
      if (t.name == "action_history")  // steps checked by observationSize above
        historyDepth = std::max(historyDepth, static_cast<std::int64_t>(p.at("steps").at(0)));
      if (t.def->check) try {
          t.def->check(t.params);
        } catch (const std::invalid_argument& e) {
          throw std::runtime_error(task_.source + ": " + t.name + ": " + e.what());
        }
    }
  return historyDepth;
}

// The state tensors and each env's terrain tile.
void LocomotionEnv::initState(std::int64_t historyDepth) {
  const int nj = robot_.model.nj();
  standing_ = fromEigen(robot_.standingConfiguration());
  command_ = torch::zeros({n_, 3}, kF64);
  heading_.assign(n_, 0.0);
  lastAction_ = torch::zeros({n_, nj}, kF64);
  episodeStep_ = torch::zeros({n_}, kI64);
  pushAt_ = torch::zeros({n_}, kI64);
  episodeSums_ = torch::zeros({n_, static_cast<std::int64_t>(rewardNames_.size())}, kF64);
  q_ = asTensor(link_->batch().q);
  v_ = asTensor(link_->batch().v);
  origin_ = torch::zeros({n_, 2}, kF64);
  commandedPath_ = torch::zeros({n_, 2}, kF64);
  if (historyDepth > 0) actionHistory_ = torch::zeros({n_, historyDepth, nj}, kF64);
  if (task_.randomization.actionDelay) actionDelay_ = torch::zeros({n_}, kI64);
  if (terrain_.field) {  // columns round-robin over the world's envs, levels drawn
    const TerrainConfig& tc = task_.terrain;
    terrainColumn_ = torch::empty({n_}, kI64);
    terrainLevel_ = torch::empty({n_}, kI64);
    for (int i = 0; i < n_; ++i) {
      terrainColumn_[i] = (options_.firstEnv + i) % tc.columns;
      const int top = std::min(tc.curriculum.maxInitLevel, tc.rows - 1);
      terrainLevel_[i] = tc.level >= 0 ? tc.level
                                       : std::min<std::int64_t>(
                                             top, static_cast<std::int64_t>(uniform(i, 0, top + 1)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resets, commands, pushes.

void LocomotionEnv::resetEnvs(const Tensor& idsT, bool episodesEnded) {
  const auto ids = toVector(idsT);
  const std::int64_t k = static_cast<std::int64_t>(ids.size());
  const sim::Model& m = robot_.model;
  const int nq = m.nq(), nv = m.nv(), nj = m.nj();
  ResetConfig r = task_.reset;  // its noise scaled by the curriculum's factor
  for (double* x : {&r.jointPosNoise, &r.jointVelNoise, &r.basePosNoise, &r.baseRotNoise,
                    &r.randomYaw, &r.baseLinVelNoise, &r.baseAngVelNoise})
    *x *= resetNoiseScale_;
  sim::Data& d = *link_->kinematicsData()[0];
  if (terrain_.field) updateTerrainLevels(ids, episodesEnded);
  const sim::HeightField* ground = terrain_.field.get();
  const double* origin = origin_.data_ptr<double>();
  Tensor qRows = torch::empty({k, nq}, kF64), vRows = torch::empty({k, nv}, kF64);
  for (std::int64_t i = 0; i < k; ++i) {
    Eigen::Map<sim::VecX> q(qRows.data_ptr<double>() + i * nq, nq);
    Eigen::Map<sim::VecX> v(vRows.data_ptr<double>() + i * nv, nv);
    q = robot_.standingConfiguration();
    const std::int64_t e = ids[i];
    for (int j = 0; j < nj; ++j) q[7 + j] += uniform(e, -r.jointPosNoise, r.jointPosNoise);
    q[0] += origin[2 * e] + uniform(e, -r.basePosNoise, r.basePosNoise);
    q[1] += origin[2 * e + 1] + uniform(e, -r.basePosNoise, r.basePosNoise);
    // Yaw, then a tilt about a random horizontal axis.
    const double axisAngle = uniform(e, 0, 2 * M_PI);
    const sim::Quat rot =
        sim::Quat(Eigen::AngleAxisd(uniform(e, -r.randomYaw, r.randomYaw), sim::Vec3::UnitZ())) *
        sim::Quat(Eigen::AngleAxisd(uniform(e, -r.baseRotNoise, r.baseRotNoise),
                                    sim::Vec3(std::cos(axisAngle), std::sin(axisAngle), 0)));
    q.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
    // Height: the lowest foot sphere starts `footClearance` above the ground under it, whatever
    // the sampled joint angles and tilt (no initial penetration impulse).
    q[2] = 0;
    sim::forwardKinematics(m, d, q);
    double lowest = 1e300;
    for (const auto& f : m.feet) {
      const sim::Vec3 c = sim::worldPoint(d, f.body, f.offset);
      lowest = std::min(lowest, c.z() - f.radius - sim::groundHeight(ground, c.x(), c.y()));
    }
    q[2] = r.footClearance - lowest;
    for (int a = 0; a < 3; ++a) v[a] = uniform(e, -r.baseLinVelNoise, r.baseLinVelNoise);
    for (int a = 3; a < 6; ++a) v[a] = uniform(e, -r.baseAngVelNoise, r.baseAngVelNoise);
    for (int j = 0; j < nj; ++j) v[6 + j] = uniform(e, -r.jointVelNoise, r.jointVelNoise);
  }
  // The differentiable mode replaces rows out of place: the other envs keep their history.
  if (differentiable_) {
    q_ = q_.index_copy(0, idsT, qRows);
    v_ = v_.index_copy(0, idsT, vRows);
    lastAction_ = lastAction_.index_fill(0, idsT, 0.0);
  } else {
    q_.index_copy_(0, idsT, qRows);
    v_.index_copy_(0, idsT, vRows);
    lastAction_.index_fill_(0, idsT, 0.0);
  }
  episodeStep_.index_fill_(0, idsT, 0);
  episodeSums_.index_fill_(0, idsT, 0.0);
  commandedPath_.index_fill_(0, idsT, 0.0);
  if (task_.commands.enabled) sampleCommands(ids);
  if (task_.commands.headingEnabled) steerToHeadings();

  const RandomizationConfig& rnd = task_.randomization;
  if (rnd.pushes) {
    auto* at = pushAt_.data_ptr<std::int64_t>();
    for (auto id : ids)
      at[id] = std::max<std::int64_t>(
          1, std::lround(uniform(id, rnd.pushIntervalS.lo, rnd.pushIntervalS.hi) / task_.envDt));
  }
  if (rnd.friction || rnd.addedMass || rnd.motorStrength) {
    // New tensors (not in-place): graph nodes recorded before keep the values they ran with.
    Tensor fr = link_->friction().clone();
    Tensor dm =
        link_->addedMass().defined() ? link_->addedMass().clone() : torch::zeros({n_}, kF64);
    Tensor ms = link_->motorStrength().defined() ? link_->motorStrength().clone()
                                                 : torch::ones({n_}, kF64);
    double* frp = fr.data_ptr<double>();
    double* dmp = dm.data_ptr<double>();
    double* msp = ms.data_ptr<double>();
    for (auto id : ids) {
      if (rnd.friction) frp[id] = uniform(id, rnd.frictionRange.lo, rnd.frictionRange.hi);
      if (rnd.addedMass) dmp[id] = uniform(id, rnd.addedMassRange.lo, rnd.addedMassRange.hi);
      if (rnd.motorStrength)
        msp[id] = uniform(id, rnd.motorStrengthRange.lo, rnd.motorStrengthRange.hi);
    }
    link_->setWorldParams(fr, rnd.addedMass ? dm : Tensor(), rnd.motorStrength ? ms : Tensor());
  }
  if (rnd.actionDelay) {
    // A delay of k in {lo, ..., hi} steps; the history below starts empty (the default pose's
    // action).
    std::int64_t* delay = actionDelay_.data_ptr<std::int64_t>();
    const auto lo = static_cast<std::int64_t>(rnd.actionDelaySteps.lo);
    const auto span = static_cast<std::int64_t>(rnd.actionDelaySteps.hi) - lo + 1;
    for (auto id : ids)
      delay[id] = lo + std::min<std::int64_t>(span - 1, static_cast<std::int64_t>(uniform(id, 0, span)));
  }
  if (actionHistory_.defined())
    actionHistory_ = differentiable_ ? actionHistory_.index_fill(0, idsT, 0.0)
                                     : actionHistory_.index_fill_(0, idsT, 0.0);
}

void LocomotionEnv::updateTerrainLevels(const std::vector<std::int64_t>& ids, bool episodesEnded) {
  const TerrainConfig& tc = task_.terrain;
  std::int64_t* level = terrainLevel_.data_ptr<std::int64_t>();
  const std::int64_t* column = terrainColumn_.data_ptr<std::int64_t>();
  double* origin = origin_.data_ptr<double>();
  const Tensor q = q_.detach().contiguous(), cmd = command_.contiguous();
  const double* qp = q.data_ptr<double>();
  const double* cp = cmd.data_ptr<double>();
  const double* path = commandedPath_.data_ptr<double>();
  const std::int64_t* steps = episodeStep_.data_ptr<std::int64_t>();
  const int nq = robot_.model.nq();
  for (auto e : ids) {
    if (episodesEnded && tc.level < 0 && tc.curriculum.enabled) {
      const double dx = std::abs(qp[e * nq] - origin[2 * e]);
      const double dy = std::abs(qp[e * nq + 1] - origin[2 * e + 1]);
      const double walked = std::hypot(dx, dy);
      const double far = tc.curriculum.promote * terrain_.tileSize;
      const bool promoted = tc.curriculum.promoteThrough == "face"
                                ? std::max(dx, dy) > far && throughTileFace(dx, dy)
                                : walked > far;
      const std::string& against = tc.curriculum.demoteAgainst;
      const bool alongPath = against == "commanded_path", fallsOnly = against == "fall";
      const double commanded = alongPath
                                   ? std::hypot(path[2 * e], path[2 * e + 1])
                                   : std::hypot(cp[3 * e], cp[3 * e + 1]) * task_.episodeLengthS;
      if ((alongPath || fallsOnly) && steps[e] < maxSteps_) {  // ended before its time: a fall
        level[e] = std::max<std::int64_t>(0, level[e] - 1);
      } else if (promoted) {
        level[e] += 1;
        if (level[e] >= tc.rows)
          level[e] = tc.curriculum.pastLast == "stay"
                         ? tc.rows - 1
                         : std::min<std::int64_t>(
                               tc.rows - 1, static_cast<std::int64_t>(uniform(e, 0, tc.rows)));
      } else if (!fallsOnly && walked < tc.curriculum.demote * commanded) {
        level[e] = std::max<std::int64_t>(0, level[e] - 1);
      }
    }
    origin[2 * e] = terrain_.centreX(static_cast<int>(level[e]));
    origin[2 * e + 1] = terrain_.centreY(static_cast<int>(column[e]));
  }
}

void LocomotionEnv::integrateCommandedPath() {
  // The base-frame command (v_x*, v_y*) turned into the world by the base's yaw.
  const Tensor q = q_.detach().contiguous(), cmd = command_.contiguous();
  const double* qp = q.data_ptr<double>();
  const double* cp = cmd.data_ptr<double>();
  double* path = commandedPath_.data_ptr<double>();
  const int nq = robot_.model.nq();
  for (int e = 0; e < n_; ++e) {
    const double* quat = qp + e * nq + 3;  // w, x, y, z
    const double yaw = std::atan2(2 * (quat[0] * quat[3] + quat[1] * quat[2]),
                                  1 - 2 * (quat[2] * quat[2] + quat[3] * quat[3]));
    const double c = std::cos(yaw), s = std::sin(yaw);
    path[2 * e] += (c * cp[3 * e] - s * cp[3 * e + 1]) * task_.envDt;
    path[2 * e + 1] += (s * cp[3 * e] + c * cp[3 * e + 1]) * task_.envDt;
  }
}

void LocomotionEnv::logTerrainLevels(std::map<std::string, double>& log) const {
  // The mean level, and per sub-terrain type (the stairs may lag the slopes).
  const std::int64_t* level = terrainLevel_.data_ptr<std::int64_t>();
  const std::int64_t* column = terrainColumn_.data_ptr<std::int64_t>();
  std::map<std::string, std::pair<double, int>> byType;
  double sum = 0;
  for (int e = 0; e < n_; ++e) {
    auto& [typeSum, count] = byType[terrain_.columnType[static_cast<std::size_t>(column[e])]];
    typeSum += static_cast<double>(level[e]);
    count += 1;
    sum += static_cast<double>(level[e]);
  }
  log["Curriculum/terrain_level"] = sum / n_;
  for (const auto& [type, s] : byType) log["Curriculum/terrain_level_" + type] = s.first / s.second;
}

void LocomotionEnv::setTerrainTile(int level, const std::string& type) {
  if (!terrain_.field) throw std::invalid_argument("setTerrainTile: the task has no terrain");
  if (level < 0 || level >= terrain_.rows)
    throw std::invalid_argument(fmt::format("terrain level {} is out of range (0 to {})", level,
                                            terrain_.rows - 1));
  const std::vector<int> cols = terrain_.columnsOf(type);
  if (cols.empty())
    throw std::invalid_argument("the task's terrain has no sub-terrain '" + type + "'" +
                                config::didYouMean(type, terrain_.columnType));
  task_.terrain.level = level;  // keeps the curriculum from moving the envs
  for (int i = 0; i < n_; ++i) {
    terrainLevel_[i] = level;
    terrainColumn_[i] = cols[i % cols.size()];
  }
}

namespace {
std::size_t rewardIndex(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    throw std::runtime_error("reward term '" + name + "' is not among the task's rewards" +
                             config::didYouMean(name, names));
  return static_cast<std::size_t>(it - names.begin());
}
}  // namespace

void LocomotionEnv::setRewardWeight(const std::string& name, double weight) {
  const auto i = static_cast<std::int64_t>(rewardIndex(rewardNames_, name));
  if (rewardWeights_[i].item<double>() == weight) return;
  rewardWeights_ = rewardWeights_.clone();  // never modify a tensor a graph may hold
  rewardWeights_[i] = weight;
}

double LocomotionEnv::rewardWeight(const std::string& name) const {
  return rewardWeights_[static_cast<std::int64_t>(rewardIndex(rewardNames_, name))].item<double>();
}

void LocomotionEnv::sampleCommands(const std::vector<std::int64_t>& ids) {
  const CommandConfig& c = task_.commands;
  command_ = command_.clone();  // never modify a tensor a graph may hold
  double* p = command_.data_ptr<double>();
  for (auto id : ids) {
    double* row = p + 3 * id;
    const double s = commandScale_;
    row[0] = uniform(id, s * c.linVelX.lo, s * c.linVelX.hi);
    row[1] = uniform(id, s * c.linVelY.lo, s * c.linVelY.hi);
    row[2] = c.headingEnabled ? 0.0 : uniform(id, s * c.angVelZ.lo, s * c.angVelZ.hi);
    if (c.headingEnabled) heading_[id] = uniform(id, c.heading.lo, c.heading.hi);
    if (uniform(id, 0, 1) < c.standingFraction) {
      row[0] = row[1] = row[2] = 0;
      heading_[id] = std::numeric_limits<double>::quiet_NaN();
    }
  }
}

void LocomotionEnv::steerToHeadings() {
  const CommandConfig& c = task_.commands;
  const Tensor q = q_.detach().contiguous();
  const double* qp = q.data_ptr<double>();
  const int nq = robot_.model.nq();
  command_ = command_.clone();  // never modify a tensor a graph may hold
  double* p = command_.data_ptr<double>();
  for (int e = 0; e < n_; ++e) {
    if (std::isnan(heading_[e])) continue;  // a standing command stays zero
    const double* quat = qp + e * nq + 3;     // w, x, y, z
    const double yaw = std::atan2(2 * (quat[0] * quat[3] + quat[1] * quat[2]),
                                  1 - 2 * (quat[2] * quat[2] + quat[3] * quat[3]));
    const double error = std::remainder(heading_[e] - yaw, 2 * M_PI);  // in [-pi, pi]
    p[3 * e + 2] = std::clamp(c.headingGain * error, commandScale_ * c.angVelZ.lo,
                              commandScale_ * c.angVelZ.hi);
  }
}

namespace {
// A curriculum factor: finite and >= 0.
double checkedScale(const char* what, double scale) {
  if (!(scale >= 0 && std::isfinite(scale)))
    throw std::invalid_argument(fmt::format("{}: {} is not a finite scale >= 0", what, scale));
  return scale;
}
}  // namespace

void LocomotionEnv::setCommandScale(double scale) {
  commandScale_ = checkedScale("setCommandScale", scale);
}

void LocomotionEnv::setResetNoiseScale(double scale) {
  resetNoiseScale_ = checkedScale("setResetNoiseScale", scale);
}

void LocomotionEnv::setEpisodeLengthScale(double scale) {
  const double s = checkedScale("setEpisodeLengthScale", scale);
  maxSteps_ = std::max<int>(1, static_cast<int>(std::lround(s * task_.maxEpisodeSteps())));
}

void LocomotionEnv::setCommandResampleScale(double scale) {
  commandResampleScale_ = checkedScale("setCommandResampleScale", scale);
}

void LocomotionEnv::applyPushes() {
  const RandomizationConfig& rnd = task_.randomization;
  if (!rnd.pushes) return;
  const Tensor ids = (episodeStep_ == pushAt_).nonzero().squeeze(1);
  if (ids.numel() == 0) return;
  const auto idv = toVector(ids);
  Tensor delta = torch::zeros({ids.numel(), v_.size(1)}, kF64);
  auto* at = pushAt_.data_ptr<std::int64_t>();
  for (size_t i = 0; i < idv.size(); ++i) {
    const std::int64_t e = idv[i];
    delta[i][0] = uniform(e, -rnd.pushVelocity, rnd.pushVelocity);
    delta[i][1] = uniform(e, -rnd.pushVelocity, rnd.pushVelocity);
    at[e] += std::max<std::int64_t>(
        1, std::lround(uniform(e, rnd.pushIntervalS.lo, rnd.pushIntervalS.hi) / task_.envDt));
  }
  if (differentiable_)
    v_ = v_.index_add(0, ids, delta);
  else
    v_.index_add_(0, ids, delta);
}

// ---------------------------------------------------------------------------------------------
// Observations and the step.

Tensor LocomotionEnv::computeObservations(TermContext& c, const Tensor& ids,
                                          std::vector<Tensor>* partsOut) {
  std::vector<Tensor> parts;
  parts.reserve(task_.observations.size());
  for (const auto& t : task_.observations) parts.push_back(t.def->eval(c, t.params));
  Tensor o = torch::cat(parts, 1);
  if (partsOut) *partsOut = std::move(parts);
  if (obsNoise_.defined()) {
    // U(-1, 1) per value, each row from its env's stream.
    const std::int64_t rows = o.size(0);
    const std::vector<std::int64_t> env =
        ids.defined() ? toVector(ids) : std::vector<std::int64_t>();
    Tensor u = torch::empty({rows, numObs_}, kF64);
    double* p = u.data_ptr<double>();
    for (std::int64_t r = 0; r < rows; ++r)
      for (int j = 0; j < numObs_; ++j)
        p[r * numObs_ + j] = uniform(ids.defined() ? env[r] : r, -1, 1);
    o = o + u * obsNoise_;
  }
  if (obsScale_.defined()) o = o * obsScale_;
  return o;
}

Tensor LocomotionEnv::computeCriticObservations(TermContext& c, const Tensor& ids,
                                                const std::vector<Tensor>& policyParts) {
  if (numCriticObs_ == 0) return {};
  if (needs_ & TermDef::kWorldParams) {
    // The draws of the envs' current episodes (a new one's after a reset).
    const auto rows = [&](const Tensor& x) { return ids.defined() ? x.index_select(0, ids) : x; };
    const std::int64_t n = c.q.size(0);
    c.friction = rows(link_->friction());
    c.motorStrength = link_->motorStrength().defined() ? rows(link_->motorStrength())
                                                       : torch::ones({n}, kF64);
    c.addedMass =
        link_->addedMass().defined() ? rows(link_->addedMass()) : torch::zeros({n}, kF64);
    c.actionDelay = actionDelay_.defined() ? rows(actionDelay_).to(torch::kDouble)
                                           : torch::zeros({n}, kF64);
  }
  std::vector<Tensor> parts;
  parts.reserve(task_.criticObservations.size());
  for (size_t i = 0; i < task_.criticObservations.size(); ++i) {
    const auto& t = task_.criticObservations[i];
    const int from = criticFromPolicy_[i];
    parts.push_back(from >= 0 ? policyParts.at(from) : t.def->eval(c, t.params));
  }
  Tensor o = torch::cat(parts, 1);
  if (criticObsScale_.defined()) o = o * criticObsScale_;
  return o.to(options_.dtype);
}

void LocomotionEnv::observeAll(TermContext& c) {
  std::vector<Tensor> parts;
  obs_ = computeObservations(c, {}, &parts).to(options_.dtype);
  criticObs_ = computeCriticObservations(c, {}, parts);
}

TermContext LocomotionEnv::resetContext(const Tensor& ids) {
  TermContext c(k_);
  if (ids.defined()) {
    // Rows just reset hold constants: no history to select through.
    c.q = q_.index_select(0, ids).detach();
    c.v = v_.index_select(0, ids).detach();
    c.command = command_.index_select(0, ids);
  } else {
    c.q = q_;
    c.v = v_;
    c.command = command_;
  }
  const std::int64_t n = c.q.size(0);
  c.vStart = c.v;
  c.qSub = c.q;
  c.vSub = c.v;
  c.action = c.lastAction = torch::zeros({n, robot_.model.nj()}, kF64);
  if (actionHistory_.defined())
    c.actions = torch::zeros({n, actionHistory_.size(1), robot_.model.nj()}, kF64);
  c.qTargetSub = k_.defaultJointPos.expand({n, robot_.model.nj()});
  c.time = torch::zeros({n}, kF64);
  return c;
}

Tensor LocomotionEnv::reset() {
  torch::NoGradGuard noGrad;  // every state becomes a constant
  resetEnvs(torch::arange(n_, kI64), false);
  if (differentiable_) {
    q_ = q_.detach();
    v_ = v_.detach();
    lastAction_ = lastAction_.detach();
    if (actionHistory_.defined()) actionHistory_ = actionHistory_.detach();
  }
  TermContext c = resetContext(Tensor());
  observeAll(c);
  return obs_;
}

StepResult LocomotionEnv::step(const Tensor& actions) {
  const int nj = robot_.model.nj();
  if (actions.dim() != 2 || actions.size(0) != n_ || actions.size(1) != nj)
    throw std::invalid_argument(
        fmt::format("LocomotionEnv::step: actions must be [{}, {}]", n_, nj));
  std::optional<torch::NoGradGuard> noGrad;
  if (!differentiable_) noGrad.emplace();

  const Tensor a = actions.to(torch::kDouble).clamp(-task_.actionClip, task_.actionClip);
  const Tensor qTarget = jointTargets(a);
  applyPushes();

  TermContext c(k_);
  // In the sampling mode q_, v_ are views of the simulator's state: clone what must survive it.
  if (needs_ & TermDef::kStepStart) c.vStart = differentiable_ ? v_ : v_.clone();
  std::int64_t nFailed = 0;
  const Tensor failed = simulate(qTarget, c, nFailed);  // [N] bool, undefined when none failed
  episodeStep_ += 1;
  if (terrain_.field && task_.terrain.level < 0 && task_.terrain.curriculum.enabled &&
      task_.terrain.curriculum.demoteAgainst == "commanded_path")
    integrateCommandedPath();  // only the curriculum reads it
  c.q = q_;
  c.v = v_;
  c.qTargetSub = qTarget;
  c.action = a;
  c.lastAction = lastAction_;
  c.actions = actionHistory_;
  c.command = command_;
  if (needs_ & TermDef::kTime) c.time = episodeStep_.to(torch::kDouble) * task_.envDt;

  // Rewards: weighted terms [N, T], summed.
  std::vector<Tensor> values;
  values.reserve(task_.rewards.size());
  for (const auto& t : task_.rewards) values.push_back(t.def->eval(c, t.params));
  const Tensor terms = torch::stack(values, 1) * rewardWeights_;
  const Tensor rewards = terms.sum(1);
  const Tensor termsDetached = terms.detach();
  episodeSums_ += termsDetached;

  // Terminations; a failed simulation ends the episode like a fall.
  Tensor terminated = failed.defined() ? failed.clone() : torch::zeros({n_}, torch::kBool);
  for (const auto& t : task_.terminations) terminated |= t.def->eval(c, t.params);
  const Tensor timeOut = episodeStep_ >= maxSteps_;
  const Tensor truncated = timeOut & terminated.logical_not();
  const Tensor done = terminated | timeOut;

  resampleDueCommands(c);  // seen by the observations, not by this step's rewards
  if (task_.commands.headingEnabled) {
    steerToHeadings();
    c.command = command_;
  }

  StepResult res;
  std::vector<Tensor> parts;
  res.extras.terminalObs = computeObservations(c, {}, &parts).to(options_.dtype);
  res.extras.terminalCriticObs = computeCriticObservations(c, {}, parts);
  lastAction_ = a;
  obs_ = res.extras.terminalObs;
  criticObs_ = res.extras.terminalCriticObs;
  const Tensor ids = done.nonzero().squeeze(1);
  res.extras.resetIds = ids;
  if (ids.numel() > 0) endEpisodes(ids, res.extras.log);
  res.obs = obs_;
  res.criticObs = criticObs_;
  res.rewards = rewards.to(options_.dtype);
  res.terminated = terminated;
  res.truncated = truncated;
  res.extras.rewardTerms = termsDetached;
  res.extras.log["Env/sim_failures"] = static_cast<double>(nFailed);
  if (terrain_.field) logTerrainLevels(res.extras.log);
  return res;
}

Tensor LocomotionEnv::jointTargets(const Tensor& a) {
  const int nj = robot_.model.nj();
  Tensor applied = a;  // the action the joints get: a, or the one `delay` steps before it
  if (actionHistory_.defined()) {
    const std::int64_t depth = actionHistory_.size(1);
    actionHistory_ = torch::cat({a.unsqueeze(1), actionHistory_.narrow(1, 0, depth - 1)}, 1);
  }
  if (actionDelay_.defined())
    applied =
        actionHistory_.gather(1, actionDelay_.view({n_, 1, 1}).expand({n_, 1, nj})).squeeze(1);
  return torch::add(k_.defaultJointPos, applied, task_.actionScale);
}

Tensor LocomotionEnv::simulate(const Tensor& qTarget, TermContext& c, std::int64_t& nFailed) {
  Tensor failed;
  if (differentiable_) {
    for (int s = 0; s < decimation_; ++s) {
      if (s == decimation_ - 1 && (needs_ & TermDef::kSubstep)) {
        c.qSub = q_;
        c.vSub = v_;
      }
      SimStepResult r = simStep(*link_, q_, v_, qTarget);
      q_ = r.q;
      v_ = r.v;
      if (link_->lastFailures() > 0) failed = failed.defined() ? failed | r.failed : r.failed;
    }
    if (failed.defined()) nFailed = failed.sum().item<std::int64_t>();
    return failed;
  }
  batch::BatchSim& b = link_->batch();
  asTensor(b.qTarget).copy_(qTarget);
  std::vector<std::uint8_t> any;
  for (int s = 0; s < decimation_; ++s) {
    if (s == decimation_ - 1 && (needs_ & TermDef::kSubstep)) {
      c.qSub = q_.clone();
      c.vSub = v_.clone();
    }
    if (b.step() > 0) {
      if (any.empty()) any.assign(n_, 0);
      for (int w = 0; w < n_; ++w) any[w] |= b.failed[w];
    }
  }
  if (!any.empty()) {
    failed = torch::from_blob(any.data(), {n_}, torch::kUInt8).to(torch::kBool);
    nFailed = failed.sum().item<std::int64_t>();
  }
  return failed;
}

void LocomotionEnv::resampleDueCommands(TermContext& c) {
  if (!(task_.commands.enabled && task_.commands.resampleS > 0)) return;
  const std::int64_t every = std::max<std::int64_t>(
      1, std::lround(commandResampleScale_ * task_.commands.resampleS / task_.envDt));
  const Tensor due = (episodeStep_ % every == 0).nonzero().squeeze(1);
  if (due.numel() > 0) {
    sampleCommands(toVector(due));
    c.command = command_;
  }
}

void LocomotionEnv::endEpisodes(const Tensor& ids, std::map<std::string, double>& log) {
  // Episode statistics of the envs that finish, before their counters are reset (plain loops:
  // torch reductions over a few rows cost more than the whole step's terms).
  const auto idv = toVector(ids);
  const std::int64_t nt = episodeSums_.size(1);
  const double* sums = episodeSums_.data_ptr<double>();
  const std::int64_t* steps = episodeStep_.data_ptr<std::int64_t>();
  std::vector<double> mean(nt, 0.0);
  double length = 0;
  for (auto id : idv) {
    for (std::int64_t i = 0; i < nt; ++i) mean[i] += sums[id * nt + i] / idv.size();
    length += steps[id] * task_.envDt / idv.size();
  }
  for (std::int64_t i = 0; i < nt; ++i) log["Episode/rew_" + rewardNames_[i]] = mean[i];
  log["Episode/length_s"] = length;
  log["Episode/count"] = static_cast<double>(idv.size());
  resetEnvs(ids, true);
  TermContext rc = resetContext(ids);
  std::vector<Tensor> parts;
  obs_ = obs_.index_copy(0, ids, computeObservations(rc, ids, &parts).to(options_.dtype));
  if (numCriticObs_ > 0)
    criticObs_ = criticObs_.index_copy(0, ids, computeCriticObservations(rc, ids, parts));
}

// ---------------------------------------------------------------------------------------------
// Modes and state access.

void LocomotionEnv::setDifferentiable(bool on) {
  if (on == differentiable_) return;
  if (on) {
    checkStepVjp(task_);
    // Own tensors: the simulator's matrices become scratch for simStep.
    q_ = q_.clone();
    v_ = v_.clone();
  } else {
    batch::BatchSim& b = link_->batch();
    copyToMatrix(q_.detach(), b.q);
    copyToMatrix(v_.detach(), b.v);
    q_ = asTensor(b.q);
    v_ = asTensor(b.v);
    lastAction_ = lastAction_.detach();
    if (actionHistory_.defined()) actionHistory_ = actionHistory_.detach();
    obs_ = obs_.detach();
    if (criticObs_.defined()) criticObs_ = criticObs_.detach();
  }
  differentiable_ = on;
}

void LocomotionEnv::detach() {
  q_ = q_.detach();
  v_ = v_.detach();
  lastAction_ = lastAction_.detach();
  if (actionHistory_.defined()) actionHistory_ = actionHistory_.detach();
  obs_ = obs_.detach();
  if (criticObs_.defined()) criticObs_ = criticObs_.detach();
}

void LocomotionEnv::seed(std::uint64_t seed) {
  // Env k of the world starts at deriveSeed(seed, k): distinct, well-spread states.
  for (int i = 0; i < n_; ++i)
    streams_[i] = deriveSeed(seed, static_cast<std::uint64_t>(options_.firstEnv + i));
}

double LocomotionEnv::uniform(std::int64_t env, double lo, double hi) {
  return lo + (hi - lo) * nextUniform(streams_[env]);
}

void LocomotionEnv::setState(const Tensor& q, const Tensor& v) {
  torch::NoGradGuard noGrad;
  if (differentiable_) {
    q_ = q.to(torch::kDouble).clone();
    v_ = v.to(torch::kDouble).clone();
  } else {
    copyToMatrix(q, link_->batch().q);
    copyToMatrix(v, link_->batch().v);
  }
  TermContext c = resetContext(Tensor());
  c.action = lastAction_;
  if (actionHistory_.defined()) c.actions = actionHistory_;
  c.time = episodeStep_.to(torch::kDouble) * task_.envDt;
  observeAll(c);
}

void LocomotionEnv::setCommands(const Tensor& commands) {
  if (commands.dim() != 2 || commands.size(0) != n_ || commands.size(1) != 3)
    throw std::invalid_argument(fmt::format("setCommands: commands must be [{}, 3]", n_));
  command_ = commands.detach().to(torch::kDouble).clone();
}

std::map<std::string, Tensor> LocomotionEnv::stateDict() const {
  std::map<std::string, Tensor> s;
  s["q"] = q_.detach().clone();
  s["v"] = v_.detach().clone();
  s["last_action"] = lastAction_.detach().clone();
  if (task_.commands.headingEnabled)
    s["heading"] = torch::tensor(heading_, torch::TensorOptions().dtype(torch::kDouble));
  s["obs"] = obs_.detach().clone();
  if (criticObs_.defined()) s["critic_obs"] = criticObs_.detach().clone();
  s["episode_step"] = episodeStep_.clone();
  s["episode_sums"] = episodeSums_.clone();
  s["commands"] = command_.clone();
  s["push_at"] = pushAt_.clone();
  s["friction"] = link_->friction().clone();
  if (link_->addedMass().defined()) s["added_mass"] = link_->addedMass().clone();
  if (link_->motorStrength().defined()) s["motor_strength"] = link_->motorStrength().clone();
  if (actionHistory_.defined()) s["action_history"] = actionHistory_.detach().clone();
  if (actionDelay_.defined()) s["action_delay"] = actionDelay_.clone();
  std::vector<std::int64_t> streams(streams_.begin(), streams_.end());
  s["random_streams"] = torch::tensor(streams, torch::kLong);
  s["origin"] = origin_.clone();
  if (terrain_.field) {
    s["terrain_level"] = terrainLevel_.clone();
    s["terrain_column"] = terrainColumn_.clone();
  }
  return s;
}

void LocomotionEnv::loadStateDict(const std::map<std::string, Tensor>& state) {
  torch::NoGradGuard noGrad;
  auto get = [&](const std::string& key, std::vector<std::int64_t> shape) {
    auto it = state.find(key);
    if (it == state.end()) throw std::runtime_error("env state: missing '" + key + "'");
    if (!shape.empty() && it->second.sizes() != torch::IntArrayRef(shape))
      throw std::runtime_error(fmt::format("env state: '{}' has shape {}, expected {}", key,
                                           fmt::join(it->second.sizes(), "x"),
                                           fmt::join(shape, "x")));
    return it->second;
  };
  const sim::Model& m = robot_.model;
  const Tensor q = get("q", {n_, m.nq()}), v = get("v", {n_, m.nv()});
  const Tensor mass = state.count("added_mass") ? get("added_mass", {n_}) : Tensor();
  const Tensor strength = state.count("motor_strength") ? get("motor_strength", {n_}) : Tensor();
  link_->setWorldParams(get("friction", {n_}).to(torch::kDouble).clone(),
                        mass.defined() ? mass.to(torch::kDouble).clone() : Tensor(),
                        strength.defined() ? strength.to(torch::kDouble).clone() : Tensor());
  if (actionHistory_.defined())
    actionHistory_ =
        get("action_history", {n_, actionHistory_.size(1), m.nj()}).to(torch::kDouble).clone();
  if (actionDelay_.defined()) actionDelay_ = get("action_delay", {n_}).to(torch::kLong).clone();
  if (differentiable_) {
    q_ = q.to(torch::kDouble).clone();
    v_ = v.to(torch::kDouble).clone();
  } else {
    copyToMatrix(q, link_->batch().q);
    copyToMatrix(v, link_->batch().v);
  }
  lastAction_ = get("last_action", {n_, m.nj()}).to(torch::kDouble).clone();
  obs_ = get("obs", {n_, numObs_}).to(options_.dtype).clone();
  if (numCriticObs_ > 0)
    criticObs_ = get("critic_obs", {n_, numCriticObs_}).to(options_.dtype).clone();
  episodeStep_ = get("episode_step", {n_}).to(torch::kLong).clone();
  episodeSums_ = get("episode_sums", {n_, episodeSums_.size(1)}).to(torch::kDouble).clone();
  command_ = get("commands", {n_, 3}).to(torch::kDouble).clone();
  if (task_.commands.headingEnabled) {
    const Tensor h = get("heading", {n_}).to(torch::kDouble).contiguous();
    heading_.assign(h.data_ptr<double>(), h.data_ptr<double>() + n_);
  }
  pushAt_ = get("push_at", {n_}).to(torch::kLong).clone();
  if (state.count("origin")) origin_ = get("origin", {n_, 2}).to(torch::kDouble).clone();
  if (terrain_.field) {
    terrainLevel_ = get("terrain_level", {n_}).to(torch::kLong).clone();
    terrainColumn_ = get("terrain_column", {n_}).to(torch::kLong).clone();
  }
  const Tensor streams = get("random_streams", {n_}).to(torch::kLong).contiguous();
  for (int i = 0; i < n_; ++i)
    streams_[i] = static_cast<std::uint64_t>(streams.data_ptr<std::int64_t>()[i]);
}

namespace {
std::vector<std::pair<std::string, int>> layoutOf(const std::vector<TermConfig>& terms,
                                                  const sim::Model& m) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& t : terms)
    out.emplace_back(t.name, observationSize(*t.def, t.params, m.nj(), m.nfeet()));
  return out;
}
}  // namespace

std::vector<std::pair<std::string, int>> LocomotionEnv::observationLayout() const {
  return layoutOf(task_.observations, robot_.model);
}

std::vector<std::pair<std::string, int>> LocomotionEnv::criticObservationLayout() const {
  return layoutOf(task_.criticObservations, robot_.model);
}

std::string LocomotionEnv::summary() const {
  const auto& s = task_.sim;
  const auto& m = robot_.model;
  std::string out;
  auto line = [&](const std::string& l) { out += l + "\n"; };
  line(fmt::format("task '{}' ({}) on robot '{}': {} envs, {}", task_.name, task_.source,
                   robot_.name, n_, differentiable_ ? "differentiable" : "sampling"));
  line(fmt::format("  env dt {:g} s = {} x sim dt {:g} s; episode {:g} s ({} steps)", task_.envDt,
                   decimation_, s.dt, task_.episodeLengthS, maxSteps_));
  std::string contact =
      fmt::format("contact {}, mu {:g}", sim::toString(s.contact.model), s.contact.mu);
  if (s.contact.model == sim::ContactModel::Soft)
    contact += fmt::format(", kp {:g}, kd {:g}, kf {:g}, {} sub-steps", s.contact.softKp,
                           s.contact.softKd, s.contact.softKf, s.contact.softSubsteps);
  else
    contact += fmt::format(", {} Gauss-Seidel iterations", s.contact.iterations);
  if (s.contact.model == sim::ContactModel::Smoothed ||
      s.contact.model == sim::ContactModel::StraightThrough)
    contact += fmt::format(", kappa {:g}, cutoff {:g} m", s.contact.kappa, s.contact.cutoff);
  if (task_.terrain.enabled)
    contact += fmt::format(", terrain contact {}", sim::toString(s.contact.terrainContact));
  line("  " + contact);
  line(fmt::format("  actuator PD kp {:g}, kd {:g}, effort {:g} N m, armature {:g} kg m^2",
                   s.actuator.kp, s.actuator.kd, s.actuator.effort, task_.armature));
  std::string joints;
  for (const auto& j : m.joints) joints += (joints.empty() ? "" : " ") + j.name;
  line(fmt::format("  action [{}]: q* = q_default + {:g} * clip(a, -{:g}, {:g}); joints: {}",
                   m.nj(), task_.actionScale, task_.actionClip, task_.actionClip, joints));
  if (task_.commands.enabled) {
    const auto& c = task_.commands;
    line(
        fmt::format("  commands: v_x [{:g}, {:g}], v_y [{:g}, {:g}], w_z [{:g}, {:g}], resample "
                    "every {:g} s, standing {:g}",
                    c.linVelX.lo, c.linVelX.hi, c.linVelY.lo, c.linVelY.hi, c.angVelZ.lo,
                    c.angVelZ.hi, c.resampleS, c.standingFraction));
    if (c.headingEnabled)
      line(fmt::format("  heading command: heading [{:g}, {:g}] rad, w_z = {:g} * heading error",
                       c.heading.lo, c.heading.hi, c.headingGain));
  }
  const auto& r = task_.randomization;
  std::string rnd;
  if (r.friction)
    rnd += fmt::format(" friction [{:g}, {:g}];", r.frictionRange.lo, r.frictionRange.hi);
  if (r.addedMass)
    rnd +=
        fmt::format(" added base mass [{:g}, {:g}] kg;", r.addedMassRange.lo, r.addedMassRange.hi);
  if (r.pushes)
    rnd += fmt::format(" pushes +-{:g} m/s every [{:g}, {:g}] s;", r.pushVelocity,
                       r.pushIntervalS.lo, r.pushIntervalS.hi);
  if (r.motorStrength)
    rnd += fmt::format(" motor strength [{:g}, {:g}];", r.motorStrengthRange.lo,
                       r.motorStrengthRange.hi);
  if (r.actionDelay)
    rnd += fmt::format(" action delay {:g}-{:g} steps;", r.actionDelaySteps.lo, r.actionDelaySteps.hi);
  if (obsNoise_.defined()) rnd += " observation noise;";
  line("  randomisation:" + (rnd.empty() ? std::string(" none") : rnd));
  if (terrain_.field) {
    const auto& tc = task_.terrain;
    std::string cols;
    for (const auto& t : terrain_.columnType) cols += (cols.empty() ? "" : " ") + t;
    line(
        fmt::format("  terrain: {} levels x {} tiles of {:g} m ({} x {} samples, {:g} m grid, {} "
                    "interpolant), columns: {}; {}",
                    tc.rows, tc.columns, terrain_.tileSize, terrain_.field->nx, terrain_.field->ny,
                    tc.spacing, sim::toString(terrain_.field->interpolant), cols,
                    tc.level >= 0 ? fmt::format("every env on level {}", tc.level)
                    : tc.curriculum.enabled
                        ? fmt::format("curriculum from levels 0-{}", tc.curriculum.maxInitLevel)
                        : std::string("levels fixed at their start")));
  } else {
    line("  ground: the plane z = 0");
  }

  line(fmt::format("observations ({}):", numObs_));
  line(fmt::format("  {:>5}  {:<18} {:>4} {:>6} {:>6}  {}", "index", "name", "dim", "scale",
                   "noise", "definition"));
  int index = 0;
  const auto layout = observationLayout();
  for (size_t i = 0; i < layout.size(); ++i) {
    const auto& t = task_.observations[i];
    line(fmt::format("  {:>5}  {:<18} {:>4} {:>6g} {:>6g}  {}{}", index, t.name, layout[i].second,
                     t.scale, t.noise, t.def->formula,
                     t.params.values().empty() ? "" : " (" + formatParams(t.params) + ")"));
    index += layout[i].second;
  }
  if (numCriticObs_ > 0) {
    line(fmt::format("critic observations ({}, noise-free):", numCriticObs_));
    line(fmt::format("  {:>5}  {:<18} {:>4} {:>6}  {}", "index", "name", "dim", "scale",
                     "definition"));
    index = 0;
    const auto critic = criticObservationLayout();
    for (size_t i = 0; i < critic.size(); ++i) {
      const auto& t = task_.criticObservations[i];
      line(fmt::format("  {:>5}  {:<18} {:>4} {:>6g}  {}{}", index, t.name, critic[i].second,
                       t.scale, t.def->formula,
                       t.params.values().empty() ? "" : " (" + formatParams(t.params) + ")"));
      index += critic[i].second;
    }
  }
  line("rewards:");
  line(fmt::format("  {:<22} {:>8}  {}", "name", "weight", "definition"));
  for (const auto& t : task_.rewards)
    line(fmt::format("  {:<22} {:>8g}  {}{}", t.name, t.weight, t.def->formula,
                     t.params.values().empty() ? "" : " (" + formatParams(t.params) + ")"));
  line("terminations:");
  for (const auto& t : task_.terminations)
    line(fmt::format("  {:<22} {}{}", t.name, t.def->formula,
                     t.params.values().empty() ? "" : " (" + formatParams(t.params) + ")"));
  line(fmt::format("  {:<22} episode longer than {:g} s (truncation)", "time_out",
                   task_.episodeLengthS));
  line(fmt::format("  {:<22} non-finite simulator state", "sim_failure"));
  return out;
}

}  // namespace diffloco::envs
