#include "ident/sysid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "io/excerpt.h"
#include "sim/pack.h"
#include "sim/quaternion.h"
#include "sim/rollout_types.h"
#include "sim/stage_rollout.h"
#include "sim/thread_pool.h"
#include "sim/urdf.h"

namespace diffloco::sysid {

using sim::MatX;
using sim::Vec3;
using sim::quatConj;
using sim::quatMul;
using sim::Vec4;

namespace {

std::string fmtNum(double x) {
  std::ostringstream s;
  s << std::setprecision(10) << x;
  return s.str();
}

void writeAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  io::writeFileAtomic(path, text);
}

double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

// --- cube ------------------------------------------------------------------------------------

sim::Model cubeModel(double side, double mass, double cornerRadius) {
  if (!(side > 2 * cornerRadius) || !(mass > 0) || !(cornerRadius > 0))
    throw std::invalid_argument("cube: need side > 2 corner radius > 0 and mass > 0 (side " +
                                fmtNum(side) + ", mass " + fmtNum(mass) + ", corner radius " +
                                fmtNum(cornerRadius) + ")");
  const double I = mass * side * side / 6.0, c = side / 2 - cornerRadius;
  std::ostringstream xml;
  xml << std::setprecision(17);
  xml << "<robot name=\"cube\">\n  <link name=\"cube\">\n"
      << "    <inertial><origin xyz=\"0 0 0\"/><mass value=\"" << mass << "\"/>"
      << "<inertia ixx=\"" << I << "\" iyy=\"" << I << "\" izz=\"" << I
      << "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n";
  for (int k = 0; k < 8; ++k)
    xml << "    <collision><origin xyz=\"" << cubeCornerSign(k, 0) * c << " "
        << cubeCornerSign(k, 1) * c << " " << cubeCornerSign(k, 2) * c
        << "\"/><geometry><sphere radius=\"" << cornerRadius << "\"/></geometry></collision>\n";
  xml << "  </link>\n</robot>\n";
  return sim::parseUrdf(xml.str(), "cube (inline URDF)");
}

void setCubeShape(sim::Model& model, double side, double mass, double cornerRadius) {
  const double c = side / 2 - cornerRadius;
  for (int k = 0; k < model.nfeet(); ++k) {
    sim::Foot& f = model.feet[k];
    f.radius = cornerRadius;
    f.offset = Vec3(cubeCornerSign(k, 0), cubeCornerSign(k, 1), cubeCornerSign(k, 2)) * c;
  }
  model.bodies[0].inertia =
      sim::Inertia::fromCom(mass, Vec3::Zero(), mass * side * side / 6.0 * sim::Mat3::Identity());
}

// --- CSV -------------------------------------------------------------------------------------

std::vector<std::string> csvColumns(const sim::Model& model) {
  std::vector<std::string> c{"t", "x", "y", "z", "qw", "qx", "qy", "qz"};
  for (const auto& j : model.joints) c.push_back("q_" + j.name);
  for (const char* n : {"vx", "vy", "vz", "wx", "wy", "wz"}) c.push_back(n);
  for (const auto& j : model.joints) c.push_back("v_" + j.name);
  for (const auto& j : model.joints) c.push_back("target_" + j.name);
  return c;
}

namespace {

// The first line that is neither blank nor a comment, split into its column names (empty at the
// end of the file); lineNo counts the lines read, headerLine is the header's.
std::vector<std::string> readHeaderLine(std::istream& in, int& lineNo, int& headerLine) {
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string t = io::trimmed(line);
    if (t.empty() || t[0] == '#') continue;
    header = io::splitCsvFields(t);
    headerLine = lineNo;
    break;
  }
  return header;
}

// Each column's index by name; an empty or repeated name is an error.
std::map<std::string, int> columnIndex(const std::vector<std::string>& header,
                                       const std::string& path, int headerLine) {
  std::map<std::string, int> col;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (header[i].empty())
      throw DataError(path + ":" + std::to_string(headerLine) + ": column " +
                      std::to_string(i + 1) + " has an empty name");
    if (col.count(header[i]))
      throw DataError(path + ":" + std::to_string(headerLine) + ": column " +
                      std::to_string(i + 1) + " '" + io::excerpt(header[i]) + "' repeats column " +
                      std::to_string(col[header[i]] + 1));
    col[header[i]] = i;
  }
  return col;
}

// Per wanted column, its index in the file; a missing one is an error listing all of them.
std::vector<int> wantedColumns(const std::map<std::string, int>& col,
                               const std::vector<std::string>& want, const std::string& path,
                               int headerLine, const sim::Model& model) {
  std::vector<int> idx;  // per wanted column, its index in the file
  std::string missing;
  for (const auto& w : want) {
    auto it = col.find(w);
    if (it == col.end()) {
      missing += (missing.empty() ? "" : ", ") + w;
      idx.push_back(-1);
    } else {
      idx.push_back(it->second);
    }
  }
  if (!missing.empty()) {
    std::string all;
    for (const auto& w : want) all += (all.empty() ? "" : ",") + w;
    throw DataError(path + ":" + std::to_string(headerLine) + ": missing column(s) " + missing +
                    " (model '" + model.name + "' needs: " + all + ")");
  }
  return idx;
}

