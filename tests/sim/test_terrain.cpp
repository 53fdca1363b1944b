// The height field's interpolant and the sphere-on-terrain geometry (sim/terrain.h) against closed
// forms and central finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "sim/terrain.h"

using namespace diffloco::sim;

namespace {

HeightField grid(int nx, int ny, double spacing, double x0, double y0,
                 const std::function<double(double, double)>& h) {
  HeightField hf;
  hf.nx = nx, hf.ny = ny, hf.spacing = spacing, hf.originX = x0, hf.originY = y0;
  hf.heights.resize(nx * ny);
  for (int iy = 0; iy < ny; ++iy)
    for (int ix = 0; ix < nx; ++ix) hf.heights[iy * nx + ix] = h(x0 + ix * spacing, y0 + iy * spacing);
  return hf;
}

HeightField with(HeightField hf, Interpolant k) {
  hf.interpolant = k;
  return hf;
}

HeightField randomField(unsigned seed, Interpolant k = Interpolant::CatmullRom) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  return with(grid(12, 9, 0.1, -0.6, -0.4, [&](double, double) { return u(rng); }), k);
}

const Interpolant kInterpolants[] = {Interpolant::CatmullRom, Interpolant::Monotone};

// sphereContactVjp at centre c against central differences of the forward, for random adjoints
// of the depth, the frame and the point.
void expectContactVjpMatchesFd(const HeightField& hf, const Vec3& c, double radius, bool closest,
                               double tol, std::mt19937& rng, const std::string& where) {
  std::normal_distribution<double> g(0, 1);
  const double db = g(rng);
  Mat3 Fb;
  for (int i = 0; i < 9; ++i) Fb.data()[i] = g(rng);
  const Vec3 pb(g(rng), g(rng), g(rng));
  auto loss = [&](const Vec3& x) {
    const SphereContact q = sphereContact(&hf, x, radius, closest);
    return db * q.depth + Fb.cwiseProduct(q.frame).sum() + pb.dot(q.point);
  };
  const Vec3 vjp = sphereContactVjp(c, radius, sphereContact(&hf, c, radius, closest), db, Fb, pb);
  const double e = 1e-6;
  for (int i = 0; i < 3; ++i) {
    Vec3 cp = c, cm = c;
    cp[i] += e, cm[i] -= e;
    const double fd = (loss(cp) - loss(cm)) / (2 * e);
    EXPECT_NEAR(vjp[i], fd, tol * std::max(1.0, std::abs(fd)))
        << where << ", axis " << i << " at " << c.transpose();
  }
}

// The distance from c to a height field uniform along y (its closest point has c's y): a scan of
// x within c.x +- reach, refined around the best sample (the surface is steep at a riser).
double profileDistance(const HeightField& hf, const Vec3& c, double reach) {
  auto at = [&](double x) { return std::hypot(x - c.x(), sampleSurface(hf, x, c.y()).h - c.z()); };
  double bestX = c.x(), best = at(c.x());
  for (double x = c.x() - reach; x <= c.x() + reach; x += 2e-5)
    if (at(x) < best) best = at(x), bestX = x;
  for (double x = bestX - 4e-5; x <= bestX + 4e-5; x += 1e-8) best = std::min(best, at(x));
  return best;
}

}  // namespace

TEST(Terrain, InterpolatesSamplesAndReproducesPlanes) {
  for (Interpolant k : kInterpolants) {
    SCOPED_TRACE(toString(k));
    const HeightField r = randomField(1, k);
    for (int iy = 0; iy < r.ny; ++iy)
      for (int ix = 0; ix < r.nx; ++ix)
        EXPECT_NEAR(sampleSurface(r, r.originX + ix * r.spacing, r.originY + iy * r.spacing).h,
                    r.at(ix, iy), 1e-15);
    // A plane: exact height and slope, no curvature, one cell in from the border.
    const HeightField p = with(
        grid(20, 20, 0.05, 1.0, -2.0, [](double x, double y) { return 0.3 + 0.2 * x - 0.1 * y; }),
        k);
    std::mt19937 rng(2);
    std::uniform_real_distribution<double> ux(1.05, 1.9), uy(-1.95, -1.1);
    for (int k = 0; k < 100; ++k) {
      const double x = ux(rng), y = uy(rng);
      const SurfacePoint s = sampleSurface(p, x, y);
      EXPECT_NEAR(s.h, 0.3 + 0.2 * x - 0.1 * y, 1e-12);
      EXPECT_NEAR(s.hx, 0.2, 1e-12);
      EXPECT_NEAR(s.hy, -0.1, 1e-12);
      EXPECT_NEAR(s.hxx, 0, 1e-10);
      EXPECT_NEAR(s.hxy, 0, 1e-10);
      EXPECT_NEAR(s.hyy, 0, 1e-10);
    }
  }
}

