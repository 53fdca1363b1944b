// Rigid-body quantities of the host-side model (sim/model.h), and the spatial conventions the
// stages' 6-D algebra (sim/small_math.h) follows, in the ordering [linear; angular].
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
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Quat = Eigen::Quaterniond;

// norm2(a, b) = sqrt(a^2 + b^2): sim/hd.h, shared with the host-and-device stages.

inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

struct Transform {
  Mat3 E = Mat3::Identity();  // x_child = E x_parent
  Vec3 r = Vec3::Zero();      // child origin in parent coordinates
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