// "file:line: column N 'name'", the start of a message about one cell.
std::string cellWhere(const std::string& path, const std::vector<std::string>& header, int ln,
                      int c) {
  return path + ":" + std::to_string(ln) + ": column " + std::to_string(c + 1) + " '" +
         io::excerpt(header[c]) + "'";
}

// The wanted columns' numbers of one row (fields f, line lineNo), in csvColumns' order.
std::vector<double> parseRow(const std::vector<std::string>& f, const std::vector<int>& idx,
                             const std::string& path, const std::vector<std::string>& header,
                             int lineNo) {
  std::vector<double> x(idx.size());
  for (size_t w = 0; w < idx.size(); ++w) {
    const std::string& s = f[idx[w]];
    char* end = nullptr;
    const double val = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
      throw DataError(cellWhere(path, header, lineNo, idx[w]) + ": not a number: \"" +
                      io::excerpt(s) + "\"");
    if (std::isnan(val)) throw DataError(cellWhere(path, header, lineNo, idx[w]) + ": NaN");
    if (!std::isfinite(val))
      throw DataError(cellWhere(path, header, lineNo, idx[w]) + ": infinite value " +
                      io::excerpt(s));
    x[w] = val;
  }
  return x;
}

// Checks that time t follows the last row of tr (on line prevLine) by the trajectory's step, and
// takes the step from its second row. where() starts a message (a callable: only errors build it).
template <class Where>
void checkTimeStep(Trajectory& tr, double t, int prevLine, const Where& where) {
  const double prev = tr.t.back();
  if (!(t > prev))
    throw DataError(where() + ": time " + fmtNum(t) + " does not increase (previous row, line " +
                    std::to_string(prevLine) + ": " + fmtNum(prev) + ")");
  const double step = t - prev;
  if (tr.rows() == 1) {
    tr.dt = step;
  } else if (std::abs(step - tr.dt) > 0.01 * tr.dt) {
    throw DataError(where() + ": time step " + fmtNum(step) + " (from " + fmtNum(prev) +
                    ") differs from the trajectory's " + fmtNum(tr.dt) +
                    " by more than 1 %; the simulator needs uniformly sampled data");
  }
}

// Appends the row x (line lineNo) to tr, its quaternion normalised; one far from unit norm is an
// error naming its columns (qw..qz: wanted columns 4..7).
void appendRow(Trajectory& tr, const std::vector<double>& x, const sim::Model& model,
               const std::vector<int>& idx, const std::string& path, int lineNo) {
  const int nq = model.nq(), nv = model.nv(), nj = model.nj();
  VecX q(nq), v(nv), tg(nj);
  for (int i = 0; i < nq; ++i) q[i] = x[1 + i];
  for (int i = 0; i < nv; ++i) v[i] = x[1 + nq + i];
  for (int i = 0; i < nj; ++i) tg[i] = x[1 + nq + nv + i];
  const double qn = q.segment<4>(3).norm();
  if (!(std::abs(qn - 1) <= 0.1))
    throw DataError(path + ":" + std::to_string(lineNo) + ": columns " +
                    std::to_string(idx[4] + 1) + "-" + std::to_string(idx[7] + 1) +
                    " (qw, qx, qy, qz): quaternion norm " + fmtNum(qn) +
                    " is not close to 1 (more than 10 % off)");
  q.segment<4>(3) /= qn;
  tr.t.push_back(x[0]);
  tr.q.push_back(q);
  tr.v.push_back(v);
  tr.targets.push_back(tg);
  tr.lines.push_back(lineNo);
}

}  // namespace

