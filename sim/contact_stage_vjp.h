// Adjoints of the hard and smoothed contact stages on fixed-size data: the Gauss-Seidel sweeps
// unrolled backwards from the solver's tape (GsTape), and the contact geometry (Jacobian rows
// and depth) back to the bodies' kinematics; with kParams the parameters' adjoints too (mu, the
// spheres' offsets), which the instantiation without them leaves out entirely. Host and device
// code.
#pragma once

#include "sim/contact_stage.h"
#include "sim/ground_vjp.h"

namespace diffloco::sim {

// Adjoint of proxFrictionCone(z, mu): outBar -> zBar (returned), muBar (added when given).
template <bool kParams = false>
DL_HD V3 proxVjp(const V3& z, double mu, const V3& ob, double* muBar = nullptr) {
  if (z[0] <= 0) return zero3();
  const double tn = norm2(z[1], z[2]);
  if (tn <= mu * z[0]) return ob;
  // out = (z0, mu z0 zt / |zt|).
  const double e1 = z[1] / tn, e2 = z[2] / tn;
  const double oe = ob[1] * e1 + ob[2] * e2;
  const double k = mu * z[0] / tn;
  if constexpr (kParams) *muBar += z[0] * oe;
  return v3(ob[0] + mu * oe, k * (ob[1] - oe * e1), k * (ob[2] - oe * e2));
}

// Adjoint of solveContacts (run with gs recording): impulseBar (3 nc) -> GbT = Gbar^T
// (3 MAXACTIVE x 3 MAXACTIVE, the first 3 nc rows and columns), cbar (3 nc), sigmaBar (nc) and,
// with kParams, muBar (added).
template <bool kParams = false, class D>
DL_HD_OUTLINE void solveContactsVjp(const FixedOptions& o, const Contacts<D>& fc,
                                    const GsTape<D>& gs, const double* impulseBar,
                                    double (*GbT)[3 * D::MAXACTIVE], double* cbar, double* sigmaBar,
                                    double* muBar = nullptr) {
  const int nc = fc.nc, m = 3 * nc;
  const bool smooth = o.model == FixedContact::Smoothed;
  double p[3 * D::MAXACTIVE], pb[3 * D::MAXACTIVE], w[3 * D::MAXACTIVE], pGs[3 * D::MAXACTIVE];
  M3 GinvBar[D::MAXACTIVE];
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < m; ++c) GbT[r][c] = 0;
    p[r] = gs.impulseRaw[r];
    pb[r] = impulseBar[r];
    cbar[r] = 0;
    pGs[r] = 0;
    w[r] = 1;
  }
  for (int a = 0; a < nc; ++a) {
    for (int k = 0; k < 9; ++k) GinvBar[a].e[k] = 0;
    sigmaBar[a] = 0;
  }
  if (smooth)
    for (int a = 0; a < nc; ++a) {
      for (int r = 0; r < 3; ++r) w[3 * a + r] = fc.sigma[a];
      sigmaBar[a] +=
          pb[3 * a] * p[3 * a] + pb[3 * a + 1] * p[3 * a + 1] + pb[3 * a + 2] * p[3 * a + 2];
      for (int r = 0; r < 3; ++r) pb[3 * a + r] *= fc.sigma[a];
    }

  // The sweeps backwards, update by update, restoring the impulses as they were.
  int u = o.iterations * nc;
  for (int it = o.iterations - 1; it >= 0; --it) {
    for (int j = nc - 1; j >= 0; --j) {
      --u;
      const V3& pOld = gs.pOld[u];
      const V3& s = gs.s[u];
      for (int r = 0; r < 3; ++r) p[3 * j + r] = pOld[r];
      const V3 ob = v3(pb[3 * j], pb[3 * j + 1], pb[3 * j + 2]);
      V3 pOldBar, sBar;
      if (gs.stick[u]) {  // the forward's branch: the exact local solve p - G_jj^-1 s
        pOldBar = ob;
        sBar = -mulT(gs.Ginv[j], ob);
        subFrom(GinvBar[j], outer(ob, s));
      } else {
        const M3 Gjj = gBlock(fc, j, j);
        const double a = Gjj(1, 1), b = Gjj(1, 2), dd = Gjj(2, 2);
        const double sq = sqrt(0.25 * (a - dd) * (a - dd) + b * b);
        const double lmax = 0.5 * (a + dd) + sq;
        const double rn = 1.0 / Gjj(0, 0), rt = 1.0 / lmax;
        const V3 z = v3(pOld[0] - rn * s[0], pOld[1] - rt * s[1], pOld[2] - rt * s[2]);
        const V3 zb = proxVjp<kParams>(z, o.mu, ob, muBar);
        pOldBar = zb;
        sBar = v3(-rn * zb[0], -rt * zb[1], -rt * zb[2]);
        const double rnb = -zb[0] * s[0], rtb = -zb[1] * s[1] - zb[2] * s[2];
        // GbT's block (r, c) holds Gbar(c, r)
        GbT[3 * j][3 * j] -= rnb * rn * rn;
        const double lb = -rtb * rt * rt;
        if (sq > 0) {
          GbT[3 * j + 1][3 * j + 1] += lb * (0.5 + 0.25 * (a - dd) / sq);
          GbT[3 * j + 2][3 * j + 2] += lb * (0.5 - 0.25 * (a - dd) / sq);
          GbT[3 * j + 2][3 * j + 1] += lb * b / sq;
        } else {
          GbT[3 * j + 1][3 * j + 1] += 0.5 * lb;
          GbT[3 * j + 2][3 * j + 2] += 0.5 * lb;
        }
      }
      // s = c_j + sum_k w_k G_jk p_k (w_j = 1), with p as it was at this update:
      // pbar_k += w_k G_kj sBar, Gbar_jk += w_k sBar p_k^T, sigmaBar_k += p_k . G_kj sBar.
      for (int r = 0; r < 3; ++r) {
        pb[3 * j + r] = pOldBar[r];
        cbar[3 * j + r] += sBar[r];
      }
      const double wj = w[3 * j];
      for (int r = 0; r < 3; ++r) w[3 * j + r] = 1;
      // Contact j's own block has weight 1, not sigma_j: its p_j . G_jj sBar is taken back out.
      if (smooth) {
        const V3 gsb = mul(gBlock(fc, j, j), sBar);
        for (int r = 0; r < 3; ++r) pGs[3 * j + r] -= p[3 * j + r] * gsb[r];
      }
      for (int r = 0; r < m; ++r) {
        const double g =
            fc.G[r][3 * j] * sBar[0] + fc.G[r][3 * j + 1] * sBar[1] + fc.G[r][3 * j + 2] * sBar[2];
        pGs[r] += p[r] * g;
        pb[r] += w[r] * g;
        const double wp = w[r] * p[r];
        GbT[3 * j][r] += wp * sBar[0];
        GbT[3 * j + 1][r] += wp * sBar[1];
        GbT[3 * j + 2][r] += wp * sBar[2];
      }
      for (int r = 0; r < 3; ++r) w[3 * j + r] = wj;
    }
  }
  // Initial guess p_j = -G_jj^-1 c_j, and G_jj^-1's own adjoint: dGinv = -Ginv dG Ginv.
  for (int j = 0; j < nc; ++j) {
    const M3& Ginv = gs.Ginv[j];
    const V3 pbj = v3(pb[3 * j], pb[3 * j + 1], pb[3 * j + 2]);
    const V3 gt = mulT(Ginv, pbj);
    for (int r = 0; r < 3; ++r) cbar[3 * j + r] -= gt[r];
    subFrom(GinvBar[j], outer(pbj, v3(fc.c[3 * j], fc.c[3 * j + 1], fc.c[3 * j + 2])));
    const M3 t = mul(mulNT(Ginv, GinvBar[j]), Ginv);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) GbT[3 * j + r][3 * j + c] -= t(r, c);
  }
  if (smooth)
    for (int k = 0; k < nc; ++k) sigmaBar[k] += pGs[3 * k] + pGs[3 * k + 1] + pGs[3 * k + 2];
}

