// The ground of sim/terrain.h for the fixed-size step: the plane z = 0 or a height field with a
// bicubic patch per cell (Catmull-Rom or monotone), and a sphere's contact against it, along the
// vertical or at the closest surface point. Same formulas and order as sim::sampleSurface and
// sim::sphereContact (that header explains them); here on plain arrays.
#pragma once

#include "sim/step_model.h"

namespace diffloco::sim {

struct FixedSurface {
  double h, hx, hy, hxx, hxy, hyy;
};

struct FixedSphereContact {
  double depth;
  M3 frame;              // columns: normal, tangent1, tangent2 (world)
  V3 point;              // contact point (world)
  FixedSurface surface;  // the height field at (px, py), zero on the plane (for the VJP)
  double px, py;         // where the surface is touched: the centre's (x, y) or the closest point's
  double side;           // closest: the sign of the distance (sim::SphereContact::side), else 1
  bool closest;          // which of the two contacts (the adjoint differs)
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

// Cubic Hermite weights at t of the values and slopes at t = 0 and 1, and their first and second
// derivatives.
struct HermiteBasis {
  double value[2], slope[2], dValue[2], dSlope[2], ddValue[2], ddSlope[2];
  DL_HD explicit HermiteBasis(double t) {
    const double t2 = t * t, t3 = t2 * t;
    value[0] = 1 - 3 * t2 + 2 * t3, value[1] = 3 * t2 - 2 * t3;
    slope[0] = t - 2 * t2 + t3, slope[1] = t3 - t2;
    dValue[0] = 6 * (t2 - t), dValue[1] = 6 * (t - t2);
    dSlope[0] = 1 - 4 * t + 3 * t2, dSlope[1] = 3 * t2 - 2 * t;
    ddValue[0] = 12 * t - 6, ddValue[1] = 6 - 12 * t;
    ddSlope[0] = 6 * t - 4, ddSlope[1] = 6 * t - 2;
  }
};

// Fritsch and Butland's slope from the two one-sided differences: their harmonic mean where they
// agree in sign, else zero. At most twice the smaller and half their sum. The one definition, for
// sim/terrain.cpp's monotone patch too.
DL_HD double monotoneSlope(double a, double b) {
  return a * b > 0 ? 2 * a * b / (a + b) : 0.0;
}

// The monotone patch of cell (i, j) at (u, v), derivatives per cell (sim/terrain.cpp's
// monotonePatch): bicubic Hermite on the cell's corners with Fritsch-Butland slopes.
DL_HD FixedSurface monotonePatch(const HeightFieldView& hf, int i, int j, double u, double v) {
  double p[4][4];
  for (int b = 0; b < 4; ++b) {
    const double* row = hf.heights + static_cast<long long>(clampIndex(j - 1 + b, hf.ny)) * hf.nx;
    for (int a = 0; a < 4; ++a) p[b][a] = row[clampIndex(i - 1 + a, hf.nx)];
  }
  const HermiteBasis bu(u), bv(v);
  FixedSurface s{0, 0, 0, 0, 0, 0};
  for (int b = 0; b < 2; ++b)
    for (int a = 0; a < 2; ++a) {
      const int A = a + 1, B = b + 1;
      const double h = p[B][A];
      const double sx = monotoneSlope(h - p[B][A - 1], p[B][A + 1] - h);
      const double sy = monotoneSlope(h - p[B - 1][A], p[B + 1][A] - h);
      s.h += bv.value[b] * (bu.value[a] * h + bu.slope[a] * sx) + bv.slope[b] * bu.value[a] * sy;
      s.hx +=
          bv.value[b] * (bu.dValue[a] * h + bu.dSlope[a] * sx) + bv.slope[b] * bu.dValue[a] * sy;
      s.hy += bv.dValue[b] * (bu.value[a] * h + bu.slope[a] * sx) + bv.dSlope[b] * bu.value[a] * sy;
      s.hxx +=
          bv.value[b] * (bu.ddValue[a] * h + bu.ddSlope[a] * sx) + bv.slope[b] * bu.ddValue[a] * sy;
      s.hxy +=
          bv.dValue[b] * (bu.dValue[a] * h + bu.dSlope[a] * sx) + bv.dSlope[b] * bu.dValue[a] * sy;
      s.hyy +=
          bv.ddValue[b] * (bu.value[a] * h + bu.slope[a] * sx) + bv.ddSlope[b] * bu.value[a] * sy;
    }
  return s;
}

DL_HD FixedSurface sampleSurface(const HeightFieldView& hf, double x, double y) {
  int i, j;
  double u, v;
  const double inv = 1.0 / hf.spacing, inv2 = inv * inv;
  locateCell(x, hf.originX, inv, hf.nx, i, u);
  locateCell(y, hf.originY, inv, hf.ny, j, v);
  if (hf.monotone) {
    const FixedSurface s = monotonePatch(hf, i, j, u, v);
    return FixedSurface{s.h, s.hx * inv, s.hy * inv, s.hxx * inv2, s.hxy * inv2, s.hyy * inv2};
  }
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

// sim/terrain.cpp's PatchBound: a patch of samples within [lo, lo + R] lies below lo + height R
// and its slopes are at most slope R per cell.
DL_HD double patchHeightBound(const HeightFieldView& hf) {
  return hf.monotone ? 1.25 : 1.28125;
}
DL_HD double patchSlopeBound(const HeightFieldView& hf) {
  return hf.monotone ? 2.375 : 1.875;
}

// An upper bound of the surface over cells i0..i1 x j0..j1: the highest of their precomputed
// bounds, else their samples' range (patchHeightBound).
DL_HD double cellsTop(const HeightFieldView& hf, int i0, int i1, int j0, int j1) {
  double top = -HUGE_VAL;
  if (hf.cellBounds) {
    const long long cellRow = static_cast<long long>(hf.nx) + 4;
    for (int j = j0; j <= j1; ++j) {
      const float* row = hf.cellBounds + 2 * ((j + 2) * cellRow + 2);
      for (int i = i0; i <= i1; ++i) top = fmax(top, static_cast<double>(row[2 * i]));
    }
    return top;
  }
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (int j = j0 - 1; j <= j1 + 2; ++j) {
    const double* row = hf.heights + static_cast<long long>(clampIndex(j, hf.ny)) * hf.nx;
    for (int i = i0 - 1; i <= i1 + 2; ++i) {
      const double p = row[clampIndex(i, hf.nx)];
      lo = fmin(lo, p), hi = fmax(hi, p);
    }
  }
  return lo + patchHeightBound(hf) * (hi - lo);
}

// The closest contact's depth bound (sim/terrain.cpp's closestDepthUpperBound): the highest surface
// point of the patches within r + one spacing of the centre horizontally. (Out of line on the host,
// as closestPoint: inlined, the closest contact's code grows the vertical contact's callers.)
DL_HD_OUTLINE double closestDepthUpperBound(const HeightFieldView& hf, const V3& centre,
                                            double radius) {
  const double inv = 1.0 / hf.spacing;
  const double reach = radius + hf.spacing;
  int i0, i1, j0, j1;
  double t;
  locateCell(centre[0] - reach, hf.originX, inv, hf.nx, i0, t);
  locateCell(centre[0] + reach, hf.originX, inv, hf.nx, i1, t);
  locateCell(centre[1] - reach, hf.originY, inv, hf.ny, j0, t);
  locateCell(centre[1] + reach, hf.originY, inv, hf.ny, j1, t);
  const double top = cellsTop(hf, i0, i1, j0, j1);
  const double gap = centre[2] - top;
  if (!(gap > 0)) return HUGE_VAL;
  return fmax(radius - gap, -hf.spacing);
}

// An upper bound on a sphere's depth from its cell's bound, or from the 4 x 4 samples around its
// centre without one, +infinity where the centre is not above them (sim::sphereDepthUpperBound,
// which derives the constants; with `closest` the window of closestDepthUpperBound): a leg sphere
// far above the ground is settled without interpolating the surface.
DL_HD double depthUpperBound(const HeightFieldView& hf, const V3& centre, double radius,
                             bool closest) {
  if (closest) return closestDepthUpperBound(hf, centre, radius);
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
  const double gap = centre[2] - (lo + patchHeightBound(hf) * range);
  if (!(gap > 0)) return HUGE_VAL;
  if (range == 0) return radius - gap;
  const double slope = patchSlopeBound(hf) * range / hf.spacing;
  return radius - gap / sqrt(1 + 2 * slope * slope);
}

// Newton on f = |(x, y, h(x, y)) - c|^2 from (px, py), with the exact Hessian where it is positive
// definite and Gauss-Newton's elsewhere, each step halved until f descends; where f stalls at
// round-off a step that halves the gradient is still taken, so that the minimum holds to round-off
// (the adjoint's implicit derivative assumes it). s: the surface at (px, py) on entry and exit.
// Returns f at the minimum.
DL_HD double descendToSurface(const HeightFieldView& hf, const V3& c, double& px, double& py,
                              FixedSurface& s) {
  double e = s.h - c[2];
  double f = (px - c[0]) * (px - c[0]) + (py - c[1]) * (py - c[1]) + e * e;
  double g0 = px - c[0] + e * s.hx, g1 = py - c[1] + e * s.hy;
  double gnorm = hypot(g0, g1);
  for (int k = 0; k < 50 && gnorm > 0; ++k) {
    e = s.h - c[2];
    double a = 1 + s.hx * s.hx, b = s.hx * s.hy, d = 1 + s.hy * s.hy;
    const double ae = a + e * s.hxx, be = b + e * s.hxy, de = d + e * s.hyy;
    if (ae > 0 && ae * de - be * be > 0) a = ae, b = be, d = de;
    const double det = a * d - b * b;
    const double sx = -(d * g0 - b * g1) / det, sy = -(a * g1 - b * g0) / det;
    bool moved = false;
    double t = 1;
    for (int halving = 0; halving < 40 && !moved; ++halving, t *= 0.5) {
      const double x = px + t * sx, y = py + t * sy;
      const FixedSurface q = sampleSurface(hf, x, y);
      const double eq = q.h - c[2];
      const double fq = (x - c[0]) * (x - c[0]) + (y - c[1]) * (y - c[1]) + eq * eq;
      const double q0 = x - c[0] + eq * q.hx, q1 = y - c[1] + eq * q.hy;
      const double qnorm = hypot(q0, q1);
      if (fq < f || (fq <= f * (1 + 1e-12) && qnorm < 0.5 * gnorm)) {
        px = x, py = y, s = q, f = fq, g0 = q0, g1 = q1, gnorm = qnorm;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return f;
}

// The monotone patch of cell (i, j) lies below its highest corner plus a quarter of its largest
// corner slopes along x and along y (per cell): the value weights are non-negative and sum to 1,
// and the slope weights' magnitudes sum to t (1 - t) <= 1/4 along each axis. A level cell beside a
// riser has zero slopes at its corners (Fritsch-Butland's at a sample between a level run and a
// rise), so its bound is its own height, not the riser's.
DL_HD double monotoneCellTop(const HeightFieldView& hf, int i, int j) {
  double p[4][4];
  for (int b = 0; b < 4; ++b) {
    const double* row = hf.heights + static_cast<long long>(clampIndex(j - 1 + b, hf.ny)) * hf.nx;
    for (int a = 0; a < 4; ++a) p[b][a] = row[clampIndex(i - 1 + a, hf.nx)];
  }
  double top = -HUGE_VAL, sx = 0, sy = 0;
  for (int B = 1; B <= 2; ++B)
    for (int A = 1; A <= 2; ++A) {
      const double h = p[B][A];
      top = fmax(top, h);
      sx = fmax(sx, fabs(monotoneSlope(h - p[B][A - 1], p[B][A + 1] - h)));
      sy = fmax(sy, fabs(monotoneSlope(h - p[B - 1][A], p[B + 1][A] - h)));
    }
  return top + 0.25 * (sx + sy);
}

// An upper bound of cell (i, j)'s surface: its precomputed bound (on monotone already the patch's
// own, HeightField::finalize), else the lower of its samples' and, on monotone, the patch's own.
DL_HD double cellTop(const HeightFieldView& hf, int i, int j) {
  const double top = cellsTop(hf, i, i, j, j);
  return hf.cellBounds || !hf.monotone ? top : fmin(top, monotoneCellTop(hf, i, j));
}

// The surface point closest to c: Newton from under c, and where that ends on level ground, the
// cells within `reach` of c horizontally too. The search from under c alone stays on a level tread
// beside a riser: the surface is flat on the tread up to the riser's cell, so f has a local minimum
// under c however deep the sphere overlaps the riser. So where the minimum found is level, every
// other cell in reach whose distance from c could be below it (horizontally to the cell,
// vertically down to its top) is searched from its centre, and the closest minimum is kept. Away
// from risers and edges no cell can be closer and none is searched; on sloped ground (slopes, rough
// ground) a minimum is not level and the search ends as before. `outside`: whether c is above the
// surface under it.
DL_HD_OUTLINE void closestPoint(const HeightFieldView& hf, const V3& c, double reach, double& px,
                                double& py, FixedSurface& s, bool& outside) {
  px = c[0], py = c[1];
  s = sampleSurface(hf, px, py);
  outside = c[2] >= s.h;
  double f = descendToSurface(hf, c, px, py, s);
  if (s.hx * s.hx + s.hy * s.hy > 1e-12) return;  // not a level patch
  const double inv = 1.0 / hf.spacing;
  int ic, jc, i0, i1, j0, j1;
  double t;
  locateCell(c[0], hf.originX, inv, hf.nx, ic, t);
  locateCell(c[1], hf.originY, inv, hf.ny, jc, t);
  // A point that matters is closer than the one found and within reach (a contact deeper than
  // -spacing): horizontally within the window.
  const double limit = fmin(f, reach * reach), window = sqrt(limit);
  locateCell(c[0] - window, hf.originX, inv, hf.nx, i0, t);
  locateCell(c[0] + window, hf.originX, inv, hf.nx, i1, t);
  locateCell(c[1] - window, hf.originY, inv, hf.ny, j0, t);
  locateCell(c[1] + window, hf.originY, inv, hf.ny, j1, t);
  const double tolerance = 1e-4 * hf.spacing;  // a cell no closer by this is not searched
  for (int j = j0; j <= j1; ++j)
    for (int i = i0; i <= i1; ++i) {
      if (i == ic && j == jc) continue;  // the search above started in it
      const double x0 = hf.originX + i * hf.spacing, y0 = hf.originY + j * hf.spacing;
      const double dx = fmax(fmax(x0 - c[0], c[0] - x0 - hf.spacing), 0.0);
      const double dy = fmax(fmax(y0 - c[1], c[1] - y0 - hf.spacing), 0.0);
      const double dz = fmax(c[2] - cellTop(hf, i, j), 0.0);
      const double bound = sqrt(dx * dx + dy * dy + dz * dz) + tolerance;
      if (bound * bound >= limit) continue;  // no point of the cell is within `limit`
      // From the cell's centre: on a riser's cell, the middle of its rise (its edges are level).
      double qx = x0 + 0.5 * hf.spacing, qy = y0 + 0.5 * hf.spacing;
      FixedSurface q = sampleSurface(hf, qx, qy);
      const double fq = descendToSurface(hf, c, qx, qy, q);
      if (fq < f) px = qx, py = qy, s = q, f = fq;
    }
}

DL_HD FixedSphereContact sphereContact(const HeightFieldView& hf, const V3& centre, double radius,
                                       bool closest) {
  FixedSphereContact c;
  c.px = centre[0], c.py = centre[1];
  c.side = 1;
  c.closest = false;
  if (!hf.heights) {
    c.depth = radius - centre[2];
    c.frame = M3{{0, 1, 0, 0, 0, 1, 1, 0, 0}};  // columns z, x, y
    c.point = v3(centre[0], centre[1], centre[2] - radius);
    c.surface = FixedSurface{0, 0, 0, 0, 0, 0};
    return c;
  }
  c.closest = closest;
  bool outside = true;
  if (closest)
    closestPoint(hf, centre, radius + hf.spacing, c.px, c.py, c.surface, outside);
  else
    c.surface = sampleSurface(hf, c.px, c.py);
  const FixedSurface& s = c.surface;
  // As sim::sphereContact: |e_x - n_x n|^2 = (1 + h_y^2) / (1 + h_x^2 + h_y^2).
  const double rootG = sqrt(1 + s.hx * s.hx + s.hy * s.hy), rootT = sqrt(1 + s.hy * s.hy);
  const double nz = 1 / rootG, tScale = rootG / rootT;
  const V3 n = v3(-s.hx * nz, -s.hy * nz, nz);
  if (closest) {
    // The distance's sign from the ground's inside and outside (sim::sphereContact).
    const V3 rel = centre - v3(c.px, c.py, s.h);
    const double along = dot(rel, n);
    c.side = (along >= 0) == outside ? 1.0 : -1.0;
    c.depth = radius - c.side * along;
  } else {
    c.depth = radius - (centre[2] - s.h) * n[2];
  }
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

}  // namespace diffloco::sim