std::vector<Trajectory> readTrajectories(const std::string& path, const sim::Model& model) {
  std::ifstream in(path);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec))
    throw DataError(path + ": cannot open trajectory file");
  const std::vector<std::string> want = csvColumns(model);

  int lineNo = 0, headerLine = 0;
  const std::vector<std::string> header = readHeaderLine(in, lineNo, headerLine);
  if (header.empty()) throw DataError(path + ": empty file (no header line)");
  std::map<std::string, int> col = columnIndex(header, path, headerLine);
  const std::vector<int> idx = wantedColumns(col, want, path, headerLine, model);
  const int trajCol = col.count("traj") ? col["traj"] : -1;

  std::vector<Trajectory> out;
  std::map<std::string, bool> seenIds;
  std::string currentId;
  std::vector<int> rowLine;  // per row of the current trajectory
  auto finish = [&]() {
    if (out.empty()) return;
    Trajectory& tr = out.back();
    if (tr.rows() < 2)
      throw DataError(path + ":" + std::to_string(rowLine.front()) + ": trajectory " + tr.source +
                      " has " + std::to_string(tr.rows()) + " row(s); at least 2 are needed");
  };
  const int tCol = idx[0];
  std::string line;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string tl = io::trimmed(line);
    if (tl.empty() || tl[0] == '#') continue;
    const std::vector<std::string> f = io::splitCsvFields(tl);
    if (f.size() != header.size())
      throw DataError(path + ":" + std::to_string(lineNo) + ": " + std::to_string(f.size()) +
                      " fields, the header (line " + std::to_string(headerLine) + ") has " +
                      std::to_string(header.size()));
    const std::string id = trajCol >= 0 ? f[trajCol] : "";
    if (out.empty() || id != currentId) {
      if (!out.empty() && seenIds.count(id))
        throw DataError(cellWhere(path, header, lineNo, trajCol) + ": trajectory '" +
                        io::excerpt(id) +
                        "' continues after another one; keep each trajectory's rows together");
      finish();
      seenIds[id] = true;
      currentId = id;
      Trajectory tr;
      tr.source = trajCol >= 0 ? path + " (traj " + io::excerpt(id) + ")" : path;
      tr.file = path;
      out.push_back(tr);
      rowLine.clear();
    }
    Trajectory& tr = out.back();
    const std::vector<double> x = parseRow(f, idx, path, header, lineNo);
    if (tr.rows() > 0)
      checkTimeStep(tr, x[0], rowLine.back(),
                    [&] { return cellWhere(path, header, lineNo, tCol); });
    appendRow(tr, x, model, idx, path, lineNo);
    rowLine.push_back(lineNo);
  }
  if (out.empty()) throw DataError(path + ": no data rows after the header");
  finish();
  return out;
}

std::vector<Trajectory> readTrajectories(const std::vector<std::string>& paths,
                                         const sim::Model& model) {
  std::vector<Trajectory> all;
  for (const auto& p : paths) {
    auto trs = readTrajectories(p, model);
    for (auto& tr : trs) {
      if (!all.empty() && std::abs(tr.dt - all.front().dt) > 0.01 * all.front().dt)
        throw DataError(tr.source + ": time step " + fmtNum(tr.dt) + " differs from " +
                        all.front().source + "'s " + fmtNum(all.front().dt) +
                        " by more than 1 %; all trajectories must share one step");
      all.push_back(std::move(tr));
    }
  }
  if (all.empty()) throw DataError("no trajectory files given");
  return all;
}

void writeTrajectory(const std::string& path, const sim::Model& model, const Trajectory& tr) {
  std::ostringstream s;
  s << std::setprecision(12);
  const auto cols = csvColumns(model);
  for (size_t i = 0; i < cols.size(); ++i) s << (i ? "," : "") << cols[i];
  s << "\n";
  for (int r = 0; r < tr.rows(); ++r) {
    s << tr.t[r];
    for (int i = 0; i < tr.q[r].size(); ++i) s << "," << tr.q[r][i];
    for (int i = 0; i < tr.v[r].size(); ++i) s << "," << tr.v[r][i];
    for (int i = 0; i < tr.targets[r].size(); ++i) s << "," << tr.targets[r][i];
    s << "\n";
  }
  writeAtomically(path, s.str());
}

// --- system ----------------------------------------------------------------------------------

int System::index(const std::string& n) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == n) return static_cast<int>(i);
  return -1;
}

namespace {
std::string validNames(const System& s) {
  std::string all;
  for (const auto& n : s.names) all += (all.empty() ? "" : ", ") + n;
  return all + (s.model.nbodies() > 0 ? ", mass (every body)" : "");
}
}  // namespace

double System::get(const std::string& n) const {
  const int i = index(n);
  if (i < 0)
    throw std::invalid_argument("no parameter '" + n + "' in model '" + name + "' (valid: " +
                                validNames(*this) + ")");
  return values[i];
}

void System::set(const std::string& n, double value) {
  for (const auto& e : expand({n})) {
    if (!(value > 0) || !std::isfinite(value))
      throw std::invalid_argument("parameter '" + e + "' must be positive and finite, got " +
                                  fmtNum(value));
    values[index(e)] = value;
  }
}

std::vector<std::string> System::expand(const std::vector<std::string>& in) const {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const auto& n : in) {
    if (n == "mass") {
      for (const auto& b : model.bodies) add("mass:" + b.name);
    } else if (index(n) >= 0) {
      add(n);
    } else {
      throw std::invalid_argument("no parameter '" + n + "' in model '" + name + "' (valid: " +
                                  validNames(*this) + ")");
    }
  }
  return out;
}

