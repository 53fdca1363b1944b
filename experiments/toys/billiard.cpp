#include "experiments/toys/billiard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "runs/gnuplot.h"
#include "sim/contact_stage.h"

namespace diffloco::toys {

using sim::ContactModel;

namespace {

// Everything one step computes, kept for its reverse pass.
struct StepTape {
  Vec2 u1, u2;       // free velocities
  Vec2 r, n;         // y2 - y1 at the mid-step and its direction (cue -> object)
  double rho = 0;    // |r|
  double d = 0;      // depth 2 radius - rho
  double c = 0;      // n.(u2 - u1): normal velocity before the impulse (< 0: approaching)
  double G = 0;      // Delassus scalar 1/m1 + 1/m2
  double pRaw = 0;   // solver impulse, before the sigmoid
  double sigma = 1;  // sigmoid(kappa d) (smoothed), 1 otherwise
  double p = 0;      // applied impulse
  bool active = false;
};

// The forward step under `model` (Hard or Smoothed; StraightThrough is mapped by the callers).
BallState forwardStep(const BilliardParams& P, ContactModel model, const BallState& s,
                      StepTape& t) {
  const double h = P.dt;
  // Mid-step positions for the contact geometry, as the stages' stepDynamics: q_mid = q (+) h/2 v.
  const Vec2 y1 = s.x1 + 0.5 * h * s.v1;
  const Vec2 y2 = s.x2 + 0.5 * h * s.v2;
  // Free velocity: u = v - h b with the table drag b = damping v.
  const double a = 1.0 - h * P.damping;
  t.u1 = a * s.v1;
  t.u2 = a * s.v2;
  t.r = y2 - y1;
  t.rho = t.r.norm();
  t.n = t.r / t.rho;
  t.d = 2 * P.radius - t.rho;
  t.active = model == ContactModel::Smoothed ? t.d >= -P.cutoff : t.d >= 0;
  t.p = t.pRaw = 0;
  t.sigma = 1;
  if (t.active) {
    t.c = t.n.dot(t.u2 - t.u1);
    t.G = 1.0 / P.mass + 1.0 / P.mass;
    // sim/'s Gauss-Seidel update for one frictionless contact (mu = 0; the tangential rows are
    // inert) from the eq. 11 guess p = 0 - G^-1 (c_e): exact after one update. c_e = (1 + e) c
    // asks for the separating velocity -e c after the impulse (e = 0: sim/'s contact).
    const double ce = (1.0 + P.restitution) * t.c;
    const double g = t.G, gi = 1.0 / t.G;
    const sim::M3 Gjj = {{g, 0, 0, 0, g, 0, 0, 0, g}}, Ginv = {{gi, 0, 0, 0, gi, 0, 0, 0, gi}};
    t.pRaw = sim::gaussSeidelUpdate(sim::zero3(), sim::v3(ce, 0, 0), Gjj, Ginv, 0.0)[0];
    if (model == ContactModel::Smoothed) t.sigma = 1.0 / (1.0 + std::exp(-(t.d * P.kappa)));
    t.p = t.sigma * t.pRaw;
  }
  BallState o;
  // v' = u + M^-1 J^T p with J = (-n^T, n^T).
  o.v1 = t.u1 - (t.p / P.mass) * t.n;
  o.v2 = t.u2 + (t.p / P.mass) * t.n;
  o.x1 = s.x1 + 0.5 * h * (s.v1 + o.v1);
  o.x2 = s.x2 + 0.5 * h * (s.v2 + o.v2);
  return o;
}

ContactModel forwardModel(ContactModel m) {
  if (m == ContactModel::Hard || m == ContactModel::StraightThrough) return ContactModel::Hard;
  if (m == ContactModel::Smoothed) return ContactModel::Smoothed;
  throw std::invalid_argument(
      "toy billiard: contact model must be hard, smoothed or "
      "straight_through");
}

ContactModel backwardModel(ContactModel m) {
  return m == ContactModel::StraightThrough ? ContactModel::Smoothed : forwardModel(m);
}

int stepCount(const BilliardParams& P) {
  return static_cast<int>(std::lround(P.duration / P.dt));
}

}  // namespace

BallState billiardInitial(const BilliardParams& P, double theta) {
  BallState s;
  s.x2 = Vec2(P.distance, 0.0);
  s.v1 = (P.impulse / P.mass) * Vec2(std::cos(theta), std::sin(theta));
  return s;
}

BallState billiardStep(const BilliardParams& P, ContactModel model, const BallState& s,
                       BilliardStepInfo* info) {
  StepTape t;
  const BallState o = forwardStep(P, forwardModel(model), s, t);
  if (info) {
    info->depth = t.d;
    info->active = t.active;
    info->impulse = t.p;
  }
  return o;
}

BallState billiardStepVjp(const BilliardParams& P, ContactModel model, const BallState& s,
                          const BallState& gNext) {
  const double h = P.dt;
  // The tape of the step whose derivative is taken (straight_through: the smoothed step at s).
  StepTape t;
  forwardStep(P, backwardModel(model), s, t);

  BallState g;  // adjoint of s
  // x' = x + h/2 (v + v').
  g.x1 = gNext.x1;
  g.x2 = gNext.x2;
  g.v1 = 0.5 * h * gNext.x1;
  g.v2 = 0.5 * h * gNext.x2;
  const Vec2 gv1n = gNext.v1 + 0.5 * h * gNext.x1;  // adjoint of v1'
  const Vec2 gv2n = gNext.v2 + 0.5 * h * gNext.x2;  // adjoint of v2'
  // v1' = u1 - p/m n, v2' = u2 + p/m n.
  Vec2 gu1 = gv1n, gu2 = gv2n;
  if (t.active && t.pRaw > 0) {
    // (pRaw = 0 is the clamped branch max(0, .): p and its derivative vanish.)
    const Vec2 w = gv2n / P.mass - gv1n / P.mass;
    const double gp = t.n.dot(w);
    Vec2 gn = t.p * w;
    // p = sigma pRaw.
    const double gSigma = gp * t.pRaw;
    const double gpRaw = gp * t.sigma;
    // pRaw = -(1 + e) c / G (the masses, hence G, are constants here).
    const double gc = -(1.0 + P.restitution) / t.G * gpRaw;
    // c = n.(u2 - u1).
    gn += gc * (t.u2 - t.u1);
    gu2 += gc * t.n;
    gu1 -= gc * t.n;
    // sigma = sigmoid(kappa d), d = 2 radius - rho.
    double gRho = 0;
    if (backwardModel(model) == ContactModel::Smoothed)
      gRho = -gSigma * t.sigma * (1.0 - t.sigma) * P.kappa;
    // n = r / rho, rho = |r|.
    const Vec2 gr = (gn - t.n * t.n.dot(gn)) / t.rho + gRho * t.n;
    // r = y2 - y1, y = x + h/2 v.
    g.x2 += gr;
    g.v2 += 0.5 * h * gr;
    g.x1 -= gr;
    g.v1 -= 0.5 * h * gr;
  }
  // u = (1 - h damping) v.
  const double a = 1.0 - h * P.damping;
  g.v1 += a * gu1;
  g.v2 += a * gu2;
  return g;
}

ShotResult billiardShot(const BilliardParams& P, ContactModel model, double theta,
                        bool withGradient) {
  const int steps = stepCount(P);
  std::vector<BallState> traj;
  traj.reserve(withGradient ? steps + 1 : 1);
  BallState s = billiardInitial(P, theta);
  ShotResult r;
  r.minGap = std::numeric_limits<double>::infinity();
  for (int k = 0; k < steps; ++k) {
    if (withGradient) traj.push_back(s);
    BilliardStepInfo info;
    s = billiardStep(P, model, s, &info);
    r.minGap = std::min(r.minGap, -info.depth);
    if (info.impulse != 0) {
      if (r.firstContact < 0) r.firstContact = k;
      ++r.contactSteps;
    }
  }
  if (!(s.x1.allFinite() && s.x2.allFinite() && s.v1.allFinite() && s.v2.allFinite()))
    throw std::runtime_error("toy billiard: the state became non-finite");
  r.final = s;
  const Vec2 e = s.x2 - P.target;
  r.loss = e.squaredNorm();
  if (!withGradient) return r;

  // Reverse pass: L = |x2 - target|^2, then step by step back to the initial state, whose only
  // theta-dependent part is v1 = (impulse / m) (cos theta, sin theta).
  BallState g;
  g.x2 = 2.0 * e;
  for (int k = steps - 1; k >= 0; --k) g = billiardStepVjp(P, model, traj[k], g);
  r.dloss_dtheta = g.v1.dot((P.impulse / P.mass) * Vec2(-std::sin(theta), std::cos(theta)));
  return r;
}

double billiardLossFd(const BilliardParams& P, ContactModel model, double theta, double eps) {
  const double up = billiardShot(P, model, theta + eps, false).loss;
  const double down = billiardShot(P, model, theta - eps, false).loss;
  return (up - down) / (2 * eps);
}

std::vector<BallState> billiardPath(const BilliardParams& P, ContactModel model, double theta) {
  const int steps = stepCount(P);
  std::vector<BallState> path{billiardInitial(P, theta)};
  path.reserve(steps + 1);
  for (int k = 0; k < steps; ++k) path.push_back(billiardStep(P, model, path.back()));
  return path;
}

DescentTrace billiardDescent(const BilliardParams& P, ContactModel model, double theta0, int steps,
                             double lr) {
  DescentTrace tr;
  tr.model = sim::toString(model);
  // Adam (beta 0.9, 0.999). Its step is invariant to the gradient's scale, which matters here:
  // straight_through's gradient at a miss is orders of magnitude smaller than at a hit. eps is
  // tiny so that a small but non-zero gradient still moves theta; a zero one does not.
  const double b1 = 0.9, b2 = 0.999, eps = 1e-300;
  double theta = theta0, m = 0, v = 0;
  for (int k = 0; k <= steps; ++k) {
    const ShotResult r = billiardShot(P, model, theta, true);
    tr.theta.push_back(theta);
    tr.loss.push_back(model == ContactModel::Smoothed
                          ? billiardShot(P, ContactModel::Hard, theta, false).loss
                          : r.loss);
    tr.grad.push_back(r.dloss_dtheta);
    if (k == steps) break;
    const double g = r.dloss_dtheta;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double mh = m / (1 - std::pow(b1, k + 1)), vh = v / (1 - std::pow(b2, k + 1));
    if (vh > 0) theta -= lr * mh / (std::sqrt(vh) + eps);
  }
  return tr;
}

namespace {

void check(const BilliardOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("toy billiard: " + what); };
  const BilliardParams& P = o.params;
  if (!(P.dt > 0)) bad("--dt must be > 0");
  if (!(P.duration >= P.dt)) bad("--duration must be at least one time step");
  if (!(P.damping >= 0 && P.damping * P.dt < 1)) bad("--damping must be in [0, 1/dt)");
  if (!(P.radius > 0) || !(P.mass > 0) || !(P.impulse > 0)) bad("radius, mass, impulse > 0");
  if (!(P.distance > 2 * P.radius)) bad("--distance must exceed two radii (balls apart)");
  if (!(P.kappa > 0)) bad("--kappa must be > 0");
  if (!(P.cutoff >= 0)) bad("--cutoff must be >= 0");
  if (!(P.restitution >= 0 && P.restitution <= 1)) bad("--restitution must be in [0, 1]");
  if (!(o.thetaMax > o.thetaMin)) bad("--theta-max must exceed --theta-min");
  if (o.points < 2) bad("--points must be >= 2");
  if (o.descentSteps < 0) bad("--descent-steps must be >= 0");
  if (!(o.learningRate > 0)) bad("--lr must be > 0");
}

const std::vector<ContactModel> kModels{ContactModel::Hard, ContactModel::Smoothed,
                                        ContactModel::StraightThrough};

}  // namespace

