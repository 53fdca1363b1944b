// Adjoint of the Gauss-Seidel contact solver: the sweeps are unrolled backwards from the tape that
// solveContacts records (the impulse of each contact before its update and the s it used).
#include "sim/adjoint.h"
#include "sim/contact.h"

namespace diffloco::sim {
namespace {

// Adjoint of proxFrictionCone(z, mu): outBar -> zBar (returned), muBar (added).
Vec3 proxVjp(const Vec3& z, double mu, const Vec3& ob, double& muBar) {
  if (z[0] <= 0) return Vec3::Zero();
  const double tn = norm2(z[1], z[2]);
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
  // Fixed-size copies of the blocks: the sweeps below touch each block many times.
  thread_local std::vector<Mat3> G, Gb, Ginv, GinvBar;  // per-thread scratch
  thread_local std::vector<Vec3> p, pb, cb;
  thread_local std::vector<double> w, sb;
  G.resize(nc * nc);
  Gb.assign(nc * nc, Mat3::Zero());
  Ginv.resize(nc);
  GinvBar.assign(nc, Mat3::Zero());
  p.resize(nc);
  pb.resize(nc);
  cb.assign(nc, Vec3::Zero());
  w.assign(nc, 1.0);
  sb.assign(nc, 0.0);
  for (int j = 0; j < nc; ++j) {
    for (int k = 0; k < nc; ++k) G[j * nc + k] = data.G.block<3, 3>(3 * j, 3 * k);
    Ginv[j] = data.Ginv.block<3, 3>(3 * j, 0);
    p[j] = data.impulseRaw.segment<3>(3 * j);  // after the sweeps, before the sigmoid scaling
    pb[j] = impulseBar.segment<3>(3 * j);
    if (smooth) w[j] = data.sigma[j];
  }

  // Final scaling by sigma (smoothed).
  if (smooth)
    for (int a = 0; a < nc; ++a) {
      sb[a] += pb[a].dot(p[a]);
      pb[a] *= w[a];
    }

  // The sweeps backwards, update by update, restoring the impulses as they were.
  int u = static_cast<int>(data.gsOld.size());
  for (int it = opt.iterations - 1; it >= 0; --it) {
    for (int j = nc - 1; j >= 0; --j) {
      --u;
      const Vec3& pOld = data.gsOld[u];
      const Vec3& s = data.gsS[u];
      p[j] = pOld;
      const Mat3& Gjj = G[j * nc + j];
      const Vec3 ob = pb[j];
      Vec3 pOldBar, sBar;
      const Vec3 stick = pOld - Ginv[j] * s;
      if (stick[0] > 0 && norm2(stick[1], stick[2]) <= opt.mu * stick[0]) {
        pOldBar = ob;
        sBar = -Ginv[j].transpose() * ob;
        GinvBar[j] -= ob * s.transpose();
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
        Mat3& Gjjb = Gb[j * nc + j];
        Gjjb(0, 0) -= rnb * rn * rn;
        const double lb = -rtb * rt * rt;
        if (sq > 0) {
          Gjjb(1, 1) += lb * (0.5 + 0.25 * (a - d) / sq);
          Gjjb(2, 2) += lb * (0.5 - 0.25 * (a - d) / sq);
          Gjjb(1, 2) += lb * b / sq;
        } else {
          Gjjb(1, 1) += 0.5 * lb;
          Gjjb(2, 2) += 0.5 * lb;
        }
      }
      // s = c_j + sum_k w_k G_jk p_k (w_j = 1), with p as it was at this update.
      pb[j] = pOldBar;
      cb[j] += sBar;
      for (int k = 0; k < nc; ++k) {
        const double wk = k == j ? 1.0 : w[k];
        Gb[j * nc + k].noalias() += (wk * sBar) * p[k].transpose();
        pb[k].noalias() += wk * (G[j * nc + k].transpose() * sBar);
        if (k != j && smooth) sb[k] += sBar.dot(G[j * nc + k] * p[k]);
      }
    }
  }
  // Initial guess p_j = -G_jj^-1 c_j, and G_jj^-1's own adjoint: dGinv = -Ginv dG Ginv.
  for (int j = 0; j < nc; ++j) {
    cb[j] -= Ginv[j].transpose() * pb[j];
    GinvBar[j] -= pb[j] * data.c.segment<3>(3 * j).transpose();
    Gb[j * nc + j] -= Ginv[j].transpose() * GinvBar[j] * Ginv[j].transpose();
  }
  Gbar.resize(m, m);
  cbar.resize(m);
  sigmaBar.resize(nc);
  for (int j = 0; j < nc; ++j) {
    for (int k = 0; k < nc; ++k) Gbar.block<3, 3>(3 * j, 3 * k) = Gb[j * nc + k];
    cbar.segment<3>(3 * j) = cb[j];
    sigmaBar[j] = sb[j];
  }
}

}  // namespace diffloco::sim
