#include "train/evaluation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "envs/locomotion_env.h"
#include "envs/terms.h"

namespace diffloco::train {

using torch::Tensor;

void overrideSimulation(envs::TaskConfig& task, const std::string& contact, double simDt,
                        int iterations) {
  if (!contact.empty()) task.sim.contact.model = sim::parseContactModel(contact);
  if (simDt > 0) {
    task.sim.dt = simDt;
    task.decimation();  // throws if the env step is not a multiple of the new simulator step
  }
  if (iterations > 0) task.sim.contact.iterations = iterations;
}

void scaleResetNoise(envs::TaskConfig& task, double scale) {
  if (!(scale >= 0)) throw std::invalid_argument("reset noise scale must be >= 0");
  envs::ResetConfig& r = task.reset;
  for (double* x : {&r.jointPosNoise, &r.jointVelNoise, &r.basePosNoise, &r.baseRotNoise,
                    &r.baseLinVelNoise, &r.baseAngVelNoise})
    *x *= scale;
}

namespace {

// One command for every episode: degenerate ranges, drawn at reset only, none standing.
void holdCommand(envs::TaskConfig& t, const std::array<double, 3>& c) {
  if (!t.commands.enabled)
    throw std::invalid_argument("--command: task '" + t.name + "' has no commands");
  t.commands.linVelX = {c[0], c[0]};
  t.commands.linVelY = {c[1], c[1]};
  t.commands.angVelZ = {c[2], c[2]};
  t.commands.resampleS = 0;
  t.commands.standingFraction = 0;
}

// Each env's largest distance so far from its tile's centre along x or y, and where it first got
// `climb` out: through a face (bearing within 22.5 degrees of an axis: 1) or near a corner (0),
// where a pyramid's rings have convex corners the legs can take one at a time (-1: not yet).
void measureReach(const envs::LocomotionEnv& env, double climb, std::vector<double>& reach,
                  std::vector<int>& face) {
  const Tensor q = env.q().detach().contiguous();
  const Tensor level = env.terrainLevels().contiguous();
  const Tensor column = env.terrainColumns().contiguous();
  const double* qp = q.data_ptr<double>();
  const int64_t* lp = level.data_ptr<int64_t>();
  const int64_t* cp = column.data_ptr<int64_t>();
  const int nq = static_cast<int>(q.size(1));
  for (size_t i = 0; i < reach.size(); ++i) {
    const double cx = env.terrain().centreX(static_cast<int>(lp[i]));
    const double cy = env.terrain().centreY(static_cast<int>(cp[i]));
    const double dx = std::abs(qp[i * nq] - cx), dy = std::abs(qp[i * nq + 1] - cy);
    reach[i] = std::max({reach[i], dx, dy});
    if (face[i] < 0 && reach[i] >= climb)
      face[i] = envs::throughTileFace(dx, dy) ? 1 : 0;
  }
}

}  // namespace

EvalResult evaluatePolicy(const envs::TaskConfig& task, const PolicyFn& policy,
                          const EvalOptions& o) {
  if (o.numEnvs < 1 || o.episodes < 1)
    throw std::invalid_argument("evaluation: envs and episodes must be >= 1");
  torch::NoGradGuard noGrad;
  envs::EnvOptions eo;
  eo.numEnvs = std::min(o.numEnvs, o.episodes);  // an env beyond the episodes would count none
  eo.threads = o.threads;
  eo.seed = o.seed;
  eo.printSummary = false;
  envs::TaskConfig t = task;
  // The exported file's commands: a yaw rate drawn, as the MuJoCo evaluation draws it.
  t.commands.headingEnabled = false;
  if (o.terrainType == "none") t.terrain.enabled = false;
  if (o.command) holdCommand(t, *o.command);
  if (!o.terrainType.empty() && o.terrainType != "none" && !t.terrain.enabled)
    throw std::invalid_argument("--terrain " + o.terrainType + ": task '" + task.name +
                                "' has no terrain (only --terrain none applies)");
  envs::LocomotionEnv env(t, eo);
  std::string terrain = t.terrain.enabled ? "curriculum" : "plane";
  if (t.terrain.enabled && !o.terrainType.empty()) {
    const int level = o.terrainLevel >= 0 ? o.terrainLevel : t.terrain.rows - 1;
    env.setTerrainTile(level, o.terrainType);
    env.seed(o.seed);
    env.reset();
    terrain = o.terrainType + " level " + std::to_string(level);
  }
  // Env i collects exactly quota(i) episodes, fixed before any runs: the first episodes % n envs
  // one more than the others. Counting whichever episodes end first would over-represent the
  // short (failed) ones.
  const int n = env.numEnvs();
  auto quota = [&](int i) { return o.episodes / n + (i < o.episodes % n ? 1 : 0); };

  EvalResult r;
  r.task = task.name;
  r.contact = sim::toString(task.sim.contact.model);
  r.simDt = task.sim.dt;
  r.iterations = task.sim.contact.iterations;
  r.commands = task.commands.enabled;
  r.terrain = terrain;
  if (t.terrain.enabled) r.ground = env.terrain().field;
  // Climbing on one type's tiles: past half a tile from the tile's centre.
  const bool onTile = t.terrain.enabled && !o.terrainType.empty();
  if (onTile) r.climbDistance = 0.5 * env.terrain().tileSize;
  std::vector<double> reach(n, 0.0);
  std::vector<int> face(n, -1);
  // Joint limits of the URDF (joints without limits: an infinite range): the largest excess of
  // any joint in an episode, as MuJoCo's evaluation measures it.
  const auto& joints = env.robot().model.joints;
  const int nj = static_cast<int>(joints.size());
  Tensor lower = torch::empty({nj}, torch::kDouble), upper = torch::empty({nj}, torch::kDouble);
  for (int j = 0; j < nj; ++j) {
    lower[j] = joints[j].lower;
    upper[j] = joints[j].upper;
  }

  // Per-env accumulators of the running episode.
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  Tensor ret = torch::zeros({n}, f64), steps = torch::zeros({n}, f64);
  Tensor sumVx = torch::zeros({n}, f64), sumSpeed = torch::zeros({n}, f64);
  Tensor sumLin = torch::zeros({n}, f64), sumYaw = torch::zeros({n}, f64);
  Tensor excess = torch::zeros({n}, f64);
  std::vector<int> done(n, 0);
  const Tensor zeroPose = torch::zeros({env.numActions()}, f64);
  int collected = 0;
  Tensor obs = env.observations();
  Tensor restarted = torch::zeros({0}, torch::kLong);
  // A step limit guards against a policy that never ends an episode (cannot happen with a
  // time-out, but a task without one would loop forever).
  const long maxSteps = static_cast<long>(quota(0) + 1) * env.maxEpisodeLength() + 10;
  for (long t = 0; t < maxSteps && collected < o.episodes; ++t) {
    // Speed and tracking errors of the state the action is taken in (legged_gym's tracking
    // terms: base-axes x/y velocity against the command, yaw rate as the base-axes z rate).
    if (onTile) measureReach(env, r.climbDistance, reach, face);
    const envs::StateFeatures s = envs::stateFeatures(env.q(), env.v(), zeroPose);
    const Tensor cmd = env.commands().to(torch::kDouble);
    if (o.onStep) o.onStep(env.q(), env.v(), cmd, restarted);
    sumVx += s.linVelW.select(1, 0);
    sumSpeed += s.linVelB.select(1, 0);
    sumLin += (cmd.narrow(1, 0, 2) - s.linVelB.narrow(1, 0, 2)).square().sum(1);
    sumYaw += (cmd.select(1, 2) - s.angVelB.select(1, 2)).square();
    const Tensor jointPos = env.q().narrow(1, 7, nj);
    excess = torch::maximum(excess, torch::maximum(lower - jointPos, jointPos - upper).amax(1));

    const Tensor action = policy(obs.to(torch::kFloat));
    const envs::StepResult res = env.step(action);
    ret += res.rewards.to(torch::kDouble);
    steps += 1;
    obs = res.obs;

    const Tensor ids = res.extras.resetIds.to(torch::kLong).contiguous();
    restarted = ids;
    const auto* id = ids.data_ptr<int64_t>();
    for (int64_t k = 0; k < ids.numel(); ++k) {
      const int64_t i = id[k];
      if (done[i] < quota(static_cast<int>(i))) {
        const double len = steps[i].item<double>();
        EpisodeStats e;
        e.ret = ret[i].item<double>();
        e.lengthS = len * env.envDt();
        e.fell = res.terminated[i].item<bool>();
        e.meanVx = sumVx[i].item<double>() / len;
        e.meanSpeed = sumSpeed[i].item<double>() / len;
        e.linVelErr2 = sumLin[i].item<double>() / len;
        e.yawRateErr2 = sumYaw[i].item<double>() / len;
        e.climbed = onTile && reach[i] >= r.climbDistance;
        e.climbedFace = e.climbed && face[i] == 1;
        e.limitExcess = std::max(0.0, excess[i].item<double>());
        r.episodes.push_back(e);
        ++done[i];
        ++collected;
      }
      for (Tensor* acc : {&ret, &steps, &sumVx, &sumSpeed, &sumLin, &sumYaw, &excess}) (*acc)[i] = 0;
      reach[i] = 0;
      face[i] = -1;
    }
  }
  if (env.terrainLevels().defined())
    r.terrainLevelMean = env.terrainLevels().to(torch::kDouble).mean().item<double>();
  return r;
}

std::pair<double, double> EvalResult::meanStd(double EpisodeStats::*field) const {
  if (episodes.empty()) return {std::nan(""), std::nan("")};
  double m = 0;
  for (const auto& e : episodes) m += e.*field;
  m /= episodes.size();
  double v = 0;
  for (const auto& e : episodes) v += (e.*field - m) * (e.*field - m);
  return {m, std::sqrt(v / episodes.size())};
}

int EvalResult::falls() const {
  int f = 0;
  for (const auto& e : episodes) f += e.fell;
  return f;
}

int EvalResult::climbed() const {
  int c = 0;
  for (const auto& e : episodes) c += e.climbed;
  return c;
}

int EvalResult::climbedFace() const {
  int c = 0;
  for (const auto& e : episodes) c += e.climbedFace;
  return c;
}

namespace {
double pooledRms(const std::vector<EpisodeStats>& eps, double EpisodeStats::*field) {
  double num = 0, den = 0;
  for (const auto& e : eps) {
    num += e.*field * e.lengthS;
    den += e.lengthS;
  }
  return den > 0 ? std::sqrt(num / den) : std::nan("");
}
}  // namespace

double EvalResult::linVelRms() const { return pooledRms(episodes, &EpisodeStats::linVelErr2); }
double EvalResult::yawRateRms() const { return pooledRms(episodes, &EpisodeStats::yawRateErr2); }

std::map<std::string, double> EvalResult::summary() const {
  std::map<std::string, double> m;
  auto put = [&](const std::string& name, double EpisodeStats::*field) {
    const auto [mean, sd] = meanStd(field);
    m[name + "_mean"] = mean;
    m[name + "_std"] = sd;
  };
  put("return", &EpisodeStats::ret);
  put("length_s", &EpisodeStats::lengthS);
  put("forward_velocity", &EpisodeStats::meanVx);
  put("heading_speed", &EpisodeStats::meanSpeed);
  m["episodes"] = static_cast<double>(episodes.size());
  m["falls"] = falls();
  m["sim_dt"] = simDt;
  m["solver_iterations"] = iterations;
  if (commands) {
    m["lin_vel_rms"] = linVelRms();
    m["yaw_rate_rms"] = yawRateRms();
  }
  if (!std::isnan(terrainLevelMean)) m["terrain_level_mean"] = terrainLevelMean;
  if (!std::isnan(climbDistance)) {
    m["climbed"] = climbed();
    m["climbed_face"] = climbedFace();
  }
  if (!episodes.empty() && !std::isnan(episodes[0].limitExcess)) {
    double worst = 0;
    int beyond = 0;
    for (const auto& e : episodes) {
      worst = std::max(worst, e.limitExcess);
      beyond += e.limitExcess > 0;
    }
    m["joint_limit_excess_max"] = worst;
    m["episodes_beyond_joint_limits"] = beyond;
  }
  return m;
}

}  // namespace diffloco::train
