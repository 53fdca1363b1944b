// The algebra the host-and-device stages compute with: 3-vectors, 3x3 matrices and Featherstone's
// spatial algebra (6-D motions and forces, body transforms, spatial inertias) on plain arrays.
#pragma once

#include <cmath>

#include "sim/hd.h"

namespace diffloco::sim {

struct V3 {
  double e[3];
  DL_HD double& operator[](int i) { return e[i]; }
  DL_HD double operator[](int i) const { return e[i]; }
};

struct M3 {  // row-major
  double e[9];
  DL_HD double& operator()(int r, int c) { return e[3 * r + c]; }
  DL_HD double operator()(int r, int c) const { return e[3 * r + c]; }
};

DL_HD V3 v3(double x, double y, double z) { return V3{{x, y, z}}; }
DL_HD V3 zero3() { return v3(0, 0, 0); }
DL_HD V3 operator+(const V3& a, const V3& b) { return v3(a[0] + b[0], a[1] + b[1], a[2] + b[2]); }
DL_HD V3 operator-(const V3& a, const V3& b) { return v3(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }
DL_HD V3 operator-(const V3& a) { return v3(-a[0], -a[1], -a[2]); }
DL_HD V3 operator*(double s, const V3& a) { return v3(s * a[0], s * a[1], s * a[2]); }
DL_HD V3& operator+=(V3& a, const V3& b) {
  a[0] += b[0];
  a[1] += b[1];
  a[2] += b[2];
  return a;
}
DL_HD double dot(const V3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
DL_HD V3 cross(const V3& a, const V3& b) {
  return v3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

DL_HD M3 identity3() { return M3{{1, 0, 0, 0, 1, 0, 0, 0, 1}}; }
DL_HD V3 mul(const M3& m, const V3& a) {
  return v3(m(0, 0) * a[0] + m(0, 1) * a[1] + m(0, 2) * a[2],
            m(1, 0) * a[0] + m(1, 1) * a[1] + m(1, 2) * a[2],
            m(2, 0) * a[0] + m(2, 1) * a[1] + m(2, 2) * a[2]);
}
DL_HD V3 mulT(const M3& m, const V3& a) {  // m^T a
  return v3(m(0, 0) * a[0] + m(1, 0) * a[1] + m(2, 0) * a[2],
            m(0, 1) * a[0] + m(1, 1) * a[1] + m(2, 1) * a[2],
            m(0, 2) * a[0] + m(1, 2) * a[1] + m(2, 2) * a[2]);
}
DL_HD M3 mul(const M3& a, const M3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(i, 0) * b(0, j) + a(i, 1) * b(1, j) + a(i, 2) * b(2, j);
  return r;
}
DL_HD M3 mulTN(const M3& a, const M3& b) {  // a^T b
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(0, i) * b(0, j) + a(1, i) * b(1, j) + a(2, i) * b(2, j);
  return r;
}
DL_HD M3 mulNT(const M3& a, const M3& b) {  // a b^T
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(i, 0) * b(j, 0) + a(i, 1) * b(j, 1) + a(i, 2) * b(j, 2);
  return r;
}
DL_HD M3 transpose(const M3& a) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = a(j, i);
  return r;
}
DL_HD M3 skew(const V3& a) { return M3{{0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0}}; }

// Eigen's cofactor inverse of a 3x3 matrix (Matrix3d::inverse()).
DL_HD M3 inverse3(const M3& m) {
  M3 cof;  // cof(i, j): cofactor of entry (i, j)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      cof(i, j) = m(i1, j1) * m(i2, j2) - m(i1, j2) * m(i2, j1);
    }
  const double det = cof(0, 0) * m(0, 0) + cof(1, 0) * m(1, 0) + cof(2, 0) * m(2, 0);
  const double inv = 1.0 / det;
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = cof(j, i) * inv;
  return r;
}

// Rodrigues, as sim::axisRotation: c I + s [a]x + (1 - c) a a^T.
DL_HD M3 axisRotation(const V3& a, double q) {
  const double c = cos(q), s = sin(q), k = 1 - c;
  M3 r;
  const M3 sk = skew(a);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = (i == j ? c : 0.0) + s * sk(i, j) + k * a[i] * a[j];
  return r;
}

// Spatial motion (v, w) and force (f, n), in sim/spatial.h's conventions.
struct SMotion {
  V3 v, w;
};
struct SForce {
  V3 f, n;
};

DL_HD SMotion crossMotion(const SMotion& a, const SMotion& b) {
  return {cross(a.w, b.v) + cross(a.v, b.w), cross(a.w, b.w)};
}
DL_HD SForce crossForce(const SMotion& m, const SForce& f) {
  return {cross(m.w, f.f), cross(m.w, f.n) + cross(m.v, f.f)};
}

// Body inertia (m, h = m c, Io about the origin), as sim::Inertia.
struct SInertia {
  double m;
  V3 h;
  M3 Io;
};

DL_HD SForce inertiaTimes(const SInertia& I, const SMotion& a) {
  return {I.m * a.v - cross(I.h, a.w), cross(I.h, a.v) + mul(I.Io, a.w)};
}

// Transform parent -> child (E, r), as sim::Transform.
DL_HD_INLINE SMotion xApply(const M3& E, const V3& r, const SMotion& m) {
  return {mul(E, m.v - cross(r, m.w)), mul(E, m.w)};
}
DL_HD_INLINE SForce xApplyTranspose(const M3& E, const V3& r, const SForce& f) {
  const V3 fp = mulT(E, f.f);
  return {fp, mulT(E, f.n) + cross(r, fp)};
}

// sim::Inertia::toParent.
DL_HD SInertia toParent(const SInertia& I, const M3& E, const V3& r) {
  SInertia out;
  out.m = I.m;
  const V3 hp = mulT(E, I.h);
  out.h = hp + I.m * r;
  const M3 EtIoE = mul(mulTN(E, I.Io), E);
  const double diag = I.m * dot(r, r) + 2.0 * dot(r, hp);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double rhT = r[i] * hp[j], rhTt = r[j] * hp[i];
      out.Io(i, j) = EtIoE(i, j) + (i == j ? diag : 0.0) - I.m * r[i] * r[j] - rhT - rhTt;
    }
  return out;
}

DL_HD void addInertia(SInertia& a, const SInertia& b) {
  a.m += b.m;
  a.h += b.h;
  for (int k = 0; k < 9; ++k) a.Io.e[k] += b.Io.e[k];
}

}  // namespace diffloco::sim
