#include "export/export.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "export/open_policy.h"
#include "export/sha256.h"
#ifdef DIFFLOCO_WITH_ONNX
#include "export/onnx_export.h"
#endif
#include "config/yaml_guard.h"
#include "envs/task_config.h"
#include "io/atomic_file.h"
#include "io/read_file.h"
#include "robots/robot.h"
#include "runs/run_dir.h"
#include "train/config.h"

#ifndef DIFFLOCO_VERSION
#define DIFFLOCO_VERSION "unknown"
#endif

namespace diffloco::deploy {
namespace fs = std::filesystem;
using torch::Tensor;

namespace {

// The init_from chain of a config, newest first (each entry run-relative): each warm start's own
// config.yaml (beside its policy or checkpoint, or in its run folder) names the one before. Stops
// where a config is missing (the chain then ends with the path that could not be followed). A run's
// file named by its run folder and file name (a run folder by its own name): what identifies it,
// without one machine's path.
std::string runRelative(const std::string& path) {
  const fs::path p = fs::path(path).lexically_normal();
  if (fs::is_directory(p) || !p.has_parent_path()) return p.filename().string();
  return (p.parent_path().filename() / p.filename()).string();
}

std::vector<std::string> warmStartChain(std::string initFrom) {
  std::vector<std::string> chain;
  while (!initFrom.empty() && chain.size() < 32) {
    chain.push_back(runRelative(initFrom));
    const fs::path p = initFrom;
    const fs::path config = (fs::is_directory(p) ? p : p.parent_path()) / "config.yaml";
    if (!fs::exists(config)) break;
    try {
      const YAML::Node n =
          config::checkYamlTree(YAML::LoadFile(config.string()), config.string())["init_from"];
      initFrom = n ? n.as<std::string>() : "";
    } catch (const YAML::Exception&) {
      break;
    }
  }
  return chain;
}

// The robot part of the contract: URDF text and hash, base link, feet, leg contacts, gravity.
void describeRobot(const Robot& robot, PolicyMetadata& m) {
  const sim::Model& model = robot.model;
  m.robot = robot.name;
  m.urdf = io::readFile(model.source);
  m.urdfSha256 = sha256Hex(m.urdf);
  m.baseLink = model.bodies.at(0).name;
  m.feet.clear();
  m.footRadius.clear();
  for (const auto& f : model.feet) {
    m.feet.push_back(f.name);
    m.footRadius.push_back(f.radius);
  }
  m.legContacts.clear();
  for (const auto& f : model.legSpheres)
    if (std::find(m.legContacts.begin(), m.legContacts.end(), f.name) == m.legContacts.end())
      m.legContacts.push_back(f.name);
  m.gravity = {model.gravity.x(), model.gravity.y(), model.gravity.z()};
}

ObservationDefinition definitionOf(const std::string& term) {
  const envs::TermDef* def = envs::findTerm(envs::TermKind::Observation, term);
  if (!def) throw std::runtime_error("export: observation term '" + term + "' is not registered");
  const envs::TermDefinition& d = def->definition;
  return {d.formula, d.frame, d.units, d.conventions};
}

std::optional<double> limit(double x) {
  return x >= 1e9 ? std::nullopt : std::optional<double>(x);
}

// How `diffloco eval` evaluates a policy of this task (train/evaluation.cpp,
// export/mujoco_eval.cpp), in the file so that an outside evaluator can reproduce it.
EvaluationProtocol evaluationProtocol(const envs::TaskConfig& t) {
  EvaluationProtocol e;
  if (t.terrain.enabled) {
    // On a height field MuJoCo's pyramidal cone lets feet creep (several contacts per foot):
    // the robot sinks; the elliptic cone with noslip matches our contact (docs/terrain.md).
    e.mujocoCone = "elliptic";
    e.mujocoNoslipIterations = 10;
  }
  e.frictionCombination =
      "simulation.friction is the coefficient of every foot-ground pair; in MuJoCo every geom "
      "gets it, so the pair's (the max of the two) is the same";
  e.commands =
      "uniform in the commands ranges; our simulator resamples every commands.resample_s (a "
      "standing command with probability standing_fraction), MuJoCo keeps one per episode";
  e.trackingRms =
      "sqrt of the mean over every decision of every episode (pooled, step-weighted) of |cmd_xy - "
      "v_xy|^2 (base axes) and (cmd_wz - w_z)^2, transients after a command change included, "
      "measured in the state each decision is taken in";
  e.resets =
      "our simulator: the reset section's distribution; MuJoCo: the default pose at "
      "default_base_height above the ground, joints + U(-0.1, 0.1) rad";
  e.terrain = t.terrain.enabled
                  ? "the task's terrain (task.yaml's terrain section regenerates it exactly; "
                    "beyond its grid the ground continues the edge samples, i.e. the flat border "
                    "at its height, which MuJoCo gets as boxes beside the hfield); one sub-terrain "
                    "type at a level: every episode spawns at the centre of a tile of that type "
                    "and level and walks where its commands take it, heights measured from the "
                    "ground under the point"
                  : "the plane z = 0";
  return e;
}

std::optional<std::vector<double>> range(bool on, const envs::Range& r) {
  return on ? std::optional<std::vector<double>>({r.lo, r.hi}) : std::nullopt;
}

// Everything a task and its robot determine: robot description, joints, action, observations
// with their definitions, timing, actuator, commands, contact, reset, randomisation, terminations.
void describeTask(const envs::TaskConfig& t, const Robot& robot, PolicyMetadata& m) {
  const sim::Model& model = robot.model;
  describeRobot(robot, m);
  m.robot = t.robot;
  m.jointNames.clear(), m.defaultJointPos.clear(), m.jointLower.clear(), m.jointUpper.clear();
  for (int j = 0; j < model.nj(); ++j) {
    m.jointNames.push_back(model.joints[j].name);
    m.defaultJointPos.push_back(robot.defaultJointPos[j]);
    m.jointLower.push_back(model.joints[j].lower);
    m.jointUpper.push_back(model.joints[j].upper);
  }
  m.defaultBaseHeight = robot.defaultBaseHeight;
  m.actionScale = t.actionScale;
  m.actionClip = t.actionClip;
  m.observations.clear();
  m.numObs = 0;
  for (const auto& o : t.observations) {
    ObservationTerm term;
    term.name = o.name;
    term.size = envs::observationSize(*o.def, o.params, model.nj(), model.nfeet());
    term.scale = o.scale;
    term.noise = o.noise;
    term.params = o.params.values();
    term.definition = definitionOf(o.name);
    m.numObs += term.size;
    m.observations.push_back(term);
  }
  m.observationNoise = t.randomization.observationNoise;
  m.controlDt = t.envDt;
  m.simDt = t.sim.dt;
  m.decimation = t.decimation();
  m.episodeLengthS = t.episodeLengthS;
  const auto& a = t.sim.actuator;
  m.kp = a.kp, m.kd = a.kd;
  m.saturation = limit(a.saturation);
  m.velocityLimit = limit(a.velocityLimit);
  m.armature = t.armature;
  const double effort = a.effort > 0 ? a.effort : robot.torqueLimit;  // as LocomotionEnv
  m.effort.clear();
  for (const auto& j : model.joints) m.effort.push_back(std::min(effort, j.effort));
  m.actuatorSource = t.actuatorSource;
  m.commandsEnabled = t.commands.enabled;
  m.linVelX = {t.commands.linVelX.lo, t.commands.linVelX.hi};
  m.linVelY = {t.commands.linVelY.lo, t.commands.linVelY.hi};
  m.angVelZ = {t.commands.angVelZ.lo, t.commands.angVelZ.hi};
  m.commandResampleS = t.commands.resampleS;
  const auto& contact = t.sim.contact;
  m.contactModel = sim::toString(contact.model);
  m.kappa = contact.kappa;
  m.friction = contact.mu;
  m.solverIterations = contact.iterations;
  m.contactCutoff.reset();
  if (std::isfinite(contact.cutoff)) m.contactCutoff = contact.cutoff;
  m.softKp = contact.softKp, m.softKd = contact.softKd, m.softKf = contact.softKf;
  m.softSubsteps = contact.softSubsteps;
  m.softIntegrator = contact.integrator == sim::Integrator::Adaptive ? "adaptive" : "fixed";
  const auto& r = t.reset;
  m.resetJointPosNoise = r.jointPosNoise, m.resetJointVelNoise = r.jointVelNoise;
  m.resetBasePosNoise = r.basePosNoise, m.resetBaseRotNoise = r.baseRotNoise;
  m.resetRandomYaw = r.randomYaw, m.resetBaseLinVelNoise = r.baseLinVelNoise;
  m.resetBaseAngVelNoise = r.baseAngVelNoise, m.resetFootClearance = r.footClearance;
  const auto& rnd = t.randomization;
  m.frictionRange = range(rnd.friction, rnd.frictionRange);
  m.addedMassRange = range(rnd.addedMass, rnd.addedMassRange);
  m.pushIntervalS = range(rnd.pushes, rnd.pushIntervalS);
  m.motorStrengthRange = range(rnd.motorStrength, rnd.motorStrengthRange);
  m.actionDelaySteps = range(rnd.actionDelay, rnd.actionDelaySteps);
  m.evaluation = evaluationProtocol(t);
  m.pushVelocity.reset();
  if (rnd.pushes) m.pushVelocity = rnd.pushVelocity;
  m.terminationTilt.reset(), m.terminationHeight.reset();
  for (const auto& term : t.terminations) {
    if (term.name == "base_tilt_above") m.terminationTilt = term.params("angle");
    if (term.name == "base_height_below") m.terminationHeight = term.params("height");
  }
}

// The metadata of a training config, its robot and its actor.
PolicyMetadata makeMetadata(const train::TrainConfig& c, const Robot& robot,
                            policies::Actor& actor) {
  PolicyMetadata m;
  describeTask(c.task, robot, m);
  m.task = c.task.name;
  m.squash = actor->config().squash;
  m.squashBound = actor->config().squashBound;
  m.taskYaml = envs::toYaml(c.task);
  if (m.numObs != actor->numObs())
    throw std::runtime_error("the task's observation terms make " + std::to_string(m.numObs) +
                             " values, the actor takes " + std::to_string(actor->numObs()) +
                             ": the config does not belong to this policy");
  if (m.numJoints() != actor->numActions())
    throw std::runtime_error("the robot has " + std::to_string(m.numJoints()) +
                             " joints, the actor outputs " + std::to_string(actor->numActions()));
  m.difflocoVersion = DIFFLOCO_VERSION;
  m.gitCommit = runs::gitDescription();
  m.algorithm = c.algorithm;
  m.seed = c.seed;
  m.iterations = c.iterations();
  m.warmStart = warmStartChain(c.initFrom);
  const auto& cur = c.curriculum;
  if (!cur.commands.trivial() || !cur.resetNoise.trivial() || !cur.episodeLength.trivial() ||
      !cur.commandResample.trivial())
    m.curriculum = CurriculumFactors{cur.commands.final, cur.resetNoise.final,
                                     cur.episodeLength.final, cur.commandResample.final};
  return m;
}

// An exported file's metadata in the current format: what the task it carries and its robot
// determine is derived again (URDF, definitions, reset, ...); the network's facts (squash) and
// the provenance it has are kept; what it never recorded (seed, iterations, config hash,
// curriculum) stays null.
PolicyMetadata upgradeMetadata(const PolicyMetadata& old, const std::string& path) {
  if (old.taskYaml.empty())
    throw std::runtime_error(path +
                             ": the exported file carries no task (task.yaml): cannot "
                             "rebuild its metadata");
  const std::string taskSource = path + " (task.yaml)";
  envs::TaskConfig t = envs::parseTaskConfig(
      config::checkYamlTree(YAML::Load(old.taskYaml), taskSource), taskSource);
  PolicyMetadata m = old;
  m.format = kMetadataFormat;
  describeTask(t, loadRobot(t.robot), m);
  if (m.numObs != old.numObs || m.jointNames != old.jointNames)
    throw std::runtime_error(path + ": its task and robot give " + std::to_string(m.numObs) +
                             " observations and joints (" + std::to_string(m.numJoints()) +
                             ") other than the file's (" + std::to_string(old.numObs) +
                             "): the robot files have changed since the export");
  return m;
}

}  // namespace

torch::jit::Module buildExportModule(policies::Actor& actor, const PolicyMetadata& meta) {
  torch::NoGradGuard noGrad;
  const auto f32 = torch::kFloat32, f64 = torch::kFloat64;
  torch::jit::Module m("DifflocoPolicy");
  // Normaliser: the same float32 shift and scale the actor computes ((var + eps).rsqrt() in
  // double, then cast), so that forward() is the actor's forward to rounding.
  auto& norm = actor->normalizer();
  const int64_t nobs = actor->numObs();
  if (norm->enabled()) {
    m.register_buffer("obs_mean", norm->mean().to(f32).clone());
    m.register_buffer("obs_scale", (norm->var() + norm->eps()).rsqrt().to(f32));
  } else {
    m.register_buffer("obs_mean", torch::zeros({nobs}, f32));
    m.register_buffer("obs_scale", torch::ones({nobs}, f32));
  }
  // The MLP: Linear [-> activation -> LayerNorm] ..., read from the actor's parameters in order.
  const auto& cfg = actor->config();
  std::ostringstream src;
  src << "def forward(self, obs: Tensor) -> Tensor:\n"
      << "    x = (obs.float() - self.obs_mean) * self.obs_scale\n";
  const auto params = actor->named_parameters();
  std::vector<Tensor> weights;
  for (const auto& p : params)
    if (p.key() != "log_std") weights.push_back(p.value().detach().to(f32).clone());
  size_t k = 0;
  const size_t nh = cfg.actorHidden.size();
  for (size_t l = 0; l <= nh; ++l) {
    const std::string w = "w" + std::to_string(l), b = "b" + std::to_string(l);
    m.register_parameter(w, weights.at(k++), false);
    m.register_parameter(b, weights.at(k++), false);
    src << "    x = torch.linear(x, self." << w << ", self." << b << ")\n";
    if (l == nh) break;
    if (cfg.activation == "elu")
      src << "    x = torch.elu(x)\n";
    else if (cfg.activation == "relu")
      src << "    x = torch.relu(x)\n";
    else
      src << "    x = torch.tanh(x)\n";
    if (cfg.layerNorm) {
      const std::string lw = "ln" + std::to_string(l) + "_w", lb = "ln" + std::to_string(l) + "_b";
      m.register_parameter(lw, weights.at(k++), false);
      m.register_parameter(lb, weights.at(k++), false);
      src << "    x = torch.layer_norm(x, [" << cfg.actorHidden[l] << "], self." << lw << ", self."
          << lb << ", 1e-05)\n";
    }
  }
  if (k != weights.size())
    throw std::runtime_error("export: the actor has " + std::to_string(weights.size()) +
                             " weight tensors, the MLP layout accounts for " + std::to_string(k));
  if (cfg.squash == "tanh" && !cfg.squashBounded()) {
    src << "    x = torch.tanh(x)\n";
  } else if (cfg.squash == "tanh") {  // b tanh(x / b), as ActorImpl::squash computes it
    const torch::Tensor bound = torch::tensor(cfg.squashBound, torch::kDouble);
    m.register_buffer("squash_bound", bound.to(f32));
    m.register_buffer("squash_inv_bound", (1.0 / bound).to(f32));
    src << "    x = torch.tanh(x * self.squash_inv_bound) * self.squash_bound\n";
  }
  src << "    return x\n\n";

  // Action mapping and actuator: per-joint double buffers, used in the caller's dtype.
  const int nj = meta.numJoints();
  auto vec = [&](const std::vector<double>& v) { return torch::tensor(v, f64); };
  m.register_buffer("default_joint_pos", vec(meta.defaultJointPos));
  m.register_buffer("action_scale", torch::full({nj}, meta.actionScale, f64));
  m.register_buffer("action_clip", torch::full({nj}, meta.actionClip, f64));
  m.register_buffer("kp", torch::full({nj}, meta.kp, f64));
  m.register_buffer("kd", torch::full({nj}, meta.kd, f64));
  m.register_buffer("effort", vec(meta.effort));
  // No speed-torque line (null): a line so far out that the clip at the effort is what acts.
  m.register_buffer("saturation", torch::full({nj}, meta.saturation.value_or(1e10), f64));
  m.register_buffer("velocity_limit", torch::full({nj}, meta.velocityLimit.value_or(1e10), f64));
  src << R"(def joint_targets(self, action: Tensor) -> Tensor:
    a = action.double()
    a = torch.max(torch.min(a, self.action_clip), -self.action_clip)
    return (self.default_joint_pos + self.action_scale * a).to(action.dtype)

def actuator_torque(self, q_target: Tensor, q: Tensor, qd: Tensor) -> Tensor:
    dt = q.dtype
    kp = self.kp.to(dt)
    kd = self.kd.to(dt)
    effort = self.effort.to(dt)
    sat = self.saturation.to(dt)
    vlim = self.velocity_limit.to(dt)
    tau = kp * (q_target - q) - kd * qd
    vmax = vlim * (1.0 + effort / sat)
    w = torch.max(torch.min(qd, vmax), -vmax) / vlim
    hi = torch.min(sat * (1.0 - w), effort)
    lo = torch.max(sat * (-1.0 - w), -effort)
    return torch.max(torch.min(tau, hi), lo)
)";
  m.register_attribute("metadata_json", c10::StringType::get(), toJson(meta));
  m.register_attribute("num_obs", c10::IntType::get(), static_cast<int64_t>(meta.numObs));
  m.register_attribute("num_actions", c10::IntType::get(), static_cast<int64_t>(nj));
  m.register_attribute("control_dt", c10::FloatType::get(), meta.controlDt);
  m.define(src.str());
  m.eval();
  return m;
}

