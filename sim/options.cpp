#include "sim/options.h"

#include <stdexcept>

namespace diffloco::sim {

ContactModel parseContactModel(const std::string& name) {
  if (name == "hard") return ContactModel::Hard;
  if (name == "smoothed") return ContactModel::Smoothed;
  if (name == "soft") return ContactModel::Soft;
  throw std::invalid_argument("unknown contact model '" + name +
                              "' (expected hard, smoothed or soft)");
}

const char* toString(ContactModel m) {
  switch (m) {
    case ContactModel::Hard: return "hard";
    case ContactModel::Smoothed: return "smoothed";
    case ContactModel::Soft: return "soft";
  }
  return "?";
}

}  // namespace diffloco::sim
