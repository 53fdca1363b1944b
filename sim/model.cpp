#include "sim/model.h"

#include <algorithm>

namespace diffloco::sim {

double Model::totalMass() const {
  double m = 0;
  for (const auto& b : bodies) m += b.inertia.m;
  return m;
}

int Model::jointIndex(const std::string& n) const {
  for (int i = 0; i < nj(); ++i)
    if (joints[i].name == n) return i;
  return -1;
}

int Model::footIndex(const std::string& n) const {
  for (int i = 0; i < nfeet(); ++i)
    if (feet[i].name == n) return i;
  return -1;
}

void Model::finalize() {
  // Base dofs form a chain 0 <- 1 <- ... <- 5; a joint's dof hangs below its parent body's last dof.
  dofParent.assign(nv(), -1);
  for (int k = 1; k < 6; ++k) dofParent[k] = k - 1;
  for (int i = 1; i < nbodies(); ++i) {
    const int p = bodies[i].parent;
    dofParent[5 + i] = p == 0 ? 5 : 5 + p;
  }
  const int ns = nspheres();
  footDofs.assign(ns, {});
  for (int f = 0; f < ns; ++f) {
    const int body = sphere(f).body;
    for (int k = body == 0 ? 5 : 5 + body; k >= 0; k = dofParent[k])
      footDofs[f].insert(footDofs[f].begin(), k);
  }
  footCommonDofs.assign(ns, std::vector<int>(ns, 0));
  for (int a = 0; a < ns; ++a)
    for (int b = 0; b < ns; ++b) {
      int n = 0;
      while (n < static_cast<int>(std::min(footDofs[a].size(), footDofs[b].size())) &&
             footDofs[a][n] == footDofs[b][n])
        ++n;
      footCommonDofs[a][b] = n;
    }
}

VecX neutralConfiguration(const Model& model) {
  VecX q = VecX::Zero(model.nq());
  q[3] = 1.0;  // quaternion w
  return q;
}

}  // namespace diffloco::sim
