#include "ident/actuator_fit.h"

#include <yaml-cpp/yaml.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "io/excerpt.h"
#include "sim/actuator.h"

namespace diffloco::ident {

namespace {

[[noreturn]] void fail(const std::string& file, size_t line, const std::string& msg) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + msg);
}


// Least squares y ~ X b with the covariance sigma^2 (X^T X)^-1 (sigma^2 with n - p dof).
struct Lsq {
  Eigen::VectorXd b;
  Eigen::MatrixXd cov;
  double rms = 0;
};

Lsq lsq(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  Lsq r;
  const Eigen::MatrixXd XtX = X.transpose() * X;
  const Eigen::LDLT<Eigen::MatrixXd> f(XtX);
  r.b = f.solve(X.transpose() * y);
  const Eigen::VectorXd res = y - X * r.b;
  const double n = static_cast<double>(X.rows()), p = static_cast<double>(X.cols());
  r.rms = std::sqrt(res.squaredNorm() / std::max(1.0, n));
  const double s2 = res.squaredNorm() / std::max(1.0, n - p);
  r.cov = s2 * f.solve(Eigen::MatrixXd::Identity(X.cols(), X.cols()));
  return r;
}

// The PD fit for one delay (in samples): kp, kd on the unclipped samples, found iteratively.
struct PdFit {
  int shift = 0;
  double kp = 0, kd = 0, sigma = 0;
  Lsq lsq;
  std::vector<int> cls;  // per sample (index i >= shift): 0 unclipped, +1 clipped high, -1 low
};

PdFit fitPd(const JointLog& log, const std::vector<double>& tau, int shift) {
  const int n = static_cast<int>(log.size());
  PdFit f;
  f.shift = shift;
  f.cls.assign(n, 2);  // 2: outside (i < shift)
  double tauMax = 0, qdMax = 0;
  for (int i = shift; i < n; ++i) {
    tauMax = std::max(tauMax, std::abs(tau[i]));
    qdMax = std::max(qdMax, std::abs(log.qd[i]));
  }
  // Start from the samples far from any limit: small torque and small speed.
  for (int i = shift; i < n; ++i)
    f.cls[i] = std::abs(tau[i]) < 0.3 * tauMax && std::abs(log.qd[i]) < 0.3 * qdMax ? 0 : 3;
  for (int it = 0; it < 30; ++it) {
    std::vector<int> idx;
    for (int i = shift; i < n; ++i)
      if (f.cls[i] == 0) idx.push_back(i);
    if (idx.size() < 10)
      throw std::runtime_error(log.source +
                               ": fewer than 10 samples where the PD law is not clipped: cannot "
                               "fit kp and kd (log more small motions)");
    Eigen::MatrixXd X(idx.size(), 2);
    Eigen::VectorXd y(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) {
      const int i = idx[k];
      X(k, 0) = log.qTarget[i - shift] - log.q[i];
      X(k, 1) = -log.qd[i];
      y[k] = tau[i];
    }
    f.lsq = lsq(X, y);
    f.kp = f.lsq.b[0], f.kd = f.lsq.b[1], f.sigma = std::max(f.lsq.rms, 1e-12);
    bool changed = false;
    for (int i = shift; i < n; ++i) {
      const double pd = f.kp * (log.qTarget[i - shift] - log.q[i]) - f.kd * log.qd[i];
      const double r = tau[i] - pd;
      // Unclipped within 3 sigma, clipped beyond 5 sigma (noise alone puts 1 in 2 million
      // samples there); those in between take part in neither fit.
      const double a = std::abs(r);
      const int c = a <= 3 * f.sigma ? 0 : a < 5 * f.sigma ? 3 : r < 0 ? 1 : -1;
      changed |= c != f.cls[i];
      f.cls[i] = c;
    }
    if (!changed) break;
  }
  return f;
}

std::string fmt(double v, int prec = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, v);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading and writing logs.

