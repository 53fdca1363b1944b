#include "sim/contact.h"


#include "sim/cholesky.h"
#include "sim/kinematics.h"

namespace diffloco::sim {

void footGeometry(const Model& model, Data& data) {
  for (int j = 0; j < model.nfeet(); ++j) {
    const Foot& ft = model.feet[j];
    data.footCentre[j] = worldPoint(data, ft.body, ft.offset);
    data.depth[j] = ft.radius - data.footCentre[j].z();
  }
}

void selectContacts(const Model& model, const ContactOptions& opt, Data& data) {
  data.active.clear();
  for (int j = 0; j < model.nfeet(); ++j)
    if (opt.model != ContactModel::Hard || data.depth[j] >= 0) data.active.push_back(j);
}

void contactJacobians(const Model& model, Data& data) {
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jw(3, model.nv());
  for (int a = 0; a < static_cast<int>(data.active.size()); ++a) {
    const int j = data.active[a];
    const Foot& ft = model.feet[j];
    const Vec3 x = data.footCentre[j] - ft.radius * Vec3::UnitZ();
    pointJacobian(model, data, ft.body, x, Jw);
    data.Jc.row(3 * a + 0) = Jw.row(2);
    data.Jc.row(3 * a + 1) = Jw.row(0);
    data.Jc.row(3 * a + 2) = Jw.row(1);
  }
}

void delassus(const Model& model, Data& data) {
  const int m = 3 * static_cast<int>(data.active.size());
  const int nv = model.nv();
  for (int r = 0; r < m; ++r) {
    data.work = data.Jc.row(r).transpose();
    solveLt(model, data, data.work);
    data.Y.col(r) = data.work;
  }
  const VecX dinv = data.LD.diagonal().cwiseInverse();
  auto Y = data.Y.leftCols(m);
  data.G.topLeftCorner(m, m).noalias() = Y.transpose() * dinv.asDiagonal() * Y;
  (void)nv;
}

Vec3 proxFrictionCone(const Vec3& p, double mu) {
  if (p[0] <= 0) return Vec3::Zero();
  const double tn = std::hypot(p[1], p[2]);
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
                       double mu) {
  const Vec3 stick = p - Gjj_inv * s;
  if (stick[0] > 0 && std::hypot(stick[1], stick[2]) <= mu * stick[0]) return stick;
  // Largest eigenvalue of the symmetric 2x2 tangential block, in closed form.
  const double a = Gjj(1, 1), b = Gjj(1, 2), d = Gjj(2, 2);
  const double lmax = 0.5 * (a + d) + std::sqrt(0.25 * (a - d) * (a - d) + b * b);
  const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
  return proxFrictionCone(Vec3(p[0] - rn * s[0], p[1] - rt * s[1], p[2] - rt * s[2]), mu);
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
      data.impulse.segment<3>(3 * j) = gaussSeidelUpdate(
          data.impulse.segment<3>(3 * j), s, data.G.block<3, 3>(3 * j, 3 * j),
          data.Ginv.block<3, 3>(3 * j, 0), opt.mu);
    }
  }
  if (data.recordGs) data.impulseRaw = data.impulse.head(3 * nc);
  if (smooth)
    for (int a = 0; a < nc; ++a) data.impulse.segment<3>(3 * a) *= data.sigma[a];
}

}  // namespace diffloco::sim