sim::Model System::currentModel() const {
  sim::Model m = model;
  for (int b = 0; b < m.nbodies(); ++b) {
    const double mb = values[index("mass:" + m.bodies[b].name)];
    const sim::Inertia& I0 = nominalInertia[b];
    const double s = mb / I0.m;
    m.bodies[b].inertia.m = mb;
    m.bodies[b].inertia.h = s * I0.h;
    m.bodies[b].inertia.Io = s * I0.Io;
  }
  if (cube) setCubeShape(m, get("side"), get("mass:" + m.bodies[0].name), cornerRadius);
  return m;
}

sim::SimOptions System::currentOptions() const {
  sim::SimOptions o = opt;
  o.contact.mu = get("mu");
  o.contact.kappa = get("kappa");
  o.contact.softKp = get("soft_kp");
  o.contact.softKd = get("soft_kd");
  o.contact.softKf = get("soft_kf");
  if (model.nj() > 0) {
    o.actuator.kp = get("kp");
    o.actuator.kd = get("kd");
  }
  return o;
}

namespace {
void addCommonParams(System& s) {
  for (const auto& b : s.model.bodies) {
    s.names.push_back("mass:" + b.name);
    s.values.push_back(b.inertia.m);
  }
  s.nominalInertia.clear();
  for (const auto& b : s.model.bodies) s.nominalInertia.push_back(b.inertia);
  auto add = [&](const char* n, double v) {
    s.names.push_back(n);
    s.values.push_back(v);
  };
  add("mu", s.opt.contact.mu);
  if (s.model.nj() > 0) {
    add("kp", s.opt.actuator.kp);
    add("kd", s.opt.actuator.kd);
  }
  add("kappa", s.opt.contact.kappa);
  add("soft_kp", s.opt.contact.softKp);
  add("soft_kd", s.opt.contact.softKd);
  add("soft_kf", s.opt.contact.softKf);
}
}  // namespace

System cubeSystem(double side, double mass, double mu, double cornerRadius) {
  System s;
  s.name = "cube";
  s.cube = true;
  s.cornerRadius = cornerRadius;
  s.model = cubeModel(side, mass, cornerRadius);
  s.opt.dt = 0.005;
  s.opt.contact.model = sim::ContactModel::StraightThrough;
  s.opt.contact.mu = mu;
  // The soft model's defaults are for a 40 kg robot on four feet; a 0.37 kg cube on up to eight
  // corners wants about a hundredth of the stiffness and damping.
  s.opt.contact.softKp = 2000;
  s.opt.contact.softKd = 5;
  s.opt.contact.softKf = 50;
  s.defaultTargets = VecX::Zero(0);
  s.standing = sim::neutralConfiguration(s.model);
  s.standing[2] = side / 2;
  s.names.push_back("side");
  s.values.push_back(side);
  addCommonParams(s);
  return s;
}

System robotSystem(const Robot& robot) {
  System s;
  s.name = robot.name;
  s.model = robot.model;
  // The robot's drive and time step (its YAML's task_defaults).
  robot.applyArmature(s.model);
  s.opt = robot.simOptions(sim::ContactModel::StraightThrough);
  s.defaultTargets = robot.defaultJointPos;
  s.standing = robot.standingConfiguration();
  addCommonParams(s);
  return s;
}

System makeSystem(const std::string& name) {
  if (name == "cube") return cubeSystem();
  return robotSystem(loadRobot(name));
}

std::vector<std::pair<std::string, double>> parseAssignments(
    const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& item : items) {
    std::istringstream in(item);
    std::string part;
    while (std::getline(in, part, ',')) {
      part = io::trimmed(part);
      if (part.empty()) continue;
      const auto eq = part.find('=');
      if (eq == std::string::npos)
        throw std::invalid_argument("expected NAME=VALUE, got '" + io::excerpt(part) + "'");
      const std::string n = io::trimmed(part.substr(0, eq)), v = io::trimmed(part.substr(eq + 1));
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (n.empty() || v.empty() || end != v.c_str() + v.size())
        throw std::invalid_argument("expected NAME=VALUE with a number, got '" + io::excerpt(part) +
                                    "'");
      out.emplace_back(n, x);
    }
  }
  return out;
}

void writeParams(const std::string& path, const System& sys, const std::string& comment) {
  std::ostringstream s;
  s << std::setprecision(12);
  if (!comment.empty()) s << "# " << comment << "\n";
  s << "# model " << sys.name << "\n";
  for (size_t i = 0; i < sys.names.size(); ++i) s << sys.names[i] << " " << sys.values[i] << "\n";
  writeAtomically(path, s.str());
}

std::vector<std::pair<std::string, double>> readParams(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot open parameter file");
  std::vector<std::pair<std::string, double>> out;
  std::string line;
  int ln = 0;
  while (std::getline(in, line)) {
    ++ln;
    line = io::trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string n, rest;
    double v;
    if (!(ls >> n >> v) || (ls >> rest))
      throw DataError(path + ":" + std::to_string(ln) + ": expected 'NAME VALUE', got '" +
                      io::excerpt(line) + "'");
    out.emplace_back(n, v);
  }
  return out;
}

