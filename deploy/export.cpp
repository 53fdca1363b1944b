#include "deploy/export.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "envs/task_config.h"
#include "io/atomic_file.h"
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

// The metadata of a training config, its robot and its actor.
PolicyMetadata makeMetadata(const train::TrainConfig& c, const Robot& robot,
                            policies::Actor& actor) {
  const envs::TaskConfig& t = c.task;
  const sim::Model& model = robot.model;
  PolicyMetadata m;
  m.difflocoVersion = DIFFLOCO_VERSION;
  m.gitCommit = runs::gitDescription();
  m.task = t.name;
  m.robot = t.robot;
  m.algorithm = c.algorithm;
  for (int j = 0; j < model.nj(); ++j) {
    m.jointNames.push_back(model.joints[j].name);
    m.defaultJointPos.push_back(robot.defaultJointPos[j]);
    m.jointLower.push_back(model.joints[j].lower);
    m.jointUpper.push_back(model.joints[j].upper);
  }
  m.defaultBaseHeight = robot.defaultBaseHeight;
  m.actionScale = t.actionScale;
  m.actionClip = t.actionClip;
  m.squash = actor->config().squash;
  for (const auto& o : t.observations) {
    ObservationTerm term;
    term.name = o.name;
    term.size = o.def->dim == envs::TermDef::kPerJoint  ? model.nj()
                : o.def->dim == envs::TermDef::kPerFoot ? model.nfeet()
                                                        : o.def->dim;
    term.scale = o.scale;
    term.params = o.params.values();
    m.numObs += term.size;
    m.observations.push_back(term);
  }
  if (m.numObs != actor->numObs())
    throw std::runtime_error("the task's observation terms make " + std::to_string(m.numObs) +
                             " values, the actor takes " + std::to_string(actor->numObs()) +
                             ": the config does not belong to this policy");
  if (model.nj() != actor->numActions())
    throw std::runtime_error("the robot has " + std::to_string(model.nj()) +
                             " joints, the actor outputs " + std::to_string(actor->numActions()));
  m.controlDt = t.envDt;
  m.simDt = t.sim.dt;
  m.decimation = t.decimation();
  m.episodeLengthS = t.episodeLengthS;
  m.taskYaml = c.taskYaml;
  const auto& a = t.sim.actuator;
  m.kp = a.kp, m.kd = a.kd, m.saturation = a.saturation, m.velocityLimit = a.velocityLimit;
  m.armature = t.armature;
  const double effort = a.effort > 0 ? a.effort : robot.torqueLimit;  // as LocomotionEnv
  for (const auto& j : model.joints) m.effort.push_back(std::min(effort, j.effort));
  m.actuatorSource = t.actuatorSource;
  m.commandsEnabled = t.commands.enabled;
  m.linVelX = {t.commands.linVelX.lo, t.commands.linVelX.hi};
  m.linVelY = {t.commands.linVelY.lo, t.commands.linVelY.hi};
  m.angVelZ = {t.commands.angVelZ.lo, t.commands.angVelZ.hi};
  m.commandResampleS = t.commands.resampleS;
  m.contactModel = sim::toString(t.sim.contact.model);
  m.kappa = t.sim.contact.kappa;
  m.friction = t.sim.contact.mu;
  m.solverIterations = t.sim.contact.iterations;
  for (const auto& term : t.terminations) {
    if (term.name == "base_tilt_above") m.terminationTilt = term.params("angle");
    if (term.name == "base_height_below") m.terminationHeight = term.params("height");
  }
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
  if (cfg.squash == "tanh") src << "    x = torch.tanh(x)\n";
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
  m.register_buffer("saturation", torch::full({nj}, meta.saturation, f64));
  m.register_buffer("velocity_limit", torch::full({nj}, meta.velocityLimit, f64));
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

ExportResult exportPolicy(const std::string& run, const std::string& out,
                          const std::string& configPath) {
  fs::path policyPath = run, dir;
  if (fs::is_directory(policyPath)) {
    dir = policyPath;
    policyPath /= "policy.pt";
  } else {
    dir = policyPath.parent_path();
  }
  if (!fs::exists(policyPath))
    throw std::runtime_error(policyPath.string() +
                             ": not found (export takes a run folder with policy.pt and "
                             "config.yaml, or a policy.pt)");
  // The task: from the training config (config.yaml beside the policy, or --config), else from
  // the resolved task the policy file carries (task_yaml, written by diffloco train).
  policies::LoadedPolicy p = policies::loadPolicy(policyPath.string());
  const fs::path config = configPath.empty() ? dir / "config.yaml" : fs::path(configPath);
  train::TrainConfig c;
  const auto taskYaml = p.metadata.find("task_yaml");
  if (fs::exists(config)) {
    c = train::loadTrainConfig(config.string());
  } else if (configPath.empty() && taskYaml != p.metadata.end()) {
    c.task =
        envs::parseTaskConfig(YAML::Load(taskYaml->second), policyPath.string() + " (task_yaml)");
    c.taskYaml = taskYaml->second;
    const auto algo = p.metadata.find("algorithm");
    c.algorithm = algo == p.metadata.end() ? "" : algo->second;
  } else {
    throw std::runtime_error(config.string() +
                             ": the training config is needed to export (joints, observation "
                             "terms, actuator); give it with --config");
  }
  const Robot robot = loadRobot(c.task.robot);
  ExportResult r;
  r.metadata = makeMetadata(c, robot, p.actor);
  r.metadata.source = fs::absolute(policyPath).lexically_normal().string();
  // From the policy file: the commit trained at, and the task's name (a run's config.yaml holds
  // the task inline, so the config alone names it after itself).
  auto it = p.metadata.find("git");
  if (it != p.metadata.end()) r.metadata.gitCommit = it->second;
  it = p.metadata.find("task");
  if (it != p.metadata.end()) r.metadata.task = it->second;
  torch::jit::Module m = buildExportModule(p.actor, r.metadata);
  r.modulePath = out;
  r.yamlPath = (fs::path(out).parent_path() / (fs::path(out).stem().string() + ".yaml")).string();
  if (!fs::path(out).parent_path().empty()) fs::create_directories(fs::path(out).parent_path());
  saveModuleAtomic(m, out);
  io::writeFileAtomic(r.yamlPath, toYaml(r.metadata));
  return r;
}

}  // namespace diffloco::deploy
