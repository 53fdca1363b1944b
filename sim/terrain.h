// The ground the feet touch: the plane z = 0, or a height field h(x, y) sampled on a regular grid
// and joined by a bicubic patch per cell, one of two interpolants (HeightField::interpolant):
//  - catmull_rom: the cubic through each 4 x 4 stencil with central-difference slopes. Linear in
//    the samples; like every C1 interpolant with those slopes it overshoots next to a step edge, by
//    2/27 (7.4 %) of the jump over the cell on either side (a lip at the top of a stair, a dip at
//    its foot).
//  - monotone: bicubic Hermite with each sample's slopes along x and y the harmonic mean of its two
//    one-sided differences (zero where they differ in sign: at a local extremum or beside a flat
//    sample; Fritsch and Butland's shape-preserving slopes) and zero cross derivative. Along every
//    grid line the surface stays between neighbouring samples: a step edge rises monotonically from
//    one level to the other, with no lip, as MuJoCo's piecewise-linear hfield does.
// Both interpolate the samples (a sample's height is exact, as in MuJoCo's hfield) and reproduce
// planes exactly away from the border; the surface is C1 (height and normal continuous), and its
// second derivatives, which the backward pass needs for the derivative of the contact frame, exist
// inside every cell (they jump across cell lines). Beyond the grid the border samples continue
// (the index is clamped), which keeps the surface C1 and makes it flat one cell out.
//
// A sphere of radius r centred at c touches it along the normal at c's (x, y):
//   n = (-h_x, -h_y, 1) / |.|,  depth d = r - (c_z - h) n_z,  contact point x = c - r n,
// exact for a plane (the distance to a tilted plane is the height above it times n_z) and first
// order on a curved surface. The contact frame is (n, t1, t2) with t1 the world x axis made
// orthogonal to n (Gram-Schmidt) and t2 = n x t1: on the plane z = 0 it is (z, x, y).
// With `closest` the sphere touches the surface at the point p closest to c instead (exact on any
// surface, risers included): p minimises |(x, y, h(x, y)) - c|^2, found by Newton steps from c's
// (x, y); n is the surface normal at p (parallel to c - p there) and d = r - (c - p) . n, its
// sign taken from whether c is above the surface under it (a local minimum on the back of a rise
// seen from beyond its edge has c - p along -n). The adjoint differentiates p(c) through that
// minimum (implicit function theorem: the Hessian of the squared distance, the interpolant's
// second derivatives).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/spatial.h"

namespace diffloco::sim {

// How a height field joins its samples (see the top of this file).
enum class Interpolant { CatmullRom, Monotone };
Interpolant parseInterpolant(const std::string& name);  // throws std::invalid_argument
const char* toString(Interpolant i);                    // "catmull_rom" or "monotone"

// What the depth bound (sphereDepthUpperBound) needs from one cell's 4 x 4 samples: an upper bound
// of its patch's height and a lower bound of the patch normal's z, in floats rounded outwards
// (8 bytes a cell, as many as a sample).
struct CellBound {
  float top = 0, minNormalZ = 1;
};

struct HeightField {
  double originX = 0, originY = 0;  // world (x, y) of sample (0, 0) [m]
  double spacing = 0.1;             // grid spacing along x and y [m]
  int nx = 0, ny = 0;               // samples along x and y
  std::vector<double> heights;      // nx * ny heights [m], x fastest: heights[iy * nx + ix]
  Interpolant interpolant = Interpolant::CatmullRom;
  // Derived by finalize() for `boundsInterpolant`: cell (i, j)'s bound at
  // cellBounds[(j + 2) * (nx + 4) + i + 2], i in [-2, nx + 1] and j in [-2, ny + 1] (the cells
  // a coordinate is located in: two beyond each side, where the clamped stencil is flat).
  std::vector<CellBound> cellBounds;
  Interpolant boundsInterpolant = Interpolant::CatmullRom;

