#include "sim/options.h"

#include <stdexcept>

namespace diffloco::sim {

ContactModel parseContactModel(const std::string& name) {
  if (name == "hard") return ContactModel::Hard;
  if (name == "smoothed") return ContactModel::Smoothed;
  if (name == "soft") return ContactModel::Soft;
  if (name == "straight_through") return ContactModel::StraightThrough;
  throw std::invalid_argument("unknown contact model '" + name +
                              "' (expected hard, smoothed, soft or straight_through)");
}

const char* toString(ContactModel m) {
  switch (m) {
    case ContactModel::Hard: return "hard";
    case ContactModel::Smoothed: return "smoothed";
    case ContactModel::Soft: return "soft";
    case ContactModel::StraightThrough: return "straight_through";
  }
  return "?";
}

TerrainContact parseTerrainContact(const std::string& name) {
  if (name == "vertical") return TerrainContact::Vertical;
  if (name == "closest") return TerrainContact::Closest;
  throw std::invalid_argument("unknown terrain contact '" + name +
                              "' (expected vertical or closest)");
}

const char* toString(TerrainContact t) {
  return t == TerrainContact::Closest ? "closest" : "vertical";
}

}  // namespace diffloco::sim