JointLog readJointLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the joint log");
  JointLog log;
  log.source = path;
  static const std::vector<std::string> known{"time", "q_target", "q", "qd", "tau"};
  std::map<std::string, int> col;
  std::string line;
  size_t lineNo = 0, ncols = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string t = io::trimmed(line);
    if (t.empty() || t[0] == '#') continue;
    const auto cells = io::splitCsvFields(t);
    if (!header) {
      header = true;
      ncols = cells.size();
      for (size_t k = 0; k < cells.size(); ++k) {
        if (std::find(known.begin(), known.end(), cells[k]) == known.end())
          fail(path, lineNo,
               "unknown column '" + io::excerpt(cells[k]) +
                   "' (columns: time, q_target, q, qd, and optional tau)");
        if (col.count(cells[k]))
          fail(path, lineNo, "column '" + io::excerpt(cells[k]) + "' given twice");
        col[cells[k]] = static_cast<int>(k);
      }
      for (const char* need : {"time", "q_target", "q", "qd"})
        if (!col.count(need))
          fail(path, lineNo,
               std::string("missing column '") + need +
                   "' (the header must name time, q_target, q, qd and optionally tau)");
      continue;
    }
    if (cells.size() != ncols)
      fail(path, lineNo,
           "expected " + std::to_string(ncols) + " cells, got " + std::to_string(cells.size()));
    std::map<std::string, double> v;
    for (const auto& [name, k] : col) {
      const std::string& c = cells[k];
      char* end = nullptr;
      const double x = std::strtod(c.c_str(), &end);
      if (c.empty() || end != c.c_str() + c.size())
        fail(path, lineNo, "column '" + name + "': '" + io::excerpt(c) + "' is not a number");
      if (!std::isfinite(x))
        fail(path, lineNo, "column '" + name + "': non-finite value " + io::excerpt(c));
      v[name] = x;
    }
    if (!log.time.empty() && !(v["time"] > log.time.back()))
      fail(path, lineNo,
           "time " + fmt(v["time"], 10) + " does not increase (previous " +
               fmt(log.time.back(), 10) + ")");
    log.time.push_back(v["time"]);
    log.qTarget.push_back(v["q_target"]);
    log.q.push_back(v["q"]);
    log.qd.push_back(v["qd"]);
    if (col.count("tau")) log.tau.push_back(v["tau"]);
  }
  if (!header) throw std::runtime_error(path + ": empty joint log (no header line)");
  if (log.size() < 100)
    throw std::runtime_error(path + ": only " + std::to_string(log.size()) +
                             " samples; a fit needs at least 100");
  return log;
}

void writeJointLog(const std::string& path, const JointLog& log, const std::string& comment) {
  std::ostringstream out;
  {
    if (!comment.empty()) out << "# " << comment << "\n";
    out << (log.hasTorque() ? "time,q_target,q,qd,tau\n" : "time,q_target,q,qd\n");
    char buf[160];
    for (size_t i = 0; i < log.size(); ++i) {
      if (log.hasTorque())
        std::snprintf(buf, sizeof buf, "%.6f,%.9g,%.9g,%.9g,%.9g\n", log.time[i], log.qTarget[i],
                      log.q[i], log.qd[i], log.tau[i]);
      else
        std::snprintf(buf, sizeof buf, "%.6f,%.9g,%.9g,%.9g\n", log.time[i], log.qTarget[i],
                      log.q[i], log.qd[i]);
      out << buf;
    }
  }
  io::writeFileAtomic(path, out.str());
}

// ---------------------------------------------------------------------------------------------
// Synthetic logs.

