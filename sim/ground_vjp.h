// Adjoint of a sphere's contact against the height field, vertical or closest-point
// (sim::sphereContactVjp in sim/terrain.cpp, same formulas and order). Host and device code.
#pragma once

#include "sim/ground.h"
#include "sim/rigid_body_kinematics_vjp.h"

namespace diffloco::sim {

// Given the adjoints of depth, frame (its columns) and point, returns the adjoint of the centre.
DL_HD V3 sphereContactVjp(const V3& centre, double radius, const FixedSphereContact& c,
                          double depthBar, const M3& frameBar, const V3& pointBar) {
  const FixedSurface& s = c.surface;
  const V3 n = v3(c.frame(0, 0), c.frame(1, 0), c.frame(2, 0));
  const V3 t1 = v3(c.frame(0, 1), c.frame(1, 1), c.frame(2, 1));
  V3 cb = pointBar;  // point = centre - r n
  V3 nb = v3(frameBar(0, 0), frameBar(1, 0), frameBar(2, 0)) - radius * pointBar;
  V3 t1b = v3(frameBar(0, 1), frameBar(1, 1), frameBar(2, 1));
  const V3 t2b = v3(frameBar(0, 2), frameBar(1, 2), frameBar(2, 2));
  double hb;
  if (c.closest) {
    // depth = r - side (c - P) . n, P = (px, py, h)
    depthBar *= c.side;
    cb -= depthBar * n;
    nb -= depthBar * (centre - v3(c.px, c.py, s.h));
    hb = depthBar * n[2];
  } else {
    // depth = r - (c_z - h) n_z
    cb[2] -= depthBar * n[2];
    hb = depthBar * n[2];
    nb[2] -= depthBar * (centre[2] - s.h);
  }
  // t2 = n x t1
  nb += cross(t1, t2b);
  t1b += cross(t2b, n);
  // t1 = u / |u|, u = e_x - n_x n
  const V3 u = v3(1 - n[0] * n[0], 0 - n[0] * n[1], 0 - n[0] * n[2]);
  const double un = sqrt(dot(u, u));
  const double t1t1b = dot(t1, t1b);
  const V3 ub = v3((t1b[0] - t1t1b * t1[0]) / un, (t1b[1] - t1t1b * t1[1]) / un,
                   (t1b[2] - t1t1b * t1[2]) / un);
  nb -= n[0] * ub;
  nb[0] -= dot(ub, n);
  // n = g / |g|, g = (-h_x, -h_y, 1)
  const double gn = sqrt(1 + s.hx * s.hx + s.hy * s.hy);
  const double nnb = dot(n, nb);
  const V3 gb = v3((nb[0] - nnb * n[0]) / gn, (nb[1] - nnb * n[1]) / gn, (nb[2] - nnb * n[2]) / gn);
  const double hxb = -gb[0], hyb = -gb[1];
  // h, h_x, h_y at the touch point (px, py)
  double pxb = hb * s.hx + hxb * s.hxx + hyb * s.hxy;
  double pyb = hb * s.hy + hxb * s.hxy + hyb * s.hyy;
  if (!c.closest) {  // (px, py) = (c_x, c_y)
    cb[0] += pxb;
    cb[1] += pyb;
    return cb;
  }
  // P's x and y; then p(c) through the minimum's condition (sim::sphereContactVjp derives it):
  // dp/dc = -H^-1 dG/dc, with Gauss-Newton's H where the exact one is not positive definite.
  pxb += depthBar * n[0];
  pyb += depthBar * n[1];
  const double e = s.h - centre[2];
  double a = 1 + s.hx * s.hx, b = s.hx * s.hy, d = 1 + s.hy * s.hy;
  const double ae = a + e * s.hxx, be = b + e * s.hxy, de = d + e * s.hyy;
  if (ae > 0 && ae * de - be * be > 1e-12 * ae * de) a = ae, b = be, d = de;
  const double det = a * d - b * b;
  const double w0 = (d * pxb - b * pyb) / det, w1 = (a * pyb - b * pxb) / det;
  cb[0] += w0;
  cb[1] += w1;
  cb[2] += w0 * s.hx + w1 * s.hy;
  return cb;
}

}  // namespace diffloco::sim
