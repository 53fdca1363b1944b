// Adjoint of the Gauss-Seidel contact solver: the sweeps are unrolled backwards from the tape that
// solveContacts records (the impulse of each contact before its update and the s it used).
#include "sim/adjoint.h"
#include "sim/contact.h"
#include "sim/kinematics.h"
#include "sim/workspace.h"

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

// The coupling part of one update's adjoint, over all 3 nc components at once (s_j = c_j +
// sum_k w_k G_jk p_k): given sBar and G's three columns g0..g2 of contact j (G_kj, as G is
// symmetric), with gs = G_:j sBar: pbar += w gs, the three columns of Gbar^T of contact j
// += (w p) sBar^T, and pGs += p gs (componentwise; summed per contact into the adjoints of the
// sigmoid weights at the end). A plain loop on restrict pointers: the compiler vectorises it.
void couplingVjp(int m, const double* __restrict g0, const double* __restrict g1,
                 const double* __restrict g2, double s0, double s1, double s2,
                 const double* __restrict p, const double* __restrict w, double* __restrict b0,
                 double* __restrict b1, double* __restrict b2, double* __restrict pb,
                 double* __restrict pGs) {
  for (int r = 0; r < m; ++r) {
    const double gs = g0[r] * s0 + g1[r] * s1 + g2[r] * s2;
    pGs[r] += p[r] * gs;
    pb[r] += w[r] * gs;
    const double wp = w[r] * p[r];
    b0[r] += wp * s0;
    b1[r] += wp * s1;
    b2[r] += wp * s2;
  }
}

}  // namespace

void solveContactsVjp(const ContactOptions& opt, const Data& data, const VecX& impulseBar,
                      MatX& Gbar, VecX& cbar, VecX& sigmaBar, double& muBar,
                      ContactVjpScratch& scratch) {
  const int nc = static_cast<int>(data.active.size());
  const int m = 3 * nc;
  const bool smooth = opt.model == ContactModel::Smoothed;
  // The caller's scratch (no allocation per call once sized). The couplings are applied to all
  // contacts at once as products with G's 3-column blocks (G is symmetric: G_jk^T = G_kj), on
  // contiguous vectors of length 3 nc, and G's adjoint is gathered transposed (GbT = Gbar^T) so
  // that each update adds to 3 contiguous columns: both vectorise, where 3x3 blocks one by one did
  // not.
  MatX& GbT = scratch.GbT;
  VecX &p = scratch.p, &pb = scratch.pb, &w = scratch.w, &pGs = scratch.pGs;
  std::vector<Mat3>& GinvBar = scratch.GinvBar;
  GbT.setZero(m, m);
  GinvBar.assign(nc, Mat3::Zero());
  p = data.impulseRaw.head(m);  // after the sweeps, before the sigmoid scaling
  pb = impulseBar.head(m);
  cbar.setZero(m);
  pGs.setZero(m);
  w.setOnes(m);  // per component: sigma of its contact (smoothed), else 1
  sigmaBar.setZero(nc);
  if (smooth)
    for (int a = 0; a < nc; ++a) {
      w.segment<3>(3 * a).setConstant(data.sigma[a]);
      // Final scaling by sigma.
      sigmaBar[a] += pb.segment<3>(3 * a).dot(p.segment<3>(3 * a));
      pb.segment<3>(3 * a) *= data.sigma[a];
    }

  // The sweeps backwards, update by update, restoring the impulses as they were.
  int u = static_cast<int>(data.gsOld.size());
  for (int it = opt.iterations - 1; it >= 0; --it) {
    for (int j = nc - 1; j >= 0; --j) {
      --u;
      const Vec3& pOld = data.gsOld[u];
      const Vec3& s = data.gsS[u];
      p.segment<3>(3 * j) = pOld;
      const Vec3 ob = pb.segment<3>(3 * j);
      Vec3 pOldBar, sBar;
      if (data.gsStick[u]) {  // the forward's branch: the exact local solve p - G_jj^-1 s
        const Mat3 Ginv = data.Ginv.block<3, 3>(3 * j, 0);
        pOldBar = ob;
        sBar = -Ginv.transpose() * ob;
        GinvBar[j] -= ob * s.transpose();
      } else {
        const Mat3 Gjj = data.G.block<3, 3>(3 * j, 3 * j);
        const double a = Gjj(1, 1), b = Gjj(1, 2), d = Gjj(2, 2);
        const double sq = std::sqrt(0.25 * (a - d) * (a - d) + b * b);
        const double lmax = 0.5 * (a + d) + sq;
        const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
        const Vec3 z(pOld[0] - rn * s[0], pOld[1] - rt * s[1], pOld[2] - rt * s[2]);
        const Vec3 zb = proxVjp(z, opt.mu, ob, muBar);
        pOldBar = zb;
        sBar = Vec3(-rn * zb[0], -rt * zb[1], -rt * zb[2]);
        const double rnb = -zb[0] * s[0], rtb = -zb[1] * s[1] - zb[2] * s[2];
        auto GjjbT = GbT.block<3, 3>(3 * j, 3 * j);  // transposed: (r, c) holds Gbar(c, r)
        GjjbT(0, 0) -= rnb * rn * rn;
        const double lb = -rtb * rt * rt;
        if (sq > 0) {
          GjjbT(1, 1) += lb * (0.5 + 0.25 * (a - d) / sq);
          GjjbT(2, 2) += lb * (0.5 - 0.25 * (a - d) / sq);
          GjjbT(2, 1) += lb * b / sq;
        } else {
          GjjbT(1, 1) += 0.5 * lb;
          GjjbT(2, 2) += 0.5 * lb;
        }
      }
      // s = c_j + sum_k w_k G_jk p_k (w_j = 1), with p as it was at this update:
      // pbar_k += w_k G_kj sBar, Gbar_jk += w_k sBar p_k^T, sigmaBar_k += p_k . G_kj sBar.
      pb.segment<3>(3 * j) = pOldBar;
      cbar.segment<3>(3 * j) += sBar;
      const double wj = w[3 * j];
      w.segment<3>(3 * j).setOnes();
      const Eigen::Index ld = data.G.rows();
      const double* g = data.G.data() + 3 * j * ld;
      double* gb = GbT.data() + 3 * j * m;
      // Contact j's own block has weight 1, not sigma_j: its p_j . G_jj sBar is taken back out.
      if (smooth)
        pGs.segment<3>(3 * j) -=
            p.segment<3>(3 * j).cwiseProduct(data.G.block<3, 3>(3 * j, 3 * j) * sBar);
      couplingVjp(m, g, g + ld, g + 2 * ld, sBar[0], sBar[1], sBar[2], p.data(), w.data(), gb,
                  gb + m, gb + 2 * m, pb.data(), pGs.data());
      w.segment<3>(3 * j).setConstant(wj);
    }
  }
  // Initial guess p_j = -G_jj^-1 c_j, and G_jj^-1's own adjoint: dGinv = -Ginv dG Ginv.
  for (int j = 0; j < nc; ++j) {
    const Mat3 Ginv = data.Ginv.block<3, 3>(3 * j, 0);
    cbar.segment<3>(3 * j) -= Ginv.transpose() * pb.segment<3>(3 * j);
    GinvBar[j] -= pb.segment<3>(3 * j) * data.c.segment<3>(3 * j).transpose();
    GbT.block<3, 3>(3 * j, 3 * j) -= Ginv * GinvBar[j].transpose() * Ginv;
  }
  if (smooth)
    for (int k = 0; k < nc; ++k) sigmaBar[k] += pGs.segment<3>(3 * k).sum();
  Gbar = GbT.transpose();
}

