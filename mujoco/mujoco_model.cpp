#include "mujoco/mujoco_model.h"
#include "mujoco/joint_order.h"
#include "mujoco/mujoco_compat.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace diffloco::mj {
namespace {

using sim::Mat3;
using sim::Vec3;

// Full precision so that the compiled model matches ours to round-off.
std::string num(double x) {
  std::ostringstream s;
  s << std::setprecision(17) << x;
  return s.str();
}

std::string vec3(const Vec3& v) {
  return num(v.x()) + " " + num(v.y()) + " " + num(v.z());
}

class MjcfWriter {
 public:
  MjcfWriter(const sim::Model& model, const MjcfOptions& opt) : model_(model), opt_(opt) {
    children_.resize(model.nbodies());
    for (int i = 1; i < model.nbodies(); ++i) children_[model.bodies[i].parent].push_back(i);
  }

  std::string write() {
    const Vec3& g = model_.gravity;
    out_ << "<mujoco model=\"" << model_.name << "\">\n"
         << "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n"
         << "  <option timestep=\"" << num(opt_.timestep) << "\" gravity=\"" << vec3(g)
         << "\" integrator=\"" << opt_.integrator << "\" solver=\"" << opt_.solver << "\" cone=\""
         << opt_.cone << "\" iterations=\"" << opt_.iterations << "\" noslip_iterations=\""
         << opt_.noslipIterations
         << "\" impratio=\"1\"/>\n"
         // Room for every sphere's contacts: on a height field MuJoCo makes one per prism a
         // sphere touches (at most 50 per pair). MuJoCo 2.x allocates this much and drops what
         // does not fit; from 3.x on both are "legacy": nconmax still caps the contacts, njmax
         // sizes the arena as for that many constraints (mujoco/mujoco_compat.h).
         << "  <size nconmax=\"" << 50 * model_.nspheres() << "\" njmax=\""
         << 300 * model_.nspheres() << "\"/>\n"
         << ground()
         << "  <worldbody>\n"
         // Feet collide with the floor only (contype/conaffinity), never with each other.
         << "    <geom name=\"floor\" " << groundGeom() << " condim=\"3\" contype=\"0\" "
         << "conaffinity=\"1\" friction=\"" << num(opt_.friction) << " 0.005 0.0001\"/>\n"
         << skirts();
    body(0, 2);
    out_ << "  </worldbody>\n";
    if (opt_.kp > 0) {
      out_ << "  <actuator>\n";
      for (const auto& j : model_.joints) {
        out_ << "    <position name=\"" << j.name << "\" joint=\"" << j.name << "\" kp=\""
             << num(opt_.kp) << "\"";
        if (opt_.forceLimit > 0)
          out_ << " forcelimited=\"true\" forcerange=\"" << num(-opt_.forceLimit) << " "
               << num(opt_.forceLimit) << "\"";
        out_ << "/>\n";
      }
      out_ << "  </actuator>\n";
    }
    out_ << "</mujoco>\n";
    return out_.str();
  }

 private:
  // MuJoCo's hfield spans [-size0, size0] x [-size1, size1] about its geom, sample (row r, column
  // c) at x = c dx - size0, y = r dy - size1 (rows along y: our heights[iy * nx + ix]), height
  // data * size2 above the geom (data normalised to [0, 1]); size3 is the slab below.
  void heightRange(double& lo, double& hi) const {
    const auto& h = opt_.terrain->heights;
    lo = *std::min_element(h.begin(), h.end());
    hi = *std::max_element(h.begin(), h.end());
  }
  std::string ground() const {
    if (!opt_.terrain) return "";
    const sim::HeightField& hf = *opt_.terrain;
    double lo, hi;
    heightRange(lo, hi);
    return "  <asset>\n    <hfield name=\"terrain\" nrow=\"" + std::to_string(hf.ny) +
           "\" ncol=\"" + std::to_string(hf.nx) + "\" size=\"" + num(0.5 * hf.sizeX()) + " " +
           num(0.5 * hf.sizeY()) + " " + num(std::max(hi - lo, 1e-6)) + " 1\"/>\n  </asset>\n";
  }
  std::string groundGeom() const {
    if (!opt_.terrain) return "type=\"plane\" size=\"0 0 0.05\"";
    const sim::HeightField& hf = *opt_.terrain;
    double lo, hi;
    heightRange(lo, hi);
    return "type=\"hfield\" hfield=\"terrain\" pos=\"" +
           vec3(Vec3(hf.originX + 0.5 * hf.sizeX(), hf.originY + 0.5 * hf.sizeY(), lo)) + "\"";
  }