// First derivatives against differences of the height, second against differences of the first,
// at random points inside cells (the second derivatives jump across cell lines).
TEST(Terrain, DerivativesMatchFiniteDifferences) {
  for (Interpolant k : kInterpolants) {
    SCOPED_TRACE(toString(k));
    const HeightField r = randomField(3, k);
    std::mt19937 rng(4);
    std::uniform_real_distribution<double> ux(-0.75, 0.65), uy(-0.55, 0.45);
    const double e = 1e-6;
    int checked = 0;
    for (int k = 0; k < 200; ++k) {
      const double x = ux(rng), y = uy(rng);
      auto nearLine = [&](double c, double o) {
        const double f = (c - o) / r.spacing;
        return std::abs(f - std::round(f)) < 1e-4;
      };
      if (nearLine(x, r.originX) || nearLine(y, r.originY)) continue;
      ++checked;
      const SurfacePoint s = sampleSurface(r, x, y);
      const SurfacePoint px = sampleSurface(r, x + e, y), mx = sampleSurface(r, x - e, y);
      const SurfacePoint py = sampleSurface(r, x, y + e), my = sampleSurface(r, x, y - e);
      EXPECT_NEAR(s.hx, (px.h - mx.h) / (2 * e), 1e-7);
      EXPECT_NEAR(s.hy, (py.h - my.h) / (2 * e), 1e-7);
      EXPECT_NEAR(s.hxx, (px.hx - mx.hx) / (2 * e), 1e-5);
      EXPECT_NEAR(s.hxy, (py.hx - my.hx) / (2 * e), 1e-5);
      EXPECT_NEAR(s.hxy, (px.hy - mx.hy) / (2 * e), 1e-5);
      EXPECT_NEAR(s.hyy, (py.hy - my.hy) / (2 * e), 1e-5);
    }
    EXPECT_GT(checked, 150);
  }
}

// Height and gradient are continuous across cell lines and the grid's border; two cells out the
// surface is flat at the border's heights.
TEST(Terrain, SurfaceIsC1AcrossCellLinesAndBeyondTheGrid) {
  for (Interpolant k : kInterpolants) {
    SCOPED_TRACE(toString(k));
    const HeightField r = randomField(5, k);
    const double e = 1e-9;
    for (int ix = -1; ix <= r.nx; ++ix) {
      const double x = r.originX + ix * r.spacing;
      for (double y : {-0.33, 0.07, 0.41, 0.6}) {
        const SurfacePoint a = sampleSurface(r, x - e, y), b = sampleSurface(r, x + e, y);
        EXPECT_NEAR(a.h, b.h, 1e-9) << "x line " << ix;
        EXPECT_NEAR(a.hx, b.hx, 1e-6) << "x line " << ix;
        EXPECT_NEAR(a.hy, b.hy, 1e-6) << "x line " << ix;
      }
    }
    const SurfacePoint far = sampleSurface(r, r.originX + r.sizeX() + 0.5, r.originY - 3.0);
    EXPECT_EQ(far.h, r.at(r.nx - 1, 0));
    EXPECT_EQ(far.hx, 0.0);
    EXPECT_EQ(far.hy, 0.0);
    // Non-finite and huge coordinates are held outside the grid, never an out-of-range index.
    EXPECT_EQ(sampleSurface(r, std::nan(""), 1e300).h, r.at(0, r.ny - 1));
  }
}