JointLog synthesizeJointLog(const DriveModel& m) {
  std::mt19937_64 rng(m.seed);
  std::uniform_real_distribution<double> U(-1, 1);
  std::normal_distribution<double> N(0, 1);
  // Target: held steps of random size every 0.4 s (small, medium and large: the PD range, the
  // torque limit and the speed-torque line) plus a slow sine.
  const double stepPeriod = 0.4;
  const int nSteps = static_cast<int>(std::ceil(m.duration / stepPeriod)) + 2;
  std::vector<double> steps(nSteps);
  const double sizes[3] = {0.15, 0.5, 1.3};
  for (auto& s : steps) s = sizes[std::uniform_int_distribution<int>(0, 2)(rng)] * U(rng);
  auto target = [&](double t) {
    if (t < 0) t = 0;
    // (+1e-9: a step lands on its log sample despite rounding in t - delay)
    const int k = std::min(nSteps - 1, static_cast<int>(std::floor(t / stepPeriod + 1e-9)));
    return steps[k] + 0.2 * std::sin(2 * M_PI * 0.7 * t);
  };
  sim::ActuatorOptions a;
  a.kp = m.kp, a.kd = m.kd, a.effort = m.effort, a.saturation = m.saturation;
  a.velocityLimit = m.velocityLimit;
  JointLog log;
  log.source = "synthetic";
  double q = 0, qd = 0, tau = 0;
  const int sub = std::max(1, static_cast<int>(std::lround(m.logDt / m.simDt)));
  const double h = m.logDt / sub;
  const int n = static_cast<int>(std::lround(m.duration / m.logDt));
  for (int i = 0; i < n; ++i) {
    const double t = i * m.logDt;
    tau = sim::actuatorTorque(a, m.effort, target(t - m.delay), q, qd);
    log.time.push_back(t);
    log.qTarget.push_back(target(t));
    log.q.push_back(q + m.noiseQ * N(rng));
    log.qd.push_back(qd + m.noiseQd * N(rng));
    if (m.withTorque) log.tau.push_back(tau + m.noiseTau * N(rng));
    for (int s = 0; s < sub; ++s) {  // semi-implicit Euler at simDt, the drive at its own rate
      const double ts = t + s * h;
      tau = sim::actuatorTorque(a, m.effort, target(ts - m.delay), q, qd);
      const double fr = qd > 0 ? m.friction : qd < 0 ? -m.friction : 0.0;
      qd += h * (tau - fr - m.damping * qd) / m.inertia;
      q += h * qd;
    }
  }
  return log;
}

// ---------------------------------------------------------------------------------------------
// The fit.