// --- the simulator ---------------------------------------------------------------------------

namespace {

// The size class (sim/stage_rollout.h) a model fits: the robots are Quadruped, the cube
// SingleBody. Options the stages do not have (the soft model's adaptive integrator; with vjp,
// more sweeps or sub-steps than the VJP's tape holds, sim::notInStepVjp) and a model of neither
// class are a std::invalid_argument naming why.
enum class Stages { Quadruped, SingleBody };

Stages stagesFor(const sim::Model& model, const sim::SimOptions& opt, bool vjp) {
  auto check = [&](const std::string& why) {
    if (!why.empty()) throw std::invalid_argument("sysid: the stages' rollout: " + why);
  };
  const std::string quadruped = sim::notInStepModel<sim::Quadruped>(model);
  if (quadruped.empty()) {
    check(vjp ? sim::notInStepVjp<sim::Quadruped>(opt) : sim::notInStepOptions(opt));
    return Stages::Quadruped;
  }
  const std::string singleBody = sim::notInStepModel<sim::SingleBody>(model);
  if (singleBody.empty()) {
    check(vjp ? sim::notInStepVjp<sim::SingleBody>(opt) : sim::notInStepOptions(opt));
    return Stages::SingleBody;
  }
  throw std::invalid_argument("sysid: the model fits no size class of the stages: Quadruped: " +
                              quadruped + "; SingleBody: " + singleBody);
}

sim::Rollout predict(Stages stages, const sim::Model& model, const sim::SimOptions& opt,
                     const VecX& q0, const VecX& v0, const MatX& targets) {
  if (stages == Stages::Quadruped)
    return sim::stageRollout<sim::Quadruped>(model, opt, q0, v0, targets);
  return sim::stageRollout<sim::SingleBody>(model, opt, q0, v0, targets);
}

// The adjoint of predict on the stages r was predicted on.
sim::RolloutAdjoint predictVjp(Stages stages, const sim::Model& model, const sim::SimOptions& opt,
                               const sim::Rollout& r, const MatX& targets,
                               const std::vector<VecX>& gq, const std::vector<VecX>& gv) {
  if (stages == Stages::Quadruped)
    return sim::stageRolloutVjp<sim::Quadruped>(model, opt, r, targets, gq, gv);
  return sim::stageRolloutVjp<sim::SingleBody>(model, opt, r, targets, gq, gv);
}

}  // namespace

// --- synthetic data --------------------------------------------------------------------------

std::vector<Trajectory> generate(const System& sys, const GenerateOptions& o) {
  const sim::Model model = sys.currentModel();
  sim::SimOptions opt = sys.currentOptions();
  opt.dt = o.dt;
  opt.contact.model = sim::parseContactModel(o.contact);
  const int nv = model.nv(), nj = model.nj();
  const int steps = static_cast<int>(std::lround(o.duration / o.dt));
  if (steps < 1 || o.count < 1) throw std::invalid_argument("generate: nothing to simulate");
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  auto uni = [&](double a, double b) { return a + (b - a) * U(rng); };
  const Stages stages = stagesFor(model, opt, false);
  std::vector<Trajectory> out;
  for (int k = 0; k < o.count; ++k) {
    VecX q = sys.standing, v = VecX::Zero(nv);
    std::vector<double> amp(2 * nj), freq(2 * nj), phase(2 * nj);
    if (sys.cube) {
      q[0] = uni(-0.2, 0.2);
      q[1] = uni(-0.2, 0.2);
      q[2] = uni(o.heightMin, o.heightMax);
      const Vec4 r(N(rng), N(rng), N(rng), N(rng));  // uniform on the 3-sphere
      q.segment<4>(3) = r.normalized();
      const double speed = uni(0, o.speedMax), dir = uni(0, 2 * M_PI);
      v[0] = speed * std::cos(dir);
      v[1] = speed * std::sin(dir);
      v[2] = uni(o.vzMin, o.vzMax);
      for (int a = 0; a < 3; ++a) v[3 + a] = uni(-o.spinMax, o.spinMax);
    } else {
      q[2] += o.dropHeight;
      for (int i = 0; i < 2 * nj; ++i) {
        amp[i] = o.targetAmplitude * uni(0.2, 0.5);
        freq[i] = uni(0.5, 3.0);
        phase[i] = uni(0, 2 * M_PI);
      }
    }
    Trajectory tr;
    tr.source = sys.name + " run " + std::to_string(k);
    tr.dt = o.dt;
    // Every row's targets, the motion through them, then the rows with noise: stepping draws no
    // random numbers, so the noise is the same as when stepping and recording alternate.
    MatX targets(nj, steps + 1);
    for (int s = 0; s <= steps; ++s) {
      const double t = s * o.dt;
      targets.col(s) = sys.defaultTargets;
      for (int j = 0; j < nj; ++j)
        for (int h = 0; h < 2; ++h)
          targets(j, s) +=
              amp[2 * j + h] * std::sin(2 * M_PI * freq[2 * j + h] * t + phase[2 * j + h]);
    }
    const sim::Rollout r = predict(stages, model, opt, q, v, targets.leftCols(steps));
    for (int s = 0; s <= steps; ++s) {
      if (!r.q[s].allFinite() || !r.v[s].allFinite())
        throw std::runtime_error("generate: " + tr.source +
                                 " became non-finite at t = " + fmtNum((s - 1) * o.dt));
      const VecX &qs = r.q[s], &vs = r.v[s];
      const double ns = o.noiseScale;
      VecX qr = qs, vr = vs;
      for (int a = 0; a < 3; ++a) qr[a] += ns * o.noisePosition * N(rng);
      const Vec3 dw(N(rng), N(rng), N(rng));
      const Vec3 rv = ns * o.noiseOrientation * dw;
      const double th = rv.norm();
      Vec4 dq(1, 0, 0, 0);
      if (th > 0) dq << std::cos(th / 2), std::sin(th / 2) * rv / th;
      qr.segment<4>(3) = quatMul(qs.segment<4>(3), dq).normalized();
      for (int j = 0; j < nj; ++j) qr[7 + j] += ns * o.noiseJoint * N(rng);
      for (int a = 0; a < 3; ++a) vr[a] += ns * o.noiseVelocity * N(rng);
      for (int a = 0; a < 3; ++a) vr[3 + a] += ns * o.noiseAngularVelocity * N(rng);
      for (int j = 0; j < nj; ++j) vr[6 + j] += ns * o.noiseJointVelocity * N(rng);
      tr.t.push_back(s * o.dt);
      tr.q.push_back(qr);
      tr.v.push_back(vr);
      tr.targets.push_back(targets.col(s));
    }
    out.push_back(std::move(tr));
  }
  return out;
}

