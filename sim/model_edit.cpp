#include "sim/model_edit.h"

#include <algorithm>
#include <map>

namespace diffloco::sim {

Model reorderJoints(const Model& model, const std::vector<std::string>& order) {
  const int nj = model.nj();
  std::vector<int> newOfOld(nj, -1);  // new joint index of each old joint
  for (int k = 0; k < static_cast<int>(order.size()); ++k) {
    const int j = model.jointIndex(order[k]);
    if (j < 0) {
      std::string known;
      for (const auto& J : model.joints) known += (known.empty() ? "" : ", ") + J.name;
      throw std::invalid_argument(
          "joint '" + order[k] + "' is not a movable joint of the URDF (expected one of: " + known +
          ")");
    }
    if (newOfOld[j] >= 0) throw std::invalid_argument("joint '" + order[k] + "' is listed twice");
    newOfOld[j] = k;
  }
  for (int j = 0; j < nj; ++j)
    if (newOfOld[j] < 0)
      throw std::invalid_argument("joint '" + model.joints[j].name + "' of the URDF is missing (" +
                                  std::to_string(order.size()) + " listed, the URDF has " +
                                  std::to_string(nj) + " movable joints)");
  Model out = model;
  for (int j = 0; j < nj; ++j) {
    const int k = newOfOld[j];
    const int parent = model.bodies[j + 1].parent;  // old body index
    const int newParent = parent == 0 ? 0 : newOfOld[parent - 1] + 1;
    // The dynamics sweep bodies in index order: a parent must come first.
    if (newParent > k + 1)
      throw std::invalid_argument("joint '" + model.joints[j].name + "' is listed before joint '" +
                                  model.joints[parent - 1].name +
                                  "' that carries it: a parent joint must come first");
    out.joints[k] = model.joints[j];
    out.bodies[k + 1] = model.bodies[j + 1];
    out.bodies[k + 1].parent = newParent;
  }
  for (auto* list : {&out.feet, &out.legSpheres})
    for (auto& f : *list)
      if (f.body > 0) f.body = newOfOld[f.body - 1] + 1;
  out.finalize();
  return out;
}

Model selectFeet(const Model& model, const std::vector<std::string>& links,
                 const std::vector<std::string>& legLinks) {
  Model out = model;
  out.feet.clear();
  out.legSpheres.clear();
  std::vector<Foot> all = model.feet;  // every sphere the model has
  all.insert(all.end(), model.legSpheres.begin(), model.legSpheres.end());
  for (const auto& name : links) {
    int count = 0;
    for (const auto& f : all)
      if (f.name == name) {
        ++count;
        out.feet.push_back(f);
      }
    if (count == 0)
      throw std::invalid_argument("link '" + name + "' carries no collision sphere in the URDF");
    if (count > 1)
      throw std::invalid_argument("link '" + name + "' carries " + std::to_string(count) +
                                  " collision spheres; a foot is one sphere");
    for (size_t k = 0; k + 1 < out.feet.size(); ++k)
      if (out.feet[k].name == name)
        throw std::invalid_argument("foot '" + name + "' is listed twice");
  }
  for (size_t i = 0; i < legLinks.size(); ++i) {
    const std::string& name = legLinks[i];
    if (std::find(links.begin(), links.end(), name) != links.end())
      throw std::invalid_argument("link '" + name + "' is a foot and cannot also be a leg contact");
    if (std::find(legLinks.begin(), legLinks.begin() + i, name) != legLinks.begin() + i)
      throw std::invalid_argument("leg contact '" + name + "' is listed twice");
    int count = 0;
    for (const auto& f : all)
      if (f.name == name) {
        ++count;
        out.legSpheres.push_back(f);
      }
    if (count == 0)
      throw std::invalid_argument("leg contact link '" + name +
                                  "' carries no collision sphere in the URDF");
  }
  out.finalize();
  return out;
}

std::vector<std::string> findFeet(const Model& model) {
  std::vector<bool> leaf(model.nbodies(), true);
  for (int i = 1; i < model.nbodies(); ++i) leaf[model.bodies[i].parent] = false;
  std::vector<std::string> names;
  for (int b = 1; b < model.nbodies(); ++b) {
    if (!leaf[b]) continue;
    const Foot* best = nullptr;
    for (const auto& f : model.feet)
      if (f.body == b && (!best || f.offset.norm() > best->offset.norm())) best = &f;
    if (best) names.push_back(best->name);
  }
  return names;
}

}  // namespace diffloco::sim