namespace {

// Torque: measured, or reconstructed from the dynamics with a known inertia.
std::vector<double> jointTorque(const JointLog& log, const FitOptions& o) {
  const int n = static_cast<int>(log.size());
  std::vector<double> tau = log.tau;
  if (!log.hasTorque()) {
    if (!(o.inertia > 0))
      throw std::runtime_error(log.source +
                               ": the log has no 'tau' column: give the joint's effective inertia "
                               "(--inertia) so that the torque can be reconstructed (without a "
                               "torque, kp, kd, effort and inertia are known only up to a common "
                               "factor)");
    tau.assign(n, 0.0);
    for (int i = 0; i < n; ++i) {
      const int a = std::max(0, i - 1), b = std::min(n - 1, i + 1);
      const double qdd = (log.qd[b] - log.qd[a]) / (log.time[b] - log.time[a]);
      const double s = log.qd[i] > 0 ? 1.0 : log.qd[i] < 0 ? -1.0 : 0.0;
      tau[i] = o.inertia * qdd + o.friction * s + o.damping * log.qd[i];
    }
  }
  return tau;
}

// (1) + (2): delay and PD gains. The shift is bounded in double: a huge maxDelay must not
// overflow the int.
PdFit bestPdFit(const JointLog& log, const std::vector<double>& tau, double dt, double maxDelay) {
  const int n = static_cast<int>(log.size());
  if (!(maxDelay >= 0 && std::isfinite(maxDelay)))
    throw std::invalid_argument(
        "fit-actuator: the largest delay searched must be a finite number >= 0 [s], got " +
        fmt(maxDelay));
  const int maxShift = static_cast<int>(std::min<double>(n / 4, std::round(maxDelay / dt)));
  PdFit best;
  best.sigma = -1;
  for (int s = 0; s <= maxShift; ++s) {
    PdFit f;
    try {
      f = fitPd(log, tau, s);
    } catch (const std::runtime_error&) {
      if (s == 0) throw;
      continue;
    }
    if (best.sigma < 0 || f.sigma < best.sigma) best = std::move(f);
  }
  return best;
}

// The envelope of (3) and its standard errors; a part that could not be fitted keeps 1e10.
struct Envelope {
  double effort = 1e10, saturation = 1e10, velocityLimit = 1e10;
  bool haveEffort = false, haveLine = false;
  double seEffort = 0, seSat = 0, seVel = 0;
};

// (3) on the clipped samples (w: speed, t: torque, mirrored to the high side), sigma the
// residual of the PD fit.
Envelope fitEnvelope(const std::vector<double>& w, const std::vector<double>& t, double sigma) {
  Envelope v;
  if (w.size() < 10) return v;
  bool& haveEffort = v.haveEffort;
  bool& haveLine = v.haveLine;
  std::vector<double> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  // The plateau is the top of the clipped torques (few samples when the drive soon reaches
  // the speed-torque line): start from the 99th percentile.
  double E = sorted[static_cast<size_t>(0.99 * (sorted.size() - 1))];
  double a = 0, b = 0;
  // onLine: 1 line, 0 plateau, -1 outlier (farther than max(5 sigma, 4 robust sigmas) from
  // the envelope: a mis-timed sample at a step of the target, a glitch).
  std::vector<int> onLine(w.size(), 0);
  for (size_t k = 0; k < w.size(); ++k) onLine[k] = t[k] < E - 3 * sigma;
  for (int it = 0; it < 50; ++it) {
    std::vector<size_t> L, P;
    for (size_t k = 0; k < w.size(); ++k)
      if (onLine[k] >= 0) (onLine[k] ? L : P).push_back(k);
    haveLine = L.size() >= 10;
    haveEffort = P.size() >= 5;
    if (haveLine) {
      Eigen::MatrixXd X(L.size(), 2);
      Eigen::VectorXd y(L.size());
      for (size_t j = 0; j < L.size(); ++j) X(j, 0) = 1, X(j, 1) = -w[L[j]], y[j] = t[L[j]];
      const Lsq f = lsq(X, y);
      a = f.b[0], b = f.b[1];
      v.seSat = std::sqrt(f.cov(0, 0));
      if (b > 0) {
        const double va = f.cov(0, 0), vb = f.cov(1, 1), vab = f.cov(0, 1);
        v.seVel = std::sqrt(std::max(
            0.0, va / (b * b) + vb * a * a / std::pow(b, 4) - 2 * vab * a / std::pow(b, 3)));
      }
    }
    if (haveEffort) {
      double s = 0, s2 = 0;
      for (size_t k : P) s += t[k], s2 += t[k] * t[k];
      E = s / P.size();
      v.seEffort = std::sqrt(std::max(0.0, s2 / P.size() - E * E) / P.size());
    }
    auto model = [&](size_t k) {
      return haveLine && haveEffort ? std::min(a - b * w[k], E) : haveLine ? a - b * w[k] : E;
    };
    std::vector<double> absRes(w.size());
    for (size_t k = 0; k < w.size(); ++k) absRes[k] = std::abs(t[k] - model(k));
    std::vector<double> med = absRes;
    std::nth_element(med.begin(), med.begin() + med.size() / 2, med.end());
    const double cut = std::max(5 * sigma, 4 * 1.4826 * med[med.size() / 2]);
    bool changed = false;
    for (size_t k = 0; k < w.size(); ++k) {
      const int l = absRes[k] > cut ? -1 : haveLine && (!haveEffort || a - b * w[k] < E) ? 1 : 0;
      changed |= l != onLine[k];
      onLine[k] = l;
    }
    if (!changed) break;
  }
  if (haveEffort) v.effort = E;
  if (haveLine && b > 0)
    v.saturation = a, v.velocityLimit = a / b;
  else
    haveLine = false;
  return v;
}

// (3): the envelope from the clipped samples, mirrored to the high side: t = min(a - b w, E).
void fitTorqueLimits(ActuatorFit& r, const JointLog& log, const std::vector<double>& tau,
                     const PdFit& best) {
  const int n = static_cast<int>(log.size());
  std::vector<double> w, t;
  for (int i = best.shift; i < n; ++i) {
    if (best.cls[i] == 0) ++r.unclipped;
    if (best.cls[i] == 1) w.push_back(log.qd[i]), t.push_back(tau[i]);
    if (best.cls[i] == -1) w.push_back(-log.qd[i]), t.push_back(-tau[i]);
  }
  r.clipped = w.size();
  const Envelope v = fitEnvelope(w, t, best.sigma);
  r.effort = v.effort, r.saturation = v.saturation, r.velocityLimit = v.velocityLimit;
  r.params.push_back({"effort", "N m", r.effort, v.seEffort, v.haveEffort});
  r.params.push_back({"saturation", "N m", r.saturation, v.seSat, v.haveLine});
  r.params.push_back({"velocity_limit", "rad/s", r.velocityLimit, v.seVel, v.haveLine});
}

// Torque error of the whole model over all samples.
double modelRmsTorque(const ActuatorFit& r, const JointLog& log, const std::vector<double>& tau,
                      int shift) {
  const int n = static_cast<int>(log.size());
  sim::ActuatorOptions a;
  a.kp = r.kp, a.kd = r.kd, a.effort = r.effort, a.saturation = r.saturation;
  a.velocityLimit = r.velocityLimit;
  double s2 = 0;
  for (int i = shift; i < n; ++i) {
    const double e =
        tau[i] - sim::actuatorTorque(a, r.effort, log.qTarget[i - shift], log.q[i], log.qd[i]);
    s2 += e * e;
  }
  return std::sqrt(s2 / std::max(1, n - shift));
}

// The rows (dqd, int sign, int qd, int tau) of the momentum balance of (4), one per window of
// 20 ms (at least 5 samples) where the joint moves in one direction.
std::vector<std::array<double, 4>> momentumWindows(const JointLog& log,
                                                   const std::vector<double>& tau, double dt) {
  const int n = static_cast<int>(log.size());
  const int K = std::max(5, static_cast<int>(std::lround(0.02 / dt)));
  double noise = 0;  // velocity noise scale: RMS of second differences / sqrt(6)
  for (int i = 1; i + 1 < n; ++i) {
    const double d2 = log.qd[i + 1] - 2 * log.qd[i] + log.qd[i - 1];
    noise += d2 * d2;
  }
  noise = std::sqrt(noise / std::max(1, n - 2) / 6.0);
  std::vector<std::array<double, 4>> rows;  // (dqd, int sign, int qd) -> int tau
  for (int s = 0; s + K < n; s += K) {
    double lo = 1e300, hi = -1e300;
    for (int i = s; i <= s + K; ++i) lo = std::min(lo, log.qd[i]), hi = std::max(hi, log.qd[i]);
    const double margin = 4 * noise + 0.02;
    if (!(lo > margin || hi < -margin)) continue;
    double itau = 0, iqd = 0;
    for (int i = s; i < s + K; ++i) {
      const double h = log.time[i + 1] - log.time[i];
      itau += 0.5 * h * (tau[i] + tau[i + 1]);
      iqd += 0.5 * h * (log.qd[i] + log.qd[i + 1]);
    }
    const double isign = (lo > 0 ? 1.0 : -1.0) * (log.time[s + K] - log.time[s]);
    rows.push_back({log.qd[s + K] - log.qd[s], isign, iqd, itau});
  }
  return rows;
}

// (4) from the windows' rows: inertia, friction and damping when there are at least 10.
void fitJointDynamics(ActuatorFit& r, const std::vector<std::array<double, 4>>& rows) {
  if (rows.size() >= 10) {
    Eigen::MatrixXd X(rows.size(), 3);
    Eigen::VectorXd y(rows.size());
    for (size_t k = 0; k < rows.size(); ++k)
      X(k, 0) = rows[k][0], X(k, 1) = rows[k][1], X(k, 2) = rows[k][2], y[k] = rows[k][3];
    const Lsq f = lsq(X, y);
    r.inertia = f.b[0], r.friction = f.b[1], r.damping = f.b[2];
    r.rmsAccelResidual = f.rms;
    r.params.push_back({"inertia", "kg m^2", r.inertia, std::sqrt(f.cov(0, 0))});
    r.params.push_back({"friction", "N m", r.friction, std::sqrt(f.cov(1, 1))});
    r.params.push_back({"damping", "N m s/rad", r.damping, std::sqrt(f.cov(2, 2))});
  } else {
    r.params.push_back({"inertia", "kg m^2", 0, 0, false});
  }
}

}  // namespace