// --- loss and gradient -----------------------------------------------------------------------

namespace {

// Row `row` of a trajectory as messages name it: "file:line" (with the trajectory when the file
// holds several), or "trajectory SOURCE, row N" for one built in memory. `lead`: the form that
// starts a message; otherwise "line N of ..." reads inside a sentence.
std::string rowWhere(const Trajectory& tr, int row, bool lead = true) {
  if (tr.file.empty() || row >= static_cast<int>(tr.lines.size()))
    return "trajectory " + tr.source + ", row " + std::to_string(row);
  const std::string line = std::to_string(tr.lines[row]);
  if (!lead) return "line " + line;
  const bool traj = tr.source.size() > tr.file.size() && tr.source.rfind(tr.file, 0) == 0;
  return tr.file + ":" + line + (traj ? tr.source.substr(tr.file.size()) : "");
}

struct Segment {
  int traj, start;
};

std::vector<Segment> segments(const std::vector<Trajectory>& data, const FitOptions& o) {
  if (o.horizon < 1 || o.stride < 1)
    throw std::invalid_argument("sysid: horizon and stride must be >= 1");
  std::vector<Segment> s;
  for (int i = 0; i < static_cast<int>(data.size()); ++i)
    for (int t = 0; t + o.horizon < data[i].rows(); t += o.stride) s.push_back({i, t});
  if (s.empty())
    throw DataError("sysid: no trajectory has more than horizon = " + std::to_string(o.horizon) +
                    " rows (the longest, " + data.front().source + ", has " +
                    std::to_string(data.front().rows()) + ")");
  return s;
}

// One predicted state against the recorded one: adds the loss and writes its gradient with
// respect to the predicted (q, v).
double stateLoss(const sim::Model& model, const LossWeights& w, const VecX& q, const VecX& v,
                 const VecX& qr, const VecX& vr, VecX* gq, VecX* gv) {
  const int nj = model.nj();
  double L = 0;
  const Vec3 ep = q.head<3>() - qr.head<3>();
  L += w.position * ep.squaredNorm();
  const Vec4 a = qr.segment<4>(3), b = q.segment<4>(3);
  const Vec4 r = quatMul(quatConj(a), b);
  const double sg = r[0] < 0 ? -1.0 : 1.0;
  const Vec3 er = 2 * sg * r.tail<3>();
  L += w.orientation * er.squaredNorm();
  const VecX ej = q.tail(nj) - qr.tail(nj);
  L += w.joint * ej.squaredNorm();
  const Vec3 ev = v.head<3>() - vr.head<3>(), ew = v.segment<3>(3) - vr.segment<3>(3);
  const VecX ejv = v.tail(nj) - vr.tail(nj);
  L += w.velocity * ev.squaredNorm() + w.angularVelocity * ew.squaredNorm() +
       w.jointVelocity * ejv.squaredNorm();
  if (gq) {
    gq->head<3>() = 2 * w.position * ep;
    Vec4 rb(0, 0, 0, 0);
    rb.tail<3>() = 4 * w.orientation * sg * er;  // dL/d vec(r)
    gq->segment<4>(3) = quatMul(a, rb);             // r = quatConj(a) b -> b's adjoint a (x) rbar
    gq->tail(nj) = 2 * w.joint * ej;
    gv->head<3>() = 2 * w.velocity * ev;
    gv->segment<3>(3) = 2 * w.angularVelocity * ew;
    gv->tail(nj) = 2 * w.jointVelocity * ejv;
  }
  return L;
}

// dL/dp for parameter `name` from the accumulated step adjoints.
double chainRule(const System& sys, const sim::Model& model, const sim::ParamGrad& g,
                 const std::string& name) {
  if (name == "side") {
    const double s = sys.get("side"), m = model.bodies[0].inertia.m;
    double d = g.inertia[0].Io.trace() * m * s / 3.0;  // Io = m s^2 / 6 I
    for (int k = 0; k < model.nfeet(); ++k)
      for (int a = 0; a < 3; ++a) d += 0.5 * cubeCornerSign(k, a) * g.footOffset[k][a];
    return d;
  }
  if (name.rfind("mass:", 0) == 0) {
    for (int b = 0; b < model.nbodies(); ++b)
      if (name == "mass:" + model.bodies[b].name) return g.mass[b];  // inertia scales with mass
  }
  if (name == "mu") return g.mu;
  if (name == "kp") return g.kp;
  if (name == "kd") return g.kd;
  if (name == "kappa") return g.kappa;
  if (name == "soft_kp") return g.softKp;
  if (name == "soft_kd") return g.softKd;
  if (name == "soft_kf") return g.softKf;
  throw std::invalid_argument("sysid: no gradient for parameter '" + name + "'");
}

}  // namespace