  // Beyond the grid our surface continues the edge samples outwards (sim/terrain.h); MuJoCo's
  // hfield ends there. Each side whose samples are level gets a box continuing it (1 km out, its
  // top at the edge's height; every generated terrain: its border is flat), and each corner
  // between two such sides another, so that a robot walking off the field keeps its ground, as
  // in our simulator. A side that is not level ends at the grid in MuJoCo.
  std::string skirts() const {
    if (!opt_.terrain) return "";
    const sim::HeightField& hf = *opt_.terrain;
    auto level = [&](int ix0, int iy0, int dx, int dy, int n) {
      for (int k = 1; k < n; ++k)
        if (hf.at(ix0 + k * dx, iy0 + k * dy) != hf.at(ix0, iy0)) return false;
      return true;
    };
    const bool lowX = level(0, 0, 0, 1, hf.ny), highX = level(hf.nx - 1, 0, 0, 1, hf.ny);
    const bool lowY = level(0, 0, 1, 0, hf.nx), highY = level(0, hf.ny - 1, 1, 0, hf.nx);
    const double x0 = hf.originX, x1 = x0 + hf.sizeX(), y0 = hf.originY, y1 = y0 + hf.sizeY();
    const double out = 1000, thick = 1;
    std::string s;
    int n = 0;
    // A box over [xa, xb] x [ya, yb], its top at z.
    auto box = [&](double xa, double xb, double ya, double yb, double z) {
      s += "    <geom name=\"floor_skirt" + std::to_string(n++) + "\" type=\"box\" pos=\"" +
           vec3(Vec3(0.5 * (xa + xb), 0.5 * (ya + yb), z - 0.5 * thick)) + "\" size=\"" +
           vec3(Vec3(0.5 * (xb - xa), 0.5 * (yb - ya), 0.5 * thick)) +
           "\" condim=\"3\" contype=\"0\" conaffinity=\"1\" friction=\"" + num(opt_.friction) +
           " 0.005 0.0001\"/>\n";
    };
    if (lowX) box(x0 - out, x0, y0, y1, hf.at(0, 0));
    if (highX) box(x1, x1 + out, y0, y1, hf.at(hf.nx - 1, 0));
    if (lowY) box(x0, x1, y0 - out, y0, hf.at(0, 0));
    if (highY) box(x0, x1, y1, y1 + out, hf.at(0, hf.ny - 1));
    if (lowX && lowY) box(x0 - out, x0, y0 - out, y0, hf.at(0, 0));
    if (highX && lowY) box(x1, x1 + out, y0 - out, y0, hf.at(hf.nx - 1, 0));
    if (lowX && highY) box(x0 - out, x0, y1, y1 + out, hf.at(0, hf.ny - 1));
    if (highX && highY) box(x1, x1 + out, y1, y1 + out, hf.at(hf.nx - 1, hf.ny - 1));
    return s;
  }