BilliardSweep runBilliard(const BilliardOptions& o) {
  check(o);
  BilliardSweep s;
  s.options = o;
  for (ContactModel m : kModels) s.models.push_back(sim::toString(m));
  s.results.assign(kModels.size(), std::vector<ShotResult>(o.points));
  s.theta.resize(o.points);
  s.hitMin = std::numeric_limits<double>::infinity();
  s.hitMax = -s.hitMin;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < o.points; ++i) {
    const double th = o.thetaMin + (o.thetaMax - o.thetaMin) * i / (o.points - 1);
    s.theta[i] = th;
    for (size_t m = 0; m < kModels.size(); ++m)
      s.results[m][i] = billiardShot(o.params, kModels[m], th, true);
    const ShotResult& hard = s.results[0][i];
    if (hard.contactSteps > 0) {
      s.hitMin = std::min(s.hitMin, th);
      s.hitMax = std::max(s.hitMax, th);
    }
    if (hard.loss < best) {
      best = s.lossStar = hard.loss;
      s.thetaStar = th;
    }
  }
  if (o.descentSteps > 0) {
    for (ContactModel m : kModels)
      s.descent.push_back(
          billiardDescent(o.params, m, o.descentStart, o.descentSteps, o.learningRate));
    auto add = [&](const char* name, const std::string& title, ContactModel m, double th) {
      s.paths.push_back({name, title, th, billiardPath(o.params, m, th)});
    };
    const double th0 = o.descentStart, thS = s.descent[1].theta.back(),
                 thST = s.descent[2].theta.back();
    std::ostringstream t;
    t << std::setprecision(3);
    auto fmt = [&](const char* what, double th) {
      t.str("");
      t << what << th;
      return t.str();
    };
    add("hard_start", fmt("hard, start {/Symbol q}_0 = ", th0), ContactModel::Hard, th0);
    add("smoothed_start", fmt("smoothed, start {/Symbol q}_0 = ", th0), ContactModel::Smoothed,
        th0);
    // The descents' end points played for real (the hard forward; straight_through's is hard's).
    add("smoothed_end", fmt("hard at the smoothed end {/Symbol q} = ", thS), ContactModel::Hard,
        thS);
    add("straight_through_end", fmt("hard = straight-through at its end {/Symbol q} = ", thST),
        ContactModel::StraightThrough, thST);
  }
  return s;
}

