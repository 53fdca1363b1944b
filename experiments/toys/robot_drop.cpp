#include "experiments/toys/robot_drop.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "experiments/gradcheck.h"
#include "io/atomic_file.h"
#include "robots/robot.h"
#include "sim/adaptive.h"
#include "sim/kinematics.h"
#include "sim/soft_step_vjp.h"
#include "sim/stage_rollout.h"

namespace diffloco::toys {
using sim::MatX;
using sim::VecX;

namespace {

struct Scenario {
  Robot robot;
  sim::SimOptions opt;
  VecX q0, v0, wq, wv;
  MatX targets;
};

Scenario makeScenario(const RobotDropOptions& o) {
  Scenario s{loadRobot(o.robot), {}, {}, {}, {}, {}, {}};
  s.opt = defaultSimOptions(s.robot, sim::ContactModel::Soft);
  s.opt.contact.softKp = o.kp;
  s.opt.contact.softKd = o.kd;
  s.opt.contact.softKf = o.kf;
  s.opt.contact.mu = o.mu;
  const sim::Model& m = s.robot.model;
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> n(0.0, 1.0);
  s.q0 = s.robot.standingConfiguration();
  // Lift until the lowest foot is `height` above the ground.
  {
    sim::Data d(m);
    sim::forwardKinematics(m, d, s.q0);
    double lowest = 1e9;
    for (const auto& f : m.feet)
      lowest = std::min(lowest, sim::worldPoint(d, f.body, f.offset).z() - f.radius);
    s.q0[2] += o.height - lowest;
  }
  const sim::Quat rot = sim::Quat(1, 0.03 * n(rng), 0.03 * n(rng), 0.05 * n(rng)).normalized();
  s.q0.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
  for (int j = 0; j < m.nj(); ++j) s.q0[7 + j] += 0.03 * n(rng);
  s.v0 = VecX::Zero(m.nv());
  for (int i = 3; i < m.nv(); ++i) s.v0[i] = 0.1 * n(rng);
  s.v0[0] = 0.3;
  s.v0[2] = -0.5;
  const int H = static_cast<int>(std::lround(o.duration / s.opt.dt));
  s.targets.resize(m.nj(), H);
  for (int t = 0; t < H; ++t)
    for (int j = 0; j < m.nj(); ++j) s.targets(j, t) = s.robot.defaultJointPos[j] + 0.05 * n(rng);
  s.wq.resize(m.nq());
  s.wv.resize(m.nv());
  for (int i = 0; i < m.nq(); ++i) s.wq[i] = n(rng);
  for (int i = 0; i < m.nv(); ++i) s.wv[i] = n(rng);
  return s;
}

struct Run {
  VecX grad, xT;
  double ms = 0, forwardMs = 0, evals = 0, rejected = 0, events = 0, maxDepth = 0;
  int maxAccepted = 0;
  long long capHits = 0;
};

// The final state of the adaptive integration of the scenario from (q0, v0) with targets.
VecX adaptiveFinal(const Scenario& s, const sim::SimOptions& opt, const VecX& q0, const VecX& v0,
                   const MatX& targets) {
  const sim::Model& m = s.robot.model;
  sim::AdaptiveData data(m);
  VecX q = q0, v = v0, qn(m.nq()), vn(m.nv());
  for (int t = 0; t < targets.cols(); ++t) {
    sim::adaptiveStep(m, opt, data, q, v, targets.col(t), qn, vn);
    q.swap(qn);
    v.swap(vn);
  }
  VecX x(m.nq() + m.nv());
  x << q, v;
  return x;
}

// The loss of a forward rollout from a perturbed start: (q0, v0, targets) + e * dir.
double loss(const Scenario& s, const sim::SimOptions& opt, const VecX& dir, double e) {
  const sim::Model& m = s.robot.model;
  const int H = static_cast<int>(s.targets.cols()), nq = m.nq(), nv = m.nv(), nj = m.nj();
  const MatX t = s.targets + e * Eigen::Map<const MatX>(dir.tail(nj * H).data(), nj, H);
  const VecX x = adaptiveFinal(s, opt, s.q0 + e * dir.head(nq), s.v0 + e * dir.segment(nq, nv), t);
  return s.wq.dot(x.head(nq)) + s.wv.dot(x.tail(nv));
}

// The fixed sub-stepping on the stages: n sub-steps of an env step taken as n env steps of dt / n
// with the env step's targets (the same scheme; the stages' soft VJP holds at most
// Quadruped::MAXSOFTSUBSTEPS sub-steps a step). Gradient with respect to the env steps' targets.
void runFixed(const Scenario& s, const sim::SimOptions& opt, Run& r) {
  const sim::Model& m = s.robot.model;
  const int H = static_cast<int>(s.targets.cols()), n = std::max(1, opt.contact.softSubsteps);
  sim::SimOptions sub = opt;
  sub.dt = opt.dt / n;
  sub.contact.softSubsteps = 1;
  MatX targets(m.nj(), H * n);
  for (int t = 0; t < H; ++t)
    for (int k = 0; k < n; ++k) targets.col(t * n + k) = s.targets.col(t);
  const auto t0 = std::chrono::steady_clock::now();
  const sim::Rollout ro = sim::stageRollout<sim::Quadruped>(m, sub, s.q0, s.v0, targets);
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<VecX> gq(H * n + 1), gv(H * n + 1);
  gq.back() = s.wq;
  gv.back() = s.wv;
  const sim::RolloutAdjoint adj = sim::stageRolloutVjp<sim::Quadruped>(m, sub, ro, targets, gq, gv);
  const auto t2 = std::chrono::steady_clock::now();
  if (!ro.finite) throw std::runtime_error("toy robot-drop: a rollout became non-finite");
  r.forwardMs = std::min(r.forwardMs, std::chrono::duration<double, std::milli>(t1 - t0).count());
  r.ms = std::min(r.ms, std::chrono::duration<double, std::milli>(t2 - t0).count());
  MatX gTargets = MatX::Zero(m.nj(), H);
  for (int t = 0; t < H; ++t)
    for (int k = 0; k < n; ++k) gTargets.col(t) += adj.targets.col(t * n + k);
  r.grad.resize(m.nq() + m.nv() + m.nj() * H);
  r.grad << adj.q0, adj.v0, Eigen::Map<const VecX>(gTargets.data(), m.nj() * H);
  r.xT.resize(m.nq() + m.nv());
  r.xT << ro.q.back(), ro.v.back();
  r.evals = H * n;
}

// The adaptive integrator, env step by env step (reading its statistics), and its VJP.
void runAdaptive(const Scenario& s, const sim::SimOptions& opt, Run& r) {
  const sim::Model& m = s.robot.model;
  const int H = static_cast<int>(s.targets.cols());
  sim::AdaptiveData data(m);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<VecX> q(H + 1, s.q0), v(H + 1, s.v0);
  bool finite = true;
  r.evals = r.rejected = r.events = r.maxDepth = 0;
  r.maxAccepted = 0;
  for (int t = 0; t < H; ++t) {
    finite =
        sim::adaptiveStep(m, opt, data, q[t], v[t], s.targets.col(t), q[t + 1], v[t + 1]) && finite;
    r.evals += data.adaptive.evaluations;
    r.rejected += data.adaptive.rejected;
    r.events += data.adaptive.events;
    r.maxAccepted = std::max(r.maxAccepted, data.adaptive.accepted);
    for (int f = 0; f < m.nfeet(); ++f) r.maxDepth = std::max(r.maxDepth, data.depth[f]);
  }
  r.capHits = data.adaptiveCapHits;
  const auto t1 = std::chrono::steady_clock::now();
  VecX gq = s.wq, gv = s.wv;
  MatX gTargets(m.nj(), H);
  sim::StepAdjoint adj(m);
  for (int t = H - 1; t >= 0; --t) {
    adj.setZero(m);
    sim::adaptiveStepVjp(m, opt, data, q[t], v[t], s.targets.col(t), gq, gv, adj);
    gq = adj.q;
    gv = adj.v;
    gTargets.col(t) = adj.qTarget;
  }
  const auto t2 = std::chrono::steady_clock::now();
  if (!finite) throw std::runtime_error("toy robot-drop: a rollout became non-finite");
  r.forwardMs = std::min(r.forwardMs, std::chrono::duration<double, std::milli>(t1 - t0).count());
  r.ms = std::min(r.ms, std::chrono::duration<double, std::milli>(t2 - t0).count());
  r.grad.resize(m.nq() + m.nv() + m.nj() * H);
  r.grad << gq, gv, Eigen::Map<const VecX>(gTargets.data(), m.nj() * H);
  r.xT.resize(m.nq() + m.nv());
  r.xT << q[H], v[H];
  r.evals /= H;
  r.rejected /= H;
  r.events /= H;
}

Run run(const Scenario& s, const sim::SimOptions& opt, int repeats) {
  Run r;
  r.ms = r.forwardMs = 1e30;
  for (int rep = 0; rep < std::max(1, repeats); ++rep) {
    if (opt.contact.integrator == sim::Integrator::Adaptive)
      runAdaptive(s, opt, r);
    else
      runFixed(s, opt, r);
  }
  if (opt.contact.integrator != sim::Integrator::Adaptive) r.evals /= s.targets.cols();
  return r;
}

std::string fmtG(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

}  // namespace

RobotDropReport runRobotDrop(const RobotDropOptions& o) {
  if (o.refSubsteps < 4) throw std::invalid_argument("toy robot-drop: --ref-substeps must be >= 4");
  if (!(o.refRtol > 0)) throw std::invalid_argument("toy robot-drop: --ref-rtol must be > 0");
  const Scenario s = makeScenario(o);
  const sim::Model& m = s.robot.model;
  RobotDropReport rep;
  rep.options = o;
  rep.envSteps = static_cast<int>(s.targets.cols());
  rep.dt = s.opt.dt;
  const double nx = m.nq() + m.nv();

  // The fine fixed reference, Richardson-extrapolated.
  sim::SimOptions fixed = s.opt;
  fixed.contact.integrator = sim::Integrator::Fixed;
  fixed.contact.softSubsteps = o.refSubsteps;
  const Run fine = run(s, fixed, 1);
  fixed.contact.softSubsteps = o.refSubsteps / 2;
  const Run half = run(s, fixed, 1);
  const VecX gFine = 2 * fine.grad - half.grad;
  rep.fineExtrapolation = (fine.grad - gFine).norm() / gFine.norm();
  rep.fineMs = fine.ms + half.ms;
  // The tight adaptive reference.
  sim::SimOptions tightOpt = s.opt;
  tightOpt.contact.integrator = sim::Integrator::Adaptive;
  tightOpt.contact.adaptive.rtol = o.refRtol;
  tightOpt.contact.adaptive.atol = o.refRtol / 100;
  tightOpt.contact.adaptive.maxSteps = 1000000;
  const Run tight = run(s, tightOpt, 1);
  const VecX& gTight = tight.grad;
  rep.tightMs = tight.ms;
  rep.fineVsTight = (gFine - gTight).norm() / gTight.norm();
  rep.maxPenetration = tight.maxDepth;
  rep.gradientSize = static_cast<int>(gTight.size());
  {
    std::mt19937 rng(o.seed + 1);
    std::normal_distribution<double> n(0.0, 1.0);
    VecX dir(gTight.size());
    for (int i = 0; i < dir.size(); ++i) dir[i] = n(rng);
    dir.normalize();
    // 1e-5: the live integration's loss carries a tolerance-sized roughness (its step sizes and
    // event steps follow the perturbation) that smaller steps would amplify.
    const double e = 1e-5;
    rep.tightDirectional = gTight.dot(dir);
    rep.tightDirectionalFd = (loss(s, tightOpt, dir, e) - loss(s, tightOpt, dir, -e)) / (2 * e);
  }

  auto fill = [&](RobotDropRow& row, const Run& r) {
    row.gradErrorFine = (r.grad - gFine).norm() / gFine.norm();
    row.gradErrorTight = (r.grad - gTight).norm() / gTight.norm();
    row.stateError = (r.xT - tight.xT).lpNorm<Eigen::Infinity>();
    row.ms = r.ms;
    row.forwardMs = r.forwardMs;
    row.evalsPerEnvStep = r.evals;
    row.rejectedPerEnvStep = r.rejected;
    row.eventsPerEnvStep = r.events;
    row.capHits = r.capHits;
  };
  for (int n : o.substeps) {
    sim::SimOptions opt = s.opt;
    opt.contact.integrator = sim::Integrator::Fixed;
    opt.contact.softSubsteps = n;
    RobotDropRow row;
    row.integrator = "fixed";
    row.setting = "n=" + std::to_string(n) + " (h=" + fmtG(1e6 * s.opt.dt / n) + " us)";
    fill(row, run(s, opt, o.repeats));
    // The n + 1 sub-step states, and the stages' soft VJP's tape (one sub-step's).
    row.checkpointBytes = (n + 1) * nx * sizeof(double);
    row.backwardBytes = sizeof(sim::SoftTape<sim::Quadruped>) + row.checkpointBytes;
    rep.rows.push_back(row);
  }
  for (double rtol : o.rtols) {
    sim::SimOptions opt = s.opt;
    opt.contact.integrator = sim::Integrator::Adaptive;
    opt.contact.adaptive.rtol = rtol;
    opt.contact.adaptive.atol = rtol / 100;
    if (o.eventTol >= 0) opt.contact.adaptive.contactEventTol = o.eventTol;
    RobotDropRow row;
    row.integrator = "adaptive";
    row.setting = "rtol=" + fmtG(rtol);
    const Run r = run(s, opt, o.repeats);
    fill(row, r);
    // Checkpoints of the busiest env step, seven stage tapes (six stages and one for a
    // touchdown) and the stage vectors (3 x 6 x nx), all reused from step to step.
    row.checkpointBytes = static_cast<double>(sim::adaptiveCheckpointBytes(m, r.maxAccepted));
    row.backwardBytes = row.checkpointBytes + static_cast<double>(sim::adaptiveTapeBytes(m)) +
                        18 * nx * sizeof(double);
    rep.rows.push_back(row);
  }
  return rep;
}

void printRobotDrop(const RobotDropReport& r) {
  const RobotDropOptions& o = r.options;
  std::printf(
      "robot drop: %s, k = %g N/m, kd = %g N s/m, kf = %g N s/m, mu = %g; lowest foot %g m up, "
      "v0 = (0.3, 0, -0.5) m/s; %d env steps of %g ms; deepest penetration %.2f mm\n"
      "gradient of a random linear loss of (q_T, v_T) w.r.t. (q_0, v_0, targets): %d entries\n",
      o.robot.c_str(), o.kp, o.kd, o.kf, o.mu, o.height, r.envSteps, 1e3 * r.dt,
      1e3 * r.maxPenetration, r.gradientSize);
  std::printf(
      "references: fine fixed = %d and %d sub-steps, Richardson (%.0f ms; extrapolation step "
      "%.1e); tight = adaptive at rtol %g (%.0f ms).\n  fine vs tight: %.2e.  tight vs central "
      "differences of its live integration along a random direction: %.8e vs %.8e (rel. %.1e)\n",
      o.refSubsteps, o.refSubsteps / 2, r.fineMs, r.fineExtrapolation, o.refRtol, r.tightMs,
      r.fineVsTight, r.tightDirectional, r.tightDirectionalFd,
      std::abs(r.tightDirectional - r.tightDirectionalFd) /
          std::max(std::abs(r.tightDirectionalFd), 1e-300));
  std::printf("%-9s %-17s %10s %10s %10s %9s %9s %9s %8s %8s %8s %8s %5s\n", "", "", "grad err",
              "grad err", "state err", "ms", "ms", "evals", "rejected", "events", "bwd KB",
              "ckpt KB", "caps");
  std::printf("%-9s %-17s %10s %10s %10s %9s %9s %9s %8s %8s %8s %8s %5s\n", "integrator",
              "setting", "vs fine", "vs tight", "vs tight", "fwd+bwd", "fwd", "/step", "/step",
              "/step", "/step", "/step", "");
  for (const auto& w : r.rows)
    std::printf("%-9s %-17s %10.2e %10.2e %10.2e %9.2f %9.2f %9.1f %8.2f %8.2f %8.1f %8.2f %5lld\n",
                w.integrator.c_str(), w.setting.c_str(), w.gradErrorFine, w.gradErrorTight,
                w.stateError, w.ms, w.forwardMs, w.evalsPerEnvStep, w.rejectedPerEnvStep,
                w.eventsPerEnvStep, w.backwardBytes / 1024, w.checkpointBytes / 1024, w.capHits);
}

std::string writeRobotDropCsv(const RobotDropReport& r, const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  std::ostringstream out;
  out << "integrator,setting,grad_error_vs_fine,grad_error_vs_tight,state_error,ms,forward_ms,"
         "evals_per_step,rejected_per_step,events_per_step,backward_bytes_per_step,"
         "checkpoint_bytes_per_step,cap_hits\n";
  out.precision(8);
  for (const auto& w : r.rows)
    out << w.integrator << "," << w.setting << "," << w.gradErrorFine << "," << w.gradErrorTight
        << "," << w.stateError << "," << w.ms << "," << w.forwardMs << "," << w.evalsPerEnvStep
        << "," << w.rejectedPerEnvStep << "," << w.eventsPerEnvStep << "," << w.backwardBytes << ","
        << w.checkpointBytes << "," << w.capHits << "\n";
  io::writeFileAtomic(path, out.str());
  return path;
}

}  // namespace diffloco::toys