// A step of height 1 between samples k and k + 1: monotone on the edge's cell, and the overshoot
// of a C1 cubic on the cells beside it is 2/27 of the jump (documented in sim/terrain.h).
TEST(Terrain, StepEdgeOvershootIsTwoTwentySevenths) {
  const HeightField s = grid(12, 4, 0.1, 0, 0, [](double x, double) { return x > 0.55 ? 1.0 : 0.0; });
  double lo = 0, hi = 1, prev = -1;
  for (int k = 0; k <= 3000; ++k) {
    const double x = 0.3 + 0.6 * k / 3000.0, h = sampleSurface(s, x, 0.15).h;
    lo = std::min(lo, h), hi = std::max(hi, h);
    if (x >= 0.5 && x <= 0.6) {
      EXPECT_GE(h, prev - 1e-15) << x;
      prev = h;
    }
  }
  EXPECT_GE(lo, -2.0 / 27 - 1e-12);
  EXPECT_LE(hi, 1 + 2.0 / 27 + 1e-12);
  // The extremes, at a third of a cell from the edge's cell.
  EXPECT_NEAR(sampleSurface(s, 0.4 + 0.2 / 3, 0.15).h, -2.0 / 27, 1e-12);
  EXPECT_NEAR(sampleSurface(s, 0.6 + 0.1 / 3, 0.15).h, 1 + 2.0 / 27, 1e-12);
}

// The monotone interpolant across the same step: the edge's cell rises monotonically from one
// level to the other and the cells beside it stay flat (no lip, no dip), the normal continuous;
// on pyramid stairs (steps along x and y, corners included) and on random ground every point lies
// within its cell's 4 x 4 samples (the bound sphereDepthUpperBound's monotone constants improve
// on).
TEST(Terrain, MonotoneStepEdgeHasNoLip) {
  const HeightField s =
      with(grid(12, 4, 0.1, 0, 0, [](double x, double) { return x > 0.55 ? 1.0 : 0.0; }),
           Interpolant::Monotone);
  double prev = -1;
  for (int k = 0; k <= 3000; ++k) {
    const double x = 0.3 + 0.6 * k / 3000.0;
    const SurfacePoint p = sampleSurface(s, x, 0.15);
    EXPECT_GE(p.h, prev - 1e-15) << x;  // round-off: the value weights sum to 1 to 1 ulp
    EXPECT_GE(p.h, -1e-15) << x;
    EXPECT_LE(p.h, 1.0 + 1e-15) << x;
    if (x < 0.5 || x > 0.6) {
      EXPECT_NEAR(p.h, std::round(p.h), 1e-15) << x;
    }
    prev = p.h;
  }
  EXPECT_NEAR(sampleSurface(s, 0.55, 0.15).h, 0.5, 1e-15);
  EXPECT_NEAR(sampleSurface(s, 0.55, 0.15).hx, 1.5 / 0.1, 1e-12);  // smoothstep's mid slope
  const HeightField stairs =
      with(grid(40, 40, 0.05, -1, -1,
                [](double x, double y) {
                  return 0.12 * std::floor(std::max(std::abs(x), std::abs(y)) / 0.3);
                }),
           Interpolant::Monotone);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.1, 1.1);
  for (const HeightField& hf : {stairs, randomField(4, Interpolant::Monotone)})
    for (int k = 0; k < 20000; ++k) {
      const double x = u(rng), y = u(rng);
      const int i = static_cast<int>(std::floor((x - hf.originX) / hf.spacing));
      const int j = static_cast<int>(std::floor((y - hf.originY) / hf.spacing));
      double lo = 1e9, hi = -1e9;
      for (int b = j - 1; b <= j + 2; ++b)
        for (int a = i - 1; a <= i + 2; ++a) {
          const double p = hf.at(std::clamp(a, 0, hf.nx - 1), std::clamp(b, 0, hf.ny - 1));
          lo = std::min(lo, p), hi = std::max(hi, p);
        }
      const double h = sampleSurface(hf, x, y).h;
      ASSERT_GE(h, lo - 1e-12) << x << " " << y;
      ASSERT_LE(h, hi + 1e-12) << x << " " << y;
    }
}

TEST(Terrain, InterpolantNames) {
  for (Interpolant k : kInterpolants) EXPECT_EQ(parseInterpolant(toString(k)), k);
  EXPECT_THROW(parseInterpolant("bilinear"), std::invalid_argument);
}

