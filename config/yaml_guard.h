// The check every YAML document passes right after yaml-cpp loads it, before anything walks it.
//
// yaml-cpp loads an alias as a second reference to the anchored node, not a copy, so a loaded tree
// can be a graph: `x: &self [*self]` holds itself (every recursive walk overflows the stack), and
// ten levels of lists of ten aliases to the level below (a "billion laughs") is a few lines of
// text that expands to 10^10 nodes. checkYamlTree walks the tree as the readers would, each alias
// expanded, and refuses it early, naming the file and line:
//   self-referential alias        a list or map that contains itself
//   nesting too deep              more than kMaxYamlDepth levels of lists and maps
//   alias expansion too large     more than kMaxYamlNodes nodes, aliases expanded
// No config, task, robot file or policy metadata comes near either bound.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace diffloco::config {

inline constexpr int kMaxYamlDepth = 64;
inline constexpr std::size_t kMaxYamlNodes = 1000000;

// Throws std::runtime_error "file:line: ..." (the line of the node at fault; `file` alone for a
// tree built in memory, or with lines = false: a value given on the command line) when `root`
// breaks one of the bounds above; returns `root` (the same node) otherwise, for use around a
// load: checkYamlTree(YAML::Load(text), source).
YAML::Node checkYamlTree(const YAML::Node& root, const std::string& file, bool lines = true);

// A YAML file loaded and checked: a read or parse error of yaml-cpp's becomes std::runtime_error
// "file: <its message>", then checkYamlTree.
YAML::Node loadYamlFile(const std::string& file);

}  // namespace diffloco::config
