#include "envs/terms.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "envs/sim_function.h"
#include "runtime/action_history.h"
#include "runtime/height_scan.h"

namespace diffloco::envs {

using torch::Tensor;

// ---------------------------------------------------------------------------------------------
// Derived quantities.

Tensor actuatorTorque(const sim::ActuatorOptions& a, const Tensor& effort, const Tensor& qTarget,
                      const Tensor& q, const Tensor& qd) {
  const Tensor tau = a.kp * (qTarget - q) - a.kd * qd;
  if (a.saturation >= 1e9 || a.velocityLimit >= 1e9)  // no envelope (the default): a plain clip
    return torch::min(torch::max(tau, -effort), effort);
  // As sim/actuator.cpp: speed clipped where the envelope meets the opposite limit.
  const Tensor vmax = a.velocityLimit * (1.0 + effort / a.saturation);
  const Tensor w = torch::min(torch::max(qd, -vmax), vmax) / a.velocityLimit;
  const Tensor hi = torch::min(a.saturation * (1.0 - w), effort);
  const Tensor lo = torch::max(a.saturation * (-1.0 - w), -effort);
  return torch::min(torch::max(tau, lo), hi);
}

namespace {

using sim::Vec3;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Tensor contiguousDouble(const Tensor& t) {
  return t.scalar_type() == torch::kDouble && t.is_contiguous() ? t
                                                                : t.to(torch::kDouble).contiguous();
}

// Outputs in StateFeatures order: height, quat, linVelW, linVelB, angVelB, gravityB, alignment,
// heading, jointPos, jointVel. B a = R^T a = a - 2w (u x a) + 2 u x (u x a) for the quaternion
// (w, u) at q[3:7].
class StateFeaturesFunction : public torch::autograd::Function<StateFeaturesFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const Tensor& q, const Tensor& v,
                               const Tensor& defaultJointPos) {
    const int64_t n = q.size(0), nq = q.size(1), nv = v.size(1), nj = nq - 7;
    const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
    Tensor height = torch::empty({n}, f64), quat = torch::empty({n, 4}, f64),
           linW = torch::empty({n, 3}, f64), linB = torch::empty({n, 3}, f64),
           angB = torch::empty({n, 3}, f64), grav = torch::empty({n, 3}, f64),
           align = torch::empty({n}, f64), head = torch::empty({n}, f64),
           jpos = torch::empty({n, nj}, f64), jvel = torch::empty({n, nj}, f64);
    const double *qp = q.data_ptr<double>(), *vp = v.data_ptr<double>(),
                 *dp = defaultJointPos.data_ptr<double>();
    const Vec3 down(0, 0, -1);
    for (int64_t i = 0; i < n; ++i) {
      const double* qi = qp + i * nq;
      const double* vi = vp + i * nv;
      const double w = qi[3];
      const Vec3 u(qi[4], qi[5], qi[6]), vw(vi[0], vi[1], vi[2]);
      const Vec3 bv = vw - 2 * w * u.cross(vw) + 2 * u.cross(u.cross(vw));
      const Vec3 bg = down - 2 * w * u.cross(down) + 2 * u.cross(u.cross(down));
      height.data_ptr<double>()[i] = qi[2];
      for (int a = 0; a < 4; ++a) quat.data_ptr<double>()[4 * i + a] = qi[3 + a];
      for (int a = 0; a < 3; ++a) {
        linW.data_ptr<double>()[3 * i + a] = vi[a];
        linB.data_ptr<double>()[3 * i + a] = bv[a];
        angB.data_ptr<double>()[3 * i + a] = vi[3 + a];
        grav.data_ptr<double>()[3 * i + a] = bg[a];
      }
      align.data_ptr<double>()[i] = 1 - 2 * (u.x() * u.x() + u.y() * u.y());
      head.data_ptr<double>()[i] = 1 - 2 * (u.y() * u.y() + u.z() * u.z());
      for (int64_t j = 0; j < nj; ++j) {
        jpos.data_ptr<double>()[nj * i + j] = qi[7 + j] - dp[j];
        jvel.data_ptr<double>()[nj * i + j] = vi[6 + j];
      }
    }
    ctx->save_for_backward({q, v});
    return {height, quat, linW, linB, angB, grav, align, head, jpos, jvel};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &q = saved[0], &v = saved[1];
    const int64_t n = q.size(0), nq = q.size(1), nv = v.size(1), nj = nq - 7;
    Tensor gq = torch::zeros_like(q), gv = torch::zeros_like(v);
    // Unused outputs have undefined gradients: read them as zeros.
    std::vector<Tensor> g(grads.size());
    std::vector<const double*> gp(grads.size(), nullptr);
    for (size_t k = 0; k < grads.size(); ++k)
      if (grads[k].defined()) {
        g[k] = contiguousDouble(grads[k]);
        gp[k] = g[k].data_ptr<double>();
      }
    auto at = [&](size_t k, int64_t idx) { return gp[k] ? gp[k][idx] : 0.0; };
    const double *qp = q.data_ptr<double>(), *vp = v.data_ptr<double>();
    double *gqp = gq.data_ptr<double>(), *gvp = gv.data_ptr<double>();
    const Vec3 down(0, 0, -1);
    for (int64_t i = 0; i < n; ++i) {
      const double* qi = qp + i * nq;
      const double* vi = vp + i * nv;
      double* gqi = gqp + i * nq;
      double* gvi = gvp + i * nv;
      const double w = qi[3];
      const Vec3 u(qi[4], qi[5], qi[6]), vw(vi[0], vi[1], vi[2]);
      const Vec3 gbv(at(3, 3 * i), at(3, 3 * i + 1), at(3, 3 * i + 2));
      const Vec3 gbg(at(5, 3 * i), at(5, 3 * i + 1), at(5, 3 * i + 2));
      const double ga = at(6, i), gh = at(7, i);
      gqi[2] = at(0, i);
      // a' = R^T a: a_bar = R g, w_bar = -2 g.(u x a),
      // u_bar = -2w (a x g) + 2 (u x a) x g + 2 a x (g x u).
      const Vec3 gvw = gbv + 2 * w * u.cross(gbv) + 2 * u.cross(u.cross(gbv));
      const double gw = -2 * gbv.dot(u.cross(vw)) - 2 * gbg.dot(u.cross(down));
      Vec3 gu = -2 * w * vw.cross(gbv) + 2 * u.cross(vw).cross(gbv) + 2 * vw.cross(gbv.cross(u)) -
                2 * w * down.cross(gbg) + 2 * u.cross(down).cross(gbg) +
                2 * down.cross(gbg.cross(u));
      gu += Vec3(-4 * u.x() * ga, -4 * u.y() * (ga + gh), -4 * u.z() * gh);
      gqi[3] = gw + at(1, 4 * i);
      for (int a = 0; a < 3; ++a) {
        gqi[4 + a] = gu[a] + at(1, 4 * i + 1 + a);
        gvi[a] = gvw[a] + at(2, 3 * i + a);
        gvi[3 + a] = at(4, 3 * i + a);
      }
      for (int64_t j = 0; j < nj; ++j) {
        gqi[7 + j] = at(8, nj * i + j);
        gvi[6 + j] = at(9, nj * i + j);
      }
    }
    return {gq, gv, Tensor()};
  }
};

}  // namespace

