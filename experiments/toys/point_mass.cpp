#include "experiments/toys/point_mass.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "experiments/toys/falling_mass.h"
#include "io/atomic_file.h"
#include "runs/gnuplot.h"
#include "sim/adaptive.h"
#include "sim/stage_rollout.h"

namespace diffloco::toys {

const PointMassCurve* PointMassSweep::find(const std::string& name) const {
  for (const auto& c : curves)
    if (c.name == name) return &c;
  return nullptr;
}

void pointMassExact(const PointMassOptions& o, double h0, double& z, double& dz) {
  const double u = -o.v0, w = std::sqrt(o.kp / o.mass), tau = M_PI / w;
  const double t1 = (h0 - o.radius) / u;  // touchdown
  const double T = o.duration;
  if (T <= t1) {
    z = h0 + o.v0 * T;
    dz = 1;
  } else if (T <= t1 + tau) {  // in contact: the penetration is (u / w) sin(w (t - t1))
    z = o.radius - u / w * std::sin(w * (T - t1));
    dz = std::cos(w * (T - t1));
  } else {  // flying back up at u
    z = o.radius + u * (T - t1 - tau);
    dz = -1;
  }
}

namespace {

void check(const PointMassOptions& o) {
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("toy point-mass: " + what);
  };
  if (!(o.mass > 0) || !(o.radius > 0)) bad("--mass and --radius must be > 0");
  if (!(o.kp > 0) || o.kd < 0) bad("--kp must be > 0 and --kd >= 0");
  if (!(o.v0 < 0)) bad("--v0 must be < 0 (towards the ground)");
  if (!(o.dt > 0) || !(o.duration >= o.dt)) bad("need dt > 0 and duration >= dt");
  if (!(o.h0Max > o.h0Min) || !(o.h0Min > o.radius)) bad("need radius < h0-min < h0-max");
  if (o.points < 2) bad("--points must be >= 2");
  for (int n : o.substeps)
    if (n < 1) bad("every --substeps must be >= 1");
  if (o.refSubsteps < 2) bad("--ref-substeps must be >= 2");
  if (!(o.rtol > 0) || !(o.atol > 0)) bad("--rtol and --atol must be > 0");
}

struct Result {
  double z = 0, dz = 0, evals = 0;
};

// One rollout of `steps` env steps from (h0, v0) and the VJP of z_T with respect to h0: the fixed
// sub-steps on the stages (n sub-steps of an env step taken as n env steps of dt / n, the same
// scheme: the stages' soft VJP holds at most SingleBody::MAXSOFTSUBSTEPS sub-steps a step), the
// adaptive integrator by itself.
Result rolloutGradient(const sim::Model& model, const sim::SimOptions& opt, sim::AdaptiveData& data,
                       double h0, double v0, int steps) {
  const sim::VecX target = sim::VecX::Zero(model.nj());
  sim::VecX qStart = sim::neutralConfiguration(model), vStart = sim::VecX::Zero(model.nv());
  qStart[2] = h0;
  vStart[2] = v0;
  Result r;
  if (opt.contact.integrator != sim::Integrator::Adaptive) {
    const int n = std::max(1, opt.contact.softSubsteps);
    sim::SimOptions sub = opt;
    sub.dt = opt.dt / n;
    sub.contact.softSubsteps = 1;
    const sim::MatX targets = sim::MatX::Zero(model.nj(), steps * n);
    const sim::Rollout ro = sim::stageRollout<sim::SingleBody>(model, sub, qStart, vStart, targets);
    if (!ro.finite) throw std::runtime_error("toy point-mass: the state became non-finite");
    std::vector<sim::VecX> gq(steps * n + 1), gv;
    gq.back() = sim::VecX::Zero(model.nq());
    gq.back()[2] = 1;
    r.z = ro.q.back()[2];
    r.dz = sim::stageRolloutVjp<sim::SingleBody>(model, sub, ro, targets, gq, gv).q0[2];
    r.evals = steps * n;
    return r;
  }
  std::vector<sim::VecX> q(steps + 1, qStart), v(steps + 1, vStart);
  for (int k = 0; k < steps; ++k) {
    if (!sim::adaptiveStep(model, opt, data, q[k], v[k], target, q[k + 1], v[k + 1]))
      throw std::runtime_error("toy point-mass: the state became non-finite");
    r.evals += data.adaptive.evaluations;
  }
  r.z = q[steps][2];
  sim::StepAdjoint adj(model);
  sim::VecX gq = sim::VecX::Zero(model.nq()), gv = sim::VecX::Zero(model.nv());
  gq[2] = 1;
  for (int k = steps - 1; k >= 0; --k) {
    adj.setZero(model);
    sim::adaptiveStepVjp(model, opt, data, q[k], v[k], target, gq, gv, adj);
    gq = adj.q;
    gv = adj.v;
  }
  r.dz = gq[2];
  return r;
}

}  // namespace