  void body(int i, int depth) {
    const sim::Body& b = model_.bodies[i];
    const std::string ind(2 * depth, ' ');
    out_ << ind << "<body name=\"" << b.name << "\"";
    if (i > 0) {
      // tree.E maps parent coordinates to child coordinates: the body's orientation is E^T.
      const Eigen::Quaterniond quat(Mat3(b.tree.E.transpose()));
      out_ << " pos=\"" << vec3(b.tree.r) << "\" quat=\"" << num(quat.w()) << " " << num(quat.x())
           << " " << num(quat.y()) << " " << num(quat.z()) << "\"";
    }
    out_ << ">\n";
    inertial(b.inertia, ind + "  ");
    if (i == 0) {
      out_ << ind << "  <freejoint name=\"" << b.name << "\"/>\n";
    } else {
      const sim::JointInfo& j = model_.joints[i - 1];
      out_ << ind << "  <joint name=\"" << j.name << "\" type=\"hinge\" axis=\"" << vec3(b.axis)
           << "\" armature=\"" << num(j.armature) << "\" damping=\""
           << num(j.damping + opt_.jointDamping) << "\"";
      if (opt_.jointLimits && j.lower > -1e9 && j.upper < 1e9)
        out_ << " limited=\"true\" range=\"" << num(j.lower) << " " << num(j.upper) << "\"";
      out_ << "/>\n";
    }
    // Every sphere that touches the ground in our simulator: the feet (named by their links) and
    // the leg spheres (link name and index: a link carries several).
    for (int j = 0; j < model_.nspheres(); ++j) {
      const sim::Foot& f = model_.sphere(j);
      if (f.body != i) continue;
      const std::string name =
          j < model_.nfeet() ? f.name : f.name + "_" + std::to_string(j - model_.nfeet());
      out_ << ind << "  <geom name=\"" << name << "\" type=\"sphere\" size=\"" << num(f.radius)
           << "\" pos=\"" << vec3(f.offset) << "\" condim=\"3\" contype=\"1\" conaffinity=\"0\" "
           << "group=\"3\" "
           << "friction=\"" << num(opt_.friction) << " 0.005 0.0001\"";
      if (!opt_.footSolref.empty()) out_ << " solref=\"" << opt_.footSolref << "\"";
      if (!opt_.footSolimp.empty()) out_ << " solimp=\"" << opt_.footSolimp << "\"";
      out_ << "/>\n";
    }
    for (int c : children_[i]) body(c, depth + 1);
    out_ << ind << "</body>\n";
  }

  // MuJoCo wants the inertia about the centre of mass; ours is about the body origin. We give it
  // principal axes ourselves: MuJoCo's own diagonalisation of `fullinertia` (mju_eig3) stops at a
  // relative accuracy of about 1e-6 for nearly symmetric bodies, which would spoil the oracle.
  void inertial(const sim::Inertia& I, const std::string& ind) {
    const Vec3 c = I.com();
    const Mat3 Ic = I.Io - I.m * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
    const Eigen::SelfAdjointEigenSolver<Mat3> eig(Ic);
    Mat3 V = eig.eigenvectors();
    if (V.determinant() < 0) V.col(2) *= -1;  // a rotation, so that it has a quaternion
    const Eigen::Quaterniond quat(V);
    out_ << ind << "<inertial pos=\"" << vec3(c) << "\" mass=\"" << num(I.m) << "\" quat=\""
         << num(quat.w()) << " " << num(quat.x()) << " " << num(quat.y()) << " " << num(quat.z())
         << "\" diaginertia=\"" << vec3(eig.eigenvalues()) << "\"/>\n";
  }

  const sim::Model& model_;
  const MjcfOptions& opt_;
  std::vector<std::vector<int>> children_;
  std::ostringstream out_;
};

using Clock = std::chrono::steady_clock;

// Times mj_step from the current state of (m, d); the state is restored every kResetSteps steps.
double timeSteps(const mjModel* m, mjData* d, double seconds) {
  constexpr int kResetSteps = 200;  // 1 s at 5 ms
  const std::vector<mjtNum> qpos(d->qpos, d->qpos + m->nq), qvel(d->qvel, d->qvel + m->nv);
  auto reset = [&] {
    std::copy(qpos.begin(), qpos.end(), d->qpos);
    std::copy(qvel.begin(), qvel.end(), d->qvel);
  };
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    reset();
    long steps = 0;
    double elapsed = 0;
    const auto t0 = Clock::now();
    do {
      for (int i = 0; i < kResetSteps; ++i) mj_step(m, d);
      steps += kResetSteps;
      reset();
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (elapsed < seconds / 5);
    best = std::min(best, elapsed * 1e6 / steps);
  }
  reset();
  mj_forward(m, d);
  return best;
}

}  // namespace