namespace {

template <class Fn>
void writeAtomically(const std::string& path, Fn&& body) {
  std::ostringstream out;
  out << std::setprecision(12);
  body(out);
  io::writeFileAtomic(path, out.str());
}

}  // namespace

std::string writeBilliardCsv(const BilliardSweep& s, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const auto base = std::filesystem::path(dir);
  const std::string path = (base / "billiard.csv").string();
  writeAtomically(path, [&](std::ostream& out) {
    out << "theta";
    for (const auto& m : s.models) out << "," << m << "_loss," << m << "_dloss_dtheta";
    out << ",hard_hit\n";
    for (size_t i = 0; i < s.theta.size(); ++i) {
      out << s.theta[i];
      for (const auto& curve : s.results)
        out << "," << curve[i].loss << "," << curve[i].dloss_dtheta;
      out << "," << (s.results[0][i].contactSteps > 0 ? 1 : 0) << "\n";
    }
  });
  if (!s.descent.empty()) {
    writeAtomically((base / "billiard_descent.csv").string(), [&](std::ostream& out) {
      out << "iteration";
      for (const auto& d : s.descent) out << "," << d.model << "_theta," << d.model << "_loss";
      out << "\n";
      for (size_t k = 0; k < s.descent[0].theta.size(); ++k) {
        out << k;
        for (const auto& d : s.descent) out << "," << d.theta[k] << "," << d.loss[k];
        out << "\n";
      }
    });
  }
  if (!s.paths.empty()) {
    writeAtomically((base / "billiard_paths.csv").string(), [&](std::ostream& out) {
      out << "step";
      for (const auto& p : s.paths)
        out << "," << p.name << "_x1," << p.name << "_y1," << p.name << "_x2," << p.name << "_y2";
      out << "\n";
      const size_t n = s.paths[0].states.size();
      for (size_t k = 0; k < n; k = k + 1 == n ? n : std::min(k + 10, n - 1)) {  // and the last
        out << k;
        for (const auto& p : s.paths) {
          const BallState& b = p.states[k];
          out << "," << b.x1.x() << "," << b.x1.y() << "," << b.x2.x() << "," << b.x2.y();
        }
        out << "\n";
      }
    });
  }
  return path;
}