Evaluation evaluate(const System& sys, const std::vector<Trajectory>& data,
                    const std::vector<std::string>& names, const FitOptions& o) {
  const sim::Model model = sys.currentModel();
  sim::SimOptions opt = sys.currentOptions();
  opt.dt = data.front().dt;
  const std::vector<Segment> segs = segments(data, o);
  const int nq = model.nq(), nv = model.nv(), nj = model.nj(), H = o.horizon;
  const bool grad = !names.empty();

  const Stages stages = stagesFor(model, opt, grad);
  const int threads = std::max(1, o.threads);
  struct Acc {
    double loss = 0;
    sim::ParamGrad g;
  };
  // The first segment (in data order) with a non-finite loss or gradient: its index, the step
  // whose loss is non-finite (0: the gradient) and the parameter whose gradient is.
  struct Bad {
    int segment = std::numeric_limits<int>::max(), step = 0;
    std::string param;
  };
  std::vector<Bad> bad(threads);
  std::vector<Acc> acc(threads);
  for (auto& a : acc) a.g.setZero(model);
  auto work = [&](int i, int worker) {
    Acc& A = acc[worker];
    const Trajectory& tr = data[segs[i].traj];
    const int t0 = segs[i].start;
    MatX targets(nj, H);
    for (int j = 0; j < H; ++j) targets.col(j) = tr.targets[t0 + j];
    const sim::Rollout r = predict(stages, model, opt, tr.q[t0], tr.v[t0], targets);
    std::vector<VecX> gq(H + 1), gv(H + 1);
    for (int j = 1; j <= H; ++j) {
      if (grad) {
        gq[j].resize(nq);
        gv[j].resize(nv);
      }
      const double L = stateLoss(model, o.weights, r.q[j], r.v[j], tr.q[t0 + j], tr.v[t0 + j],
                                 grad ? &gq[j] : nullptr, grad ? &gv[j] : nullptr);
      if (!std::isfinite(L) && i < bad[worker].segment) bad[worker] = {i, j, ""};
      A.loss += L;
    }
    if (!grad) return;
    const sim::RolloutAdjoint adj = predictVjp(stages, model, opt, r, targets, gq, gv);
    if (i < bad[worker].segment)
      for (const auto& n : names)
        if (!std::isfinite(chainRule(sys, model, adj.params, n))) {
          bad[worker] = {i, 0, n};
          break;
        }
    A.g += adj.params;
  };
  if (threads == 1) {
    for (int i = 0; i < static_cast<int>(segs.size()); ++i) work(i, 0);
  } else {
    sim::ThreadPool pool(threads);
    pool.parallelFor(static_cast<int>(segs.size()), work, 8);
  }
  Evaluation e;
  e.segments = static_cast<int>(segs.size());
  const double scale = 1.0 / (static_cast<double>(segs.size()) * H);
  sim::ParamGrad g;
  g.setZero(model);
  for (auto& a : acc) {
    e.loss += a.loss;
    g += a.g;
  }
  e.loss *= scale;
  for (const auto& n : names) e.grad.push_back(scale * chainRule(sys, model, g, n));
  const Bad first = *std::min_element(
      bad.begin(), bad.end(), [](const Bad& a, const Bad& b) { return a.segment < b.segment; });
  if (first.segment < static_cast<int>(segs.size())) {
    const Segment& sg = segs[first.segment];
    const Trajectory& tr = data[sg.traj];
    if (first.param.empty()) {
      e.nonFiniteAt = rowWhere(tr, sg.start + first.step);
      e.nonFinite = "the loss of this row, " + std::to_string(first.step) +
                    " step(s) predicted from " + rowWhere(tr, sg.start, false);
    } else {
      e.nonFiniteAt = rowWhere(tr, sg.start);
      e.nonFinite = "the gradient with respect to " + first.param + " of the " + std::to_string(H) +
                    " steps predicted from this row";
    }
  }
  return e;
}

