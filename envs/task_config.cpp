#include "envs/task_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "config/archive.h"
#include "config/yaml_guard.h"
#include "io/file_status.h"
#include "robots/robot.h"
#include "sim/adaptive.h"

namespace diffloco::envs {
namespace fs = std::filesystem;

namespace {

using config::Check;
using config::located;

// An enum kept in the archive by its name (sim::toString writes it, `parse` reads it back).
template <class V, class E, class Parse>
void enumField(V& v, const char* key, E& value, const char* doc, std::vector<std::string> names,
               Parse parse) {
  std::string name = sim::toString(value);
  v.field(key, name, doc, V::oneOf(std::move(names)));
  value = parse(name);
}

// The simulator section: time step, contact model and its solver (sim/options.h).
template <class V>
void visitSim(V& v, sim::SimOptions& s) {
  auto& c = s.contact;
  v.field("dt", s.dt, "simulator time step [s]", V::between(1e-5, 0.1));
  enumField(v, "contact", c.model,
            "contact model (docs/simulator.md): hard, smoothed, soft or straight_through",
            {"hard", "smoothed", "soft", "straight_through"}, sim::parseContactModel);
  enumField(v, "terrain_contact", c.terrainContact,
            "where a sphere touches a terrain: vertical (the surface under its centre) or closest "
            "(the surface point closest to its centre; docs/terrain.md)",
            {"vertical", "closest"}, sim::parseTerrainContact);
  v.field("friction", c.mu, "friction coefficient of feet and ground", V::atLeast(0));
  v.field("kappa", c.kappa, "smoothed model's sigmoid stiffness [1/m]", V::positive());
  v.field("cutoff", c.cutoff,
          "smoothed model: feet farther than this from the ground are left out [m] (.inf: none)",
          V::positive().orInfinite());
  v.field("iterations", c.iterations, "Gauss-Seidel sweeps (hard, smoothed)", V::between(1, 10000));
  v.field("soft_kp", c.softKp, "soft model's normal stiffness [N/m]", V::atLeast(0));
  v.field("soft_kd", c.softKd, "soft model's normal damping on approach [N s/m]", V::atLeast(0));
  v.field("soft_kf", c.softKf, "soft model's tangential viscous friction [N s/m]", V::atLeast(0));
  v.field("soft_substeps", c.softSubsteps, "soft model, fixed integrator: sub-steps per step",
          V::between(1, 1000));
  enumField(v, "integrator", c.integrator,
            "soft model's time integration: fixed sub-steps (adaptive, sim/adaptive.h, is not in "
            "the environments' simulator)",
            {"fixed", "adaptive"}, sim::parseIntegrator);
  v.field("rtol", c.adaptive.rtol, "adaptive: relative tolerance of the local error",
          V::open(0, 1));
  v.field("atol", c.adaptive.atol, "adaptive: absolute tolerance (units of q and v)",
          V::positive());
  v.field("max_substeps", c.adaptive.maxSteps, "adaptive: cap on step attempts per env step",
          V::between(1, 1e6));
  // The environments step the stages (batch::BatchSim), which have the fixed sub-steps only
  // (sim::notInStepOptions); the adaptive integrator runs in sim::adaptiveStep (the toys).
  v.check(c.integrator != sim::Integrator::Adaptive, "integrator",
          "adaptive is not in the environments' simulator (the stages step the soft model in "
          "soft_substeps fixed sub-steps); use fixed");
}

// One observation, reward or termination term: its weight or scale and noise, then the term's
// own parameters (envs/terms.cpp), every one with its default filled in.
// critic: a term of critic_observations, which have no noise (the critic reads the state as the
// simulator has it).
template <class V>
void visitTerm(V& v, TermConfig& tc, TermKind kind, bool critic = false) {
  tc.def = findTerm(kind, tc.name);
  if (!tc.def) {
    std::vector<std::string> names;
    for (const auto& d : termRegistry(kind)) names.push_back(d.name);
    v.check(false, "",
            std::string("unknown ") + toString(kind) + " term '" + tc.name + "'" +
                config::didYouMean(tc.name, names));
    return;
  }
  if (kind == TermKind::Reward) v.field("weight", tc.weight, "weight of the term in the reward");
  if (kind == TermKind::Observation) v.field("scale", tc.scale, "multiplies the term, after the noise");
  if (kind == TermKind::Observation && !critic) {
    v.field("noise", tc.noise,
            "uniform noise half-width, term units (randomization.observation_noise)",
            V::atLeast(0));
  }
  std::map<std::string, std::vector<double>> values = tc.params.values();
  for (const auto& p : tc.def->params) {
    std::vector<double>& x = values[p.name];
    if (x.size() != p.value.size()) x = p.value;  // the default
    Check sized;
    sized.size = static_cast<int>(p.value.size());
    v.field(p.name.c_str(), x, p.doc.c_str(), sized);
  }
  tc.params = TermParams(std::move(values));
}

// One sub-terrain type: its share of the columns and the parameters its type reads
// (envs/terrain.h).
template <class V>
void visitSubTerrain(V& v, SubTerrainConfig& s) {
  const auto& names = subTerrainTypes();
  if (std::find(names.begin(), names.end(), s.name) == names.end()) {
    v.check(false, "", "unknown sub-terrain type '" + s.name + "'" + config::didYouMean(s.name, names));
    return;
  }
  v.field("proportion", s.proportion, "share of the columns (relative to the other types)",
          V::atLeast(0));
  const std::string& t = s.name;
  if (t == "rough" || t == "rough_slope" || t == "rough_slope_inverted") {
    v.field("amplitude", s.amplitude, "heights U(-a, a), a from lo (easiest row) to hi [m]",
            V::atLeast(0));
    v.field("cell", s.cell, "lattice of the random heights [m]", V::positive());
  }
  if (t == "pyramid_slope" || t == "pyramid_slope_inverted" || t == "rough_slope" ||
      t == "rough_slope_inverted")
    v.field("grade", s.grade, "rise over run, lo (easiest row) to hi", V::between(0, 10));
  if (t == "pyramid_stairs" || t == "pyramid_stairs_inverted") {
    v.field("rise", s.rise, "step height, lo (easiest row) to hi [m]", V::between(0, 10));
    v.field("run", s.run, "step depth [m]", V::positive());
  }
  if (t == "obstacles") {
    v.field("height", s.height, "obstacle height h, lo (easiest row) to hi [m]", V::between(0, 10));
    v.field("size", s.size, "sides of the rectangles U(min, max) [m]", V::positive());
    v.field("count", s.count, "rectangles per tile", V::between(0, 10000));
  }
}

// The terrain section (envs/terrain.h).
template <class V>
void visitTerrain(V& v, TerrainConfig& t) {
  v.field("spacing", t.spacing, "height-field grid spacing [m]", V::positive());
  v.field("tile_size", t.tileSize, "side of a square tile [m], a multiple of spacing",
          V::positive());
  v.field("platform", t.platform, "flat square at each tile's centre, where envs spawn [m]",
          V::atLeast(0));
  v.field("border", t.border, "flat border around the tiles [m]", V::atLeast(0));
  v.field("rows", t.rows, "difficulty levels (rows of tiles along x)", V::between(1, 1000));
  v.field("columns", t.columns, "tiles per level (along y), split among the types by proportion",
          V::between(1, 1000));
  v.field("seed", t.seed, "generation seed (the terrain is the same for every training seed)");
  v.field("level", t.level,
          "-1: levels from the curriculum; else every env on this level (evaluation)",
          V::between(-1, 999));
  enumField(v, "interpolant", t.interpolant,
            "how the height field joins its samples (sim/terrain.h, docs/terrain.md): catmull_rom "
            "(central-difference slopes; a 7.4 % lip beside each step edge) or monotone (slopes "
            "limited so that the surface stays between neighbouring samples: no lip)",
            {"catmull_rom", "monotone"}, sim::parseInterpolant);
  v.field("backward_smoothing", t.backwardSmoothing,
          "> 0: the gradient (the simulator's backward pass and the task's ground heights) sees "
          "the terrain smoothed by a Gaussian of this standard deviation [m] (forward: the "
          "terrain itself)",
          V::between(0, 10));
  v.list("types", t.types, "sub-terrain types and their parameters, in column order",
         [](auto& o, SubTerrainConfig& s) { visitSubTerrain(o, s); });
  v.group("curriculum", "terrain levels by performance (legged_gym's rule)", [&](auto& c) {
    auto& x = t.curriculum;
    c.field("enabled", x.enabled, "move envs between levels at episode ends");
    c.field("max_init_level", x.maxInitLevel, "envs start on levels 0 .. this",
            V::between(0, 999));
    c.field("promote", x.promote,
            "up a level when the base ended farther than this x tile_size from its start",
            V::positive());
    c.field("demote", x.demote,
            "down a level when it covered less than this x its commanded distance",
            V::atLeast(0));
    c.field("demote_against", x.demoteAgainst,
            "the commanded distance: final_command (|v_xy*| at the end x the episode length, "
            "legged_gym's), commanded_path (the commands integrated along the base's heading; "
            "a fall moves down) or fall (only a fall moves down)",
            V::oneOf({"final_command", "commanded_path", "fall"}));
    c.field("past_last", x.pastLast,
            "an env promoted past the last level: random (a random level, legged_gym's) or stay "
            "(it stays on the last level)",
            V::oneOf({"random", "stay"}));
    c.field("promote_through", x.promoteThrough,
            "where a promotion counts: anywhere (legged_gym's) or face (past promote x tile_size "
            "along the tile's x or y within 22.5 degrees of it: up a face, not by a corner)",
            V::oneOf({"anywhere", "face"}));
  });
  v.check(!t.enabled || !t.types.empty(), "types", "needs at least one sub-terrain type");
}

// Every key of a task (configs/tasks/*.yaml) once: read strictly, written with its documentation
// and flattened by the config archive (config/archive.h). `partial`: a robot's task_defaults
// (no name or robot).
template <class V>
void visitTask(V& v, TaskConfig& t, bool partial) {
  if (!partial) {
    v.field("name", t.name, "task name (a task file's stem unless given)");
    v.field("robot", t.robot, "robot name (configs/robots/<name>.yaml) or path to a robot .yaml");
  }
  v.field("episode_length_s", t.episodeLengthS, "episode length [s]", V::between(1e-3, 1e5));
  v.field("env_dt", t.envDt, "policy period [s], a multiple of sim.dt", V::between(1e-5, 1.0));
  v.group("sim", "simulator: time step, contact model and its solver",
          [&](auto& s) { visitSim(s, t.sim); });
  v.group("actuator",
          "the joints' PD drive (sim/actuator.h) with its torque limit and speed-torque line",
          [&](auto& a) {
            auto& x = t.sim.actuator;
            a.field("kp", x.kp, "stiffness [N m/rad]", V::atLeast(0));
            a.field("kd", x.kd, "damping [N m s/rad]", V::atLeast(0));
            a.field("effort", x.effort, "torque limit [N m] (0: the URDF's limit)", V::atLeast(0));
            a.field("saturation", x.saturation, "stall torque of the speed-torque line [N m]",
                    V::positive());
            a.field("velocity_limit", x.velocityLimit,
                    "no-load speed of the speed-torque line [rad/s]", V::positive());
            a.field("armature", t.armature, "added to every joint's inertia [kg m^2]",
                    V::atLeast(0));
            a.field("source", t.actuatorSource,
                    "the fitted actuator file these values came from (empty: none)");
          });
  v.group("action", "joint target = default + scale * clip(action, -clip, clip)", [&](auto& a) {
    a.field("scale", t.actionScale, "action scale [rad]");
    a.field("clip", t.actionClip, "action clip", V::positive());
  });
  v.optionalGroup("commands",
                  "velocity commands, uniform per env (absent: none, the command terms read 0)",
                  t.commands.enabled, [&](auto& c) {
                    auto& x = t.commands;
                    c.field("lin_vel_x", x.linVelX, "forward velocity [m/s]");
                    c.field("lin_vel_y", x.linVelY, "sideways velocity [m/s]");
                    c.field("ang_vel_z", x.angVelZ, "yaw rate [rad/s]");
                    c.field("resample_s", x.resampleS,
                            "seconds between resamples (0: only at reset)", V::atLeast(0));
                    c.field("standing_fraction", x.standingFraction,
                            "share of resamples that give a zero command", V::between(0, 1));
                    c.optionalGroup(
                        "heading",
                        "legged_gym's heading command: a heading drawn in place of the yaw "
                        "rate, which follows gain * (heading - yaw) clipped to ang_vel_z "
                        "(absent: the yaw rate is drawn)",
                        x.headingEnabled, [&](auto& h) {
                          h.field("range", x.heading, "world-frame heading [rad]");
                          h.field("gain", x.headingGain, "yaw rate per heading error [1/s]",
                                  V::positive());
                        });
                  });
  v.list("observations", t.observations, "observation terms in order (envs/terms.h)",
         [](auto& o, TermConfig& tc) { visitTerm(o, tc, TermKind::Observation); });
  v.list("critic_observations", t.criticObservations,
         "the critic's own observation terms in order, noise-free, privileged terms allowed "
         "(absent: the critic reads the observations above)",
         [](auto& o, TermConfig& tc) { visitTerm(o, tc, TermKind::Observation, true); });
  v.list("rewards", t.rewards, "reward terms: weight and parameters",
         [](auto& o, TermConfig& tc) { visitTerm(o, tc, TermKind::Reward); });
  v.list("terminations", t.terminations, "termination terms",
         [](auto& o, TermConfig& tc) { visitTerm(o, tc, TermKind::Termination); });
  v.group("randomization", "per env, at every reset (a range absent: off)", [&](auto& r) {
    auto& d = t.randomization;
    r.optionalField("friction", d.friction, d.frictionRange, "friction coefficient U(lo, hi)",
                    V::atLeast(0));
    r.optionalField("added_base_mass", d.addedMass, d.addedMassRange,
                    "mass added to the base U(lo, hi) [kg]");
    r.optionalField("push_interval_s", d.pushes, d.pushIntervalS,
                    "time to the next push U(lo, hi) [s]", V::positive());
    r.field("push_velocity", d.pushVelocity,
            "a push adds U(-x, x) to the base x and y velocity [m/s]", V::atLeast(0));
    r.field("observation_noise", d.observationNoise, "the observation terms' noise on");
    r.optionalField("motor_strength", d.motorStrength, d.motorStrengthRange,
                    "PD gains kp, kd scaled by U(lo, hi) (torque limits unchanged)",
                    V::positive());
    r.optionalField("action_delay_steps", d.actionDelay, d.actionDelaySteps,
                    "joint targets lag the actions by k control steps, k uniform in {lo, ..., hi}",
                    V::between(0, 100));
    r.check(!d.actionDelay || (d.actionDelaySteps.lo == std::floor(d.actionDelaySteps.lo) &&
                               d.actionDelaySteps.hi == std::floor(d.actionDelaySteps.hi) &&
                               d.actionDelaySteps.lo <= d.actionDelaySteps.hi),
            "action_delay_steps", "needs whole numbers of steps, lo <= hi");
  });
  v.group("reset", "each episode: U(-x, x) noise on the default state", [&](auto& r) {
    auto& s = t.reset;
    r.field("joint_pos_noise", s.jointPosNoise, "joint angles [rad]", V::atLeast(0));
    r.field("joint_vel_noise", s.jointVelNoise, "joint velocities [rad/s]", V::atLeast(0));
    r.field("base_pos_noise", s.basePosNoise, "base x/y offset [m]", V::atLeast(0));
    r.field("base_rot_noise", s.baseRotNoise, "tilt about a random horizontal axis [rad]",
            V::atLeast(0));
    r.field("random_yaw", s.randomYaw, "yaw [rad]", V::atLeast(0));
    r.field("base_lin_vel_noise", s.baseLinVelNoise, "base linear velocity, each component [m/s]",
            V::atLeast(0));
    r.field("base_ang_vel_noise", s.baseAngVelNoise,
            "base angular velocity, each component [rad/s]", V::atLeast(0));
    r.field("foot_clearance", s.footClearance, "the lowest foot starts this high above ground [m]",
            V::atLeast(0));
  });
  v.optionalGroup("terrain",
                  "generated terrain (envs/terrain.h; absent: the plane z = 0)", t.terrain.enabled,
                  [&](auto& g) { visitTerrain(g, t.terrain); });
}

}  // namespace

namespace {

// What is wrong with the time steps, "" if nothing: env_dt must be a multiple of sim.dt, with at
// most 1000 simulator steps per env step. `n`: the steps per env step.
std::string timeStepProblem(double envDt, double simDt, int& n) {
  const double d = envDt / simDt;
  n = static_cast<int>(std::lround(d));
  if (n < 1 || std::abs(d - n) > 1e-9 * d)
    return "env_dt (" + std::to_string(envDt) + ") must be a multiple of sim.dt (" +
           std::to_string(simDt) + ")";
  if (n > 1000)
    return "env_dt / sim.dt = " + std::to_string(n) + " simulator steps per env step: at most 1000";
  return "";
}

}  // namespace

int TaskConfig::decimation() const {
  int n = 0;
  const std::string problem = timeStepProblem(envDt, sim.dt, n);
  if (!problem.empty()) throw std::runtime_error(source + ": " + problem);
  return n;
}

int TaskConfig::maxEpisodeSteps() const {
  return std::max(1, static_cast<int>(std::lround(episodeLengthS / envDt)));
}

void TaskConfig::freezeRandomization() {
  randomization.friction = false;
  randomization.addedMass = false;
  randomization.pushes = false;
  randomization.observationNoise = false;
  randomization.motorStrength = false;
  randomization.actionDelay = false;
  commands.resampleS = 0;
  commands.headingEnabled = false;
}

void inlineActuatorFile(YAML::Node& task, const std::string& source) {
  if (!task.IsMap() || !task["actuator"] || !task["actuator"].IsMap()) return;
  YAML::Node act = task["actuator"];
  const YAML::Node f = act["file"];
  if (!f) return;
  if (!f.IsScalar())
    throw std::runtime_error(located(source, f) +
                             ": actuator.file: expected a path to a fitted actuator .yaml");
  fs::path path = f.Scalar();
  if (path.is_relative()) {
    const fs::path src = source;
    if (io::isRegularFile(src)) path = src.parent_path() / path;
  }
  if (!io::isRegularFile(path))
    throw std::runtime_error(located(source, f) + ": actuator.file: " + path.string() +
                             " not found");
  YAML::Node fitted = config::loadYamlFile(path.string());
  if (!fitted.IsMap()) throw std::runtime_error(path.string() + ": expected a map");
  config::checkUniqueKeys(fitted, path.string());
  static const std::vector<std::string> keys{
      "kp", "kd", "effort", "saturation", "velocity_limit", "armature"};
  for (auto it = fitted.begin(); it != fitted.end(); ++it) {
    const std::string k = config::keyName(it->first, path.string());
    if (k == "fit") continue;
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      throw std::runtime_error(located(path.string(), it->first) + ": unknown key '" + k + "'" +
                               config::didYouMean(k, keys));
    double v = 0;
    try {
      v = it->second.as<double>();
    } catch (const YAML::Exception&) {
      throw std::runtime_error(located(path.string(), it->second) + ": " + k +
                               ": expected a number");
    }
    act[k] = v;  // the file wins over the section's own keys (the task's defaults)
  }
  act.remove("file");
  act["source"] = fs::absolute(path).lexically_normal().string();
}

namespace {

// The task with a fitted actuator file inlined. Only then a copy (YAML::Clone drops the line
// marks that error messages use; the callers inline in place first where they can).
YAML::Node withActuatorFile(const YAML::Node& task, const std::string& source) {
  const bool hasFile =
      task.IsMap() && task["actuator"] && task["actuator"].IsMap() && task["actuator"]["file"];
  if (!hasFile) return task;
  YAML::Node copy = YAML::Clone(task);
  inlineActuatorFile(copy, source);
  return copy;
}

// The strict parser; `partial` reads a robot's task_defaults (no robot, terms optional, the time
// steps checked only where the task has both).
TaskConfig parseTask(const YAML::Node& taskNode, const config::Source& src, bool partial,
                     const std::string& keyPrefix = "") {
  const YAML::Node node = withActuatorFile(taskNode, src.file);
  TaskConfig t;
  t.source = src.file;
  t.name = fs::path(src.file).stem().string();
  if (!node || !node.IsMap()) throw std::runtime_error(src.file + ": expected a map at the top");
  if (partial)
    for (const char* k : {"robot", "name"})
      if (node[k])
        throw std::runtime_error(located(src.file, node[k]) + ": '" + k +
                                 "' cannot be a robot's task default");
  config::Reader r(node, keyPrefix, src);
  visitTask(r, t, partial);
  r.finish();
  if (partial) return t;
  // Checks of the whole task, located like the reader's own: at the key, or at the override
  // (--set, a task's extension) that set it.
  const auto at = [&](const char* key) {
    const std::string path = keyPrefix.empty() ? key : keyPrefix + "." + key;
    return src.where(path, node[key]) + ": " + path;
  };
  if (t.robot.empty()) throw std::runtime_error(at("robot") + ": missing (a robot name or path)");
  if (t.observations.empty()) throw std::runtime_error(at("observations") + ": no terms");
  for (const auto& o : t.observations)
    if (o.def->privileged) {
      const std::string key = std::string("observations.") + o.name;
      throw std::runtime_error(src.where(keyPrefix.empty() ? key : keyPrefix + "." + key,
                                         node["observations"][o.name]) +
                               ": " + (keyPrefix.empty() ? key : keyPrefix + "." + key) +
                               ": privileged (a robot cannot measure it): only the critic may "
                               "read it, in critic_observations");
    }
  if (t.rewards.empty()) throw std::runtime_error(at("rewards") + ": no terms");
  int steps = 0;
  const std::string problem = timeStepProblem(t.envDt, t.sim.dt, steps);
  if (!problem.empty()) {
    // Blames an override of sim.dt where there is one (its where() is then not the file alone).
    const std::string simDt = keyPrefix.empty() ? "sim.dt" : keyPrefix + ".sim.dt";
    const std::string bySim = src.where(simDt, YAML::Node(YAML::NodeType::Undefined));
    const std::string envDt = keyPrefix.empty() ? "env_dt" : keyPrefix + ".env_dt";
    throw std::runtime_error((bySim != src.file ? bySim : src.where(envDt, node["env_dt"])) + ": " +
                             problem);
  }
  if (t.terrain.enabled) {
    try {
      validateTerrainConfig(t.terrain);
    } catch (const TerrainConfigError& e) {
      // Located at the deepest key of e.key the file has (the section itself for a whole-grid
      // problem), or at the override that set it.
      std::string path = "terrain." + e.key;
      YAML::Node n = node["terrain"];
      std::string walked = "terrain";
      std::istringstream parts(e.key);
      for (std::string part; std::getline(parts, part, '.');) {
        if (!n.IsMap() || !n[part]) break;
        n = n[part];
        walked += "." + part;
      }
      const std::string full = keyPrefix.empty() ? path : keyPrefix + "." + path;
      const std::string at = keyPrefix.empty() ? walked : keyPrefix + "." + walked;
      throw std::runtime_error(src.where(at, n) + ": " + full + ": " + e.problem);
    }
  }
  return t;
}

// Lookups through a const node insert nothing (a non-const operator[] adds the key).
const YAML::Node& constNode(const YAML::Node& n) {
  return n;
}

bool hasKey(const YAML::Node& map, const std::string& key) {
  return map.IsMap() && map[key];
}

// Copies into `dst` every key of `src` that dst lacks, recursing into maps both have. In the term
// sections only the parameters of dst's own terms.
void fillMissing(YAML::Node dst, const YAML::Node& src, bool termSection) {
  for (auto it = src.begin(); it != src.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const bool present = hasKey(constNode(dst), key);
    if (termSection) {
      if (!present) continue;  // a term the task does not use
      YAML::Node term = dst[key];
      if (term.IsNull()) term = YAML::Node(YAML::NodeType::Map);
      if (term.IsMap() && it->second.IsMap()) fillMissing(term, it->second, false);
      dst[key] = term;
    } else if (!present) {
      dst[key] = it->second;  // keeps the robot file's line marks for messages
    } else if (it->second.IsMap() && constNode(dst)[key].IsMap()) {
      fillMissing(dst[key], it->second,
                  key == "observations" || key == "critic_observations" ||
                      key == "rewards" || key == "terminations");
    }
  }
}

}  // namespace

TaskConfig parseTaskConfig(const YAML::Node& taskNode, const config::Source& source,
                           const std::string& keyPrefix) {
  return parseTask(taskNode, source, false, keyPrefix);
}

TaskConfig parseTaskConfig(const YAML::Node& taskNode, const std::string& source) {
  return parseTask(taskNode, config::Source{source, {}}, false);
}

std::string toYaml(const TaskConfig& task) {
  TaskConfig t = task;
  std::ostringstream out;
  config::Writer w(out, 0);
  visitTask(w, t, false);
  return out.str();
}

std::vector<std::pair<std::string, std::string>> flatten(const TaskConfig& task) {
  TaskConfig t = task;
  std::vector<std::pair<std::string, std::string>> out;
  config::Flattener f(out, "");
  visitTask(f, t, false);
  return out;
}

void inlineRobotDefaults(YAML::Node& task, const std::string& source) {
  const YAML::Node& ctask = task;
  if (!task.IsMap() || !ctask["robot"] || !ctask["robot"].IsScalar()) return;  // parser says it
  const std::string path = robotFilePath(ctask["robot"].Scalar());
  if (!io::isRegularFile(path)) return;  // loadRobot reports it
  YAML::Node robot = config::loadYamlFile(path);
  const YAML::Node& crobot = robot;
  if (!robot.IsMap() || !crobot["task_defaults"]) return;
  const YAML::Node defaults = crobot["task_defaults"];
  try {
    parseTask(defaults, config::Source{path, {}},
              true);  // strict, naming the robot file and its lines
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (in task_defaults, filling task " + source +
                             ")");
  }
  fillMissing(task, defaults, false);
}

TaskConfig loadTaskConfig(const std::string& nameOrPath) {
  fs::path path = nameOrPath;
  if (path.extension() != ".yaml") path = fs::path(configDir()) / "tasks" / (nameOrPath + ".yaml");
  if (!io::isRegularFile(path))
    throw std::runtime_error(path.string() + ": task file not found (expected a task name from " +
                             configDir() + "/tasks or a path to a .yaml)");
  YAML::Node y = config::loadYamlFile(path.string());
  inlineRobotDefaults(y, path.string());
  inlineActuatorFile(y, path.string());
  return parseTaskConfig(y, path.string());
}

}  // namespace diffloco::envs