void loadHeightField(mjModel* m, const sim::HeightField& hf) {
  const int id = mj_name2id(m, mjOBJ_HFIELD, "terrain");
  if (id < 0 || m->hfield_nrow[id] != hf.ny || m->hfield_ncol[id] != hf.nx)
    throw std::invalid_argument("loadHeightField: the MuJoCo model has no hfield 'terrain' of " +
                                std::to_string(hf.ny) + " x " + std::to_string(hf.nx) + " samples");
  const double lo = *std::min_element(hf.heights.begin(), hf.heights.end());
  const double range = m->hfield_size[4 * id + 2];
  float* data = m->hfield_data + m->hfield_adr[id];
  for (size_t k = 0; k < hf.heights.size(); ++k)
    data[k] = static_cast<float>((hf.heights[k] - lo) / range);
}

MjcfOptions benchOptions() {
  MjcfOptions o;
  o.timestep = 0.005;
  o.jointDamping = 1;
  o.kp = 100;
  o.forceLimit = 80;
  o.friction = 0.8;
  o.footSolref = "0.02 1";
  o.footSolimp = "0.015 1 0.031";
  return o;
}

std::string versionString() { return mj_versionString(); }

std::string engineOptions(const mjModel* m) {
  static const char* integrators[] = {"euler", "rk4", "implicit", "implicitfast", "discrete"};
  static const char* cones[] = {"pyramidal", "elliptic"};
  static const char* solvers[] = {"pgs", "cg", "newton"};
  const mjOption& o = m->opt;
  auto name = [](const char* const* names, int n, int i) {
    return i >= 0 && i < n ? std::string(names[i]) : std::to_string(i);
  };
  std::ostringstream s;
  s << "MuJoCo " << mj_versionString() << ", integrator " << name(integrators, 5, o.integrator)
    << ", cone " << name(cones, 2, o.cone) << ", solver " << name(solvers, 3, o.solver)
    << ", iterations " << o.iterations << " (tolerance " << o.tolerance << "), noslip "
    << o.noslip_iterations << ", impratio " << o.impratio << ", timestep " << o.timestep << " s";
  return s.str();
}

std::string toMjcf(const sim::Model& model, const MjcfOptions& opt) {
  return MjcfWriter(model, opt).write();
}

MujocoModel::MujocoModel(mjModel* model) {
  adopt(model);
}

void MujocoModel::adopt(mjModel* model) {
  d = mj_makeData(model);
  if (!d) {
    mj_deleteModel(model);
    throw std::runtime_error("MuJoCo: mj_makeData failed");
  }
  m = model;
}

MujocoModel::MujocoModel(const std::string& mjcf) {
  // Compile from memory through a one-file virtual file system (mjVFS is large in 2.x: heap;
  // from 3.x on mj_defaultVFS may allocate, so mj_deleteVFS runs on every path).
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* name = "diffloco_model.xml";
  const int size = static_cast<int>(mjcf.size());
  const bool added = addBufferVFS(vfs.get(), name, mjcf.data(), size) == 0;
  char error[1000] = "";
  mjModel* model = added ? mj_loadXML(name, vfs.get(), error, sizeof(error)) : nullptr;
  mj_deleteVFS(vfs.get());
  if (!added) throw std::runtime_error("MuJoCo: cannot create the in-memory MJCF file");
  if (!model) throw std::runtime_error(std::string("MuJoCo could not compile the MJCF: ") + error);
  adopt(model);
}

MujocoModel MujocoModel::fromFile(const std::string& path) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  if (!m) throw std::runtime_error(path + ": MuJoCo could not load it: " + error);
  return MujocoModel(m);
}

MujocoModel::~MujocoModel() {
  if (d) mj_deleteData(d);
  if (m) mj_deleteModel(m);
}

MujocoModel::MujocoModel(MujocoModel&& o) noexcept : m(o.m), d(o.d) {
  o.m = nullptr, o.d = nullptr;
}

MujocoModel& MujocoModel::operator=(MujocoModel&& o) noexcept {
  std::swap(m, o.m);
  std::swap(d, o.d);
  return *this;
}