  double at(int ix, int iy) const { return heights[static_cast<size_t>(iy) * nx + ix]; }
  double sizeX() const { return (nx - 1) * spacing; }
  double sizeY() const { return (ny - 1) * spacing; }
  // Computes cellBounds from the samples and the interpolant (validateHeightField first; throws as
  // it does). Call it once they are set, as Model::finalize: without it, or once the interpolant
  // has changed, the depth bound reads the 16 samples each time instead.
  void finalize();
  bool finalized() const {
    return boundsInterpolant == interpolant &&
           cellBounds.size() == static_cast<size_t>(nx + 4) * static_cast<size_t>(ny + 4);
  }
};

// Throws std::invalid_argument naming what is wrong (`what` prefixes the message): sizes below 2
// samples, a spacing that is not positive and finite, a height count that is not nx * ny, a
// non-finite height.
void validateHeightField(const HeightField& hf, const std::string& what = "height field");

// The field's heights convolved with a Gaussian of standard deviation `sigma` [m] along x and
// y (separable, the border samples continued outwards): a rounded copy of steps and edges,
// finalized.
HeightField smoothHeightField(const HeightField& hf, double sigma);

// Cell index and local coordinate in [0, 1) of a world coordinate along one axis of a grid of n
// samples (`inv` = 1 / spacing); far-away or non-finite coordinates are held two cells outside
// the grid, where the surface is flat (no integer overflow, no NaN index).
inline void locateInGrid(double x, double origin, double inv, int n, int& cell, double& t) {
  double g = (x - origin) * inv;
  if (!(g > -2.0)) g = -2.0;
  if (!(g < n + 1.0)) g = n + 1.0;
  const double f = std::floor(g);
  cell = static_cast<int>(f);
  t = g - f;
}

// Height and its first and second derivatives with respect to world x and y.
struct SurfacePoint {
  double h = 0, hx = 0, hy = 0, hxx = 0, hxy = 0, hyy = 0;
};

SurfacePoint sampleSurface(const HeightField& hf, double x, double y);

// Height of the ground under (x, y): 0 without a height field.
inline double groundHeight(const HeightField* hf, double x, double y) {
  return hf ? sampleSurface(*hf, x, y).h : 0.0;
}

// The height h of `value` and the slopes (hx, hy) of `slopes` at (x, y), without the curvature:
// what height observations and rewards differentiate (`slopes` may be `value` itself or its
// smoothed copy). sampleSurface's h, hx, hy to round-off; one stencil pass when both fields share
// their grid and use Catmull-Rom.
struct HeightAndSlope {
  double h = 0, hx = 0, hy = 0;
};
HeightAndSlope sampleHeightAndSlope(const HeightField& value, const HeightField& slopes, double x,
                                    double y);

// A sphere against the ground (see the top of this file).
struct SphereContact {
  double depth = 0;            // > 0 when penetrating
  Mat3 frame;                  // columns: normal, tangent1, tangent2 (world)
  Vec3 point;                  // contact point c - r n (world)
  SurfacePoint surface;        // the height field at (px, py)
  double px = 0, py = 0;       // where the surface is touched: c's (x, y), or the closest point's
  bool closest = false;        // which of the two (the adjoint differs)
  // closest: +1, or -1 where the closest point's normal faces away from a centre outside the
  // ground (or towards one inside it): depth = r - side (c - p) . n, so that a centre outside
  // never gets a depth above r and one inside never one below it.
  double side = 1;
};

SphereContact sphereContact(const HeightField* hf, const Vec3& centre, double radius,
                            bool closest = false);

// An upper bound of sphereContact(&hf, centre, radius).depth from the 4 x 4 samples the patch
// under the centre is made of (no interpolation, no frame): the patch lies below their minimum
// plus a multiple of their range (catmull_rom 1.28125, monotone 1.25) and its slopes are at most
// a multiple of the range over the spacing (1.875, 2.375), which bounds n_z from below.
// +infinity where the centre is not above that height. Lets the contact stage pass over spheres far
// from the ground. With `closest` (sphereContact's closest point) the bound covers every patch
// within r + one spacing of the centre horizontally and uses the height alone: the closest point
// lies either in that window (its distance is at least c_z minus the window's highest surface
// point) or farther than r + spacing (depth below -spacing). A finalized field reads each cell's
// bound (HeightField::cellBounds) rather than its samples.
// (Inline: the contact stage bounds every leg sphere, 24 a step for ANYmal; the one-cell case is a
// few instructions, a call costs as much again.)
double sphereDepthUpperBoundOffCells(const HeightField& hf, const Vec3& centre, double radius,
                                     bool closest);  // closest, or a field not finalized
inline double sphereDepthUpperBound(const HeightField& hf, const Vec3& centre, double radius,
                                    bool closest = false) {
  if (closest || !hf.finalized()) return sphereDepthUpperBoundOffCells(hf, centre, radius, closest);
  const double inv = 1.0 / hf.spacing;
  int i, j;
  double u, v;
  locateInGrid(centre.x(), hf.originX, inv, hf.nx, i, u);
  locateInGrid(centre.y(), hf.originY, inv, hf.ny, j, v);
  const CellBound& b = hf.cellBounds[static_cast<size_t>(j + 2) * (hf.nx + 4) + i + 2];
  const double gap = centre.z() - b.top;
  if (!(gap > 0)) return std::numeric_limits<double>::infinity();
  return radius - gap * b.minNormalZ;
}

// Adjoint of sphereContact on a height field: given the adjoints of depth, frame (its columns) and
// point, returns the adjoint of the centre (through the interpolant's first and second
// derivatives: the normal's and the frame's dependence on where the sphere is).
Vec3 sphereContactVjp(const Vec3& centre, double radius, const SphereContact& c, double depthBar,
                      const Mat3& frameBar, const Vec3& pointBar);

}  // namespace diffloco::sim
