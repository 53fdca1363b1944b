#include "experiments/toys/falling_mass.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <random>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "runs/gnuplot.h"
#include "sim/stage_rollout.h"
#include "sim/urdf.h"

namespace diffloco::toys {

sim::Model fallingMassModel(double mass, double radius) {
  const double I = 0.4 * mass * radius * radius;  // solid sphere
  std::ostringstream xml;
  xml << std::setprecision(17);
  xml << "<robot name=\"falling_mass\">\n"
      << "  <link name=\"base\">\n"
      << "    <inertial>\n"
      << "      <origin xyz=\"0 0 0\"/>\n"
      << "      <mass value=\"" << mass << "\"/>\n"
      << "      <inertia ixx=\"" << I << "\" iyy=\"" << I << "\" izz=\"" << I
      << "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
      << "    </inertial>\n"
      << "    <collision>\n"
      << "      <origin xyz=\"0 0 0\"/>\n"
      << "      <geometry><sphere radius=\"" << radius << "\"/></geometry>\n"
      << "    </collision>\n"
      << "  </link>\n"
      << "</robot>\n";
  return sim::parseUrdf(xml.str(), "falling_mass (inline URDF)");
}

FallResult fall(const sim::Model& model, const sim::SimOptions& opt, double h0, int steps,
                bool withGradient) {
  sim::VecX q0 = sim::neutralConfiguration(model);
  q0[2] = h0;
  const sim::MatX targets = sim::MatX::Zero(model.nj(), steps);
  const sim::Rollout ro =
      sim::stageRollout<sim::SingleBody>(model, opt, q0, sim::VecX::Zero(model.nv()), targets);
  if (!ro.finite) throw std::runtime_error("falling mass: the state became non-finite");
  FallResult r;
  r.z = ro.q[steps][2];
  r.vz = ro.v[steps][2];  // v[0:3] is the world-frame linear velocity of the base origin
  if (!withGradient) return r;

  // Reverse pass from the adjoint of one output of the final state. v_0 = 0 is not a function of
  // h0, so the gradient is the q[2] entry of the adjoint of q_0.
  auto backward = [&](bool ofVz) {
    std::vector<sim::VecX> gq(steps + 1), gv(steps + 1);
    (ofVz ? gv : gq).back() = sim::VecX::Zero(ofVz ? model.nv() : model.nq());
    (ofVz ? gv : gq).back()[2] = 1;
    return sim::stageRolloutVjp<sim::SingleBody>(model, opt, ro, targets, gq, gv).q0[2];
  };
  r.dz_dh0 = backward(false);
  r.dvz_dh0 = backward(true);
  return r;
}

int FallingMassSweep::index(const std::string& name) const {
  for (size_t m = 0; m < models.size(); ++m)
    if (models[m] == name) return static_cast<int>(m);
  return -1;
}

namespace {

std::string kappaName(double kappa) {
  std::ostringstream s;
  s << "smoothed_k" << kappa;
  return s.str();
}

void check(const FallingMassOptions& o) {
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("toy falling-mass: " + what);
  };
  if (!(o.dt > 0)) bad("--dt must be > 0");
  if (!(o.duration >= o.dt)) bad("--duration must be at least one time step");
  if (!(o.h0Max > o.h0Min)) bad("--h0-max must exceed --h0-min");
  if (o.points < 2) bad("--points must be >= 2");
  if (o.samples < 1) bad("--samples must be >= 1");
  if (!(o.sigma > 0)) bad("--sigma must be > 0");
  for (double k : o.kappas)
    if (!(k > 0)) bad("every --kappa must be > 0");
}

// The hard model at the sweep's time step and Gauss-Seidel sweeps.
sim::SimOptions hardOptions(const FallingMassOptions& o) {
  sim::SimOptions hard;
  hard.dt = o.dt;
  hard.contact.model = sim::ContactModel::Hard;
  hard.contact.iterations = o.iterations;
  return hard;
}

// Per kappa, the hard options with the smoothed contact model.
std::vector<sim::SimOptions> smoothedOptions(const sim::SimOptions& hard,
                                             const std::vector<double>& kappas) {
  std::vector<sim::SimOptions> smoothed;
  for (double k : kappas) {
    sim::SimOptions opt = hard;
    opt.contact.model = sim::ContactModel::Smoothed;
    opt.contact.kappa = k;
    smoothed.push_back(opt);
  }
  return smoothed;
}

// Antithetic pairs (w, -w): still N Gaussian samples, but their mean is zero, so the stochastic
// curve is not shifted by the sample mean where the dynamics are linear (free fall).
std::vector<double> antitheticNoise(const FallingMassOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, o.sigma);
  std::vector<double> noise(o.samples);
  for (int n = 0; n + 1 < o.samples; n += 2) {
    noise[n] = normal(rng);
    noise[n + 1] = -noise[n];
  }
  if (o.samples % 2) noise.back() = 0.0;  // the odd one out at the median keeps the mean zero
  return noise;
}