TEST(Terrain, BadHeightFieldsNameTheProblem) {
  auto message = [](const HeightField& hf) {
    try {
      validateHeightField(hf, "task.terrain");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  HeightField ok = grid(3, 3, 0.1, 0, 0, [](double, double) { return 0.0; });
  EXPECT_EQ(message(ok), "accepted");
  HeightField b = ok;
  b.nx = 1;
  EXPECT_EQ(message(b), "task.terrain: needs at least 2 x 2 samples, has 1 x 3");
  b = ok;
  b.spacing = -0.1;
  EXPECT_EQ(message(b), "task.terrain: spacing must be positive and finite");
  b = ok;
  b.heights.pop_back();
  EXPECT_EQ(message(b), "task.terrain: has 8 heights for 3 x 3 samples");
  b = ok;
  b.heights[5] = std::nan("");
  EXPECT_EQ(message(b), "task.terrain: height nan at sample (2, 1) is not finite");
}

TEST(Terrain, SphereOnAFlatHeightFieldIsThePlane) {
  const HeightField flat = grid(10, 10, 0.1, -0.5, -0.5, [](double, double) { return 0.0; });
  const Vec3 c(0.13, -0.21, 0.018);
  const SphereContact a = sphereContact(nullptr, c, 0.02), b = sphereContact(&flat, c, 0.02);
  EXPECT_DOUBLE_EQ(a.depth, 0.02 - 0.018);
  EXPECT_DOUBLE_EQ(b.depth, a.depth);
  EXPECT_TRUE(a.frame.isApprox(b.frame, 1e-15)) << a.frame << "\n" << b.frame;
  EXPECT_TRUE(a.point.isApprox(b.point, 1e-15));
  Mat3 zxy;
  zxy << 0, 1, 0, 0, 0, 1, 1, 0, 0;
  EXPECT_EQ(a.frame, zxy);
}

// The bound the contact stage passes over far spheres with is never below the depth, on step
// edges, bumps and slopes alike, and it is tight where the ground is flat (a sphere's height).
TEST(Terrain, SphereDepthUpperBoundNeverUnderestimates) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ux(-0.8, 0.8), uy(-0.5, 0.5), uz(-0.05, 0.6),
      ur(0.01, 0.08);
  const HeightField fields[] = {
      randomField(3),
      grid(16, 11, 0.1, -0.8, -0.5, [](double x, double) { return x > 0.04 ? 0.12 : 0.0; }),
      grid(16, 11, 0.1, -0.8, -0.5, [](double x, double y) { return 0.4 * x - 0.25 * y; }),
      grid(16, 11, 0.05, -0.4, -0.25,
           [](double x, double y) { return 0.1 * std::floor(3 * x) + 0.02 * std::sin(20 * y); })};
  int bounded = 0;
  for (Interpolant kind : kInterpolants)
    for (const HeightField& field : fields)
      for (bool finalized : {false, true}) {
        HeightField hf = with(field, kind);
        if (finalized) hf.finalize();
        for (int k = 0; k < 10000; ++k) {
          const Vec3 c(ux(rng), uy(rng), uz(rng));
          const double r = ur(rng);
          for (bool closest : {false, true}) {
            const double bound = sphereDepthUpperBound(hf, c, r, closest);
            const double depth = sphereContact(&hf, c, r, closest).depth;
            ASSERT_GE(bound, depth - 1e-12)
                << toString(kind) << " at " << c.transpose() << ", r " << r << ", closest "
                << closest << ", finalized " << finalized;
            bounded += !closest && std::isfinite(bound);
          }
        }
      }
  EXPECT_GT(bounded, 80000);  // most centres above their patch get a finite bound
  const HeightField flat = grid(10, 10, 0.1, -0.5, -0.5, [](double, double) { return 0.03; });
  EXPECT_DOUBLE_EQ(sphereDepthUpperBound(flat, Vec3(0.11, 0.07, 0.25), 0.04), 0.04 - 0.22);
  EXPECT_EQ(sphereDepthUpperBound(flat, Vec3(0.11, 0.07, 0.02), 0.04),
            std::numeric_limits<double>::infinity());
}

// Beyond a cliff's edge the closest-point search can end on the back of the Catmull-Rom lip, a
// minimum whose normal faces away from the centre: the depth stays r - |c - p| (a centre outside
// the ground is never deeper than r), and its adjoint matches central differences there.
TEST(Terrain, ClosestPointOnAFaceTurnedAwayKeepsTheDistanceSign) {
  const HeightField cliff =
      grid(40, 10, 0.05, -1.0, -0.25, [](double x, double) { return x < 0 ? 0.48 : 0.0; });
  std::mt19937 rng(12);
  int turned = 0;
  for (int a = 0; a <= 50; ++a)
    for (int b = 0; b <= 50; ++b) {
      const Vec3 c(-0.05 + 0.5 * a / 50, 0.01, 0.05 + 0.5 * b / 50);
      const double r = 0.04;
      const SphereContact sc = sphereContact(&cliff, c, r, true);
      const Vec3 p(sc.px, sc.py, sc.surface.h);
      const bool outside = c.z() >= sampleSurface(cliff, c.x(), c.y()).h;
      ASSERT_NEAR(sc.depth, outside ? r - (c - p).norm() : r + (c - p).norm(), 1e-6)
          << c.transpose();
      if (sc.side < 0) {
        if (turned++ % 20 == 0)
          expectContactVjpMatchesFd(cliff, c, r, true, 1e-6, rng, "turned away");
      }
    }
  EXPECT_GT(turned, 0);
}

// On the monotone surface every contact around a cliff has the depth r minus the brute-force
// distance to the surface (the cliff is uniform along y: the closest point has the centre's y), the
// closest point faces the centre, and the adjoint matches central differences: the search from
// under a centre over either level side reaches the cliff's face through the cells in reach.
TEST(Terrain, ClosestPointBesideAMonotoneCliffIsTheClosest) {
  const HeightField cliff = with(
      grid(40, 10, 0.05, -1.0, -0.25, [](double x, double) { return x < 0 ? 0.48 : 0.0; }),
      Interpolant::Monotone);
  std::mt19937 rng(12);
  const double r = 0.04;
  int checked = 0;
  for (int a = 0; a <= 50; ++a)
    for (int b = 0; b <= 50; ++b) {
      const Vec3 c(-0.05 + 0.5 * a / 50, 0.01, 0.05 + 0.5 * b / 50);
      if (c.z() < sampleSurface(cliff, c.x(), c.y()).h) continue;  // inside the cliff
      const double brute = profileDistance(cliff, c, r + 0.05);
      if (brute > r + 0.02) continue;  // out of the contact's reach
      const SphereContact sc = sphereContact(&cliff, c, r, true);
      ASSERT_NEAR(sc.depth, r - brute, 2e-5) << c.transpose();
      EXPECT_EQ(sc.side, 1.0) << c.transpose();
      // (A centre on the surface has no closest direction: no derivative there.)
      if (checked++ % 20 == 0 && brute > 1e-3)
        expectContactVjpMatchesFd(cliff, c, r, true, 1e-6, rng, "cliff");
    }
  EXPECT_GT(checked, 100);
}

// A finalized field's cell bounds give the samples' bound, rounded outwards to float (vertical;
// monotone: its patch's own, tighter), or a tighter one (closest: each cell's own range rather
// than the window's); a field whose
// interpolant changed after finalize() reads its samples again; a smoothed copy is finalized.
TEST(Terrain, CellBoundsGiveTheSamplesBound) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> ux(-1.0, 1.0), uy(-0.7, 0.7), uz(-0.05, 0.6),
      ur(0.01, 0.08);
  for (Interpolant kind : kInterpolants) {
    const HeightField samples = with(
        grid(16, 11, 0.1, -0.8, -0.5,
             [](double x, double y) { return 0.1 * std::floor(3 * x) + 0.02 * std::sin(20 * y); }),
        kind);
    HeightField cells = samples;
    cells.finalize();
    ASSERT_TRUE(cells.finalized());
    int finite = 0, tighter = 0;
    for (int k = 0; k < 20000; ++k) {
      const Vec3 c(ux(rng), uy(rng), uz(rng));
      const double r = ur(rng);
      const double a = sphereDepthUpperBound(samples, c, r), b = sphereDepthUpperBound(cells, c, r);
      if (kind == Interpolant::CatmullRom) ASSERT_EQ(std::isfinite(a), std::isfinite(b));
      if (std::isfinite(b)) {
        // Catmull-Rom: the samples' bound rounded outwards; monotone: its patch's own bound (a
        // level cell beside a riser has its height), never below the depth itself.
        if (kind == Interpolant::CatmullRom) ASSERT_NEAR(b, a, 1e-6) << c.transpose();
        ASSERT_LE(b, a + 1e-6) << c.transpose();
        ASSERT_GE(b, sphereContact(&cells, c, r).depth - 1e-12) << c.transpose();
        ++finite;
      }
      const double ac = sphereDepthUpperBound(samples, c, r, true),
                   bc = sphereDepthUpperBound(cells, c, r, true);
      ASSERT_LE(bc, ac + 1e-6) << c.transpose();
      tighter += bc < ac - 1e-3;
    }
    EXPECT_GT(finite, 5000);
    EXPECT_GT(tighter, 100) << tighter;
  }
  HeightField changed = randomField(3);
  changed.finalize();
  changed.interpolant = Interpolant::Monotone;
  EXPECT_FALSE(changed.finalized());
  const Vec3 c(0.05, 0.02, 0.09);
  EXPECT_EQ(sphereDepthUpperBound(changed, c, 0.03),
            sphereDepthUpperBound(randomField(3, Interpolant::Monotone), c, 0.03));
  EXPECT_TRUE(smoothHeightField(randomField(3), 0.05).finalized());
  EXPECT_TRUE(smoothHeightField(randomField(3), 0).finalized());
  HeightField bad = randomField(3);
  bad.heights[5] = std::nan("");
  EXPECT_THROW(bad.finalize(), std::invalid_argument);
}