ActuatorFit fitActuator(const JointLog& log, const FitOptions& o) {
  ActuatorFit r;
  r.source = log.source;
  const int n = static_cast<int>(log.size());
  r.samples = log.size();
  const double dt = (log.time.back() - log.time.front()) / (n - 1);

  const std::vector<double> tau = jointTorque(log, o);
  const bool measured = log.hasTorque();

  const PdFit best = bestPdFit(log, tau, dt, o.maxDelay);
  const int shift = best.shift;
  r.kp = best.kp, r.kd = best.kd, r.delay = shift * dt;
  r.rmsTorqueUnclipped = best.sigma;
  r.params.push_back({"kp", "N m/rad", r.kp, std::sqrt(best.lsq.cov(0, 0))});
  r.params.push_back({"kd", "N m s/rad", r.kd, std::sqrt(best.lsq.cov(1, 1))});
  r.params.push_back({"delay", "s", r.delay, dt / std::sqrt(12.0)});  // resolution of the grid

  fitTorqueLimits(r, log, tau, best);
  r.rmsTorque = modelRmsTorque(r, log, tau, shift);

  // (4): inertia, Coulomb friction and viscous damping from windows of the momentum balance
  // inertia (qd_end - qd_start) = int tau - friction int sign(qd) - damping int qd, on windows
  // where the joint moves in one direction (|qd| above the noise), so sign(qd) is known.
  if (measured) {
    fitJointDynamics(r, momentumWindows(log, tau, dt));
  } else {
    r.inertia = o.inertia, r.friction = o.friction, r.damping = o.damping;
    r.params.push_back({"inertia", "kg m^2", r.inertia, 0, false});
    r.params.push_back({"friction", "N m", r.friction, 0, false});
  }
  r.armature = std::max(0.0, r.inertia - o.loadInertia);
  return r;
}