namespace {

using PerModel = std::string[3];  // hard, smoothed, straight_through

// The script's preamble: terminal, data format, the multiplot title and the sweep's x axis.
void plotPreamble(std::ostream& g, const BilliardSweep& s) {
  const BilliardOptions& o = s.options;
  const BilliardParams& P = o.params;
  const bool descent = !s.descent.empty();
  g << "# Generated by `diffloco toy billiard`; run `gnuplot billiard.gp` in this folder.\n"
    << "set terminal pngcairo size " << (descent ? 2100 : 1500) << ",1150 enhanced font "
    << "'DejaVu Sans,13'\n"
    << "set output 'billiard.png.tmp'\n"
    << "set datafile separator ','\n"
    << "set datafile columnheaders\n"
    << "set grid lc rgb '#dddddd'\n";
  g << "set multiplot layout " << (descent ? "2,3" : "2,2")
    << " title \"Billiard (DiffMJX Fig. 8): impulse " << P.impulse
    << " N s on the cue ball at (0, 0) at angle {/Symbol q}; object ball at (" << P.distance
    << ", 0); target (" << P.target.x() << ", " << P.target.y()
    << "); loss L = |x_{object}(T) - target|^2 with T = " << P.duration << " s, dt = " << P.dt
    << " s\\nballs of radius " << P.radius << " m, frictionless ball-ball contact, restitution "
    << P.restitution << ", table drag " << P.damping
    << " 1/s. Shaded: the hard cue ball hits the object ball\" font ',15'\n";
  g << "set xlabel '{/Symbol q} [rad]'\nset xrange [" << o.thetaMin << ":" << o.thetaMax << "]\n";
}

// (a) loss.
void plotLoss(std::ostream& g, const BilliardSweep& s, const PerModel& spec,
              const PerModel& title) {
  const BilliardParams& P = s.options.params;
  const double L0 = (Vec2(P.distance, 0.0) - P.target).squaredNorm();
  const std::string shade = "set object 1 rect from " + std::to_string(s.hitMin) + ", graph 0 to " +
                            std::to_string(s.hitMax) +
                            ", graph 1 behind fc rgb '#e8e8e8' fs solid noborder\n";
  g << shade << "set ylabel 'L [m^2]'\n"
    << "set title 'loss: hard and straight-through identical (same forward pass)'\n"
    << "set key bottom left reverse Left box opaque font ',11' samplen 3\n"
    << "set offsets 0, 0, graph 0.08, graph 0.05\n"
    << "set label 1 \"miss: the object ball never moves\\n(hard, straight-through: L = " << L0
    << ")\" at graph 0.02, graph 0.93 font ',11' tc rgb '#2166ac'\n"
    << "set label 2 \"smoothed: lower L on a miss,\\nthe object ball moves without\\nbeing "
       "touched\" at graph 0.72, graph 0.25 font ',11' tc rgb '#1a9641'\n"
    << "plot 'billiard.csv' using 1:2 with lines " << spec[0] << " title '" << title[0]
    << "', \\\n     'billiard.csv' using 1:4 with lines " << spec[1] << " title '" << title[1]
    << "', \\\n     'billiard.csv' using 1:6 with lines " << spec[2] << " title '" << title[2]
    << "'\n";
}

// (b) gradient, linear.
void plotGradient(std::ostream& g, const PerModel& spec) {
  g << "unset label\nunset key\nset title 'dL/d{/Symbol q} from the reverse pass'\n"
    << "set ylabel 'dL/d{/Symbol q} [m^2/rad]'\n"
    << "set label 1 'hard: exactly 0 on a miss' at graph 0.02, graph 0.58 font ',11' tc rgb "
       "'#2166ac'\n"
    << "set label 2 \"straight-through on a miss: < 0 left of the hit region,\\n> 0 right of it: "
       "descent moves {/Symbol q} towards the hit\" at graph 0.02, graph 0.09 font ',11' tc rgb "
       "'#d6604d'\n"
    << "set label 3 \"straight-through inside the hit region: the smoothed step's\\n"
       "derivative at a hard contact (sigmoid(0) = 1/2, steep there):\\nlarger, saw-toothed, "
       "zero near hard's optimum\" at graph 0.02, graph 0.95 font ',11' tc rgb '#d6604d'\n"
    << "plot 0 with lines lc rgb '#888888' lw 1 notitle, \\\n"
    << "     'billiard.csv' using 1:7 with lines " << spec[2] << " notitle, \\\n"
    << "     'billiard.csv' using 1:5 with lines " << spec[1] << " notitle, \\\n"
    << "     'billiard.csv' using 1:3 with lines " << spec[0] << " notitle\n";
}

// (c) |gradient|, log: how far from the hit region the gradient reaches.
void plotGradientLog(std::ostream& g, const PerModel& spec) {
  g << "unset label\nset logscale y\nset format y '10^{%T}'\nset offsets 0, 0, 0, 0\n"
    << "set title '|dL/d{/Symbol q}| (log scale; hard: 0 on a miss, not drawn)'\n"
    << "set ylabel '|dL/d{/Symbol q}| [m^2/rad]'\nset yrange [1e-6:*]\n"
    << "plot 'billiard.csv' using 1:(abs($7) > 0 ? abs($7) : NaN) with lines " << spec[2]
    << " notitle, \\\n     'billiard.csv' using 1:(abs($5) > 0 ? abs($5) : NaN) with lines "
    << spec[1] << " notitle, \\\n     'billiard.csv' using 1:(abs($3) > 0 ? abs($3) : NaN) with "
    << "lines " << spec[0] << " notitle\n"
    << "unset logscale y\nset format y '% h'\nset yrange [*:*]\n";
}

void plotDescent(std::ostream& g, const BilliardSweep& s, const PerModel& spec) {
  const BilliardOptions& o = s.options;
  const int n = static_cast<int>(s.descent[0].theta.size()) - 1;
  // (d) the hard (real) loss along each model's descent.
  g << "unset object 1\nunset label\nset xrange [0:" << n << "]\n"
    << "set offsets 0, 0, graph 0.05, graph 0.05\n"
    << "set xlabel 'Adam iteration (step " << o.learningRate << " rad)'\n"
    << "set ylabel 'L [m^2] of the real (hard) rollout'\n"
    << "set title 'gradient descent on {/Symbol q} from {/Symbol q}_0 = " << o.descentStart
    << " (a miss)'\n"
    << "set key top right box opaque font ',11'\n"
    << "plot 'billiard_descent.csv' using 1:3 with lines " << spec[0]
    << " title 'hard: stuck (zero gradient)', \\\n     'billiard_descent.csv' using 1:5 with "
    << "lines " << spec[1] << " title 'smoothed: optimum of a different forward', \\\n"
    << "     'billiard_descent.csv' using 1:7 with lines " << spec[2]
    << " title 'straight-through: reaches the target'\n";
  // (e) theta along the descent.
  g << "unset key\nset title '{/Symbol q} along the descent (shaded: hard hit region)'\n"
    << "set ylabel '{/Symbol q} [rad]'\n"
    << "set object 1 rect from graph 0, first " << s.hitMin << " to graph 1, first " << s.hitMax
    << " behind fc rgb '#e8e8e8' fs solid noborder\n"
    << "set arrow 1 from graph 0, first " << s.thetaStar << " to graph 1, first " << s.thetaStar
    << " nohead dt 3 lw 1.5 lc rgb '#555555'\n"
    << "set label 1 'least hard loss on the sweep grid' at graph 0.45, first " << s.thetaStar
    << " offset 0, -0.8 font ',11' tc rgb '#555555'\n"
    << "plot 'billiard_descent.csv' using 1:2 with lines " << spec[0]
    << " notitle, \\\n     'billiard_descent.csv' using 1:4 with lines " << spec[1]
    << " notitle, \\\n     'billiard_descent.csv' using 1:6 with lines " << spec[2] << " notitle\n";
}

// (f) the table: the object ball's path (thick) and the cue ball's (thin) per rollout.
void plotTable(std::ostream& g, const BilliardSweep& s) {
  const BilliardParams& P = s.options.params;
  g << "unset object 1\nunset arrow 1\nunset label\n"
    << "set title 'the table: cue ball (thin) and object ball (thick) paths'\n"
    << "set xlabel 'x [m]'\nset ylabel 'y [m]'\nset size ratio -1\nset offsets 0, 0, 0, 0\n"
    << "set xrange [-0.1:" << std::max(P.distance, P.target.x()) + 0.35 << "]\n"
    << "set yrange [" << std::min(-0.35, P.target.y() - 0.2) << ":"
    << std::max(0.55, P.target.y() + 0.25) << "]\n"
    << "set object 2 circle at 0,0 size " << P.radius
    << " fc rgb '#bbbbbb' fs solid border lc rgb '#333333' front\n"
    << "set object 3 circle at " << P.distance << ",0 size " << P.radius
    << " fc rgb '#333333' fs solid front\n"
    << "set label 1 'target' at " << P.target.x() << "," << P.target.y()
    << " offset 1,0.6 font ',11'\n"
    << "set key top left box opaque font ',10' samplen 2\n";
  if (s.paths.size() > 1) {
    // How far smoothed's forward pass moves the object ball at the start, and whether the balls
    // ever overlapped there.
    const auto& st = s.paths[1].states;
    double gap = std::numeric_limits<double>::infinity();
    for (const BallState& b : st) gap = std::min(gap, (b.x2 - b.x1).norm() - 2 * P.radius);
    const double push = (st.back().x2 - st.front().x2).norm();
    g << "set label 2 \"smoothed at {/Symbol q}_0: object ball pushed " << std::setprecision(3)
      << 100 * push << " cm,\\nclosest gap " << 100 * gap << " cm\" at -0.08, -0.27 font ',10' "
      << "tc rgb '#1a9641'\n"
      << std::setprecision(10);
  }
  const char* pathSpec[] = {"lc rgb '#2166ac'", "dt 3 lc rgb '#1a9641'", "lc rgb '#1a9641'",
                            "lc rgb '#d6604d'"};
  g << "plot ";
  for (size_t k = 0; k < s.paths.size() && k < 4; ++k) {
    const int c = 2 + 4 * static_cast<int>(k);
    g << "'billiard_paths.csv' using " << c << ":" << c + 1 << " with lines lw 1 " << pathSpec[k]
      << " notitle, \\\n     'billiard_paths.csv' using " << c + 2 << ":" << c + 3
      << " with lines lw 3.5 " << pathSpec[k] << " title '" << s.paths[k].title << "', \\\n     ";
  }
  g << "'+' using (" << P.target.x() << "):(" << P.target.y()
    << ") every ::0::0 with points pt 6 ps 3 lw 2 lc rgb 'black' notitle\n"
    << "unset object 2\nunset object 3\nset size noratio\n";
}

}  // namespace