// On a tilted plane the depth is the radius minus the centre's distance to the plane, the normal
// is the plane's, and the frame is orthonormal and right-handed; the closest point gives the same.
TEST(Terrain, SphereOnATiltedPlane) {
  const double a = 0.3, b = -0.2;  // h = a x + b y
  const HeightField p = grid(30, 30, 0.1, -1.5, -1.5, [&](double x, double y) { return a * x + b * y; });
  const Vec3 c(0.1, 0.2, 0.05);
  const SphereContact s = sphereContact(&p, c, 0.03);
  const SphereContact sc = sphereContact(&p, c, 0.03, true);
  EXPECT_NEAR(sc.depth, s.depth, 1e-12);
  EXPECT_TRUE(sc.frame.isApprox(s.frame, 1e-12));
  EXPECT_TRUE(sc.point.isApprox(s.point, 1e-12));
  EXPECT_NEAR(
      Vec3(sc.px - c.x(), sc.py - c.y(), sc.surface.h - c.z()).normalized().dot(s.frame.col(0)),
      -1.0, 1e-12);  // c - p along the normal
  const Vec3 n = Vec3(-a, -b, 1).normalized();
  const double distance = n.dot(c - Vec3(0, 0, 0));  // the plane passes through the origin
  EXPECT_NEAR(s.depth, 0.03 - distance, 1e-12);
  EXPECT_TRUE(s.frame.col(0).isApprox(n, 1e-12));
  EXPECT_TRUE((s.frame.transpose() * s.frame).isIdentity(1e-12));
  EXPECT_NEAR(s.frame.determinant(), 1.0, 1e-12);
  EXPECT_NEAR(s.frame.col(2).x(), 0.0, 1e-15);  // t1 is x made orthogonal to n: t2 has no x
  EXPECT_TRUE(s.point.isApprox(c - 0.03 * n, 1e-12));
}