// Adjoint of the active contacts' geometry: Jbar (3 rows (n, t1, t2) per active contact) and
// depthBar (one per active contact) -> bar and, with kParams, offsetBar (per sphere, added). On
// the height field this includes the contact frame's and point's
// dependence on where the foot is.
template <bool kParams = false, class D>
DL_HD_OUTLINE void contactGeometryVjp(const StepModel<D>& m, const StepData<D>& d,
                                      const Contacts<D>& fc, bool terrain,
                                      const double (*Jbar)[D::NV], const double* depthBar,
                                      KinBar<D>& bar, V3* offsetBar = nullptr) {
  for (int a = 0; a < fc.nc; ++a) {
    const int j = fc.active[a];
    const int body = m.footBody[j];
    const double radius = m.footRadius[j];
    const V3 centre = mul(d.R[body], m.footOffset[j]) + d.p[body];
    double Jw[3][D::NV];
    V3 cbar;  // adjoint of the sphere centre
    if (!terrain) {
      // Frame (z, x, y), x = centre - radius z, depth = radius - centre_z.
      for (int k = 0; k < D::NV; ++k) {
        Jw[0][k] = Jbar[3 * a + 1][k];
        Jw[1][k] = Jbar[3 * a + 2][k];
        Jw[2][k] = Jbar[3 * a][k];
      }
      const V3 x = v3(centre[0] - radius * 0.0, centre[1] - radius * 0.0, centre[2] - radius);
      cbar = zero3();
      pointJacobianVjp(m, d, body, x, Jw, bar, cbar);
      cbar[2] -= depthBar[a];
    } else {
      // Jc_a = F^T Jp(x), F = [n t1 t2]: Jp's adjoint is F Jcbar_a, F's is Jp Jcbar_a^T.
      const FixedSphereContact& c = fc.contact[a];
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < D::NV; ++k)
          Jw[r][k] = c.frame(r, 0) * Jbar[3 * a][k] + c.frame(r, 1) * Jbar[3 * a + 1][k] +
                     c.frame(r, 2) * Jbar[3 * a + 2][k];
      V3 xbar = zero3();
      pointJacobianVjp(m, d, body, c.point, Jw, bar, xbar);
      double Jp[3][D::NV];
      pointJacobian(m, d, body, c.point, Jp);
      M3 frameBar;
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          double acc = 0;
          for (int k = 0; k < D::NV; ++k) acc += Jp[r][k] * Jbar[3 * a + s][k];
          frameBar(r, s) = acc;
        }
      cbar = sphereContactVjp(centre, radius, c, depthBar[a], frameBar, xbar);
    }
    // centre = R_b offset + p_b.
    addTo(bar.R[body], outer(cbar, m.footOffset[j]));
    bar.p[body] += cbar;
    if constexpr (kParams) offsetBar[j] += mulT(d.R[body], cbar);
  }
}

}  // namespace diffloco::sim