std::string plotBilliard(const BilliardSweep& s, const std::string& dir) {
  runs::requireGnuplot("to draw billiard.png; the CSV was written");
  std::filesystem::create_directories(dir);
  const auto base = std::filesystem::path(dir);
  const std::string png = (base / "billiard.png").string();
  const std::string gp = (base / "billiard.gp").string();
  const BilliardParams& P = s.options.params;

  // Model m (0 hard, 1 smoothed, 2 straight_through): billiard.csv loss column 2 + 2m, gradient
  // 3 + 2m; billiard_descent.csv theta 2 + 2m, loss 3 + 2m (1-based, for gnuplot).
  const PerModel spec = {"lw 3 lc rgb '#2166ac'", "lw 2 lc rgb '#1a9641'",
                         "lw 2.5 dt (5,3) lc rgb '#d6604d'"};
  std::ostringstream kappa;
  kappa << P.kappa;
  const PerModel title = {"hard", "smoothed ({/Symbol k} = " + kappa.str() + " 1/m)",
                          "straight-through (hard forward, smoothed backward)"};

  std::ofstream g(gp);
  if (!g) throw std::runtime_error(gp + ": cannot write");
  g << std::setprecision(10);
  plotPreamble(g, s);
  plotLoss(g, s, spec, title);
  plotGradient(g, spec);
  plotGradientLog(g, spec);
  if (!s.descent.empty()) {
    plotDescent(g, s, spec);
    plotTable(g, s);
  }
  g << "unset multiplot\n";
  g.close();
  runs::runGnuplot(base.string(), "billiard.gp");
  std::filesystem::rename(png + ".tmp", png);
  return png;
}

}  // namespace diffloco::toys