// The adjoint of (depth, frame, point) with respect to the centre, on a curved random field, for
// random adjoints, against central differences of the forward.
TEST(Terrain, SphereContactVjpMatchesFiniteDifferences) {
  for (Interpolant kind : kInterpolants) {
    SCOPED_TRACE(toString(kind));
    const HeightField r = randomField(6, kind);
    std::mt19937 rng(7);
    std::normal_distribution<double> g(0, 1);
    std::uniform_real_distribution<double> ux(-0.5, 0.4), uy(-0.3, 0.3);
    for (int k = 0; k < 50; ++k) {
      const Vec3 c(ux(rng), uy(rng), 0.02 + 0.02 * g(rng));
      expectContactVjpMatchesFd(r, c, 0.03, false, 1e-6, rng, "point " + std::to_string(k));
    }
  }
}

// A sphere beside a riser: the closest point finds the riser (a near-horizontal normal, the depth
// of the overlap), where the surface under the centre is the lower tread (no contact).
TEST(Terrain, ClosestPointMeetsARiserAtFirstTouch) {
  // A 12 cm step up at x = 0.025 (between samples): a ramp over the cell [0, 0.05].
  const HeightField step =
      grid(40, 20, 0.05, -1.0, -0.5, [](double x, double) { return x > 0.025 ? 0.12 : 0.0; });
  const double r = 0.031;
  const Vec3 c(-0.005, 0.0, 0.05);  // 5 cm above the lower tread, its front into the ramp
  const SphereContact vertical = sphereContact(&step, c, r);
  EXPECT_LT(vertical.depth, -0.01);  // the surface under the centre: the tread
  const SphereContact closest = sphereContact(&step, c, r, true);
  EXPECT_GT(closest.depth, 0.005);
  EXPECT_LT(closest.frame.col(0).x(), -0.9);  // pushed back from the riser
  EXPECT_GT(closest.px, 0.0);                 // touched on the ramp
  // Far above the step, both agree to the first order (flat under the centre, far from the edge).
  const Vec3 high(-0.5, 0.0, 0.02);
  EXPECT_NEAR(sphereContact(&step, high, r, true).depth, sphereContact(&step, high, r).depth,
              1e-12);
}

