#include "config/yaml_guard.h"

#include <stdexcept>
#include <vector>

#include "config/archive.h"

namespace diffloco::config {
namespace {

struct Walk {
  const std::string& file;
  bool lines;
  std::vector<YAML::Node> path;  // the lists and maps from the root down to the current node
  std::size_t visits = 0;

  std::string at(const YAML::Node& n) const { return lines ? located(file, n) : file; }

  void visit(const YAML::Node& n) {
    // Named at the top-level entry being expanded: the node reached last is deep inside the
    // aliased lists, usually far from the alias that multiplied it.
    if (++visits > kMaxYamlNodes)
      fail(at(path.size() > 1 ? path[1] : n) +
           ": alias expansion too large: with its aliases expanded the document has more than " +
           std::to_string(kMaxYamlNodes) + " nodes (aliases of aliases)");
    if (!n.IsSequence() && !n.IsMap()) return;
    for (const YAML::Node& above : path)
      if (above.is(n)) fail(at(n) + ": self-referential alias: this list or map contains itself");
    if (static_cast<int>(path.size()) >= kMaxYamlDepth)
      fail(at(n) + ": nesting too deep: more than " + std::to_string(kMaxYamlDepth) +
           " levels of lists and maps");
    path.push_back(n);
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (n.IsMap()) {
        visit(it->first);  // a key may be a list or map too
        visit(it->second);
      } else {
        visit(*it);
      }
    }
    path.pop_back();
  }
};

}  // namespace

YAML::Node checkYamlTree(const YAML::Node& root, const std::string& file, bool lines) {
  Walk w{file, lines, {}, 0};
  w.visit(root);
  return root;
}

YAML::Node loadYamlFile(const std::string& file) {
  YAML::Node y;
  try {
    y = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(file + ": " + e.what());
  }
  return checkYamlTree(y, file);
}

}  // namespace diffloco::config