std::string ActuatorFit::report() const {
  std::ostringstream s;
  s << "fit of " << source << ": " << samples << " samples (" << unclipped << " unclipped, "
    << clipped << " clipped), delay " << fmt(delay) << " s\n";
  s << "  parameter        value          std. error     unit\n";
  for (const auto& p : params) {
    char buf[160];
    if (p.fitted)
      std::snprintf(buf, sizeof buf, "  %-15s  %-13.6g  %-13.3g  %s\n", p.name.c_str(), p.value,
                    p.stdError, p.unit.c_str());
    else
      std::snprintf(buf, sizeof buf, "  %-15s  %-13.6g  %-13s  %s\n", p.name.c_str(), p.value,
                    "(not fitted)", p.unit.c_str());
    s << buf;
  }
  s << "  torque RMS error: " << fmt(rmsTorque, 4) << " N m (all samples), "
    << fmt(rmsTorqueUnclipped, 4) << " N m (unclipped PD samples)";
  if (rmsAccelResidual > 0) s << "; momentum residual RMS " << fmt(rmsAccelResidual, 4) << " N m s";
  return s.str();
}

void writeActuatorYaml(const std::string& path, const ActuatorFit& f) {
  YAML::Emitter e;
  e << YAML::Comment("PD actuator model fitted by diffloco fit-actuator from " + f.source +
                     ". The keys above 'fit' are a task's actuator: section; use it with "
                     "actuator: {file: <this file>} in a task.");
  e << YAML::BeginMap;
  e << YAML::Key << "kp" << YAML::Value << f.kp;
  e << YAML::Key << "kd" << YAML::Value << f.kd;
  e << YAML::Key << "effort" << YAML::Value << f.effort;
  e << YAML::Key << "saturation" << YAML::Value << f.saturation;
  e << YAML::Key << "velocity_limit" << YAML::Value << f.velocityLimit;
  e << YAML::Key << "armature" << YAML::Value << f.armature;
  e << YAML::Key << "fit" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "log" << YAML::Value << f.source;
  e << YAML::Key << "samples" << YAML::Value << f.samples;
  e << YAML::Key << "delay_s" << YAML::Value << f.delay;
  e << YAML::Key << "inertia" << YAML::Value << f.inertia;
  e << YAML::Key << "friction" << YAML::Value << f.friction;
  e << YAML::Key << "damping" << YAML::Value << f.damping;
  e << YAML::Key << "rms_torque" << YAML::Value << f.rmsTorque;
  e << YAML::Key << "rms_torque_unclipped" << YAML::Value << f.rmsTorqueUnclipped;
  e << YAML::Key << "std_errors" << YAML::Value << YAML::BeginMap;
  for (const auto& p : f.params)
    if (p.fitted) e << YAML::Key << p.name << YAML::Value << p.stdError;
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  io::writeFileAtomic(path, std::string(e.c_str()) + "\n");
}

}  // namespace diffloco::ident
