#include "sim/contact.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/cholesky.h"
#include "sim/kinematics.h"

namespace diffloco::sim {

namespace {

// The depth from which a sphere enters the contact problem: hard, straight_through and soft's
// fixed sub-steps at contact (the penalty is zero apart); smoothed from -cutoff, a leg sphere only
// once its sigmoid weight sigmoid(kappa d) reaches 1e-6 (farther out it would only add rows of
// weight zero); soft's adaptive integration never leaves it (it reads every sphere's rows, in
// order, for the normal velocities of its contact events).
double entryDepth(const ContactOptions& opt, bool leg) {
  switch (opt.model) {
    case ContactModel::Hard:
    case ContactModel::StraightThrough:
      return 0.0;
    case ContactModel::Smoothed:
      return leg ? -std::min(opt.cutoff, std::log(1e6) / opt.kappa) : -opt.cutoff;
    case ContactModel::Soft:
      if (opt.integrator == Integrator::Fixed) return 0.0;
      break;
  }
  return -std::numeric_limits<double>::infinity();
}

}  // namespace

void footGeometry(const Model& model, const ContactOptions& opt, Data& data) {
  const HeightField* hf = opt.terrain.get();
  const double legEntry = entryDepth(opt, true);
  const bool closest = opt.terrainContact == TerrainContact::Closest;
  for (int j = 0; j < model.nspheres(); ++j) {
    const Foot& ft = model.sphere(j);
    data.footCentre[j] = worldPoint(data, ft.body, ft.offset);
    if (!hf) {
      data.depth[j] = ft.radius - data.footCentre[j].z();
      continue;
    }
    if (j >= model.nfeet()) {
      // Most leg spheres are far above the ground: a bound from the surrounding samples settles
      // that without interpolating the surface or building a frame.
      const double bound = sphereDepthUpperBound(*hf, data.footCentre[j], ft.radius, closest);
      if (bound < legEntry) {
        data.depth[j] = bound;
        continue;
      }
    }
    data.footContact[j] = sphereContact(hf, data.footCentre[j], ft.radius, closest);
    data.depth[j] = data.footContact[j].depth;
  }
}

void selectContacts(const Model& model, const ContactOptions& opt, Data& data) {
  data.active.clear();
  const double footEntry = entryDepth(opt, false), legEntry = entryDepth(opt, true);
  const bool keepAll = opt.model == ContactModel::Soft && opt.integrator == Integrator::Adaptive;
  for (int j = 0; j < model.nspheres(); ++j)
    if (keepAll || data.depth[j] >= (j < model.nfeet() ? footEntry : legEntry))
      data.active.push_back(j);
}

void contactJacobians(const Model& model, const ContactOptions& opt, Data& data) {
  auto& Jw = data.Jpoint;
  const bool plane = !opt.terrain;
  for (int a = 0; a < static_cast<int>(data.active.size()); ++a) {
    const int j = data.active[a];
    const Foot& ft = model.sphere(j);
    if (plane) {  // the frame (z, x, y): rows picked, no product
      pointJacobian(model, data, ft.body, data.footCentre[j] - ft.radius * Vec3::UnitZ(), Jw);
      data.Jc.row(3 * a + 0) = Jw.row(2);
      data.Jc.row(3 * a + 1) = Jw.row(0);
      data.Jc.row(3 * a + 2) = Jw.row(1);
    } else {
      const SphereContact& c = data.footContact[j];
      pointJacobian(model, data, ft.body, c.point, Jw);
      // Coefficient-wise: 3 x 3 by 3 x nv is too small for Eigen's GEMM.
      data.Jc.middleRows<3>(3 * a).noalias() = c.frame.transpose().lazyProduct(Jw);
    }
  }
}

void delassus(const Model& model, Data& data) {
  // Each foot's Jacobian rows live on the dofs of its path to the root, and L^-T keeps them there,
  // so Y = L^-T Jc^T is computed on those paths only (compressed in data.Yc, path order), and G's
  // blocks between two feet only sum over the dofs their paths share (the base, for legs).
  const int nc = static_cast<int>(data.active.size());
  const auto LD_diag = data.LD.diagonal();
  for (int a = 0; a < nc; ++a) {
    const std::vector<int>& P = model.footDofs[data.active[a]];
    const int n = static_cast<int>(P.size());
    auto Y = data.Yc.middleRows<3>(3 * a);
    for (int t = 0; t < n; ++t) Y.col(t) = data.Jc.block<3, 1>(3 * a, P[t]);
    for (int t = n - 1; t > 0; --t)
      for (int s2 = t - 1; s2 >= 0; --s2) Y.col(s2) -= data.LD(P[t], P[s2]) * Y.col(t);
    // Scatter into the full Y (nv x 3 nc) used by the velocity update and the backward pass.
    data.Y.middleCols<3>(3 * a).setZero();
    for (int t = 0; t < n; ++t) data.Y.block<1, 3>(P[t], 3 * a) = Y.col(t).transpose();
  }
  for (int a = 0; a < nc; ++a) {
    const std::vector<int>& Pa = model.footDofs[data.active[a]];
    for (int b = a; b < nc; ++b) {
      const int n = model.footCommonDofs[data.active[a]][data.active[b]];
      Mat3 Gab = Mat3::Zero();
      for (int t = 0; t < n; ++t)
        Gab.noalias() += data.Yc.block<3, 1>(3 * a, t) *
                         data.Yc.block<3, 1>(3 * b, t).transpose() / LD_diag[Pa[t]];
      data.G.block<3, 3>(3 * a, 3 * b) = Gab;
      if (b != a) data.G.block<3, 3>(3 * b, 3 * a) = Gab.transpose();
    }
  }
}

Vec3 proxFrictionCone(const Vec3& p, double mu) {
  if (p[0] <= 0) return Vec3::Zero();
  const double tn = norm2(p[1], p[2]);
  const double lim = mu * p[0];
  if (tn <= lim) return p;
  const double s = lim / tn;
  return Vec3(p[0], s * p[1], s * p[2]);
}

// The r-factor. The paper gives three scalar variants (eq. 13: 1 / (1 + sum_k |G_jk|); Algorithm 1:
// det over k != j; Algorithm 2: det over all k). A determinant of a 3x3 block has units kg^-3 and
// "1 +" adds a pure number to kg^-1, so none of them is scale-invariant. On ANYmal standing on four
// feet we measured scalar choices r = 1 / sum_k ||G_jk||_inf, 1 / ||G_jj||_inf, 1 / lambda_max(G_jj):
// after 10 sweeps from the eq. 11 guess the impulses are still 3.1 %, 2.9 % and 2.6 % off the
// converged ones (G_jj is badly conditioned: a light shank moves easily sideways, hardly along the
// leg), and the feet slowly creep.
//
// Our update is per contact, with the others fixed:
//  1. the exact local solve p* = p_j - G_jj^-1 s (r_j = G_jj^-1, the same solve as the eq. 11
//     guess). If p* lies in the friction cone the contact sticks and p* is its exact solution.
//  2. Otherwise the contact slides, where the matrix step has the wrong fixed point (its normal
//     velocity is not zero). There we take the prox step with a per-component r: 1 / G_jj,nn on the
//     normal and 1 / lambda_max of the 2x2 tangential block on both tangents. Its fixed point is
//     Coulomb's law: zero normal velocity, friction opposite the sliding velocity at mu p_n.
// 10 sweeps reach 1e-15 on the standing robot, and a sliding box decelerates at mu g to 1e-4
// (tests/sim/test_contact.cpp, tests/sim/test_step.cpp).
void contactBlockInverses(Data& data, int nc) {
  for (int j = 0; j < nc; ++j)
    data.Ginv.block<3, 3>(3 * j, 0) = data.G.block<3, 3>(3 * j, 3 * j).inverse();
}

Vec3 gaussSeidelUpdate(const Vec3& p, const Vec3& s, const Mat3& Gjj, const Mat3& Gjj_inv,
                       double mu, int* branch) {
  const Vec3 stick = p - Gjj_inv * s;
  if (stick[0] > 0 && norm2(stick[1], stick[2]) <= mu * stick[0]) {
    if (branch) *branch = 0;
    return stick;
  }
  // Largest eigenvalue of the symmetric 2x2 tangential block, in closed form.
  const double a = Gjj(1, 1), b = Gjj(1, 2), d = Gjj(2, 2);
  const double lmax = 0.5 * (a + d) + std::sqrt(0.25 * (a - d) * (a - d) + b * b);
  const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
  const Vec3 z(p[0] - rn * s[0], p[1] - rt * s[1], p[2] - rt * s[2]);
  if (branch) *branch = z[0] <= 0 ? 1 : norm2(z[1], z[2]) <= mu * z[0] ? 2 : 3;
  return proxFrictionCone(z, mu);
}

void solveContacts(const ContactOptions& opt, Data& data) {
  const int nc = static_cast<int>(data.active.size());
  const bool smooth = opt.model == ContactModel::Smoothed;
  for (int a = 0; a < nc; ++a) {
    data.sigma[a] = smooth ? sigmoid(data.depth[data.active[a]] * opt.kappa) : 1.0;
  }
  contactBlockInverses(data, nc);
  // Initial guess (eq. 11), tangential part kept: each contact's own block solved alone.
  for (int a = 0; a < nc; ++a)
    data.impulse.segment<3>(3 * a) = -data.Ginv.block<3, 3>(3 * a, 0) * data.c.segment<3>(3 * a);
  if (data.recordGs) {
    data.impulseInit = data.impulse.head(3 * nc);
    data.gsOld.clear();
    data.gsS.clear();
    data.gsStick.clear();
  }
  for (int it = 0; it < opt.iterations; ++it) {
    for (int j = 0; j < nc; ++j) {
      Vec3 s = data.c.segment<3>(3 * j);
      for (int k = 0; k < nc; ++k) {
        const double w = k == j ? 1.0 : data.sigma[k];
        s.noalias() += w * data.G.block<3, 3>(3 * j, 3 * k) * data.impulse.segment<3>(3 * k);
      }
      if (data.recordGs) {
        data.gsOld.push_back(data.impulse.segment<3>(3 * j));
        data.gsS.push_back(s);
      }
      int branch = 0;
      data.impulse.segment<3>(3 * j) = gaussSeidelUpdate(
          data.impulse.segment<3>(3 * j), s, data.G.block<3, 3>(3 * j, 3 * j),
          data.Ginv.block<3, 3>(3 * j, 0), opt.mu, &branch);
      data.mixMode(branch);
      if (data.recordGs) data.gsStick.push_back(branch == 0);
    }
  }
  if (data.recordGs) data.impulseRaw = data.impulse.head(3 * nc);
  if (smooth)
    for (int a = 0; a < nc; ++a) data.impulse.segment<3>(3 * a) *= data.sigma[a];
}

}  // namespace diffloco::sim