// The stochastic model at h0: the hard falls from h0 + w averaged over the noise samples w.
FallResult stochasticMean(const sim::Model& model, const sim::SimOptions& hard,
                          const std::vector<double>& noise, double h0, int steps,
                          bool withGradient) {
  FallResult mean;
  for (double w : noise) {
    const FallResult r = fall(model, hard, h0 + w, steps, withGradient);
    mean.z += r.z;
    mean.vz += r.vz;
    mean.dz_dh0 += r.dz_dh0;
    mean.dvz_dh0 += r.dvz_dh0;
  }
  const double n = static_cast<double>(noise.size());
  mean.z /= n;
  mean.vz /= n;
  mean.dz_dh0 /= n;
  mean.dvz_dh0 /= n;
  return mean;
}

// Reference for the stochastic gradient: the exact derivative of the expected value
// E(h0) = int f(x) phi(x - h0) dx of the hard model f under the noise, dE/dh0 =
// int f(x) (x - h0) / sigma^2 phi(x - h0) dx, by the trapezoidal rule on a fine grid of hard
// rollouts (spacing sigma / 40, +-6 sigma beyond the range). f is bounded, so differentiating
// under the integral is exact even across f's jumps, which the per-sample gradients miss.
void exactStochasticGradient(FallingMassSweep& s, const FallingMassOptions& o,
                             const sim::Model& model, const sim::SimOptions& hard, int steps) {
  const double lo = o.h0Min - 6 * o.sigma, hi = o.h0Max + 6 * o.sigma;
  const int n = static_cast<int>(std::ceil((hi - lo) / (o.sigma / 40))) + 1;
  const double dx = (hi - lo) / (n - 1);
  std::vector<double> fz(n), fvz(n);
  for (int j = 0; j < n; ++j) {
    const FallResult r = fall(model, hard, lo + j * dx, steps, false);
    fz[j] = r.z;
    fvz[j] = r.vz;
  }
  const double norm = 1.0 / (o.sigma * std::sqrt(2 * M_PI));
  for (int i = 0; i < o.points; ++i) {
    double gz = 0, gvz = 0;
    for (int j = 0; j < n; ++j) {
      const double w = lo + j * dx - s.h0[i];
      if (std::abs(w) > 6 * o.sigma) continue;
      const double k = (j == 0 || j == n - 1 ? 0.5 : 1.0) * dx * norm *
                       std::exp(-0.5 * w * w / (o.sigma * o.sigma)) * w / (o.sigma * o.sigma);
      gz += k * fz[j];
      gvz += k * fvz[j];
    }
    s.stochasticExactZ[i] = gz;
    s.stochasticExactVz[i] = gvz;
  }
}

// Critical height of the hard model by bisection on "the mass reached the ground" (its final
// velocity is then ~0 instead of -g T). Below it at h0 = radius the mass starts on the ground.
void findCriticalHeight(FallingMassSweep& s, const FallingMassOptions& o, const sim::Model& model,
                        const sim::SimOptions& hard, int steps) {
  auto reaches = [&](double h0) {
    return fall(model, hard, h0, steps, false).vz > 0.5 * model.gravity.z() * o.duration;
  };
  double lo = o.radius, hi = o.radius + 0.5 * -model.gravity.z() * o.duration * o.duration + 1.0;
  if (reaches(lo) && !reaches(hi)) {
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (reaches(mid) ? lo : hi) = mid;
    }
    s.criticalHeight = lo;
  }
}

}  // namespace

