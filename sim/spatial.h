// Spatial (6-D) algebra for rigid bodies, in the ordering [linear; angular].
//
// Conventions used everywhere in sim/:
//  - A motion vector m = (v, w) is the velocity of the frame's origin v and the angular velocity w,
//    both expressed in that frame's axes.
//  - A force vector f = (f, n) is a force f and a moment n about the frame's origin, in that frame.
//  - A Transform X maps coordinates from a frame A (the parent) to a frame B (the child):
//    E rotates free vectors (x_B = E x_A) and r is B's origin expressed in A.
//  - An Inertia is (m, h = m c, Io): mass, first moment (c = centre of mass) and rotational inertia
//    about the frame's origin, all in the frame's axes. Sums of inertias are plain component sums.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

#include "sim/hd.h"

namespace diffloco::sim {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Quat = Eigen::Quaterniond;

// norm2(a, b) = sqrt(a^2 + b^2): sim/hd.h, shared with the host-and-device stages.

inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

struct Motion {
  Vec3 v = Vec3::Zero();  // linear velocity of the origin
  Vec3 w = Vec3::Zero();  // angular velocity

  Motion operator+(const Motion& o) const { return {v + o.v, w + o.w}; }
  Motion operator-(const Motion& o) const { return {v - o.v, w - o.w}; }
  Motion operator*(double s) const { return {v * s, w * s}; }
  Motion& operator+=(const Motion& o) {
    v += o.v;
    w += o.w;
    return *this;
  }
  Vec6 vec() const { return (Vec6() << v, w).finished(); }
};

struct Force {
  Vec3 f = Vec3::Zero();  // force
  Vec3 n = Vec3::Zero();  // moment about the origin

  Force operator+(const Force& o) const { return {f + o.f, n + o.n}; }
  Force operator-(const Force& o) const { return {f - o.f, n - o.n}; }
  Force operator*(double s) const { return {f * s, n * s}; }
  Force& operator+=(const Force& o) {
    f += o.f;
    n += o.n;
    return *this;
  }
  Vec6 vec() const { return (Vec6() << f, n).finished(); }
};

// Power pairing <m, f>.
inline double dot(const Motion& m, const Force& f) { return m.v.dot(f.f) + m.w.dot(f.n); }

// Motion cross product m1 x m2 (derivative of m2 in a frame moving with m1).
inline Motion cross(const Motion& m1, const Motion& m2) {
  return {m1.w.cross(m2.v) + m1.v.cross(m2.w), m1.w.cross(m2.w)};
}

// Force cross product m x* f.
inline Force crossForce(const Motion& m, const Force& f) {
  return {m.w.cross(f.f), m.w.cross(f.n) + m.v.cross(f.f)};
}

struct Transform {
  Mat3 E = Mat3::Identity();  // x_child = E x_parent
  Vec3 r = Vec3::Zero();      // child origin in parent coordinates

  // Parent-frame motion -> child frame.
  Motion apply(const Motion& m) const { return {E * (m.v - r.cross(m.w)), E * m.w}; }
  // Child-frame motion -> parent frame.
  Motion applyInverse(const Motion& m) const {
    const Vec3 w = E.transpose() * m.w;
    return {E.transpose() * m.v + r.cross(w), w};
  }
  // Child-frame force -> parent frame (X^T f).
  Force applyTranspose(const Force& f) const {
    const Vec3 fp = E.transpose() * f.f;
    return {fp, E.transpose() * f.n + r.cross(fp)};
  }
  // Parent-frame force -> child frame (X^-T f).
  Force applyToForce(const Force& f) const { return {E * f.f, E * (f.n - r.cross(f.f))}; }
};

struct Inertia {
  double m = 0;
  Vec3 h = Vec3::Zero();    // m * com
  Mat3 Io = Mat3::Zero();   // rotational inertia about the origin

  // From mass, centre of mass and rotational inertia about the centre of mass.
  static Inertia fromCom(double mass, const Vec3& com, const Mat3& Icom) {
    Inertia I;
    I.m = mass;
    I.h = mass * com;
    I.Io = Icom + mass * (com.squaredNorm() * Mat3::Identity() - com * com.transpose());
    return I;
  }

  Force operator*(const Motion& a) const { return {m * a.v - h.cross(a.w), h.cross(a.v) + Io * a.w}; }
  Inertia& operator+=(const Inertia& o) {
    m += o.m;
    h += o.h;
    Io += o.Io;
    return *this;
  }

  // Express this inertia (given in the child frame of X) in the parent frame.
  Inertia toParent(const Transform& X) const {
    Inertia out;
    out.m = m;
    const Vec3 hp = X.E.transpose() * h;
    out.h = hp + m * X.r;
    const Mat3 rhT = X.r * hp.transpose();
    out.Io = X.E.transpose() * Io * X.E +
             (m * X.r.squaredNorm() + 2.0 * X.r.dot(hp)) * Mat3::Identity() -
             m * X.r * X.r.transpose() - rhT - rhT.transpose();
    return out;
  }

  Vec3 com() const { return m > 0 ? Vec3(h / m) : Vec3::Zero(); }

  Mat6 matrix() const {
    Mat6 M;
    M.topLeftCorner<3, 3>() = m * Mat3::Identity();
    M.topRightCorner<3, 3>() = -skew(h);
    M.bottomLeftCorner<3, 3>() = skew(h);
    M.bottomRightCorner<3, 3>() = Io;
    return M;
  }
};

// Rotation about a unit axis by angle q, as the matrix that maps rotated-frame coordinates to
// original-frame coordinates (Rodrigues).
inline Mat3 axisRotation(const Vec3& axis, double q) {
  const double c = std::cos(q), s = std::sin(q);
  return c * Mat3::Identity() + s * skew(axis) + (1 - c) * axis * axis.transpose();
}

// Rotation matrix from URDF roll-pitch-yaw (fixed axes X, then Y, then Z).
inline Mat3 rpyToMatrix(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
      .toRotationMatrix();
}

}  // namespace diffloco::sim
