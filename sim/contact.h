// Contact between the spheres (feet, then leg spheres) and the ground (the plane z = 0 or a height
// field, sim/terrain.h): geometry, Jacobians, the Delassus problem and its solvers (Gauss-Seidel
// for the hard and smoothed models, penalty for the soft one).
#pragma once

#include "sim/data.h"
#include "sim/options.h"

namespace diffloco::sim {

// Foot sphere centres and penetration depths (and on a height field each foot's contact frame and
// point, data.footContact) against opt.terrain; requires forwardKinematics. A leg sphere that a
// cheap bound puts out of the contact problem (sim/terrain.h, sphereDepthUpperBound) gets that
// bound as its depth and keeps its previous data.footContact.
void footGeometry(const Model& model, const ContactOptions& opt, Data& data);

// Which spheres enter the contact problem: hard and straight_through (forward) -> depth >= 0;
// smoothed -> depth >= -cutoff; soft -> depth >= 0 with fixed sub-steps, every sphere in order
// with the adaptive integrator (its contact events need every sphere's normal velocity).
// Leg spheres (Model::legSpheres) in the smoothed model only once sigmoid(kappa depth) >= 1e-6.
void selectContacts(const Model& model, const ContactOptions& opt, Data& data);

// Contact Jacobian rows (normal, tangent1, tangent2: world z, x, y on the plane) of each active
// foot's contact point (its sphere's point along -normal), into data.Jc; requires footGeometry.
void contactJacobians(const Model& model, const ContactOptions& opt, Data& data);

// Y = L^-T Jc^T and G = Y^T D^-1 Y for the active contacts; requires factorize.
void delassus(const Model& model, Data& data);

// Gauss-Seidel with the friction-cone proximal operator (Algorithm 1 of the locomotion paper);
// requires delassus and data.c. Writes data.impulse (scaled by sigma for the smoothed model).
void solveContacts(const ContactOptions& opt, Data& data);

// The matrix r-factors G_jj^-1 of the active contacts, into data.Ginv (see contact.cpp).
void contactBlockInverses(Data& data, int nc);

// One Gauss-Seidel update of a contact's impulse p given s = sum_k G_jk p_k + c_j (see contact.cpp).
// `branch`, if given, receives 0 (sticking), 1 (separating), 2 (sliding inside the cone after the
// step) or 3 (sliding, projected onto the cone).
Vec3 gaussSeidelUpdate(const Vec3& p, const Vec3& s, const Mat3& Gjj, const Mat3& Gjj_inv,
                       double mu, int* branch = nullptr);

// Proximal projection onto the friction cone (eq. 14): p = (normal, tangent1, tangent2).
Vec3 proxFrictionCone(const Vec3& p, double mu);

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace diffloco::sim