FallingMassSweep runFallingMass(const FallingMassOptions& o) {
  check(o);
  FallingMassSweep s;
  s.options = o;
  const sim::Model model = fallingMassModel(o.mass, o.radius);
  const int steps = static_cast<int>(std::lround(o.duration / o.dt));

  const sim::SimOptions hard = hardOptions(o);
  const std::vector<sim::SimOptions> smoothed = smoothedOptions(hard, o.kappas);
  const std::vector<double> noise = antitheticNoise(o);

  s.models.push_back("hard");
  for (double k : o.kappas) s.models.push_back(kappaName(k));
  s.models.push_back("stochastic");
  s.results.assign(s.models.size(), std::vector<FallResult>(o.points));
  s.h0.resize(o.points);
  s.stochasticExactZ.resize(o.points);
  s.stochasticExactVz.resize(o.points);

  const int iStoch = static_cast<int>(s.models.size()) - 1;
  for (int i = 0; i < o.points; ++i) {
    const double h0 = o.h0Min + (o.h0Max - o.h0Min) * i / (o.points - 1);
    s.h0[i] = h0;
    s.results[0][i] = fall(model, hard, h0, steps);
    for (size_t k = 0; k < smoothed.size(); ++k)
      s.results[1 + k][i] = fall(model, smoothed[k], h0, steps);
    s.results[iStoch][i] = stochasticMean(model, hard, noise, h0, steps, true);
  }

  exactStochasticGradient(s, o, model, hard, steps);
  findCriticalHeight(s, o, model, hard, steps);
  return s;
}

std::string writeFallingMassCsv(const FallingMassSweep& s, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "falling_mass.csv").string();
  std::ostringstream out;
  {
    out << "h0";
    for (const auto& m : s.models)
      out << "," << m << "_z," << m << "_vz," << m << "_dz_dh0," << m << "_dvz_dh0";
    out << ",stochastic_exact_dz_dh0,stochastic_exact_dvz_dh0\n";
    out << std::setprecision(10);
    for (size_t i = 0; i < s.h0.size(); ++i) {
      out << s.h0[i];
      for (const auto& curve : s.results) {
        const FallResult& r = curve[i];
        out << "," << r.z << "," << r.vz << "," << r.dz_dh0 << "," << r.dvz_dh0;
      }
      out << "," << s.stochasticExactZ[i] << "," << s.stochasticExactVz[i] << "\n";
    }
  }
  io::writeFileAtomic(path, out.str());
  return path;
}