void saveModuleAtomic(const torch::jit::Module& m, const std::string& path) {
  io::writeAtomically(path, [&](const std::string& tmp) { m.save(tmp); });
}

namespace {

// Writes the module in the requested formats and the YAML beside them.
ExportResult writeExport(torch::jit::Module& m, PolicyMetadata meta, const std::string& out,
                         ExportFormat format) {
  ExportResult r;
  const fs::path o = out, dir = o.parent_path();
  if (!dir.empty()) fs::create_directories(dir);
  const std::string stem = (dir / o.stem()).string();
  r.yamlPath = stem + ".yaml";
  m.setattr("metadata_json", toJson(meta));
  if (format != ExportFormat::Onnx) {
    r.modulePath = format == ExportFormat::Both ? stem + ".pt" : out;
    saveModuleAtomic(m, r.modulePath);
  }
  if (format != ExportFormat::TorchScript) {
#ifdef DIFFLOCO_WITH_ONNX
    r.onnxPath = format == ExportFormat::Both ? stem + ".onnx" : out;
    io::writeFileAtomic(r.onnxPath, onnxModelBytes(m, meta));
#else
    throw std::runtime_error("export --format onnx: this diffloco was built without libonnx-dev");
#endif
  }
  io::writeFileAtomic(r.yamlPath, toYaml(meta));
  r.metadata = std::move(meta);
  return r;
}

}  // namespace