// The closest contact's depth against a brute-force distance beside a step's riser on the monotone
// surface, at 2 and 5 cm samples: a sphere over the lower tread that overlaps the riser touches it
// (the tread is level up to the riser's cell, where a search from under the centre alone stops).
// The step is uniform along y, so the closest point has the centre's y.
TEST(Terrain, ClosestPointFindsARiserBesideALevelTread) {
  const double r = 0.031, rise = 0.212;
  std::mt19937 rng(5);
  const Interpolant kind = Interpolant::Monotone;
  for (double spacing : {0.02, 0.05}) {
      SCOPED_TRACE("spacing " + std::to_string(spacing));
      const double edge = 0.5 * spacing;  // between the samples at 0 and spacing
      const HeightField step = with(grid(80, 20, spacing, -40 * spacing, -10 * spacing,
                                         [&](double x, double) { return x > edge ? rise : 0.0; }),
                                    kind);
      std::uniform_real_distribution<double> ux(-0.05, 0.0), uz(0.0, 0.2);
      int touching = 0;
      for (int k = 0; k < 150; ++k) {
        const Vec3 c(ux(rng), 0.013, uz(rng));
        if (sampleSurface(step, c.x(), c.y()).h > c.z()) continue;  // inside the riser
        const double brute = r - profileDistance(step, c, 0.1);
        const double depth = sphereContact(&step, c, r, true).depth;
        if (brute < -0.02) continue;  // out of the contact's reach
        EXPECT_NEAR(depth, brute, 2e-5) << "centre " << c.transpose();
        touching += brute > 0;
      }
      EXPECT_GT(touching, 20);
    }
  // The case a search from under the centre misses: 1 mm short of the riser's lower sample, the
  // sphere's bottom 1 cm above the tread, its front 3 cm past the riser's foot.
  const HeightField fine = with(
      grid(80, 20, 0.02, -0.8, -0.2, [&](double x, double) { return x > 0.01 ? rise : 0.0; }),
      Interpolant::Monotone);
  const SphereContact c = sphereContact(&fine, Vec3(-0.001, 0.0, r + 0.01), r, true);
  EXPECT_GT(c.depth, 0.005);
  EXPECT_LT(c.frame.col(0).x(), -0.5);  // pushed back from the riser
}