std::string plotFallingMass(const FallingMassSweep& s, const std::string& dir) {
  runs::requireGnuplot("to draw falling_mass.png; the CSV was written");
  std::filesystem::create_directories(dir);
  const auto base = std::filesystem::path(dir);
  const std::string png = (base / "falling_mass.png").string();
  const std::string gp = (base / "falling_mass.gp").string();
  const FallingMassOptions& o = s.options;

  // Column of quantity q (0: z, 1: vz, 2: dz/dh0, 3: dvz/dh0) of model m, 1-based for gnuplot.
  auto col = [](int m, int q) { return 2 + 4 * m + q; };
  const int nModels = static_cast<int>(s.models.size());
  const int refCol = 2 + 4 * nModels;

  struct Style {
    std::string title, spec;
  };
  std::vector<Style> styles;  // per model
  const char* greens[] = {"#1a9641", "#74c476", "#a6dba0", "#5aae61"};
  for (int m = 0; m < nModels; ++m) {
    const std::string& name = s.models[m];
    if (name == "hard") {
      styles.push_back({"hard", "lw 1.5 lc rgb '#2166ac'"});
    } else if (name == "stochastic") {
      std::ostringstream t;
      t << "stochastic: hard averaged over N=" << o.samples
        << " samples of h_0 noise, {/Symbol s}=" << o.sigma << " m";
      styles.push_back({t.str(), "lw 4 lc rgb '#fdb863'"});
    } else {
      const int k = m - 1;
      std::ostringstream t;
      t << "smoothed, {/Symbol k}=" << o.kappas[k] << (k == 0 ? " (as in the paper)" : "");
      styles.push_back({t.str(), std::string("lw ") + (k == 0 ? "2.5" : "2") + " lc rgb '" +
                                     greens[k % 4] + "'" + (k == 0 ? "" : " dt 2")});
    }
  }
  const std::string refStyle = "lw 2 dt 4 lc rgb '#b35806'";
  const std::string refTitle = "stochastic: exact gradient of its expected value (reference)";

  std::ofstream g(gp);
  if (!g) throw std::runtime_error(gp + ": cannot write");
  g << "# Generated by `diffloco toy falling-mass`; run `gnuplot falling_mass.gp` in this folder.\n"
    << "set terminal pngcairo size 1600,1100 enhanced font 'DejaVu Sans,13'\n"
    << "set output 'falling_mass.png'\n"
    << "set datafile separator ','\n"
    << "set datafile columnheaders\n"
    << "set grid lc rgb '#dddddd'\n"
    << "set xlabel 'initial height h_0 [m]'\n"
    << "set xrange [" << o.h0Min << ":" << o.h0Max << "]\n"
    << "set offsets 0, 0, graph 0.08, graph 0.08\n";
  if (s.criticalHeight > 0)
    g << "set arrow from " << s.criticalHeight << ", graph 0 to " << s.criticalHeight
      << ", graph 1 nohead dt 3 lw 1.5 lc rgb '#555555'\n";
  g << "set multiplot layout 2,2 title \"Falling mass (m = " << o.mass << " kg, sphere radius "
    << o.radius << " m) released at rest from height h_0 and simulated for T = " << o.duration
    << " s with dt = " << o.dt
    << " s\\nDotted line: critical height of the hard model; left of it the mass reaches the "
       "ground\" font ',14'\n";

  const char* titles[] = {"final height z_T [m]", "final vertical velocity v_{z,T} [m/s]",
                          "dz_T / dh_0  (first-order gradient, VJP through the rollout)",
                          "dv_{z,T} / dh_0  (first-order gradient) [1/s]"};
  // Draw order: stochastic (wide, light) at the bottom, then the smoothed curves, then the
  // reference, then hard (thin) on top, so that hard and stochastic stay visible where equal.
  // The key (first panel only) lists them in reading order through keyentry.
  std::vector<int> order;
  for (int m = nModels - 1; m >= 1; --m) order.push_back(m);
  for (int q = 0; q < 4; ++q) {
    g << "set title '" << titles[q] << "'\n";
    g << "unset label\n";
    if (q == 0)
      g << "set key top left reverse Left box opaque font ',11' samplen 3 spacing 1.1\n";
    else
      g << "unset key\n";
    if (q == 2)
      g << "set label 1 'hard and stochastic FoG: 1 at every h_0' at graph 0.42, first 1.07 "
           "font ',11' tc rgb '#2166ac'\n";
    if (q == 3)
      g << "set label 1 'hard and stochastic FoG: 0 at every h_0' at graph 0.42, graph 0.95 "
           "font ',11' tc rgb '#2166ac'\n";
    g << "plot ";
    if (q == 0) {
      for (int m = 0; m < nModels; ++m)
        g << "keyentry with lines " << styles[m].spec << " title '" << styles[m].title
          << "', \\\n     ";
      g << "keyentry with lines " << refStyle << " title '" << refTitle << "', \\\n     ";
    }
    for (int m : order)
      g << "'falling_mass.csv' using 1:" << col(m, q) << " with lines " << styles[m].spec
        << " notitle, \\\n     ";
    if (q >= 2)
      g << "'falling_mass.csv' using 1:" << (refCol + q - 2) << " with lines " << refStyle
        << " notitle, \\\n     ";
    g << "'falling_mass.csv' using 1:" << col(0, q) << " with lines " << styles[0].spec
      << " notitle\n";
  }
  g << "unset multiplot\n";
  g.close();
  runs::runGnuplot(base.string(), "falling_mass.gp");
  return png;
}

}  // namespace diffloco::toys