StateFeatures stateFeatures(const Tensor& q, const Tensor& v, const Tensor& defaultJointPos) {
  const auto out = StateFeaturesFunction::apply(contiguousDouble(q), contiguousDouble(v),
                                                contiguousDouble(defaultJointPos));
  return {out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8], out[9]};
}

const StateFeatures& TermContext::state() {
  if (!haveState_) {
    state_ = stateFeatures(q, v, k_.defaultJointPos);
    haveState_ = true;
  }
  return state_;
}

const Tensor& TermContext::baseHeight() {
  if (!baseHeight_.defined())
    baseHeight_ = k_.terrain ? state().height - groundHeight(k_.terrain, q.select(1, 0),
                                                             q.select(1, 1), k_.terrainSlopes)
                             : state().height;
  return baseHeight_;
}

namespace {

// [n, S]: the lowest point of each sphere (centres [n, S, 3], radii [S]) above the ground under
// its centre.
Tensor heightAboveGround(const TaskConstants& k, const Tensor& centres, const Tensor& radius) {
  const Tensor h = centres.select(2, 2) - radius;
  if (!k.terrain || centres.size(1) == 0) return h;
  return h - groundHeight(k.terrain, centres.select(2, 0), centres.select(2, 1), k.terrainSlopes,
                          k.link);
}

}  // namespace

const Tensor& TermContext::footCentres() {
  if (!footCentres_.defined()) footCentres_ = footPositions(*k_.link, q);
  return footCentres_;
}

const Tensor& TermContext::footHeight() {
  if (!footHeight_.defined()) footHeight_ = heightAboveGround(k_, footCentres(), k_.footRadius);
  return footHeight_;
}

const Tensor& TermContext::legSphereHeight() {
  if (!legSphereHeight_.defined())
    legSphereHeight_ = heightAboveGround(k_, legSpherePositions(*k_.link, q), k_.legSphereRadius);
  return legSphereHeight_;
}

int observationSize(const TermDef& def, const TermParams& params, int nj, int nfeet) {
  switch (def.dim) {
    case TermDef::kPerJoint: return nj;
    case TermDef::kPerFoot: return nfeet;
    case TermDef::kFromParams:
      return def.sizeOf(params, nj);
    default: return def.dim;
  }
}