// The closest point's adjoint (through p(c), the implicit function theorem) against central
// differences, on a curved random field and beside the riser of a step.
TEST(Terrain, ClosestPointContactVjpMatchesFiniteDifferences) {
  for (Interpolant kind : kInterpolants) {
    SCOPED_TRACE(toString(kind));
    const HeightField fields[] = {
        randomField(6, kind), with(grid(40, 20, 0.05, -1.0, -0.5,
                                        [](double x, double) { return x > 0.025 ? 0.12 : 0.0; }),
                                   kind)};
    std::mt19937 rng(11);
    const double radius = 0.031;
    int checked = 0;
    for (int f = 0; f < 2; ++f) {
      std::uniform_real_distribution<double> ux(f ? -0.06 : -0.5, f ? 0.08 : 0.4), uy(-0.3, 0.3),
          uz(f ? 0.0 : -0.01, f ? 0.16 : 0.05);
      for (int k = 0; k < 60; ++k) {
        const Vec3 c(ux(rng), uy(rng), uz(rng));
        if (sphereContact(&fields[f], c, radius, true).depth < -0.02) continue;  // far
        expectContactVjpMatchesFd(fields[f], c, radius, true, 1e-5, rng,
                                  "field " + std::to_string(f) + " point " + std::to_string(k));
        ++checked;
      }
    }
    EXPECT_GT(checked, 60);
  }
}

// The backward pass's smoothed terrain: planes are kept inside the grid, a step becomes a ramp
// of width ~ sigma with the same heights far from it.
TEST(Terrain, SmoothingKeepsPlanesAndRoundsSteps) {
  const HeightField p = grid(40, 30, 0.05, 0, 0, [](double x, double y) { return 0.2 * x - 0.1 * y; });
  const HeightField ps = smoothHeightField(p, 0.1);
  for (int iy = 8; iy < 22; ++iy)
    for (int ix = 8; ix < 32; ++ix) EXPECT_NEAR(ps.at(ix, iy), p.at(ix, iy), 1e-12);
  const HeightField s = grid(40, 10, 0.05, 0, 0, [](double x, double) { return x > 0.99 ? 0.1 : 0.0; });
  const HeightField ss = smoothHeightField(s, 0.1);
  EXPECT_NEAR(ss.at(0, 5), 0.0, 1e-12);
  EXPECT_NEAR(ss.at(39, 5), 0.1, 1e-12);
  EXPECT_NEAR(ss.at(20, 5) - ss.at(19, 5), 0.1 * 0.05 / (0.1 * std::sqrt(2 * M_PI)), 2e-3);
  for (int ix = 1; ix < 40; ++ix) EXPECT_GE(ss.at(ix, 5), ss.at(ix - 1, 5));
  EXPECT_EQ(smoothHeightField(s, 0).heights, s.heights);
}

TEST(Terrain, HeightAndSlopeAreTheSurfacesValueAndTheOtherFieldsSlopes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> x(-1.0, 1.0), y(-0.7, 0.7);  // in, on and off the grid
  const HeightField a = randomField(1), b = smoothHeightField(a, 0.1),
                    m = with(a, Interpolant::Monotone);
  HeightField shifted = b;
  shifted.originX += 0.03;  // another grid: sampled apart
  const HeightField* fields[] = {&a, &b, &shifted};
  auto same = [](double got, double want) { return std::abs(got - want) <= 1e-14; };
  for (int k = 0; k < 200; ++k) {
    const double px = x(rng), py = y(rng);
    for (const HeightField* slopes : fields) {
      const HeightAndSlope s = sampleHeightAndSlope(a, *slopes, px, py);
      const SurfacePoint v = sampleSurface(a, px, py), d = sampleSurface(*slopes, px, py);
      EXPECT_TRUE(same(s.h, v.h) && same(s.hx, d.hx) && same(s.hy, d.hy))
          << px << " " << py << ": " << s.h - v.h << " " << s.hx - d.hx << " " << s.hy - d.hy;
    }
    const HeightAndSlope s = sampleHeightAndSlope(m, m, px, py);
    const SurfacePoint v = sampleSurface(m, px, py);
    EXPECT_TRUE(same(s.h, v.h) && same(s.hx, v.hx) && same(s.hy, v.hy)) << px << " " << py;
  }
}
