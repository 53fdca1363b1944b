// Adjoint of the Gauss-Seidel contact solver: the sweeps are unrolled backwards from the tape that
// solveContacts records (the impulse of each contact before its update and the s it used).
#include "sim/adjoint.h"
#include "sim/contact.h"

namespace diffloco::sim {
namespace {

// Adjoint of proxFrictionCone(z, mu): outBar -> zBar (returned), muBar (added).
Vec3 proxVjp(const Vec3& z, double mu, const Vec3& ob, double& muBar) {
  if (z[0] <= 0) return Vec3::Zero();
  const double tn = std::hypot(z[1], z[2]);
  if (tn <= mu * z[0]) return ob;
  // out = (z0, mu z0 zt / |zt|).
  const Eigen::Vector2d zt(z[1], z[2]), et = zt / tn, obt(ob[1], ob[2]);
  Vec3 zb;
  zb[0] = ob[0] + mu * obt.dot(et);
  const Eigen::Vector2d ztb = mu * z[0] / tn * (obt - obt.dot(et) * et);
  zb[1] = ztb[0];
  zb[2] = ztb[1];
  muBar += z[0] * obt.dot(et);
  return zb;
}

}  // namespace

void solveContactsVjp(const ContactOptions& opt, const Data& data, const VecX& impulseBar,
                      MatX& Gbar, VecX& cbar, VecX& sigmaBar, double& muBar) {
  const int nc = static_cast<int>(data.active.size());
  const int m = 3 * nc;
  const bool smooth = opt.model == ContactModel::Smoothed;
  Gbar.setZero(m, m);
  cbar.setZero(m);
  sigmaBar.setZero(nc);
  MatX GinvBar = MatX::Zero(m, 3);

  // Final scaling by sigma (smoothed); data.impulse holds the scaled values.
  VecX pb = impulseBar.head(m);
  // The impulses as they were at the end of the sweeps (unscaled), walked back update by update.
  VecX p = data.impulseRaw.head(m);
  if (smooth)
    for (int a = 0; a < nc; ++a) {
      sigmaBar[a] += pb.segment<3>(3 * a).dot(p.segment<3>(3 * a));
      pb.segment<3>(3 * a) *= data.sigma[a];
    }
  int u = static_cast<int>(data.gsOld.size());
  for (int it = opt.iterations - 1; it >= 0; --it) {
    for (int j = nc - 1; j >= 0; --j) {
      --u;
      const Vec3 pOld = data.gsOld[u], s = data.gsS[u];
      p.segment<3>(3 * j) = pOld;  // state before this update
      const Mat3 Gjj = data.G.block<3, 3>(3 * j, 3 * j);
      const Mat3 Ginv = data.Ginv.block<3, 3>(3 * j, 0);
      const Vec3 ob = pb.segment<3>(3 * j);
      Vec3 pOldBar, sBar;
      const Vec3 stick = pOld - Ginv * s;
      if (stick[0] > 0 && std::hypot(stick[1], stick[2]) <= opt.mu * stick[0]) {
        pOldBar = ob;
        sBar = -Ginv.transpose() * ob;
        GinvBar.middleRows<3>(3 * j) -= ob * s.transpose();
      } else {
        const double a = Gjj(1, 1), b = Gjj(1, 2), d = Gjj(2, 2);
        const double sq = std::sqrt(0.25 * (a - d) * (a - d) + b * b);
        const double lmax = 0.5 * (a + d) + sq;
        const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
        const Vec3 z(pOld[0] - rn * s[0], pOld[1] - rt * s[1], pOld[2] - rt * s[2]);
        const Vec3 zb = proxVjp(z, opt.mu, ob, muBar);
        pOldBar = zb;
        sBar = Vec3(-rn * zb[0], -rt * zb[1], -rt * zb[2]);
        const double rnb = -zb[0] * s[0], rtb = -zb[1] * s[1] - zb[2] * s[2];
        Gbar(3 * j, 3 * j) -= rnb * rn * rn;
        const double lb = -rtb * rt * rt;
        if (sq > 0) {
          Gbar(3 * j + 1, 3 * j + 1) += lb * (0.5 + 0.25 * (a - d) / sq);
          Gbar(3 * j + 2, 3 * j + 2) += lb * (0.5 - 0.25 * (a - d) / sq);
          Gbar(3 * j + 1, 3 * j + 2) += lb * b / sq;
        } else {
          Gbar(3 * j + 1, 3 * j + 1) += 0.5 * lb;
          Gbar(3 * j + 2, 3 * j + 2) += 0.5 * lb;
        }
      }
      // s = c_j + sum_k w_k G_jk p_k, with p as it was at this update.
      pb.segment<3>(3 * j) = pOldBar;
      cbar.segment<3>(3 * j) += sBar;
      for (int k = 0; k < nc; ++k) {
        const double w = (k == j || !smooth) ? 1.0 : data.sigma[k];
        const Mat3 Gjk = data.G.block<3, 3>(3 * j, 3 * k);
        const Vec3 pk = p.segment<3>(3 * k);
        Gbar.block<3, 3>(3 * j, 3 * k) += w * sBar * pk.transpose();
        pb.segment<3>(3 * k) += w * Gjk.transpose() * sBar;
        if (k != j && smooth) sigmaBar[k] += sBar.dot(Gjk * pk);
      }
    }
  }
  // Initial guess p_j = -G_jj^-1 c_j.
  for (int j = 0; j < nc; ++j) {
    const Mat3 Ginv = data.Ginv.block<3, 3>(3 * j, 0);
    const Vec3 pjb = pb.segment<3>(3 * j);
    cbar.segment<3>(3 * j) -= Ginv.transpose() * pjb;
    GinvBar.middleRows<3>(3 * j) -= pjb * data.c.segment<3>(3 * j).transpose();
    // G_jj^-1: dGinv = -Ginv dG Ginv.
    Gbar.block<3, 3>(3 * j, 3 * j) -=
        Ginv.transpose() * GinvBar.middleRows<3>(3 * j) * Ginv.transpose();
  }
}

}  // namespace diffloco::sim