const Tensor& TermContext::torque() {
  if (!torque_.defined())
    torque_ =
        actuatorTorque(k_.actuator, k_.effort, qTargetSub, qSub.narrow(1, 7, qSub.size(1) - 7),
                       vSub.narrow(1, 6, vSub.size(1) - 6));
  return torque_;
}

const Tensor& TermContext::jointAcc() {
  if (!jointAcc_.defined())
    jointAcc_ = (state().jointVel - vStart.narrow(1, 6, vStart.size(1) - 6)) / k_.envDt;
  return jointAcc_;
}

const std::vector<double>& TermParams::list(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("term parameter '" + key + "' not declared");
  return it->second;
}

// ---------------------------------------------------------------------------------------------
// The registries. Parameters the env handles itself (obs scale and noise, reward weight) are not
// listed here.

namespace {

Tensor sq(const Tensor& t) {
  return t * t;
}

// The ground's relief around the base [n]: max - min of the ground height on a world-aligned 5 x 5
// grid of 0.3 m spacing centred under the base (1.2 m square: a stair run of 0.3 m or a rough
// cell shows in it whatever the heading); 0 on the plane. A reward parameter, not differentiated.
Tensor groundRelief(TermContext& c) {
  const auto& k = c.constants();
  if (!k.terrain) return torch::zeros({c.q.size(0)}, torch::kDouble);
  const Tensor offsets = torch::linspace(-0.6, 0.6, 5, torch::kDouble);
  const Tensor ox = offsets.repeat_interleave(5), oy = offsets.repeat({5});
  const Tensor q = c.q.detach();
  const Tensor h = groundHeight(k.terrain, q.select(1, 0).unsqueeze(1) + ox,
                                q.select(1, 1).unsqueeze(1) + oy, nullptr, k.link);
  return std::get<0>(h.max(1)) - std::get<0>(h.min(1));
}

// [n, 1] each: the heading (cos yaw, sin yaw) from R's first column, R_00 = 1 - 2(y^2 + z^2),
// R_10 = 2(xy + wz).
std::pair<Tensor, Tensor> headingCosSin(const StateFeatures& s) {
  const Tensor w = s.quat.select(1, 0), x = s.quat.select(1, 1), y = s.quat.select(1, 2),
               z = s.quat.select(1, 3);
  const Tensor r00 = 1 - 2 * (y * y + z * z), r10 = 2 * (x * y + w * z);
  const Tensor norm = torch::sqrt(r00 * r00 + r10 * r10).clamp_min(1e-9);
  return {(r00 / norm).unsqueeze(1), (r10 / norm).unsqueeze(1)};
}

// The reference's peak per env [n, 1]: `height`, or with `rough_height` > 0 a linear blend from
// `height` on flat ground to `rough_height` where the relief around the base reaches `relief`.
Tensor footPeak(TermContext& c, const TermParams& p) {
  const Tensor flat = torch::full({c.q.size(0), 1}, p("height"), torch::kDouble);
  if (p("rough_height") <= 0) return flat;
  const Tensor s = (groundRelief(c) / p("relief")).clamp(0, 1).unsqueeze(1);
  return flat + s * (p("rough_height") - p("height"));
}

// Gait reference of eq. 19: z*_j = peak * max(sin(2 pi (f t + phi_j)), 0).
Tensor footReference(TermContext& c, const TermParams& p, const Tensor& peak) {
  const auto& offsets = p.list("phase_offsets");
  const Tensor phi = torch::tensor(offsets, torch::kDouble);
  const Tensor arg = (2 * M_PI) * (p("frequency") * c.time.unsqueeze(1) + phi);
  return peak * torch::relu(torch::sin(arg));
}

// [n, F]: how far the ground within `horizon` seconds of the commanded velocity rises above the
// ground under each foot (0 where it does not and on the plane), from the highest of
// kAheadSamples points along the command's world-frame path from the foot. A target, like the gait
// clock: no gradient flows through it. On stairs it lifts a swinging foot over the next riser
// before the foot reaches it; a reference measured only under the foot asks a foot in front of a
// riser for the flat ground's clearance.
Tensor groundRiseAhead(TermContext& c, double horizon) {
  constexpr int kAheadSamples = 10;
  const Tensor feet = c.footCentres();
  const auto& k = c.constants();
  if (!k.terrain) return torch::zeros({feet.size(0), feet.size(1)}, torch::kDouble);
  const StateFeatures& state = c.state();  // cached with its graph before the guard below
  torch::NoGradGuard noGrad;
  const auto [cy, sy] = headingCosSin(state);
  const Tensor ux = c.command.select(1, 0).unsqueeze(1), uy = c.command.select(1, 1).unsqueeze(1);
  const Tensor vx = cy * ux - sy * uy, vy = sy * ux + cy * uy;  // [n, 1]: W v*
  const Tensor fx = feet.select(2, 0).detach(), fy = feet.select(2, 1).detach();
  const Tensor under = groundHeight(k.terrain, fx, fy, nullptr, k.link);
  Tensor highest = under;
  for (int s = 1; s <= kAheadSamples; ++s) {
    const double t = horizon * s / kAheadSamples;
    highest = torch::max(highest, groundHeight(k.terrain, fx + t * vx, fy + t * vy, nullptr, k.link));
  }
  return highest - under;
}

// action_history's depth, as the robot side checks it.
int actionHistorySteps(const TermParams& p) {
  return deploy::actionHistorySteps(p("steps"));
}

// The height scan's grid (height_scan's parameters), as the robot side computes it.
deploy::HeightScanGrid heightScanGrid(const TermParams& p) {
  return deploy::HeightScanGrid(p.list("x_range"), p.list("y_range"), p("spacing"));
}

Tensor heightScan(TermContext& c, const TermParams& p) {
  const StateFeatures& s = c.state();
  const auto [cy, sy] = headingCosSin(s);
  std::vector<double> px, py;
  for (const auto& l : heightScanGrid(p).local()) {
    px.push_back(l[0]);
    py.push_back(l[1]);
  }
  const Tensor lx = torch::tensor(px, torch::kDouble), ly = torch::tensor(py, torch::kDouble);
  const Tensor wx = c.q.select(1, 0).unsqueeze(1) + cy * lx - sy * ly;
  const Tensor wy = c.q.select(1, 1).unsqueeze(1) + sy * lx + cy * ly;
  const Tensor h =
      groundHeight(c.constants().terrain, wx, wy, c.constants().terrainSlopes, c.constants().link);
  return (s.height.unsqueeze(1) - p("offset") - h).clamp(-p("clip"), p("clip"));
}

// The privileged observations: what the simulator draws per env and a robot cannot measure, for
// the critic of an asymmetric actor-critic (critic_observations). Their definitions say what the
// value is; no exported policy reads them.
void addPrivilegedObservations(std::vector<TermDef>& t) {
  const auto param = [&](const char* name, const char* formula, Tensor TermContext::*field,
                         TermDefinition definition) {
    t.push_back({name, formula, {}, 1,
                 [field](TermContext& c, const TermParams&) { return (c.*field).unsqueeze(1); },
                 TermDef::kWorldParams});
    t.back().privileged = true;
    t.back().definition = std::move(definition);
  };
  param("friction", "mu (the env's ground friction coefficient)", &TermContext::friction,
        {"mu: the Coulomb friction coefficient of the env's feet and leg spheres on the ground",
         "none (a scalar)", "1",
         "randomization.friction's draw of the episode; sim.friction without it"});
  param("motor_strength", "s (the drive gains' scale)", &TermContext::motorStrength,
        {"s: the PD gains of every joint's drive are kp s and kd s", "none (a scalar)", "1",
         "randomization.motor_strength's draw of the episode; 1 without it"});
  param("added_base_mass", "m_add (mass added to the base)", &TermContext::addedMass,
        {"m_add: the mass added to the base link (its inertia scaled with it)", "none (a scalar)",
         "kg", "randomization.added_base_mass's draw of the episode; 0 without it"});
  param("action_delay", "k (control steps of action latency)", &TermContext::actionDelay,
        {"k: the joint targets applied are those of the action k decisions back",
         "none (a scalar)", "control steps",
         "randomization.action_delay_steps's draw of the episode; 0 without it"});
}

// Each observation term is followed by its definition (TermDefinition): the contract a deployment
// computes the term from. R is the base orientation (base axes -> world axes), q = (w, x, y, z).
std::vector<TermDef> makeObservations() {
  std::vector<TermDef> t;
  t.push_back({"base_height", "z - h(x, y) (base origin above the ground under it)", {}, 1,
               [](TermContext& c, const TermParams&) { return c.baseHeight().unsqueeze(1); }});
  t.back().definition = {
      "z - h(x, y): the base link's origin (the URDF base link frame, not the centre of mass) "
      "above the ground directly under it",
      "world (the task's ground: the plane z = 0, or the terrain's height field h)", "m",
      "h is the terrain surface under the base origin's (x, y) (0 on flat ground); on a robot: "
      "the estimated height of the base origin above the ground under it"};
  t.push_back({"height_scan",
               "clip(z - offset - h(p_k), -clip, clip) on a grid p_k around the base, yaw-aligned",
               {{"x_range", {-0.8, 0.8}, "grid extent along the heading [m]"},
                {"y_range", {-0.5, 0.5}, "grid extent to the left [m]"},
                {"spacing", {0.1}, "grid spacing [m]"},
                {"offset", {0.5}, "subtracted from the base height [m]"},
                {"clip", {1.0}, "values clipped to +-clip [m]"}},
               TermDef::kFromParams,
               [](TermContext& c, const TermParams& p) { return heightScan(c, p); }});
  t.back().sizeOf = [](const TermParams& p, int) {
    const deploy::HeightScanGrid g = heightScanGrid(p);
    return g.nx * g.ny;
  };
  t.back().definition = {
      "clip(z - offset - h(p_k), -clip, clip) for k = i * ny + j (y fastest), p_k = (x, y) + "
      "Rz(yaw) (x_i, y_j), x_i = x_range[0] + i spacing (nx points up to x_range[1]), y_j = "
      "y_range[0] + j spacing (ny points); yaw = atan2(R_10, R_00) of the base orientation R, "
      "(x, y, z) the base link origin, h the ground height at a point",
      "points in the base's yaw frame (heading along +x, left +y, level); values along world z",
      "m",
      "h: the task's terrain (the plane z = 0: h = 0), sampled at the point itself (its "
      "interpolant, terrain.interpolant in docs/terrain.md; a robot measures the ground there, "
      "e.g. from an elevation map); positive values: the ground is below z - offset"};
  t.push_back({"base_quat",
               "base orientation quaternion (w, x, y, z)",
               {},
               4,
               [](TermContext& c, const TermParams&) { return c.state().quat; }});
  t.back().definition = {
      "q = (w, x, y, z), the unit quaternion of R: x_world = R x_base", "base -> world", "1",
      "scalar first; q and -q are the same rotation, and the policy saw the sign resets draw "
      "(w = cos(angle / 2) > 0) carried on continuously by the integration: use w >= 0 unless the "
      "base has turned by more than pi since the reset; yaw is relative to the world x axis"};
  t.push_back({"base_lin_vel",
               "B v (base linear velocity, base axes)",
               {},
               3,
               [](TermContext& c, const TermParams&) { return c.state().linVelB; }});
  t.back().definition = {"R^T v, v = world-frame velocity of the base link's origin",
                         "base axes (x forward, y left, z up)", "m/s",
                         "MuJoCo's free-joint qvel[0:3] is v in world axes: rotate it by R^T"};
  t.push_back({"base_ang_vel",
               "B w (base angular velocity, base axes)",
               {},
               3,
               [](TermContext& c, const TermParams&) { return c.state().angVelB; }});
  t.back().definition = {
      "omega_B = R^T omega_W, the base's angular velocity (what a base-mounted "
      "gyroscope measures)",
      "base axes", "rad/s",
      "right-handed: positive z is counter-clockwise seen from above; MuJoCo's "
      "free-joint qvel[3:6] is already in base axes"};
  t.push_back({"projected_gravity",
               "B g (unit gravity direction, base axes)",
               {},
               3,
               [](TermContext& c, const TermParams&) { return c.state().gravityB; }});
  t.back().definition = {"R^T (0, 0, -1): the unit direction of gravity", "base axes", "1",
                         "(0, 0, -1) when the base is level; independent of the magnitude of g"};
  t.push_back({"command", "(B v_x*, B v_y*, B w_z*)", {}, 3, [](TermContext& c, const TermParams&) {
                 return c.command;
               }});
  t.back().definition = {
      "(v_x*, v_y*, w_z*): the commanded base velocity, compared with base_lin_vel x, y and "
      "base_ang_vel z",
      "base axes", "m/s, m/s, rad/s",
      "drawn uniformly from commands.lin_vel_x, lin_vel_y, ang_vel_z; zeros when commands are "
      "disabled"};
  t.push_back({"joint_pos",
               "q_j - q_default",
               {},
               TermDef::kPerJoint,
               [](TermContext& c, const TermParams&) { return c.state().jointPos; }});
  t.back().definition = {"q_j - joints.default_pos_j for each joint", "joint space (URDF axes)",
                         "rad", "joints in joints.names order; sign of the URDF joint axis"};
  t.push_back({"joint_vel", "qd_j", {}, TermDef::kPerJoint, [](TermContext& c, const TermParams&) {
                 return c.state().jointVel;
               }});
  t.back().definition = {"dq_j/dt for each joint", "joint space (URDF axes)", "rad/s",
                         "joints in joints.names order; sign of the URDF joint axis"};
  t.push_back({"base_alignment", "e_z^W . e_z^B", {}, 1, [](TermContext& c, const TermParams&) {
                 return c.state().alignment.unsqueeze(1);
               }});
  t.back().definition = {"e_z^W . (R e_z) = R_zz = 1 - 2 (x^2 + y^2)", "world", "1",
                         "1 when level, cos(tilt) in general, -1 upside down"};
  t.push_back({"heading_alignment", "e_x^W . e_x^B", {}, 1, [](TermContext& c, const TermParams&) {
                 return c.state().heading.unsqueeze(1);
               }});
  t.back().definition = {"e_x^W . (R e_x) = R_xx = 1 - 2 (y^2 + z^2)", "world", "1",
                         "1 when the base's x axis points along world +x: the policy's heading "
                         "reference is the world x axis (the walk task walks along world +x), so "
                         "a deployment defines its world frame with +x the desired direction"};
  t.push_back({"last_action",
               "a (the action just applied: a_prev of the next decision)",
               {},
               TermDef::kPerJoint,
               [](TermContext& c, const TermParams&) { return c.action; }});
  t.back().definition = {
      "clip(a, -action.clip, action.clip) of the previous decision (the value joint_targets "
      "used)",
      "action space (policy joint order)", "1 (action units: rad / action.scale)",
      "zeros at the first decision of an episode"};
  t.push_back(
      {"action_history",
       "the last `steps` actions applied, newest first (steps 1: last_action)",
       {{"steps", {3.0}, "number of past decisions (1 = last_action)"}},
       TermDef::kFromParams,
       [](TermContext& c, const TermParams& p) {
         return c.actions.narrow(1, 0, actionHistorySteps(p)).reshape({c.actions.size(0), -1});
       }});
  t.back().sizeOf = [](const TermParams& p, int nj) { return actionHistorySteps(p) * nj; };
  t.back().definition = {
      "(a_1, ..., a_steps), a_k = clip(a, -action.clip, action.clip) of the k-th decision back "
      "(a_1: the previous decision, last_action's value), params.steps an integer in [1, 16]",
      "action space (policy joint order)", "1 (action units: rad / action.scale)",
      "newest first, joints fastest (value k * nj + i is joint i of a_(k+1)); the decisions "
      "before an episode's first are zeros; the actions the policy chose, before any latency"};
  t.push_back({"gait_phase",
               "sin(2 pi f t)",
               {{"frequency", {2.0}, "gait frequency [Hz] (eq. 19: sin(4 pi t))"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return torch::sin((2 * M_PI * p("frequency")) * c.time).unsqueeze(1);
               },
               TermDef::kTime});
  t.back().definition = {
      "sin(2 pi f t), f = params.frequency, t = decisions taken so far x "
      "timing.control_dt",
      "time", "1", "t = 0 at the first observation of an episode, control_dt at the second"};
  addPrivilegedObservations(t);
  return t;
}

std::vector<TermDef> makeRewards() {
  std::vector<TermDef> t;
  // Table 4 (walk).
  t.push_back({"forward_velocity",
               "exp(-|W v_x - target|)",
               {{"target", {1.0}, "forward speed [m/s]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return torch::exp(-(c.state().linVelW.select(1, 0) - p("target")).abs());
               }});
  t.push_back({"base_height_abs",
               "exp(-|(z - h) - target|), z - h: base height above the ground",
               {{"target", {0.45}, "height [m]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return torch::exp(-(c.baseHeight() - p("target")).abs());
               }});
  t.push_back({"base_alignment", "e_z^W . e_z^B", {}, 1, [](TermContext& c, const TermParams&) {
                 return c.state().alignment;
               }});
  t.push_back({"action_exp", "sum_i exp(-|a_i|)", {}, 1, [](TermContext& c, const TermParams&) {
                 return torch::exp(-c.action.abs()).sum(1);
               }});
  t.push_back({"joint_velocity_l2", "-|qd|^2", {}, 1, [](TermContext& c, const TermParams&) {
                 return -sq(c.state().jointVel).sum(1);
               }});
  // Table 7 (velocity tracking).
  t.push_back({"lin_vel_tracking",
               "exp(-|B v_xy - B v_xy*|^2 / sigma)",
               {{"sigma", {0.25}, "kernel width [m^2/s^2]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 const Tensor e = c.state().linVelB.narrow(1, 0, 2) - c.command.narrow(1, 0, 2);
                 return torch::exp(-sq(e).sum(1) / p("sigma"));
               }});
  // The kernel above gives almost no gradient once the error is large (at |e| = 1.4 m/s, after a
  // command change, 0.3 % of its peak slope): a quadratic term pulls towards the command at every
  // error, so that the acceleration after a change is trained too.
  t.push_back({"lin_vel_tracking_l2",
               "-|B v_xy - B v_xy*|^2",
               {},
               1,
               [](TermContext& c, const TermParams&) {
                 const Tensor e = c.state().linVelB.narrow(1, 0, 2) - c.command.narrow(1, 0, 2);
                 return -sq(e).sum(1);
               }});
  t.push_back({"ang_vel_tracking",
               "exp(-(B w_z - B w_z*)^2 / sigma)",
               {{"sigma", {0.25}, "kernel width [rad^2/s^2]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 const Tensor e = c.state().angVelB.select(1, 2) - c.command.select(1, 2);
                 return torch::exp(-sq(e) / p("sigma"));
               }});
  t.push_back(
      {"foot_height_tracking",
       "sum_j z*_j / peak * exp(-(z_j - z*_j (1 + r_j / peak))^2 / sigma), "
       "z*_j = peak * max(sin(2 pi (f t + phi_j)), 0), r_j: the ground's rise ahead of foot j",
       {{"height", {0.1}, "peak of the reference [m] (on flat ground when rough_height is set)"},
        {"rough_height",
         {0.0},
         "peak where the ground's relief around the base (max - min height on a 1.2 m square) "
         "reaches `relief`, blended linearly from `height` on flat ground [m]; 0: `height` on "
         "every ground"},
        {"relief", {0.05}, "relief at which the peak reaches rough_height [m]"},
        {"sigma", {0.05}, "kernel width [m^2]"},
        {"lookahead_s",
         {0.0},
         "r_j: how far the ground rises above the foot's within this many seconds of the commanded "
         "velocity from the foot [s]; the swing's peak is then `peak` above the highest ground "
         "ahead; 0: r_j = 0, the reference above the ground under the foot"},
        {"frequency", {2.0}, "gait frequency f [Hz] (eq. 19: sin(4 pi t))"},
        {"phase_offsets",
         {0.0, 0.5, 0.5, 0.0},
         "phi_j per foot [cycles] in the robot's foot order; default: trot (LF+RH, RF+LH)"}},
       1,
       [](TermContext& c, const TermParams& p) {
         const Tensor peak = footPeak(c, p);
         const Tensor ref = footReference(c, p, peak);
         const Tensor target =
             p("lookahead_s") > 0 ? ref * (1 + groundRiseAhead(c, p("lookahead_s")) / peak) : ref;
         const Tensor e = c.footHeight() - target;
         return (ref / peak * torch::exp(-sq(e) / p("sigma"))).sum(1);
       },
       TermDef::kTime});
  t.back().check = [](const TermParams& p) {
    if (!(p("rough_height") >= 0 && p("relief") > 0))
      throw std::invalid_argument("rough_height must be >= 0 and relief > 0");
    if (!(p("lookahead_s") >= 0 && p("lookahead_s") <= 2))
      throw std::invalid_argument("lookahead_s must be in [0, 2] s");
  };
  t.push_back({"lin_vel_z_l2", "-(B v_z)^2", {}, 1, [](TermContext& c, const TermParams&) {
                 return -sq(c.state().linVelB.select(1, 2));
               }});
  t.push_back({"ang_vel_xy_l2", "-|B w_xy|^2", {}, 1, [](TermContext& c, const TermParams&) {
                 return -sq(c.state().angVelB.narrow(1, 0, 2)).sum(1);
               }});
  t.push_back({"base_height_gauss",
               "exp(-((z - h) - target)^2 / sigma), z - h: base height above the ground",
               {{"target", {0.45}, "height [m]"}, {"sigma", {0.1}, "kernel width [m^2]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return torch::exp(-sq(c.baseHeight() - p("target")) / p("sigma"));
               }});
  t.push_back({"base_orientation", "-|B g_xy|^2", {}, 1, [](TermContext& c, const TermParams&) {
                 return -sq(c.state().gravityB.narrow(1, 0, 2)).sum(1);
               }});
  // The tilt termination ends an episode in a step that has no gradient: to a first-order method
  // a fall is a cliff that the window cannot see coming. This cost rises from 0 at `start` to 1
  // at the termination's `angle` (quadratic in the cosine), so that the gradient rights a tipping
  // base while it can still be righted; upright walking, stairs' pitch included, costs nothing.
  t.push_back({"base_tilt_barrier",
               "-(max(cos(start) - e_z^W . e_z^B, 0) / (cos(start) - cos(angle)))^2",
               {{"start", {0.5}, "tilt where the cost starts [rad]"},
                {"angle", {1.0}, "tilt where it reaches 1: the tilt termination's [rad]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 const double from = std::cos(p("start"));
                 return -sq((from - c.state().alignment).clamp_min(0) /
                            (from - std::cos(p("angle"))));
               }});
  t.back().check = [](const TermParams& p) {
    if (!(p("start") >= 0 && p("angle") > p("start") && p("angle") <= M_PI))
      throw std::invalid_argument("0 <= start < angle <= pi required");
  };
  t.push_back({"action_l1", "-sum_i |a_i|", {}, 1, [](TermContext& c, const TermParams&) {
                 return -c.action.abs().sum(1);
               }});
  t.push_back({"action_rate", "-|a - a_prev|^2", {}, 1, [](TermContext& c, const TermParams&) {
                 return -sq(c.action - c.lastAction).sum(1);
               }});
  t.push_back({"joint_acceleration_l2",
               "-|qdd|^2 (qdd = change of qd over the env step / dt)",
               {},
               1,
               [](TermContext& c, const TermParams&) { return -sq(c.jointAcc()).sum(1); },
               TermDef::kStepStart});
  // The simulator does not enforce joint limits (nor does a robot's controller, beyond a safety
  // stop): a policy that leans on a joint past its URDF range learns a motion the robot cannot
  // make.
  t.push_back(
      {"joint_pos_limits",
       "-sum_i (max(q_i - (upper_i - margin), 0) + max((lower_i + margin) - q_i, 0)), "
       "limits: the URDF's",
       {{"margin", {0.0}, "distance inside each limit where the penalty starts [rad]"}},
       1,
       [](TermContext& c, const TermParams& p) {
         const TaskConstants& k = c.constants();
         const Tensor q = c.state().jointPos + k.defaultJointPos;
         const double m = p("margin");
         return -(torch::relu(q - (k.jointUpper - m)) + torch::relu((k.jointLower + m) - q)).sum(1);
       }});
  // Isaac Lab's undesired_contacts (legged_gym's `collision` on the shanks and thighs), smooth so
  // that the gradient lifts a knee that touches or nears the ground: a touching sphere costs 1/2,
  // one pressed two widths in 0.88, one two widths above 0.12.
  t.push_back({"leg_contact",
               "-sum_k sigmoid(-h_k / width), h_k: lowest point of leg sphere k (knees, shanks) "
               "above the ground under its centre",
               {{"width", {0.01}, "height scale of the sigmoid [m]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return -torch::sigmoid(-c.legSphereHeight() / p("width")).sum(1);
               }});
  // legged_gym's feet_stumble (a foot pushed sideways by a vertical surface), smooth and read from
  // the ground's shape rather than from contact forces: a foot touching or nearing ground steeper
  // than `slope` (a stair's or an obstacle's edge, a riser) costs up to 1, so that the gradient
  // lifts it over the edge or moves it off it. The steepness is the ground's own interpolant's at
  // the foot's centre, not differentiated; the height is the foot_height_tracking's.
  t.push_back(
      {"foot_stumble",
       "-sum_j sigmoid(-h_j / width) * clamp((|grad h(x_j, y_j)| - slope) / (full_slope - slope), "
       "0, 1), h_j: lowest point of foot j above the ground under its centre",
       {{"width", {0.01}, "height scale of the sigmoid [m]"},
        {"slope", {1.0}, "ground slope |grad h| below which a foot costs nothing"},
        {"full_slope", {2.0}, "ground slope from which a foot costs the full sigmoid"}},
       1,
       [](TermContext& c, const TermParams& p) {
         const Tensor centres = c.footCentres();
         const Tensor g =
             groundSlope(c.constants().terrain, centres.select(2, 0), centres.select(2, 1));
         const Tensor steep =
             ((g.norm(2, -1) - p("slope")) / (p("full_slope") - p("slope"))).clamp(0, 1);
         return -(torch::sigmoid(-c.footHeight() / p("width")) * steep).sum(1);
       }});
  t.back().check = [](const TermParams& p) {
    if (!(p("width") > 0 && p("slope") >= 0 && p("full_slope") > p("slope") &&
          std::isfinite(p("full_slope"))))
      throw std::invalid_argument("width must be > 0 and 0 <= slope < full_slope");
  };
  t.push_back({"joint_torque_l2",
               "-|tau|^2 (actuator torque of the last sim sub-step)",
               {},
               1,
               [](TermContext& c, const TermParams&) { return -sq(c.torque()).sum(1); },
               TermDef::kSubstep});
  return t;
}

std::vector<TermDef> makeTerminations() {
  std::vector<TermDef> t;
  t.push_back({"base_height_below",
               "z - h(x, y) < height (base origin above the ground under it)",
               {{"height", {0.25}, "[m]"}},
               1,
               [](TermContext& c, const TermParams& p) { return c.baseHeight() < p("height"); }});
  t.push_back({"base_tilt_above",
               "angle(e_z^W, e_z^B) > angle",
               {{"angle", {1.0}, "[rad]"}},
               1,
               [](TermContext& c, const TermParams& p) {
                 return c.state().alignment < std::cos(p("angle"));
               }});
  return t;
}

}  // namespace

const std::vector<TermDef>& termRegistry(TermKind kind) {
  static const std::vector<TermDef> obs = makeObservations(), rew = makeRewards(),
                                    term = makeTerminations();
  switch (kind) {
    case TermKind::Observation:
      return obs;
    case TermKind::Reward:
      return rew;
    case TermKind::Termination:
      return term;
  }
  return obs;
}

const TermDef* findTerm(TermKind kind, const std::string& name) {
  for (const auto& t : termRegistry(kind))
    if (t.name == name) return &t;
  return nullptr;
}

const char* toString(TermKind kind) {
  switch (kind) {
    case TermKind::Observation:
      return "observation";
    case TermKind::Reward:
      return "reward";
    case TermKind::Termination:
      return "termination";
  }
  return "?";
}

}  // namespace diffloco::envs
