// The ground of sim/terrain.h for the fixed-size step: the plane z = 0 or a height field with a
// bicubic Catmull-Rom patch per cell, and a sphere's contact against it. Same formulas and order as
// sim::sampleSurface and sim::sphereContact (that header explains them); here on plain arrays.
#pragma once

#include "gpu/fixed_model.h"

namespace diffloco::gpu {

struct FixedSurface {
  double h, hx, hy, hxx, hxy, hyy;
};

struct FixedSphereContact {
  double depth;
  M3 frame;              // columns: normal, tangent1, tangent2 (world)
  V3 point;              // contact point (world)
  FixedSurface surface;  // the height field at the centre's (x, y), zero on the plane (for the VJP)
};

// Cell index and local coordinate of a world coordinate (inv = 1 / spacing), held two cells outside
// the grid at most.
DL_HD void locateCell(double x, double origin, double inv, int n, int& cell, double& t) {
  double g = (x - origin) * inv;
  if (!(g > -2.0)) g = -2.0;
  if (!(g < n + 1.0)) g = n + 1.0;
  const double f = floor(g);
  cell = static_cast<int>(f);
  t = g - f;
}

// Catmull-Rom weights at t and their first and second derivatives.
struct CatmullRom {
  double w[4], d[4], dd[4];
  DL_HD explicit CatmullRom(double t) {
    const double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t + 2 * t2 - t3);
    w[1] = 0.5 * (2 - 5 * t2 + 3 * t3);
    w[2] = 0.5 * (t + 4 * t2 - 3 * t3);
    w[3] = 0.5 * (-t2 + t3);
    d[0] = 0.5 * (-1 + 4 * t - 3 * t2);
    d[1] = 0.5 * (-10 * t + 9 * t2);
    d[2] = 0.5 * (1 + 8 * t - 9 * t2);
    d[3] = 0.5 * (-2 * t + 3 * t2);
    dd[0] = 2 - 3 * t;
    dd[1] = -5 + 9 * t;
    dd[2] = 4 - 9 * t;
    dd[3] = -1 + 3 * t;
  }
};

DL_HD int clampIndex(int i, int n) { return i < 0 ? 0 : i > n - 1 ? n - 1 : i; }

DL_HD FixedSurface sampleSurface(const HeightFieldView& hf, double x, double y) {
  int i, j;
  double u, v;
  const double inv = 1.0 / hf.spacing, inv2 = inv * inv;
  locateCell(x, hf.originX, inv, hf.nx, i, u);
  locateCell(y, hf.originY, inv, hf.ny, j, v);
  const CatmullRom bu(u), bv(v);
  double hv = 0, hu = 0, huu = 0, dhv = 0, dhu = 0, ddhv = 0;
  for (int b = 0; b < 4; ++b) {
    double r = 0, ru = 0, ruu = 0;
    const double* row = hf.heights + static_cast<long long>(clampIndex(j - 1 + b, hf.ny)) * hf.nx;
    for (int a = 0; a < 4; ++a) {
      const double p = row[clampIndex(i - 1 + a, hf.nx)];
      r += bu.w[a] * p;
      ru += bu.d[a] * p;
      ruu += bu.dd[a] * p;
    }
    hv += bv.w[b] * r;
    hu += bv.w[b] * ru;
    huu += bv.w[b] * ruu;
    dhv += bv.d[b] * r;
    dhu += bv.d[b] * ru;
    ddhv += bv.dd[b] * r;
  }
  return FixedSurface{hv, hu * inv, dhv * inv, huu * inv2, dhu * inv2, ddhv * inv2};
}

// An upper bound on a sphere's depth from its cell's bound, or from the 4 x 4 samples around its
// centre without one, +infinity where the centre is not above them (sim::sphereDepthUpperBound,
// which derives the constants): a leg sphere far above the ground is settled without interpolating
// the surface.
DL_HD double depthUpperBound(const HeightFieldView& hf, const V3& centre, double radius) {
  int i, j;
  double u, v;
  const double inv = 1.0 / hf.spacing;
  locateCell(centre[0], hf.originX, inv, hf.nx, i, u);
  locateCell(centre[1], hf.originY, inv, hf.ny, j, v);
  if (hf.cellBounds) {  // the cell's precomputed bound (sim::HeightField::finalize)
    const float* b = hf.cellBounds + 2 * (static_cast<long long>(j + 2) * (hf.nx + 4) + i + 2);
    const double gap = centre[2] - b[0];
    if (!(gap > 0)) return HUGE_VAL;
    return radius - gap * b[1];
  }
  int ix[4];
  const double* rows[4];
  for (int a = 0; a < 4; ++a) {
    ix[a] = clampIndex(i - 1 + a, hf.nx);
    rows[a] = hf.heights + static_cast<long long>(clampIndex(j - 1 + a, hf.ny)) * hf.nx;
  }
  double los[4], his[4];
  for (int a = 0; a < 4; ++a) {
    const double p0 = rows[0][ix[a]], p1 = rows[1][ix[a]], p2 = rows[2][ix[a]], p3 = rows[3][ix[a]];
    los[a] = fmin(fmin(p0, p1), fmin(p2, p3));
    his[a] = fmax(fmax(p0, p1), fmax(p2, p3));
  }
  const double lo = fmin(fmin(los[0], los[1]), fmin(los[2], los[3]));
  const double hi = fmax(fmax(his[0], his[1]), fmax(his[2], his[3]));
  const double range = hi - lo;
  const double gap = centre[2] - (lo + 1.28125 * range);
  if (!(gap > 0)) return HUGE_VAL;
  if (range == 0) return radius - gap;
  const double slope = 1.875 * range / hf.spacing;
  return radius - gap / sqrt(1 + 2 * slope * slope);
}

DL_HD FixedSphereContact sphereContact(const HeightFieldView& hf, const V3& centre, double radius) {
  FixedSphereContact c;
  if (!hf.heights) {
    c.depth = radius - centre[2];
    c.frame = M3{{0, 1, 0, 0, 0, 1, 1, 0, 0}};  // columns z, x, y
    c.point = v3(centre[0], centre[1], centre[2] - radius);
    c.surface = FixedSurface{0, 0, 0, 0, 0, 0};
    return c;
  }
  const FixedSurface s = sampleSurface(hf, centre[0], centre[1]);
  c.surface = s;
  // As sim::sphereContact: |e_x - n_x n|^2 = (1 + h_y^2) / (1 + h_x^2 + h_y^2).
  const double rootG = sqrt(1 + s.hx * s.hx + s.hy * s.hy), rootT = sqrt(1 + s.hy * s.hy);
  const double nz = 1 / rootG, tScale = rootG / rootT;
  const V3 n = v3(-s.hx * nz, -s.hy * nz, nz);
  c.depth = radius - (centre[2] - s.h) * n[2];
  c.point = centre - radius * n;
  const V3 u = v3(1 - n[0] * n[0], -n[0] * n[1], -n[0] * n[2]);  // e_x without its normal part
  const V3 t1 = v3(u[0] * tScale, u[1] * tScale, u[2] * tScale);
  const V3 t2 = cross(n, t1);
  for (int r = 0; r < 3; ++r) {
    c.frame(r, 0) = n[r];
    c.frame(r, 1) = t1[r];
    c.frame(r, 2) = t2[r];
  }
  return c;
}

}  // namespace diffloco::gpu