std::vector<int> mujocoJointOrder(const sim::Model& model) {
  // The MJCF writer nests children in increasing body index; MuJoCo's bodies (and hinges) follow
  // the depth-first pre-order of that nesting.
  std::vector<std::vector<int>> children(model.nbodies());
  for (int i = 1; i < model.nbodies(); ++i) children[model.bodies[i].parent].push_back(i);
  std::vector<int> order, stack{0};
  while (!stack.empty()) {
    const int b = stack.back();
    stack.pop_back();
    if (b > 0) order.push_back(b - 1);
    for (auto it = children[b].rbegin(); it != children[b].rend(); ++it) stack.push_back(*it);
  }
  return order;
}

void toMujocoState(const sim::Model& model, const VecX& q, const VecX& v, mjtNum* qpos,
                   mjtNum* qvel) {
  // Same free-joint convention; joints through the order map.
  std::copy(q.data(), q.data() + 7, qpos);
  std::copy(v.data(), v.data() + 6, qvel);
  const std::vector<int> order = mujocoJointOrder(model);
  for (int k = 0; k < model.nj(); ++k) qpos[7 + k] = q[7 + order[k]], qvel[6 + k] = v[6 + order[k]];
}

void fromMujocoState(const sim::Model& model, const mjtNum* qpos, const mjtNum* qvel, VecX& q,
                     VecX& v) {
  q.resize(model.nq());
  v.resize(model.nv());
  std::copy(qpos, qpos + 7, q.data());
  std::copy(qvel, qvel + 6, v.data());
  const std::vector<int> order = mujocoJointOrder(model);
  for (int k = 0; k < model.nj(); ++k) q[7 + order[k]] = qpos[7 + k], v[6 + order[k]] = qvel[6 + k];
}

namespace {
// Our dof index of each MuJoCo dof.
std::vector<int> dofMap(const sim::Model& model) {
  std::vector<int> map{0, 1, 2, 3, 4, 5};
  for (int j : mujocoJointOrder(model)) map.push_back(6 + j);
  return map;
}
}  // namespace

MatX massMatrix(const sim::Model& model, const mjModel* m, const mjData* d) {
  const MatX Hmj = massMatrix(m, d);
  const std::vector<int> map = dofMap(model);
  MatX H(Hmj.rows(), Hmj.cols());
  for (int a = 0; a < H.rows(); ++a)
    for (int b = 0; b < H.cols(); ++b) H(map[a], map[b]) = Hmj(a, b);
  return H;
}

VecX biasForces(const sim::Model& model, const mjModel* m, const mjData* d) {
  const VecX hmj = biasForces(m, d);
  const std::vector<int> map = dofMap(model);
  VecX h(hmj.size());
  for (int a = 0; a < h.size(); ++a) h[map[a]] = hmj[a];
  return h;
}

MatX massMatrix(const mjModel* m, const mjData* d) {
  MatX H(m->nv, m->nv);  // symmetric, so row/column-major does not matter
  fullMassMatrix(m, d, H.data());
  return H;
}

VecX biasForces(const mjModel* m, const mjData* d) {
  return Eigen::Map<const VecX>(d->qfrc_bias, m->nv);
}

double benchStepMicros(const sim::Model& model, const VecX& q, const VecX& v, double seconds,
                       int* contacts) {
  MujocoModel mm(toMjcf(model, benchOptions()));
  toMujocoState(model, q, v, mm.d->qpos, mm.d->qvel);
  for (int i = 0; i < model.nj(); ++i) mm.d->ctrl[i] = q[7 + i];
  mj_forward(mm.m, mm.d);
  if (contacts) *contacts = mm.d->ncon;
  return timeSteps(mm.m, mm.d, seconds);
}

double benchStepMicrosFile(const std::string& path, double seconds, int* contacts) {
  MujocoModel mm = MujocoModel::fromFile(path);
  if (mm.m->nkey > 0) mj_resetDataKeyframe(mm.m, mm.d, 0);
  mj_forward(mm.m, mm.d);
  if (contacts) *contacts = mm.d->ncon;
  return timeSteps(mm.m, mm.d, seconds);
}

}  // namespace diffloco::mj
