#include "envs/stepping_incentive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "envs/locomotion_env.h"
#include "sim/kinematics.h"

namespace diffloco::envs {

namespace {

using sim::VecX;

// The trot's reference: the task's foot_height_tracking term, or a default 2 Hz trot.
struct Reference {
  double height = 0, frequency = 2;
  std::vector<double> phases;
};

// `term`: the index of foot_height_tracking among the task's rewards, -1 without it.
Reference reference(const TaskConfig& task, const Robot& robot, int term) {
  Reference r;
  r.height = robot.defaultBaseHeight / 6;
  r.phases = {0.0, 0.5, 0.5, 0.0};
  if (term >= 0) {
    const TermParams& p = task.rewards[term].params;
    r.height = p("height");
    r.frequency = p("frequency");
    r.phases = p.list("phase_offsets");
  }
  if (static_cast<int>(r.phases.size()) != robot.model.nfeet())
    throw std::runtime_error(task.source + ": a trot needs one phase per foot; robot '" +
                             robot.name + "' has " + std::to_string(robot.model.nfeet()) +
                             " feet and the reference " + std::to_string(r.phases.size()) +
                             " phases");
  return r;
}

// Joint offsets from the default pose that raise each foot by z in the base frame, the base held,
// on a grid of lifts 0 .. height: lift[j][k] is foot j raised by height * k / (kLifts - 1).
// Newton steps with a damped least-squares solve of the foot point's Jacobian (the base at the
// origin, level: its joint columns are d foot / d q); the legs do not share joints, so each foot's
// offsets move its own leg only.
constexpr int kLifts = 33;

std::vector<std::vector<VecX>> liftTable(const Robot& robot, double height) {
  const sim::Model& m = robot.model;
  const int nj = m.nj();
  sim::Data data(m);
  VecX q = sim::neutralConfiguration(m);
  Eigen::Matrix<double, 3, Eigen::Dynamic> J(3, m.nv());
  auto footAt = [&](const VecX& joints, int j) {
    q.tail(nj) = joints;
    sim::forwardKinematics(m, data, q);
    return sim::worldPoint(data, m.feet[j].body, m.feet[j].offset);
  };
  std::vector<std::vector<VecX>> table(m.nfeet());
  for (int j = 0; j < m.nfeet(); ++j) {
    const sim::Vec3 start = footAt(robot.defaultJointPos, j);
    VecX joints = robot.defaultJointPos;
    for (int k = 0; k < kLifts; ++k) {
      const sim::Vec3 target = start + sim::Vec3(0, 0, height * k / (kLifts - 1));
      for (int it = 0; it < 20; ++it) {
        const sim::Vec3 p = footAt(joints, j), r = target - p;
        if (r.norm() < 1e-7) break;
        sim::pointJacobian(m, data, m.feet[j].body, p, J);
        const auto Jq = J.rightCols(nj);
        const Eigen::Matrix3d A = Jq * Jq.transpose() + 1e-8 * Eigen::Matrix3d::Identity();
        joints += Jq.transpose() * A.ldlt().solve(r);
      }
      table[j].push_back(joints - robot.defaultJointPos);
    }
  }
  return table;
}

// Lowest point of each foot sphere above the plane z = 0, mean over envs and feet.
double meanFootHeight(const sim::Model& m, const torch::Tensor& q) {
  const torch::Tensor qc = q.detach().to(torch::kDouble).contiguous();
  sim::Data data(m);
  double sum = 0;
  for (std::int64_t e = 0; e < qc.size(0); ++e) {
    const VecX qe = Eigen::Map<const VecX>(qc[e].data_ptr<double>(), m.nq());
    sim::forwardKinematics(m, data, qe);
    for (const auto& f : m.feet) sum += sim::worldPoint(data, f.body, f.offset).z() - f.radius;
  }
  return sum / (qc.size(0) * m.nfeet());
}

}  // namespace

SteppingIncentive measureSteppingIncentive(const TaskConfig& taskIn,
                                           const SteppingIncentiveOptions& o) {
  TaskConfig task = taskIn;
  task.terrain = TerrainConfig();  // the flat floor: what a policy meets first
  EnvOptions eo;
  eo.numEnvs = o.envs;
  eo.threads = o.threads;
  eo.dtype = torch::kDouble;
  eo.seed = o.seed;
  eo.printSummary = false;
  LocomotionEnv env(task, eo);
  const Robot& robot = env.robot();
  SteppingIncentive s;
  for (std::size_t k = 0; k < task.rewards.size(); ++k)
    if (task.rewards[k].name == "foot_height_tracking") {
      s.footHeightTerm = static_cast<int>(k);
      s.footHeightMax = task.rewards[k].weight * robot.model.nfeet() / M_PI;
    }
  const Reference ref = reference(task, robot, s.footHeightTerm);
  const auto table = liftTable(robot, ref.height);
  s.task = task.name;
  s.robot = robot.name;
  s.rewardNames = env.rewardNames();
  s.swingHeight = ref.height;
  s.frequency = ref.frequency;
  s.envs = o.envs;
  const int steps = std::max(1, static_cast<int>(std::lround(o.seconds / task.envDt)));
  s.seconds = steps * task.envDt;
  const int nj = robot.model.nj(), nfeet = robot.model.nfeet();

  auto rollout = [&](bool trot) {
    GaitRewards g;
    env.seed(o.seed);
    env.reset();
    torch::Tensor sums =
        torch::zeros({static_cast<std::int64_t>(s.rewardNames.size())}, torch::kDouble);
    for (int i = 0; i < steps; ++i) {
      torch::Tensor actions = torch::zeros({o.envs, nj}, torch::kDouble);
      if (trot) {
        // The reward reads the reference at the time the step ends.
        const torch::Tensor stepsDone = env.episodeLength().contiguous();
        const auto done = stepsDone.accessor<std::int64_t, 1>();
        auto a = actions.accessor<double, 2>();
        for (int e = 0; e < o.envs; ++e) {
          const double t = (done[e] + 1) * task.envDt;
          for (int j = 0; j < nfeet; ++j) {
            const double lift =
                std::max(0.0, std::sin(2 * M_PI * (ref.frequency * t + ref.phases[j])));
            const double x = lift * (kLifts - 1);
            const int k = std::min(kLifts - 2, static_cast<int>(x));
            const VecX dq = table[j][k] + (x - k) * (table[j][k + 1] - table[j][k]);
            for (int c = 0; c < nj; ++c) a[e][c] += dq[c] / task.actionScale;
          }
        }
      }
      const StepResult r = env.step(actions);
      const torch::Tensor terms = r.extras.rewardTerms.to(torch::kDouble);
      if (!torch::isfinite(terms).all().item<bool>())
        throw std::runtime_error(task.source + ": a non-finite reward in the " +
                                 (trot ? "trot" : "standing") + " rollout of robot '" + robot.name +
                                 "'");
      sums += terms.sum(0);
      g.falls += static_cast<int>(r.terminated.sum().item<std::int64_t>());
      g.meanLift += meanFootHeight(robot.model, env.q());
    }
    sums /= static_cast<double>(steps) * o.envs;
    for (std::int64_t k = 0; k < sums.size(0); ++k) {
      g.terms.push_back(sums[k].item<double>());
      g.total += g.terms.back();
    }
    g.meanLift /= steps;
    return g;
  };
  s.standing = rollout(false);
  s.trot = rollout(true);
  return s;
}

std::string steppingIncentiveReport(const SteppingIncentive& s) {
  std::string out;
  char line[1024];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  add("task %s, robot %s, on the flat floor: rewards per env step (weighted, mean over envs and "
      "steps)\n",
      s.task.c_str(), s.robot.c_str());
  add("trot in place: joint targets lifting each foot along the task's foot-height reference (peak "
      "%.3f m, %.2f Hz), the base free\n",
      s.swingHeight, s.frequency);
  add("  %-26s %12s %14s %12s\n", "term", "standing", "trot in place", "difference");
  for (std::size_t k = 0; k < s.rewardNames.size(); ++k)
    add("  %-26s %12.4f %14.4f %+12.4f\n", s.rewardNames[k].c_str(), s.standing.terms[k],
        s.trot.terms[k], s.trot.terms[k] - s.standing.terms[k]);
  add("  %-26s %12.4f %14.4f %+12.4f\n", "total", s.standing.total, s.trot.total, s.margin());
  add("  %-26s %12d %14d\n", "falls", s.standing.falls, s.trot.falls);
  add("  %-26s %12.4f %14.4f\n", "mean foot height [m]", s.standing.meanLift, s.trot.meanLift);
  if (s.footHeightTerm >= 0 && s.footHeightMax > 0)
    add("foot_height_tracking at its maximum (every foot on its reference): %.4f; standing earns "
        "%.0f %% of it, the trot in place %.0f %%\n",
        s.footHeightMax, 100 * s.standing.terms[s.footHeightTerm] / s.footHeightMax,
        100 * s.trot.terms[s.footHeightTerm] / s.footHeightMax);
  if (s.standing.falls > 0)
    add("note: standing still, %d episodes of %d envs ended by a termination in %.1f s (the "
        "task's resets, pushes and randomisation)\n",
        s.standing.falls, s.envs, s.seconds);
  if (s.standingPaysTooWell())
    add("warning: standing pays too well: a trot in place earns %+.4f per env step against "
        "standing%s; a policy that starts standing is paid nothing for its first steps and may "
        "stay in the standing plateau. A narrower foot-height kernel or a higher swing "
        "(rewards.foot_height_tracking) pays stepping more; large initial action noise "
        "(policy.init_std) helps a policy leave it (docs/robots.md)\n",
        s.margin(), s.trot.falls > s.standing.falls ? " and falls more" : "");
  else
    add("stepping pays: a trot in place earns %+.4f per env step over standing (%.1f %% of "
        "standing's)\n",
        s.margin(), 100 * s.margin() / std::max(1e-12, std::abs(s.standing.total)));
  return out;
}

}  // namespace diffloco::envs
