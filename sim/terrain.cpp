#include "sim/terrain.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "sim/ground.h"
#include "sim/pack.h"

namespace diffloco::sim {

Interpolant parseInterpolant(const std::string& name) {
  if (name == "catmull_rom") return Interpolant::CatmullRom;
  if (name == "monotone") return Interpolant::Monotone;
  throw std::invalid_argument("unknown height-field interpolant '" + name +
                              "' (catmull_rom or monotone)");
}

const char* toString(Interpolant i) {
  return i == Interpolant::Monotone ? "monotone" : "catmull_rom";
}

void validateHeightField(const HeightField& hf, const std::string& what) {
  auto fail = [&](const std::string& msg) { throw std::invalid_argument(what + ": " + msg); };
  if (hf.nx < 2 || hf.ny < 2) {
    std::ostringstream s;
    s << "needs at least 2 x 2 samples, has " << hf.nx << " x " << hf.ny;
    fail(s.str());
  }
  if (!(hf.spacing > 0) || !std::isfinite(hf.spacing)) fail("spacing must be positive and finite");
  if (!std::isfinite(hf.originX) || !std::isfinite(hf.originY)) fail("origin must be finite");
  if (hf.heights.size() != static_cast<size_t>(hf.nx) * static_cast<size_t>(hf.ny)) {
    std::ostringstream s;
    s << "has " << hf.heights.size() << " heights for " << hf.nx << " x " << hf.ny << " samples";
    fail(s.str());
  }
  for (size_t k = 0; k < hf.heights.size(); ++k)
    if (!std::isfinite(hf.heights[k])) {
      std::ostringstream s;
      s << "height " << hf.heights[k] << " at sample (" << k % hf.nx << ", " << k / hf.nx
        << ") is not finite";
      fail(s.str());
    }
}

HeightField smoothHeightField(const HeightField& hf, double sigma) {
  HeightField out = hf;
  if (!(sigma > 0)) {
    out.finalize();
    return out;
  }
  const int r = std::max(1, static_cast<int>(std::ceil(3 * sigma / hf.spacing)));
  std::vector<double> w(2 * r + 1);
  double total = 0;
  for (int k = -r; k <= r; ++k) {
    const double d = k * hf.spacing / sigma;
    total += w[k + r] = std::exp(-0.5 * d * d);
  }
  for (double& x : w) x /= total;
  std::vector<double> tmp(hf.heights.size());
  for (int iy = 0; iy < hf.ny; ++iy)  // along x
    for (int ix = 0; ix < hf.nx; ++ix) {
      double s = 0;
      for (int k = -r; k <= r; ++k) s += w[k + r] * hf.at(std::clamp(ix + k, 0, hf.nx - 1), iy);
      tmp[static_cast<size_t>(iy) * hf.nx + ix] = s;
    }
  for (int iy = 0; iy < hf.ny; ++iy)  // along y
    for (int ix = 0; ix < hf.nx; ++ix) {
      double s = 0;
      for (int k = -r; k <= r; ++k)
        s += w[k + r] * tmp[static_cast<size_t>(std::clamp(iy + k, 0, hf.ny - 1)) * hf.nx + ix];
      out.heights[static_cast<size_t>(iy) * hf.nx + ix] = s;
    }
  out.finalize();
  return out;
}

namespace {

// Catmull-Rom basis at t in [0, 1) and its first and second derivatives: the cubic through p1
// (t = 0) and p2 (t = 1) with slopes (p2 - p0) / 2 and (p3 - p1) / 2.
struct Basis {
  double w[4], d[4], dd[4];
  explicit Basis(double t) {
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

// Cubic Hermite basis at t in [0, 1) and its first and second derivatives: value[k] weighs the
// value at node k (t = k), slope[k] the slope there.
struct Hermite {
  double value[2], slope[2], dValue[2], dSlope[2], ddValue[2], ddSlope[2];
  explicit Hermite(double t) {
    const double t2 = t * t, t3 = t2 * t;
    value[0] = 1 - 3 * t2 + 2 * t3, value[1] = 3 * t2 - 2 * t3;
    slope[0] = t - 2 * t2 + t3, slope[1] = t3 - t2;
    dValue[0] = 6 * (t2 - t), dValue[1] = 6 * (t - t2);
    dSlope[0] = 1 - 4 * t + 3 * t2, dSlope[1] = 3 * t2 - 2 * t;
    ddValue[0] = 12 * t - 6, ddValue[1] = 6 - 12 * t;
    ddSlope[0] = 6 * t - 4, ddSlope[1] = 6 * t - 2;
  }
};

// monotoneSlope (sim/ground.h): Fritsch and Butland's slope from the two one-sided differences.

// The 4 x 4 samples around cell (i, j): p[b][a] at (i - 1 + a, j - 1 + b), indices clamped.
void stencil(const HeightField& hf, int i, int j, double p[4][4]) {
  int ix[4];
  for (int a = 0; a < 4; ++a) ix[a] = std::clamp(i - 1 + a, 0, hf.nx - 1);
  for (int b = 0; b < 4; ++b) {
    const double* row =
        hf.heights.data() + static_cast<size_t>(std::clamp(j - 1 + b, 0, hf.ny - 1)) * hf.nx;
    for (int a = 0; a < 4; ++a) p[b][a] = row[ix[a]];
  }
}

// Monotone: bicubic Hermite on the cell's corners (p[1..2][1..2]) with Fritsch-Butland slopes
// (per cell) and zero cross derivative.
SurfacePoint monotonePatch(const double p[4][4], double u, double v) {
  const Hermite bu(u), bv(v);
  SurfacePoint s;
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

}  // namespace

SurfacePoint sampleSurface(const HeightField& hf, double x, double y) {
  int i, j;
  double u, v;
  const double inv = 1.0 / hf.spacing, inv2 = inv * inv;
  locateInGrid(x, hf.originX, inv, hf.nx, i, u);
  locateInGrid(y, hf.originY, inv, hf.ny, j, v);
  SurfacePoint s;
  if (hf.interpolant == Interpolant::Monotone) {
    double p[4][4];
    stencil(hf, i, j, p);
    s = monotonePatch(p, u, v);
  } else {
    // Catmull-Rom: per row b the row's cubic in u and its derivatives, then combined along v.
    const Basis bu(u), bv(v);
    int ix[4];
    for (int a = 0; a < 4; ++a) ix[a] = std::clamp(i - 1 + a, 0, hf.nx - 1);
    for (int b = 0; b < 4; ++b) {
      const double* row =
          hf.heights.data() + static_cast<size_t>(std::clamp(j - 1 + b, 0, hf.ny - 1)) * hf.nx;
      double r = 0, ru = 0, ruu = 0;
      for (int a = 0; a < 4; ++a) {
        const double q = row[ix[a]];
        r += bu.w[a] * q;
        ru += bu.d[a] * q;
        ruu += bu.dd[a] * q;
      }
      s.h += bv.w[b] * r;
      s.hx += bv.w[b] * ru;
      s.hxx += bv.w[b] * ruu;
      s.hy += bv.d[b] * r;
      s.hxy += bv.d[b] * ru;
      s.hyy += bv.dd[b] * r;
    }
  }
  // Derivatives per cell to per metre.
  s.hx *= inv, s.hy *= inv;
  s.hxx *= inv2, s.hxy *= inv2, s.hyy *= inv2;
  return s;
}

HeightAndSlope sampleHeightAndSlope(const HeightField& value, const HeightField& slopes, double x,
                                    double y) {
  const bool shared = value.nx == slopes.nx && value.ny == slopes.ny &&
                      value.spacing == slopes.spacing && value.originX == slopes.originX &&
                      value.originY == slopes.originY;
  if (!shared || value.interpolant != Interpolant::CatmullRom ||
      slopes.interpolant != Interpolant::CatmullRom) {
    const SurfacePoint d = sampleSurface(slopes, x, y);
    return {&value == &slopes ? d.h : sampleSurface(value, x, y).h, d.hx, d.hy};
  }
  int i, j;
  double u, v;
  const double inv = 1.0 / value.spacing;
  locateInGrid(x, value.originX, inv, value.nx, i, u);
  locateInGrid(y, value.originY, inv, value.ny, j, v);
  const Basis bu(u), bv(v);
  int ix[4];
  for (int a = 0; a < 4; ++a) ix[a] = std::clamp(i - 1 + a, 0, value.nx - 1);
  // sampleSurface's sums without the curvature's, for two fields at once.
  HeightAndSlope s;
  for (int b = 0; b < 4; ++b) {
    const size_t row = static_cast<size_t>(std::clamp(j - 1 + b, 0, value.ny - 1)) * value.nx;
    const double* rv = value.heights.data() + row;
    const double* rs = slopes.heights.data() + row;
    double r = 0, q = 0, qu = 0;
    for (int a = 0; a < 4; ++a) {
      r += bu.w[a] * rv[ix[a]];
      q += bu.w[a] * rs[ix[a]];
      qu += bu.d[a] * rs[ix[a]];
    }
    s.h += bv.w[b] * r;
    s.hx += bv.w[b] * qu;
    s.hy += bv.d[b] * q;
  }
  s.hx *= inv, s.hy *= inv;
  return s;
}

namespace {

// A patch made of samples within [lo, lo + R] lies below lo + height R, and its slopes along x
// and y are at most slope R per cell.
//  - catmull_rom: h - lo = sum_ab w_a(u) w_b(v) (p_ab - lo) <= (positive weights) R; per axis the
//    positive weights sum to at most 9/8 and the negative ones to at least -1/8, so the product's
//    positive part is at most (9/8)^2 + (1/8)^2. A derivative's weights sum to zero with a
//    positive part of at most 3/2 (at t = 1/2), times at most 5/4 (the other axis' |weights|).
//  - monotone: a slope is at most R / 2 (a harmonic mean is at most the arithmetic one, half a
//    difference across two cells). The value weights are non-negative and sum to 1 and the slope
//    weights' magnitudes sum to t (1 - t) <= 1/4 per axis: h - lo <= R + R / 8 + R / 8. Along x the
//    values contribute 6 u (1 - u) |difference| <= 3 R / 2, the x slopes (|1 - 4u + 3u^2| +
//    |3u^2 - 2u| <= 1) R / 2 and the y slopes 3 / 2 * 1 / 4 * R (a difference of two slopes).
struct PatchBound {
  double height, slope;
  static PatchBound of(const HeightField& hf) {
    return hf.interpolant == Interpolant::Monotone ? PatchBound{1.25, 2.375}
                                                   : PatchBound{1.28125, 1.875};
  }
};

// A double as a float no lower (no higher): the bound stays a bound after the rounding.
float floatAbove(double x) {
  if (!(x <= std::numeric_limits<float>::max())) return std::numeric_limits<float>::infinity();
  if (x < std::numeric_limits<float>::lowest()) return std::numeric_limits<float>::lowest();
  const float f = static_cast<float>(x);
  return f < x ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}
float floatBelow(double x) {  // x in [0, 1]
  const float f = static_cast<float>(x);
  return f > x ? std::nextafter(f, 0.0f) : f;
}

}  // namespace

void HeightField::finalize() {
  validateHeightField(*this);
  const PatchBound k = PatchBound::of(*this);
  const int cx = nx + 4, cy = ny + 4;
  cellBounds.resize(static_cast<size_t>(cx) * cy);
  // Per row of cells: each sample column's range over the stencil's rows j - 1 .. j + 2, then
  // each cell's over its columns i - 1 .. i + 2 (indices clamped, as the interpolant's).
  std::vector<double> colLo(nx), colHi(nx);
  const HeightFieldView view = toView(this);  // monotoneCellTop reads its samples alone
  for (int cj = 0; cj < cy; ++cj) {
    const int j = cj - 2;
    for (int ix = 0; ix < nx; ++ix) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (int b = j - 1; b <= j + 2; ++b) {
        const double p = at(ix, std::clamp(b, 0, ny - 1));
        lo = std::min(lo, p), hi = std::max(hi, p);
      }
      colLo[ix] = lo, colHi[ix] = hi;
    }
    for (int ci = 0; ci < cx; ++ci) {
      const int i = ci - 2;
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (int a = i - 1; a <= i + 2; ++a) {
        const int c = std::clamp(a, 0, nx - 1);
        lo = std::min(lo, colLo[c]), hi = std::max(hi, colHi[c]);
      }
      const double range = hi - lo, slope = k.slope * range / spacing;
      CellBound& cb = cellBounds[static_cast<size_t>(cj) * cx + ci];
      double top = lo + k.height * range;
      // The monotone patch's own bound (sim/ground.h): a level cell beside a riser is its height.
      if (interpolant == Interpolant::Monotone) top = std::min(top, monotoneCellTop(view, i, j));
      cb.top = floatAbove(top);
      cb.minNormalZ = range == 0 ? 1.0f : floatBelow(1 / std::sqrt(1 + 2 * slope * slope));
    }
  }
  boundsInterpolant = interpolant;
}

SphereContact sphereContact(const HeightField* hf, const Vec3& centre, double radius,
                            bool closest) {
  SphereContact c;
  if (!hf) {
    c.depth = radius - centre.z();
    c.frame << 0, 1, 0, 0, 0, 1, 1, 0, 0;  // columns z, x, y
    c.point = centre - radius * Vec3::UnitZ();
    c.px = centre.x(), c.py = centre.y();
    return c;
  }
  c.closest = closest;
  bool outside = true;
  if (closest) {
    // The stages' search (sim/ground.h), within the reach of closestDepthUpperBound.
    FixedSurface q;
    closestPoint(toView(hf), v3(centre.x(), centre.y(), centre.z()), radius + hf->spacing, c.px,
                 c.py, q, outside);
    c.surface = SurfacePoint{q.h, q.hx, q.hy, q.hxx, q.hxy, q.hyy};
  } else {
    c.px = centre.x(), c.py = centre.y();
    c.surface = sampleSurface(*hf, c.px, c.py);
  }
  const SurfacePoint& s = c.surface;
  // n = (-h_x, -h_y, 1) / sqrt(g), g = 1 + h_x^2 + h_y^2, and t1 below has |e_x - n_x n|^2 =
  // 1 - n_x^2 = (1 + h_y^2) / g: two square roots that do not wait for each other.
  const double rootG = std::sqrt(1 + s.hx * s.hx + s.hy * s.hy);
  const double rootT = std::sqrt(1 + s.hy * s.hy);
  const double nz = 1 / rootG, tScale = rootG / rootT;
  const Vec3 n(-s.hx * nz, -s.hy * nz, nz);
  if (closest) {
    // At the search's minimum c - p is along +-n. The ground's own inside/outside (c against the
    // surface under it) gives the distance's sign; a minimum on a face turned the other way (the
    // back of a rise seen from beyond its edge) gets it through `side`.
    const double along = (centre - Vec3(c.px, c.py, s.h)).dot(n);
    c.side = (along >= 0) == outside ? 1.0 : -1.0;
    c.depth = radius - c.side * along;
  } else {
    c.depth = radius - (centre.z() - s.h) * n.z();
  }
  c.point = centre - radius * n;
  // t1: the world x axis without its normal part, normalised.
  const Vec3 t1 = Vec3(1 - n.x() * n.x(), -n.x() * n.y(), -n.x() * n.z()) * tScale;
  c.frame.col(0) = n;
  c.frame.col(1) = t1;
  c.frame.col(2) = n.cross(t1);
  return c;
}

namespace {

// sphereDepthUpperBound with `closest`: the window of cells within r + one spacing.
[[gnu::noinline]] double closestDepthUpperBound(const HeightField& hf, const Vec3& centre,
                                                double radius) {
  const CellBound* cells = hf.finalized() ? hf.cellBounds.data() : nullptr;
  const size_t cellRow = static_cast<size_t>(hf.nx) + 4;
  const double inv = 1.0 / hf.spacing;
  // Every patch within r + spacing horizontally: its samples' range bounds its heights.
  const double reach = radius + hf.spacing;
  int i0, i1, j0, j1;
  double t;
  locateInGrid(centre.x() - reach, hf.originX, inv, hf.nx, i0, t);
  locateInGrid(centre.x() + reach, hf.originX, inv, hf.nx, i1, t);
  locateInGrid(centre.y() - reach, hf.originY, inv, hf.ny, j0, t);
  locateInGrid(centre.y() + reach, hf.originY, inv, hf.ny, j1, t);
  double top = -std::numeric_limits<double>::infinity();
  if (cells) {  // the highest of the cells' own bounds (within the window's, as each is)
    for (int j = j0; j <= j1; ++j) {
      const CellBound* row = cells + (j + 2) * cellRow + 2;
      for (int i = i0; i <= i1; ++i) top = std::max(top, static_cast<double>(row[i].top));
    }
  } else {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int j = j0 - 1; j <= j1 + 2; ++j) {
      const double* row =
          hf.heights.data() + static_cast<size_t>(std::clamp(j, 0, hf.ny - 1)) * hf.nx;
      for (int i = i0 - 1; i <= i1 + 2; ++i) {
        const double p = row[std::clamp(i, 0, hf.nx - 1)];
        lo = std::min(lo, p), hi = std::max(hi, p);
      }
    }
    top = lo + PatchBound::of(hf).height * (hi - lo);
  }
  const double gap = centre.z() - top;
  if (!(gap > 0)) return std::numeric_limits<double>::infinity();
  return std::max(radius - gap, -hf.spacing);
}

// sphereDepthUpperBound of a field that is not finalized: the 16 samples under the centre.
[[gnu::noinline]] double depthUpperBoundFromSamples(const HeightField& hf, const Vec3& centre,
                                                    double radius) {
  const double inv = 1.0 / hf.spacing;
  int i, j;
  double u, v;
  locateInGrid(centre.x(), hf.originX, inv, hf.nx, i, u);
  locateInGrid(centre.y(), hf.originY, inv, hf.ny, j, v);
  int ix[4];
  const double* rows[4];
  for (int a = 0; a < 4; ++a) {
    ix[a] = std::clamp(i - 1 + a, 0, hf.nx - 1);
    rows[a] = hf.heights.data() + static_cast<size_t>(std::clamp(j - 1 + a, 0, hf.ny - 1)) * hf.nx;
  }
  // Per column, then across: four short chains rather than one of sixteen.
  double los[4], his[4];
  for (int a = 0; a < 4; ++a) {
    const double p0 = rows[0][ix[a]], p1 = rows[1][ix[a]], p2 = rows[2][ix[a]], p3 = rows[3][ix[a]];
    los[a] = std::min(std::min(p0, p1), std::min(p2, p3));
    his[a] = std::max(std::max(p0, p1), std::max(p2, p3));
  }
  const double lo = std::min(std::min(los[0], los[1]), std::min(los[2], los[3]));
  const double hi = std::max(std::max(his[0], his[1]), std::max(his[2], his[3]));
  const PatchBound k = PatchBound::of(hf);
  const double range = hi - lo;
  const double gap = centre.z() - (lo + k.height * range);
  if (!(gap > 0)) return std::numeric_limits<double>::infinity();
  if (range == 0) return radius - gap;  // flat around the centre: n = z
  const double slope = k.slope * range / hf.spacing;
  return radius - gap / std::sqrt(1 + 2 * slope * slope);
}

}  // namespace

double sphereDepthUpperBoundOffCells(const HeightField& hf, const Vec3& centre, double radius,
                                     bool closest) {
  return closest ? closestDepthUpperBound(hf, centre, radius)
                 : depthUpperBoundFromSamples(hf, centre, radius);
}

Vec3 sphereContactVjp(const Vec3& centre, double radius, const SphereContact& c, double depthBar,
                      const Mat3& frameBar, const Vec3& pointBar) {
  const SurfacePoint& s = c.surface;
  const Vec3 n = c.frame.col(0), t1 = c.frame.col(1);
  Vec3 cb = pointBar;  // point = centre - r n
  Vec3 nb = frameBar.col(0) - radius * pointBar;
  Vec3 t1b = frameBar.col(1);
  const Vec3& t2b = frameBar.col(2);
  double hb = 0;
  if (c.closest) {
    // depth = r - side (c - P) . n, P = (px, py, h)
    const Vec3 P(c.px, c.py, s.h);
    depthBar *= c.side;
    cb -= depthBar * n;
    nb -= depthBar * (centre - P);
    hb = depthBar * n.z();
  } else {
    // depth = r - (c_z - h) n_z
    cb.z() -= depthBar * n.z();
    hb = depthBar * n.z();
    nb.z() -= depthBar * (centre.z() - s.h);
  }
  // t2 = n x t1
  nb += t1.cross(t2b);
  t1b += t2b.cross(n);
  // t1 = u / |u|, u = e_x - n_x n
  const Vec3 u = Vec3::UnitX() - n.x() * n;
  const double un = u.norm();
  const Vec3 ub = (t1b - t1.dot(t1b) * t1) / un;
  nb -= n.x() * ub;
  nb.x() -= ub.dot(n);
  // n = g / |g|, g = (-h_x, -h_y, 1)
  const double gn = std::sqrt(1 + s.hx * s.hx + s.hy * s.hy);
  const Vec3 gb = (nb - n.dot(nb) * n) / gn;
  const double hxb = -gb.x(), hyb = -gb.y();
  // h, h_x, h_y at the touch point (px, py)
  double pxb = hb * s.hx + hxb * s.hxx + hyb * s.hxy;
  double pyb = hb * s.hy + hxb * s.hxy + hyb * s.hyy;
  if (!c.closest) {  // (px, py) = (c_x, c_y)
    cb.x() += pxb;
    cb.y() += pyb;
    return cb;
  }
  // P = (px, py, h): its x and y
  pxb += depthBar * n.x();
  pyb += depthBar * n.y();
  // p(c) minimises |P - c|^2: G = (px - c_x + e h_x, py - c_y + e h_y) = 0 with e = h - c_z, so
  // dp/dc = -H^-1 dG/dc, H = dG/dp (symmetric), dG/dc = [[-1, 0, -h_x], [0, -1, -h_y]].
  // Where the forward stopped short of a minimum (H not positive definite there), its
  // Gauss-Newton H: a finite derivative rather than a blow-up.
  const double e = s.h - centre.z();
  double a = 1 + s.hx * s.hx, b = s.hx * s.hy, d = 1 + s.hy * s.hy;
  const double ae = a + e * s.hxx, be = b + e * s.hxy, de = d + e * s.hyy;
  if (ae > 0 && ae * de - be * be > 1e-12 * ae * de) a = ae, b = be, d = de;
  const double det = a * d - b * b;
  const double w0 = (d * pxb - b * pyb) / det, w1 = (a * pyb - b * pxb) / det;
  cb.x() += w0;
  cb.y() += w1;
  cb.z() += w0 * s.hx + w1 * s.hy;
  return cb;
}

}  // namespace diffloco::sim