PointMassSweep runPointMass(const PointMassOptions& o) {
  check(o);
  PointMassSweep s;
  s.options = o;
  sim::Model model = fallingMassModel(o.mass, o.radius);
  model.gravity = sim::Vec3(0, 0, -o.gravity);
  sim::AdaptiveData data(model);
  const int steps = static_cast<int>(std::lround(o.duration / o.dt));
  s.h0.resize(o.points);
  for (int i = 0; i < o.points; ++i) s.h0[i] = o.h0Min + (o.h0Max - o.h0Min) * i / (o.points - 1);

  sim::SimOptions base;
  base.dt = o.dt;
  base.contact.model = sim::ContactModel::Soft;
  base.contact.softKp = o.kp;
  base.contact.softKd = o.kd;

  auto sweep = [&](const sim::SimOptions& opt, const std::string& name, const std::string& label) {
    PointMassCurve c{name, label, {}, {}, {}, 0};
    const auto t0 = std::chrono::steady_clock::now();
    for (double h0 : s.h0) {
      const Result r = rolloutGradient(model, opt, data, h0, o.v0, steps);
      c.z.push_back(r.z);
      c.dz.push_back(r.dz);
      c.evaluations.push_back(r.evals);
    }
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
  };
  auto fmt = [](double x) {
    std::ostringstream t;
    t << x;
    return t.str();
  };
  for (int n : o.substeps) {
    sim::SimOptions opt = base;
    opt.contact.softSubsteps = n;
    s.curves.push_back(
        sweep(opt, "fixed_n" + std::to_string(n), "fixed step h = " + fmt(1e3 * o.dt / n) + " ms"));
  }
  {
    sim::SimOptions opt = base;
    opt.contact.integrator = sim::Integrator::Adaptive;
    opt.contact.adaptive.rtol = o.rtol;
    opt.contact.adaptive.atol = o.atol;
    s.curves.push_back(
        sweep(opt, "adaptive",
              "adaptive Dormand-Prince 5(4), rtol " + fmt(o.rtol) + ", atol " + fmt(o.atol)));
  }
  {
    // Reference: the first-order fixed scheme at h and 2h, Richardson-extrapolated.
    sim::SimOptions fine = base, half = base;
    fine.contact.softSubsteps = o.refSubsteps;
    half.contact.softSubsteps = o.refSubsteps / 2;
    PointMassCurve a = sweep(fine, "", ""), b = sweep(half, "", "");
    PointMassCurve ref{"reference",
                       "fine fixed step h = " + fmt(1e6 * o.dt / o.refSubsteps) +
                           " us, Richardson-extrapolated with 2h",
                       {},
                       {},
                       {},
                       a.seconds + b.seconds};
    for (int i = 0; i < o.points; ++i) {
      ref.z.push_back(2 * a.z[i] - b.z[i]);
      ref.dz.push_back(2 * a.dz[i] - b.dz[i]);
      ref.evaluations.push_back(a.evaluations[i] + b.evaluations[i]);
    }
    s.curves.push_back(std::move(ref));
  }
  if (o.gravity == 0 && o.kd == 0) {
    s.exactZ.resize(o.points);
    s.exactDz.resize(o.points);
    for (int i = 0; i < o.points; ++i) pointMassExact(o, s.h0[i], s.exactZ[i], s.exactDz[i]);
  }
  return s;
}

std::string writePointMassCsv(const PointMassSweep& s, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "point_mass.csv").string();
  std::ostringstream out;
  {
    out << "h0";
    for (const auto& c : s.curves)
      out << "," << c.name << "_z," << c.name << "_dz," << c.name << "_evals";
    if (!s.exactZ.empty()) out << ",exact_z,exact_dz";
    out << "\n" << std::setprecision(12);
    for (size_t i = 0; i < s.h0.size(); ++i) {
      out << s.h0[i];
      for (const auto& c : s.curves)
        out << "," << c.z[i] << "," << c.dz[i] << "," << c.evaluations[i];
      if (!s.exactZ.empty()) out << "," << s.exactZ[i] << "," << s.exactDz[i];
      out << "\n";
    }
  }
  io::writeFileAtomic(path, out.str());
  return path;
}

