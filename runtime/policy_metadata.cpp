#include "runtime/policy_metadata.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "config/archive.h"
#include "config/yaml_guard.h"
#include "io/excerpt.h"

namespace diffloco::deploy {

namespace {

using config::Check;

// Metadata lists may be empty (no warm start, a format-1 file's feet); values are any finite
// number (a missing limit is null).
const Check kAny = [] {
  Check c;
  c.allowEmpty = true;
  return c;
}();

// One observation term: name, size, scale, its training noise, its parameters and (format 2) its
// definition (formula, frame, units, conventions).
template <class V>
void visitTerm(V& v, ObservationTerm& t, int format) {
  v.field("name", t.name, "", kAny);
  v.field("size", t.size, "", V::atLeast(0));
  v.field("scale", t.scale, "", kAny);
  if (format >= 2) v.field("noise", t.noise, "", kAny);
  bool hasParams = true;  // optional in both formats when read
  v.optionalField("params", hasParams, t.params, "", kAny);
  if (format >= 2)
    v.group("definition", "", [&](auto& d) {
      d.field("formula", t.definition.formula, "", kAny);
      d.field("frame", t.definition.frame, "", kAny);
      d.field("units", t.definition.units, "", kAny);
      d.field("conventions", t.definition.conventions, "", kAny);
    });
}

template <class V>
void visitCurriculum(V& v, CurriculumFactors& c) {
  v.field("commands", c.commands, "", kAny);
  v.field("reset_noise", c.resetNoise, "", kAny);
  v.field("episode_length", c.episodeLength, "", kAny);
  bool hasResample = true;  // came after the first format-2 files: absent means 1
  v.optionalField("command_resample", hasResample, c.commandResample, "", kAny);
}

// Every field of format 2 once, in sections: the writers (YAML, JSON), the reader and the
// comparison are the config archive's visitors (config/archive.h), so a field added here is
// written, read and compared. `format` 1: the layout before the contract (read only): its
// provenance in the format section, no robot, reset, randomization or provenance sections.
template <class V>
void visitMetadata(PolicyMetadata& m, V& v, int format = 2) {
  const bool v2 = format >= 2;
  v.group("format", "", [&](auto& s) {
    s.field("format", m.format, "", kAny);
    s.field("task", m.task, "", kAny);
    if (v2) return;
    s.field("diffloco_version", m.difflocoVersion, "", kAny);
    s.field("git_commit", m.gitCommit, "", kAny);
    s.field("robot", m.robot, "", kAny);
    s.field("algorithm", m.algorithm, "", kAny);
    s.field("source", m.source, "", kAny);
  });
  if (v2)
    v.group(
        "robot",
        "the robot trained on: URDF text (sha256 of its bytes), free-floating base link, the "
        "links carrying the foot spheres, leg_contacts: the links each of whose URDF collision "
        "spheres touches the ground too (knees, shanks; absent: none). These spheres are the only "
        "colliding geometry: against the ground (the plane z = 0 or the terrain), no "
        "self-collision. Gravity [m/s^2] in world axes (z up); a link without <inertial> is "
        "massless",
        [&](auto& s) {
          s.field("name", m.robot, "", kAny);
          s.field("base_link", m.baseLink, "", kAny);
          s.field("feet", m.feet, "", kAny);
          s.field("foot_radius", m.footRadius, "", kAny);
          // Written when the robot has them; absent in older files (then none).
          bool present = !m.legContacts.empty();
          s.optionalField("leg_contacts", present, m.legContacts, "", kAny);
          s.field("gravity", m.gravity, "", kAny);
          s.field("urdf_sha256", m.urdfSha256, "", kAny);
          s.field("urdf", m.urdf, "", kAny);
        });
  v.group("joints",
          "joints in the policy's action and observation order; lower/upper: the URDF's limits "
          "(not enforced by the training simulator)",
          [&](auto& s) {
            s.field("names", m.jointNames, "", kAny);
            s.field("default_pos", m.defaultJointPos, "", kAny);
            s.field("lower", m.jointLower, "", kAny);
            s.field("upper", m.jointUpper, "", kAny);
            s.field("default_base_height", m.defaultBaseHeight, "", kAny);
          });
  v.group("action",
          "q* = offset + scale * clip(a, -clip, clip), offset = joints.default_pos; forward() "
          "returns a (squash applied)",
          [&](auto& s) {
            s.field("scale", m.actionScale, "", kAny);
            s.field("clip", m.actionClip, "", kAny);
            s.field("offset", m.defaultJointPos, "", kAny);
            s.field("squash", m.squash, "", kAny);
            // Written when the tanh's bound is not 1; absent in older files (then 1).
            bool bounded = std::any_of(m.squashBound.begin(), m.squashBound.end(),
                                       [](double b) { return b != 1; });
            s.optionalField("squash_bound", bounded, m.squashBound, "", kAny.orScalar());
          });
  v.group("observation",
          "terms in order, each multiplied by its scale, with its definition (formula, frame, "
          "units, conventions); noise: training only, when noise_enabled",
          [&](auto& s) {
            s.sequence("terms", m.observations, "",
                       [&](auto& t, ObservationTerm& x) { visitTerm(t, x, format); });
            s.field("size", m.numObs, "", kAny);
            if (v2) s.field("noise_enabled", m.observationNoise, "", kAny);
          });
  v.group("timing", "control_dt: policy period, sim_dt: simulator step [s]", [&](auto& s) {
    s.field("control_dt", m.controlDt, "", kAny);
    s.field("sim_dt", m.simDt, "", kAny);
    s.field("decimation", m.decimation, "", kAny);
    s.field("episode_length_s", m.episodeLengthS, "", kAny);
  });
  v.group("actuator",
          "at every simulator step (sim_dt), q* held over control_dt: tau = clip(kp (q* - q) - kd "
          "qd, max(saturation (-1 - qd / velocity_limit), -effort), min(saturation (1 - qd / "
          "velocity_limit), effort)); saturation, velocity_limit null: tau = clip(kp (q* - q) - kd "
          "qd, -effort, effort); armature [kg m^2] added to every joint's inertia",
          [&](auto& s) {
            s.field("kp", m.kp, "", kAny);
            s.field("kd", m.kd, "", kAny);
            s.field("effort", m.effort, "", kAny);
            s.field("saturation", m.saturation, "", kAny);
            s.field("velocity_limit", m.velocityLimit, "", kAny);
            s.field("armature", m.armature, "", kAny);
            s.field("source", m.actuatorSource, "", kAny);
          });
  v.group("commands", "uniform ranges trained with, base frame [m/s, m/s, rad/s]", [&](auto& s) {
    s.field("enabled", m.commandsEnabled, "", kAny);
    s.field("lin_vel_x", m.linVelX, "", kAny);
    s.field("lin_vel_y", m.linVelY, "", kAny);
    s.field("ang_vel_z", m.angVelZ, "", kAny);
    s.field("resample_s", m.commandResampleS, "", kAny);
  });
  v.group("simulation",
          "contact model trained with (docs/simulator.md): friction of feet and ground, "
          "Gauss-Seidel iterations, smoothed model's kappa [1/m] and cutoff [m] (null: none), soft "
          "model's penalty contact",
          [&](auto& s) {
            s.field("contact", m.contactModel, "", kAny);
            s.field("kappa", m.kappa, "", kAny);
            s.field("friction", m.friction, "", kAny);
            s.field("solver_iterations", m.solverIterations, "", kAny);
            if (!v2) return;
            s.field("cutoff", m.contactCutoff, "", kAny);
            s.field("soft_kp", m.softKp, "", kAny);
            s.field("soft_kd", m.softKd, "", kAny);
            s.field("soft_kf", m.softKf, "", kAny);
            s.field("soft_substeps", m.softSubsteps, "", kAny);
            s.field("soft_integrator", m.softIntegrator, "", kAny);
          });
  if (v2)
    v.group(
        "reset",
        "each episode: default pose at default_base_height, level; joints + U(-joint_pos_noise, "
        "+), base x, y + U(-base_pos_noise, +), yaw U(-random_yaw, +) then a tilt "
        "U(-base_rot_noise, +) about a random horizontal axis, velocities + U(-x, +) per "
        "component (linear: world axes, angular: base axes); then the base height is set so that "
        "the lowest foot sphere is foot_clearance above z = 0",
        [&](auto& s) {
          s.field("joint_pos_noise", m.resetJointPosNoise, "", kAny);
          s.field("joint_vel_noise", m.resetJointVelNoise, "", kAny);
          s.field("base_pos_noise", m.resetBasePosNoise, "", kAny);
          s.field("base_rot_noise", m.resetBaseRotNoise, "", kAny);
          s.field("random_yaw", m.resetRandomYaw, "", kAny);
          s.field("base_lin_vel_noise", m.resetBaseLinVelNoise, "", kAny);
          s.field("base_ang_vel_noise", m.resetBaseAngVelNoise, "", kAny);
          s.field("foot_clearance", m.resetFootClearance, "", kAny);
        });
  if (v2)
    v.group(
        "randomization",
        "per episode, null: off: friction U(lo, hi), mass added to the base U(lo, hi) [kg] (its "
        "inertia scaled with it), pushes (base x, y velocity + U(-push_velocity, +) [m/s]) every "
        "U(lo, hi) s",
        [&](auto& s) {
          s.field("friction", m.frictionRange, "", kAny);
          s.field("added_mass", m.addedMassRange, "", kAny);
          s.field("push_interval_s", m.pushIntervalS, "", kAny);
          s.field("push_velocity", m.pushVelocity, "", kAny);
          // Written since their keys exist; absent in older files (then off).
          bool present = true;
          s.optionalField("motor_strength", present, m.motorStrengthRange, "", kAny);
          present = true;
          s.optionalField("action_delay_steps", present, m.actionDelaySteps, "", kAny);
        });
  v.group("terminations", "trained with (null: none); the controller's default safety limits",
          [&](auto& s) {
            s.field("base_tilt_above", m.terminationTilt, "", kAny);
            s.field("base_height_below", m.terminationHeight, "", kAny);
          });
  if (v2)
    v.group("provenance",
            "how the policy was made (null or empty: unknown): seed, iterations, warm-start chain "
            "(init_from, newest first), sha256 of the run's config.yaml (the resolved training "
            "config) as read at export, final curriculum factors (null: no curriculum)",
            [&](auto& s) {
              s.field("diffloco_version", m.difflocoVersion, "", kAny);
              s.field("git_commit", m.gitCommit, "", kAny);
              s.field("algorithm", m.algorithm, "", kAny);
              s.field("source", m.source, "", kAny);
              s.field("config_sha256", m.configSha256, "", kAny);
              s.field("seed", m.seed, "", kAny);
              s.field("iterations", m.iterations, "", kAny);
              s.field("warm_start", m.warmStart, "", kAny);
              s.nullableGroup("curriculum", "", m.curriculum,
                              [](auto& c, CurriculumFactors& x) { visitCurriculum(c, x); });
            });
  if (v2) {
    bool present = m.evaluation.has_value();
    EvaluationProtocol e = m.evaluation.value_or(EvaluationProtocol());
    v.optionalGroup(
        "evaluation",
        "how diffloco evaluates this policy (diffloco eval; docs/sim_to_sim.md, docs/terrain.md): "
        "the MuJoCo options recommended for it, how foot and ground friction combine, the "
        "commands, what the tracking errors pool, the resets and the terrain conditions",
        present, [&](auto& s) {
          s.field("mujoco_integrator", e.mujocoIntegrator, "", kAny);
          s.field("mujoco_cone", e.mujocoCone, "", kAny);
          s.field("mujoco_solver", e.mujocoSolver, "", kAny);
          s.field("mujoco_iterations", e.mujocoIterations, "", kAny);
          s.field("mujoco_noslip_iterations", e.mujocoNoslipIterations, "", kAny);
          s.field("friction_combination", e.frictionCombination, "", kAny);
          s.field("commands", e.commands, "", kAny);
          s.field("tracking_rms", e.trackingRms, "", kAny);
          s.field("resets", e.resets, "", kAny);
          s.field("terrain", e.terrain, "", kAny);
        });
    if (present) m.evaluation = e;
  }
  v.group("task", "the task as trained (YAML text, diffloco's configs/tasks format)",
          [&](auto& s) { s.field("yaml", m.taskYaml, "", kAny); });
}

void checkSizes(const PolicyMetadata& m, const std::string& source) {
  const size_t nj = m.jointNames.size();
  auto checkSize = [&](const std::vector<double>& v, const char* what) {
    if (v.size() != nj)
      throw std::runtime_error(source + ": " + what + " has " + std::to_string(v.size()) +
                               " entries for " + std::to_string(nj) + " joints");
  };
  checkSize(m.defaultJointPos, "joints.default_pos");
  checkSize(m.jointLower, "joints.lower");
  checkSize(m.jointUpper, "joints.upper");
  checkSize(m.effort, "actuator.effort");
  int total = 0;
  for (const auto& t : m.observations) total += t.size;
  if (total != m.numObs)
    throw std::runtime_error(source + ": observation term sizes sum to " + std::to_string(total) +
                             ", observation.size is " + std::to_string(m.numObs));
  if (m.footRadius.size() != m.feet.size())
    throw std::runtime_error(source + ": robot.foot_radius has " +
                             std::to_string(m.footRadius.size()) + " entries for " +
                             std::to_string(m.feet.size()) + " feet");
  if (m.gravity.size() != 3)
    throw std::runtime_error(source + ": robot.gravity has " + std::to_string(m.gravity.size()) +
                             " entries, expected 3");
  for (const auto* r : {&m.frictionRange, &m.addedMassRange, &m.pushIntervalS,
                        &m.motorStrengthRange, &m.actionDelaySteps})
    if (*r && (*r)->size() != 2)
      throw std::runtime_error(source + ": randomization ranges are [lo, hi] or null");
}

// Format 1 wrote "no limit" as 1e10 and "no termination" as 0.
void upgradeV1Values(PolicyMetadata& m) {
  for (auto* x : {&m.saturation, &m.velocityLimit})
    if (*x && **x >= 1e9) x->reset();
  for (auto* x : {&m.terminationTilt, &m.terminationHeight})
    if (*x && **x == 0) x->reset();
}

}  // namespace

int PolicyMetadata::jointIndex(const std::string& name) const {
  for (int i = 0; i < numJoints(); ++i)
    if (jointNames[i] == name) return i;
  return -1;
}

std::string toJson(const PolicyMetadata& m) {
  PolicyMetadata c = m;
  std::string body;
  config::JsonWriter w(body);
  visitMetadata(c, w);
  return "{" + body + "}";
}

std::string toYaml(const PolicyMetadata& m) {
  PolicyMetadata c = m;
  std::ostringstream out;
  out << "# Exported diffloco policy: metadata (the same as the TorchScript file's "
         "metadata_json and the ONNX file's metadata_props). docs/deploy.md explains every "
         "section.\n";
  config::Writer w(out, 0);
  visitMetadata(c, w);
  return out.str();
}

PolicyMetadata parsePolicyMetadata(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(source + ": not valid JSON/YAML metadata: " + e.what());
  }
  config::checkYamlTree(root, source);
  if (!root.IsMap()) throw std::runtime_error(source + ": metadata is not a map");
  std::string format;
  try {
    format = root["format"]["format"].as<std::string>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(source + ": format.format: missing (expected '" +
                             std::string(kMetadataFormat) + "')");
  }
  PolicyMetadata m;
  const config::Source src{source, {}};
  try {
    if (format == kMetadataFormat) {
      config::Reader r(root, "", src, YAML::Node(), config::ReadOptions{true, false});
      visitMetadata(m, r);
      r.finish();
    } else if (format == kMetadataFormatV1) {
      // Format 1: its keys, others skipped.
      config::Reader r(root, "", src, YAML::Node(), config::ReadOptions{true, true});
      visitMetadata(m, r, 1);
      upgradeV1Values(m);
    } else {
      throw std::runtime_error(source + ": format.format: '" + io::excerpt(format) +
                               "', expected '" + kMetadataFormat + "' (or the older '" +
                               kMetadataFormatV1 + "')");
    }
  } catch (const YAML::Exception& e) {
    // What the reader's own checks do not name (a node of an unexpected kind deep inside a
    // section): yaml-cpp's message, with the file and line.
    throw std::runtime_error(source +
                             (e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1)) +
                             ": metadata: " + e.msg);
  }
  checkSizes(m, source);
  return m;
}

std::vector<std::string> metadataDifferences(const PolicyMetadata& a, const PolicyMetadata& b) {
  PolicyMetadata ca = a, cb = b;
  std::vector<std::pair<std::string, std::string>> fa, fb;
  config::Flattener flatA(fa, ""), flatB(fb, "");
  visitMetadata(ca, flatA);
  visitMetadata(cb, flatB);
  std::vector<std::string> diff;
  const size_t n = std::max(fa.size(), fb.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= fa.size() || i >= fb.size()) {
      diff.push_back((i < fa.size() ? fa[i] : fb[i]).first);
    } else if (fa[i] != fb[i]) {
      diff.push_back(fa[i].first);
    }
  }
  return diff;
}

}  // namespace diffloco::deploy