FitResult fit(System& sys, const std::vector<Trajectory>& data,
              const std::vector<std::string>& namesIn, const FitOptions& o,
              const std::function<void(const FitStep&)>& log) {
  FitResult res;
  res.names = sys.expand(namesIn);
  const int n = static_cast<int>(res.names.size());
  if (n == 0) throw std::invalid_argument("sysid: no parameter to fit");
  for (const auto& nm : res.names) res.initial.push_back(sys.get(nm));
  // p = p0 softplus(theta), theta0 = log(e - 1): p(theta0) = p0.
  const double theta0 = std::log(std::exp(1.0) - 1.0);
  std::vector<double> theta(n, theta0), m1(n, 0), m2(n, 0);
  auto apply = [&]() {
    for (int i = 0; i < n; ++i) sys.set(res.names[i], res.initial[i] * softplus(theta[i]));
  };
  double total = 0;
  const std::clock_t cpu0 = std::clock();
  for (int it = 0; it < o.iterations; ++it) {
    apply();
    const auto t0 = std::chrono::steady_clock::now();
    const Evaluation e = evaluate(sys, data, res.names, o);
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total += sec;
    res.segments = e.segments;
    const double frac = o.iterations > 1 ? static_cast<double>(it) / (o.iterations - 1) : 1.0;
    const double lr = o.lrFinal + 0.5 * (o.lr - o.lrFinal) * (1 + std::cos(M_PI * frac));
    FitStep st;
    st.iteration = it;
    st.loss = e.loss;
    st.lr = lr;
    st.seconds = sec;
    for (int i = 0; i < n; ++i) st.values.push_back(sys.get(res.names[i]));
    st.grads = e.grad;
    bool finite = std::isfinite(e.loss);
    for (const double g : e.grad) finite = finite && std::isfinite(g);
    if (!finite) {
      std::string values;
      for (int i = 0; i < n; ++i)
        values += (i ? ", " : "") + res.names[i] + " = " + fmtNum(st.values[i]);
      const std::string what = std::isfinite(e.loss) ? "gradient" : "loss";
      // Every row finite but their sum is not: no row to name.
      throw std::runtime_error(
          (e.nonFiniteAt.empty() ? "" : e.nonFiniteAt + ": ") + "sysid: the " + what +
          " became non-finite at iteration " + std::to_string(it) + " (" + values +
          "): " + (e.nonFinite.empty() ? "the sum over the rows overflows" : e.nonFinite));
    }
    // Adam on theta.
    const double b1t = 1 - std::pow(o.beta1, it + 1), b2t = 1 - std::pow(o.beta2, it + 1);
    for (int i = 0; i < n; ++i) {
      const double g = e.grad[i] * res.initial[i] * sigmoid(theta[i]);  // dL/dtheta
      m1[i] = o.beta1 * m1[i] + (1 - o.beta1) * g;
      m2[i] = o.beta2 * m2[i] + (1 - o.beta2) * g * g;
      theta[i] -= lr * (m1[i] / b1t) / (std::sqrt(m2[i] / b2t) + o.epsilon);
    }
    res.history.push_back(st);
    if (log) log(st);
  }
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  apply();
  for (const auto& nm : res.names) res.final.push_back(sys.get(nm));
  res.finalLoss = evaluate(sys, data, {}, o).loss;
  res.secondsPerStep = o.iterations > 0 ? total / o.iterations : 0;
  res.cpuSecondsPerStep = o.iterations > 0 ? cpu / o.iterations : 0;
  return res;
}

void writeFitLog(const std::string& path, const FitResult& r) {
  std::ostringstream s;
  s << std::setprecision(10);
  s << "iteration,loss,lr,seconds";
  for (const auto& n : r.names) s << "," << n << "," << n << "_grad";
  s << "\n";
  for (const auto& st : r.history) {
    s << st.iteration << "," << st.loss << "," << st.lr << "," << st.seconds;
    for (size_t i = 0; i < r.names.size(); ++i) s << "," << st.values[i] << "," << st.grads[i];
    s << "\n";
  }
  writeAtomically(path, s.str());
}

}  // namespace diffloco::sysid