std::string plotPointMass(const PointMassSweep& s, const std::string& dir) {
  runs::requireGnuplot("to draw point_mass.png; the CSV was written");
  std::filesystem::create_directories(dir);
  const auto base = std::filesystem::path(dir);
  const std::string png = (base / "point_mass.png").string();
  const std::string gp = (base / "point_mass.gp").string();
  const PointMassOptions& o = s.options;
  const int nCurves = static_cast<int>(s.curves.size());
  auto col = [](int c, int k) { return 2 + 3 * c + k; };  // k: 0 z, 1 dz, 2 evals
  int iRef = -1;
  for (int c = 0; c < nCurves; ++c)
    if (s.curves[c].name == "reference") iRef = c;
  const int exactCol = 2 + 3 * nCurves;

  // Fixed steps in reds (darker = finer), adaptive blue, reference black.
  const char* reds[] = {"#fdae61", "#f46d43", "#d73027", "#a50026", "#67001f"};
  std::vector<std::string> spec(nCurves);
  int k = 0;
  for (int c = 0; c < nCurves; ++c) {
    const std::string& n = s.curves[c].name;
    if (n == "adaptive")
      spec[c] = "lw 3 lc rgb '#2166ac'";
    else if (n == "reference")
      spec[c] = "lw 2 dt 2 lc rgb '#000000'";
    else
      spec[c] = std::string("lw 1.5 lc rgb '") + reds[std::min(k++, 4)] + "'";
  }

  std::ofstream g(gp);
  if (!g) throw std::runtime_error(gp + ": cannot write");
  g << "# Generated by `diffloco toy point-mass`; run `gnuplot point_mass.gp` in this folder.\n"
    << "set terminal pngcairo size 1600,1150 enhanced font 'DejaVu Sans,13'\n"
    << "set output 'point_mass.png.tmp'\n"
    << "set datafile separator ','\n"
    << "set datafile columnheaders\n"
    << "set grid lc rgb '#dddddd'\n"
    << "set xlabel 'initial height h_0 of the sphere centre [m]'\n"
    << "set xrange [" << o.h0Min << ":" << o.h0Max << "]\n";
  g << "set multiplot layout 2,2 title \"Point mass (m = " << o.mass
    << " kg) thrown at v_0 = " << o.v0 << " m/s onto a penalty wall k = " << o.kp
    << " N/m, k_d = " << o.kd << ", g = " << o.gravity << "; loss L = z_T after T = " << o.duration
    << " s (env step " << o.dt
    << " s)\\nDiffMJX Figure 4: fixed-step gradients oscillate near contact, the adaptive "
       "integrator's track the reference\" font ',14'\n";
  auto plotAll = [&](int q, bool withExact) {
    g << "plot ";
    for (int c = 0; c < nCurves; ++c)
      g << "'point_mass.csv' using 1:" << col(c, q) << " with lines " << spec[c] << " title '"
        << s.curves[c].label << "', \\\n     ";
    if (withExact && !s.exactZ.empty())
      g << "'point_mass.csv' using 1:" << (exactCol + q) << " with lines lw 1 dt 3 lc rgb "
        << "'#1b7837' title 'closed form', \\\n     ";
    g << "NaN notitle\n";
  };
  g << "set title 'loss L = final height z_T [m]'\n"
    << "set key top left box opaque font ',10'\n";
  plotAll(0, true);
  g << "set title 'gradient dL/dh_0 (VJP through the rollout)'\nunset key\n"
    << "set yrange [-4:4]\n";
  plotAll(1, true);
  // Errors against the closed form where there is one (the fine fixed step has its own error
  // there, drawn too), else against the fine fixed step.
  const bool exact = !s.exactDz.empty();
  const int errCol = exact ? exactCol + 1 : col(iRef, 1);
  g << "set autoscale y\nset title '|dL/dh_0 - " << (exact ? "closed form" : "fine fixed step")
    << "| (log)'\nset logscale y\nset format y '10^{%L}'\nset yrange [1e-8:*]\n";
  g << "plot ";
  for (int c = 0; c < nCurves; ++c) {
    if (c == iRef && !exact) continue;
    g << "'point_mass.csv' using 1:(abs($" << col(c, 1) << " - $" << errCol
      << ") + 1e-12) with lines " << spec[c] << " notitle, \\\n     ";
  }
  g << "NaN notitle\n";
  g << "unset yrange\nset key top right box opaque font ',10'\n";
  g << "set title 'cost: dynamics evaluations per rollout (sub-steps or RK stages; log)'\n";
  g << "plot ";
  for (int c = 0; c < nCurves; ++c) {
    if (c == iRef) continue;
    std::ostringstream t;
    t << std::setprecision(3) << s.curves[c].seconds / o.points * 1e3 << " ms per rollout + VJP";
    g << "'point_mass.csv' using 1:" << col(c, 2) << " with lines " << spec[c] << " title '"
      << t.str() << "', \\\n     ";
  }
  g << "NaN notitle\n";
  g << "unset multiplot\n";
  g.close();
  runs::runGnuplot(base.string(), "point_mass.gp");
  std::filesystem::rename(png + ".tmp", png);
  return png;
}

}  // namespace diffloco::toys
