#include "io/stl.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "io/excerpt.h"
#include "io/read_file.h"

namespace diffloco::io {

namespace {

std::vector<std::array<double, 3>> binaryVertices(const std::string& path, const std::string& b,
                                                  std::size_t n) {
  std::vector<std::array<double, 3>> v;
  v.reserve(3 * n);
  for (std::size_t t = 0; t < n; ++t) {
    const char* tri = b.data() + 84 + 50 * t + 12;  // after the facet normal
    for (int k = 0; k < 3; ++k) {
      float x[3];
      std::memcpy(x, tri + 12 * k, sizeof x);
      if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2]))
        throw std::runtime_error(path + ": triangle " + std::to_string(t) +
                                 " has a non-finite vertex");
      v.push_back({x[0], x[1], x[2]});
    }
  }
  return v;
}

std::vector<std::array<double, 3>> asciiVertices(const std::string& path, const std::string& b) {
  std::vector<std::array<double, 3>> v;
  std::istringstream in(b);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word != "vertex") continue;
    std::array<double, 3> x;
    std::string rest;
    if (!(words >> x[0] >> x[1] >> x[2]) || (words >> rest) || !std::isfinite(x[0]) ||
        !std::isfinite(x[1]) || !std::isfinite(x[2]))
      throw std::runtime_error(path + ":" + std::to_string(lineNo) +
                               ": a vertex needs three finite numbers: '" + excerpt(line) + "'");
    if (v.size() >= 3 * kMaxStlTriangles)
      throw std::runtime_error(path + ": more than " + std::to_string(kMaxStlTriangles) +
                               " triangles");
    v.push_back(x);
  }
  if (v.size() % 3 != 0)
    throw std::runtime_error(path + ": " + std::to_string(v.size()) +
                             " vertices, not three per facet");
  return v;
}

}  // namespace

std::vector<std::array<double, 3>> readStlVertices(const std::string& path) {
  const std::string b = readFile(path);
  std::vector<std::array<double, 3>> v;
  std::uint32_t n = 0;
  if (b.size() >= 84) std::memcpy(&n, b.data() + 80, sizeof n);
  if (b.size() >= 84 && b.size() == 84 + 50 * static_cast<std::size_t>(n)) {
    if (n > kMaxStlTriangles)
      throw std::runtime_error(path + ": more than " + std::to_string(kMaxStlTriangles) +
                               " triangles");
    v = binaryVertices(path, b, n);
  } else if (b.compare(0, 5, "solid") == 0) {
    v = asciiVertices(path, b);
  } else {
    throw std::runtime_error(path +
                             ": not an STL mesh (binary: 84 + 50 n bytes for its n triangles; "
                             "ASCII: starts with 'solid')");
  }
  if (v.empty()) throw std::runtime_error(path + ": the mesh has no triangles");
  return v;
}

}  // namespace diffloco::io
