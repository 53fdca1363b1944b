// Reading the vertices of an STL mesh (binary or ASCII), as vendors ship collision meshes.
// Torch-free, Eigen-free.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace diffloco::io {

// Every triangle's three vertices, in file order (duplicates kept). Binary when the size is
// 84 + 50 n bytes for the count n in its header, else ASCII ("solid ... facet ... vertex x y z").
// Throws std::runtime_error naming the path: unreadable, neither form, a non-finite or malformed
// vertex (with its line for ASCII), more than kMaxStlTriangles triangles, or none.
inline constexpr std::size_t kMaxStlTriangles = 10'000'000;
std::vector<std::array<double, 3>> readStlVertices(const std::string& path);

}  // namespace diffloco::io
