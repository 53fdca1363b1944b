// io/stl.cpp: the vertices of a binary and an ASCII STL of the same octahedron agree with the
// ones written; files that are neither, bad vertices and empty meshes are errors naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/stl.h"
#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using namespace diffloco;

namespace {

using Tri = std::array<std::array<float, 3>, 3>;

// The 8 faces of the octahedron with vertices at +-a on each axis.
std::vector<Tri> octahedron(float a) {
  std::vector<Tri> t;
  for (float sx : {-a, a})
    for (float sy : {-a, a})
      for (float sz : {-a, a}) t.push_back({{{sx, 0, 0}, {0, sy, 0}, {0, 0, sz}}});
  return t;
}

using diffloco::testing::ScratchDir;

void writeBinary(const fs::path& p, const std::vector<Tri>& tris, int countDelta = 0) {
  std::ofstream f(p, std::ios::binary);
  const std::string header(80, ' ');
  f.write(header.data(), 80);
  const std::uint32_t n = static_cast<std::uint32_t>(tris.size()) + countDelta;
  f.write(reinterpret_cast<const char*>(&n), 4);
  for (const auto& t : tris) {
    const float normal[3] = {0, 0, 0};
    f.write(reinterpret_cast<const char*>(normal), 12);
    for (const auto& v : t) f.write(reinterpret_cast<const char*>(v.data()), 12);
    const std::uint16_t attr = 0;
    f.write(reinterpret_cast<const char*>(&attr), 2);
  }
}

void writeAscii(const fs::path& p, const std::vector<Tri>& tris) {
  std::ofstream f(p);
  f << "solid octahedron\n";
  for (const auto& t : tris) {
    f << "  facet normal 0 0 0\n    outer loop\n";
    for (const auto& v : t) f << "      vertex " << v[0] << " " << v[1] << " " << v[2] << "\n";
    f << "    endloop\n  endfacet\n";
  }
  f << "endsolid octahedron\n";
}

std::string errorOf(const fs::path& p) {
  try {
    io::readStlVertices(p.string());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Stl, BinaryAndAsciiGiveTheVerticesWritten) {
  const auto tris = octahedron(0.04f);
  const ScratchDir dir("diffloco_stl");
  const fs::path bin = dir / "b.stl", txt = dir / "a.stl";
  writeBinary(bin, tris);
  writeAscii(txt, tris);
  const auto b = io::readStlVertices(bin.string()), a = io::readStlVertices(txt.string());
  ASSERT_EQ(b.size(), 24u);
  ASSERT_EQ(a.size(), 24u);
  for (size_t k = 0; k < 24; ++k)
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(b[k][c], tris[k / 3][k % 3][c]);
      EXPECT_NEAR(a[k][c], tris[k / 3][k % 3][c], 1e-7);
    }
}

TEST(Stl, BadFilesAreErrorsNamingTheFile) {
  const ScratchDir dir("diffloco_stl");
  const fs::path p = dir / "bad.stl";
  writeBinary(p, octahedron(1), 1);  // the count says one triangle more than there is
  EXPECT_NE(errorOf(p).find(p.string() + ": not an STL mesh"), std::string::npos) << errorOf(p);
  writeBinary(p, {});
  EXPECT_NE(errorOf(p).find("no triangles"), std::string::npos) << errorOf(p);
  writeBinary(p, {Tri{{{0, 0, 0}, {1, 0, 0}, {0, std::nanf(""), 0}}}});
  EXPECT_NE(errorOf(p).find("non-finite"), std::string::npos) << errorOf(p);
  std::ofstream(p) << "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 zero 0\n";
  EXPECT_NE(errorOf(p).find(p.string() + ":5: a vertex needs three finite numbers"),
            std::string::npos)
      << errorOf(p);
  std::ofstream(p) << "solid x\nvertex 0 0 0\nvertex 1 0 0\n";
  EXPECT_NE(errorOf(p).find("not three per facet"), std::string::npos) << errorOf(p);
  fs::remove(p);
  EXPECT_NE(errorOf(p).find("cannot read"), std::string::npos) << errorOf(p);
}
