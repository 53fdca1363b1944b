#include "sim/crba.h"

namespace diffloco::sim {

void crba(const Model& model, Data& data) {
  const int nb = model.nbodies();
  MatX& H = data.H;
  for (int i = 0; i < nb; ++i) data.Ic[i] = model.bodies[i].inertia;
  for (int i = nb - 1; i > 0; --i)
    data.Ic[model.bodies[i].parent] += data.Ic[i].toParent(data.X[i]);

  Force* chain = data.crbaF.data();  // every level of every column, for crbaVjp
  for (int i = nb - 1; i > 0; --i) {
    const int k = 5 + i;
    const Vec3& axis = model.bodies[i].axis;
    // F = Ic_i S_i with S_i = (0, axis).
    Force F{-data.Ic[i].h.cross(axis), data.Ic[i].Io * axis};
    *chain++ = F;
    H(k, k) = axis.dot(F.n) + model.joints[i - 1].armature;
    // Walk up the tree: H(k, dof j) = S_j^T F expressed in body j.
    int j = i;
    while (model.bodies[j].parent > 0) {
      F = data.X[j].applyTranspose(F);
      *chain++ = F;
      j = model.bodies[j].parent;
      H(k, 5 + j) = H(5 + j, k) = model.bodies[j].axis.dot(F.n);
    }
    F = data.X[j].applyTranspose(F);  // into the base frame; the base's S = blockdiag(R^T, I)
    *chain++ = F;
    const Vec3 fw = data.R[0] * F.f;
    H.block<3, 1>(0, k) = fw;
    H.block<3, 1>(3, k) = F.n;
    H.block<1, 3>(k, 0) = fw.transpose();
    H.block<1, 3>(k, 3) = F.n.transpose();
  }
  // Base block S^T Ic S: [m I, -R [h]x; [h]x R^T, Io].
  const Inertia& I0 = data.Ic[0];
  const Mat3 Rh = data.R[0] * skew(I0.h);
  H.topLeftCorner<3, 3>() = I0.m * Mat3::Identity();
  H.block<3, 3>(0, 3) = -Rh;
  H.block<3, 3>(3, 0) = -Rh.transpose();
  H.block<3, 3>(3, 3) = I0.Io;
}

}  // namespace diffloco::sim