void contactGeometryVjp(const Model& model, const ContactOptions& opt, const Data& data,
                        const MatX& Jbar, const VecX& depthBar, KinematicsBar& bar,
                        std::vector<Vec3>& offsetBar, Eigen::Matrix<double, 3, Eigen::Dynamic>& Jw,
                        Eigen::Matrix<double, 3, Eigen::Dynamic>& Jp) {
  for (int a = 0; a < static_cast<int>(data.active.size()); ++a) {
    const int j = data.active[a];
    const Foot& ft = model.sphere(j);
    Vec3 cbar;  // adjoint of the sphere centre
    if (!opt.terrain) {
      // Frame (z, x, y), x = centre - radius z, depth = radius - centre_z.
      Jw.row(0) = Jbar.row(3 * a + 1);
      Jw.row(1) = Jbar.row(3 * a + 2);
      Jw.row(2) = Jbar.row(3 * a + 0);
      const Vec3 x = data.footCentre[j] - ft.radius * Vec3::UnitZ();
      cbar.setZero();
      pointJacobianVjp(model, data, ft.body, x, Jw, bar, cbar);
      cbar.z() -= depthBar[a];
    } else {
      // Jc_a = F^T Jp(x), F = [n t1 t2]: Jp's adjoint is F Jcbar_a, F's is Jp Jcbar_a^T; then
      // the frame, point and depth back to the centre through the height field (sim/terrain.h).
      const SphereContact& c = data.footContact[j];
      const auto Jb = Jbar.middleRows<3>(3 * a);
      Jw.noalias() = c.frame.lazyProduct(Jb);  // coefficient-wise: too small for GEMM
      Vec3 xbar = Vec3::Zero();
      pointJacobianVjp(model, data, ft.body, c.point, Jw, bar, xbar);
      pointJacobian(model, data, ft.body, c.point, Jp);
      const Mat3 frameBar = Jp.lazyProduct(Jb.transpose());
      cbar = sphereContactVjp(data.footCentre[j], ft.radius, c, depthBar[a], frameBar, xbar);
    }
    // centre = R_b offset + p_b.
    bar.R[ft.body] += cbar * ft.offset.transpose();
    bar.p[ft.body] += cbar;
    offsetBar[j] += data.R[ft.body].transpose() * cbar;
  }
}

}  // namespace diffloco::sim