std::string observationDefinitionsMarkdown() {
  std::string s =
      "| term | size | formula | frame | units | conventions |\n|---|---|---|---|---|---|\n";
  for (const auto& t : envs::termRegistry(envs::TermKind::Observation)) {
    if (t.privileged) continue;  // the critic's only: no policy reads them
    const std::string size = t.dim == envs::TermDef::kPerJoint    ? "joints"
                             : t.dim == envs::TermDef::kPerFoot   ? "feet"
                             : t.dim == envs::TermDef::kFromParams ? "from its parameters"
                                                                   : std::to_string(t.dim);
    const auto& d = t.definition;
    s += "| `" + t.name + "` | " + size + " | " + d.formula + " | " + d.frame + " | " + d.units +
         " | " + d.conventions + " |\n";
  }
  return s;
}

ExportFormat parseExportFormat(const std::string& name) {
  if (name == "torchscript") return ExportFormat::TorchScript;
  if (name == "onnx") return ExportFormat::Onnx;
  if (name == "both") return ExportFormat::Both;
  throw std::runtime_error("export format '" + name + "': expected torchscript, onnx or both");
}

ExportResult exportPolicy(const std::string& run, const std::string& out,
                          const std::string& configPath, ExportFormat format) {
  OpenedPolicy p = openPolicy(run, configPath);
  // An exported file: the same network, its metadata brought to the current format.
  if (p.kind == OpenedPolicy::Kind::kExported)
    return writeExport(*p.module, upgradeMetadata(p.exported, p.file), out, format);
  if (p.taskYaml.empty())
    throw std::runtime_error(p.file +
                             ": the policy records no task and no training config was found "
                             "(config.yaml beside it); give it with --config");
  // The task by openPolicy's rule (the file's own record first); how it was trained from the
  // training config when there is one.
  train::TrainConfig c = p.config.value_or(train::TrainConfig{});
  c.task = envs::parseTaskConfig(config::checkYamlTree(YAML::Load(p.taskYaml), p.taskSource),
                                 p.taskSource);
  if (!p.config) {
    const auto algo = p.metadata.find("algorithm");
    c.algorithm = algo == p.metadata.end() ? "" : algo->second;
  }
  const Robot robot = loadRobot(c.task.robot);
  PolicyMetadata meta = makeMetadata(c, robot, p.actor);
  if (!p.config) {  // the policy file alone does not record how it was trained
    meta.seed.reset(), meta.iterations.reset(), meta.curriculum.reset();
    meta.warmStart.clear();
  } else if (p.kind == OpenedPolicy::Kind::kPolicyFile) {
    meta.configSha256 = sha256Hex(io::readFile(p.configFile));  // sha256sum config.yaml
  }
  // The run folder and file name: what identifies the run, without one machine's path.
  meta.source = runRelative(fs::absolute(p.file).string());
  // The commit trained at: the one the run started from (its git.txt), else the policy file's
  // record (older policy files wrote the checkout at the end of the training). From the policy
  // file also the task's name (a run's config.yaml holds the task inline, so the config alone
  // names it after itself).
  auto it = p.metadata.find("git");
  if (it != p.metadata.end()) meta.gitCommit = it->second;
  if (const std::string started = runs::startCommit(fs::path(p.file).parent_path().string());
      !started.empty())
    meta.gitCommit = started;
  if (!p.taskName.empty()) meta.task = p.taskName;
  torch::jit::Module m = buildExportModule(p.actor, meta);
  return writeExport(m, std::move(meta), out, format);
}

}  // namespace diffloco::deploy
