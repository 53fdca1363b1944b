// Terrain generation (envs/terrain.h): layout, each sub-terrain's shape at its configured
// difficulty, determinism, and bad terrain sections as errors naming file, line and key.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "envs/task_config.h"
#include "envs/terrain.h"

using namespace diffloco;
using namespace diffloco::envs;

namespace {

SubTerrainConfig type(const std::string& name, double proportion = 1) {
  SubTerrainConfig s;
  s.name = name;
  s.proportion = proportion;
  return s;
}

TerrainConfig small(std::vector<SubTerrainConfig> types) {
  TerrainConfig c;
  c.enabled = true;
  c.spacing = 0.05, c.tileSize = 4.0, c.platform = 1.0, c.border = 1.0;
  c.rows = 3, c.columns = static_cast<int>(types.size());
  c.types = std::move(types);
  return c;
}

// Height at world (x, y) read off the grid sample there.
double sampleAt(const Terrain& t, double x, double y) {
  const sim::HeightField& f = *t.field;
  const int ix = static_cast<int>(std::lround((x - f.originX) / f.spacing));
  const int iy = static_cast<int>(std::lround((y - f.originY) / f.spacing));
  if (ix < 0 || ix >= f.nx || iy < 0 || iy >= f.ny)
    throw std::out_of_range("sampleAt: (" + std::to_string(x) + ", " + std::to_string(y) +
                            ") is outside the grid");
  return f.at(ix, iy);
}

}  // namespace

TEST(TerrainGenerator, LayoutColumnsByProportionRowsByDifficulty) {
  TerrainConfig c = small({type("flat", 1), type("pyramid_slope", 2), type("rough", 1)});
  c.columns = 8;
  const Terrain t = generateTerrain(c);
  EXPECT_EQ(t.rows, 3);
  EXPECT_EQ(t.columns, 8);
  // Column centres (j + 0.5) / 8 of the cumulative proportions 1/4, 3/4, 1.
  const std::vector<std::string> expected{"flat", "flat", "pyramid_slope", "pyramid_slope",
                                          "pyramid_slope", "pyramid_slope", "rough", "rough"};
  EXPECT_EQ(t.columnType, expected);
  EXPECT_EQ(t.columnsOf("rough"), (std::vector<int>{6, 7}));
  // Grid: border + tiles + border, one sample per spacing, plus the closing sample.
  EXPECT_EQ(t.field->nx, 2 * 20 + 3 * 80 + 1);
  EXPECT_EQ(t.field->ny, 2 * 20 + 8 * 80 + 1);
  EXPECT_DOUBLE_EQ(t.centreX(1), 6.0);
  EXPECT_DOUBLE_EQ(t.centreY(2), 10.0);
  // The border is flat.
  EXPECT_EQ(sampleAt(t, -0.5, 5.0), 0.0);
  EXPECT_EQ(sampleAt(t, 5.0, 32.5), 0.0);  // the far border: 8 tiles of 4 m, then 1 m
}

// Each sub-terrain's shape on the hardest row (d = 1: the upper end of each range) and the
// easiest (d = 0: the lower end).
TEST(TerrainGenerator, SubTerrainsHaveTheirConfiguredShape) {
  SubTerrainConfig stairs = type("pyramid_stairs"), down = type("pyramid_stairs_inverted");
  stairs.rise = down.rise = {0.05, 0.15};
  stairs.run = down.run = 0.3;
  SubTerrainConfig slope = type("pyramid_slope");
  slope.grade = {0.1, 0.3};
  SubTerrainConfig rough = type("rough");
  rough.amplitude = {0.02, 0.08};
  rough.cell = 0.2;
  SubTerrainConfig obst = type("obstacles");
  obst.height = {0.05, 0.2};
  const Terrain t = generateTerrain(small({stairs, down, slope, rough, obst, type("flat")}));
  const double T = t.tileSize;
  for (int row : {0, 2}) {
    const double d = row / 2.0;
    const double x0 = row * T;  // tile's corner
    // Stairs: along the tile's centre line y = centre, from the edge inward, a step every run.
    const double rise = 0.05 + 0.1 * d;
    for (int k = 0; k < 5; ++k) {
      const double x = x0 + (k + 0.5) * 0.3;
      EXPECT_NEAR(sampleAt(t, x, t.centreY(0)), k * rise, 1e-12) << "row " << row << " step " << k;
      EXPECT_NEAR(sampleAt(t, x, t.centreY(1)), -k * rise, 1e-12);
    }
    // The platform: the top, flat; (T - platform) / 2 = 1.5 m of stairs = 5 steps.
    EXPECT_NEAR(sampleAt(t, t.centreX(row), t.centreY(0)), 5 * rise, 1e-12);
    EXPECT_NEAR(sampleAt(t, t.centreX(row) + 0.4, t.centreY(0) - 0.3), 5 * rise, 1e-12);
    // Slope: h = grade * distance from the edge, up to the platform.
    const double grade = 0.1 + 0.2 * d;
    EXPECT_NEAR(sampleAt(t, x0 + 0.7, t.centreY(2)), grade * 0.7, 1e-12);
    EXPECT_NEAR(sampleAt(t, t.centreX(row), t.centreY(2)), grade * 1.5, 1e-12);
    // Rough: within +-amplitude, and not flat.
    double lo = 0, hi = 0;
    const int n = static_cast<int>(std::lround(T / 0.05));  // the tile's own samples
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double z = sampleAt(t, x0 + i * 0.05, 3 * T + j * 0.05);
        lo = std::min(lo, z);
        hi = std::max(hi, z);
      }
    const double a = 0.02 + 0.06 * d;
    EXPECT_GE(lo, -a);
    EXPECT_LE(hi, a);
    EXPECT_GT(hi - lo, a);
    // Obstacles: heights among +-h, +-h/2 and 0, the platform flat.
    const double h = 0.05 + 0.15 * d;
    int raised = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double z = sampleAt(t, x0 + i * 0.05, 4 * T + j * 0.05);
        EXPECT_TRUE(z == 0 || std::abs(std::abs(z) - h) < 1e-12 ||
                    std::abs(std::abs(z) - h / 2) < 1e-12)
            << z;
        raised += z != 0;
      }
    EXPECT_GT(raised, 100);
    EXPECT_EQ(sampleAt(t, t.centreX(row) + 0.45, t.centreY(4) - 0.45), 0.0);
    EXPECT_EQ(sampleAt(t, t.centreX(row), t.centreY(5)), 0.0);  // flat
  }
}

TEST(TerrainGenerator, DeterministicInItsSeed) {
  TerrainConfig c = small({type("rough"), type("obstacles")});
  const Terrain a = generateTerrain(c), b = generateTerrain(c);
  EXPECT_EQ(a.field->heights, b.field->heights);
  c.seed = 1;
  EXPECT_NE(generateTerrain(c).field->heights, a.field->heights);
}

namespace {

// The error parsing a velocity-like task with this terrain section ("" if it parsed).
std::string terrainError(const std::string& terrain) {
  const std::string text = "robot: anymal\nobservations: {base_height: {}}\n"
                           "rewards: {base_orientation: {weight: 1.0}}\nterrain:\n" + terrain;
  try {
    parseTaskConfig(YAML::Load(text), "rough.yaml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TerrainGenerator, BadTerrainSectionsNameFileLineAndKey) {
  EXPECT_EQ(terrainError("  types: {flat: {}}\n"), "");
  EXPECT_NE(terrainError("  spacing: -0.1\n  types: {flat: {}}\n").find("rough.yaml:5"),
            std::string::npos);
  EXPECT_NE(terrainError("  spacing: -0.1\n  types: {flat: {}}\n").find("terrain.spacing"),
            std::string::npos);
  const std::string huge = terrainError("  spacing: 0.001\n  rows: 100\n  types: {flat: {}}\n");
  EXPECT_NE(huge.find("rough.yaml:5"), std::string::npos) << huge;
  EXPECT_NE(huge.find("terrain.spacing: the grid would have"), std::string::npos) << huge;
  const std::string rows = terrainError("  rows: 0\n  types: {flat: {}}\n");
  EXPECT_NE(rows.find("rough.yaml:5"), std::string::npos) << rows;
  EXPECT_NE(rows.find("terrain.rows"), std::string::npos) << rows;
  const std::string nan = terrainError("  types: {rough: {amplitude: [0.0, .nan]}}\n");
  EXPECT_NE(nan.find("terrain.types.rough.amplitude"), std::string::npos) << nan;
  EXPECT_NE(nan.find("rough.yaml:5"), std::string::npos) << nan;
  const std::string unknown = terrainError("  types: {stairs: {}}\n");
  EXPECT_NE(unknown.find("unknown sub-terrain type 'stairs'"), std::string::npos) << unknown;
  const std::string none = terrainError("  types: {}\n");
  EXPECT_NE(none.find("terrain.types"), std::string::npos) << none;
  const std::string zero = terrainError("  types: {flat: {proportion: 0}}\n");
  EXPECT_NE(zero.find("terrain.types: the proportions sum to 0"), std::string::npos) << zero;
  const std::string wrongKey = terrainError("  types: {flat: {rise: [0.1, 0.2]}}\n");
  EXPECT_NE(wrongKey.find("rise"), std::string::npos) << wrongKey;
  const std::string level = terrainError("  rows: 3\n  level: 3\n  types: {flat: {}}\n");
  EXPECT_NE(level.find("terrain.level: must be below rows (3)"), std::string::npos) << level;
  const std::string tile = terrainError("  tile_size: 1.03\n  types: {flat: {}}\n");
  EXPECT_NE(tile.find("terrain.spacing: must divide tile_size"), std::string::npos) << tile;
}

// terrain.interpolant: how the generated field joins its samples (sim::Interpolant), monotone
// unless set; it reaches the field, round-trips, and a bad name is refused naming the key.
TEST(TerrainGenerator, InterpolantKey) {
  TerrainConfig c = small({type("pyramid_stairs")});
  EXPECT_EQ(generateTerrain(c).field->interpolant, diffloco::sim::Interpolant::Monotone);
  c.interpolant = diffloco::sim::Interpolant::CatmullRom;
  EXPECT_EQ(generateTerrain(c).field->interpolant, diffloco::sim::Interpolant::CatmullRom);
  const std::string text =
      "robot: anymal\nobservations: {base_height: {}}\n"
      "rewards: {base_orientation: {weight: 1.0}}\nterrain:\n"
      "  interpolant: catmull_rom\n  types: {flat: {}}\n";
  const TaskConfig t = parseTaskConfig(YAML::Load(text), "rough.yaml");
  EXPECT_EQ(t.terrain.interpolant, diffloco::sim::Interpolant::CatmullRom);
  EXPECT_EQ(parseTaskConfig(YAML::Load(toYaml(t)), "back.yaml").terrain.interpolant,
            diffloco::sim::Interpolant::CatmullRom);
  const std::string e = terrainError("  interpolant: bilinear\n  types: {flat: {}}\n");
  EXPECT_NE(e.find("terrain.interpolant"), std::string::npos) << e;
  EXPECT_NE(e.find("bilinear"), std::string::npos) << e;
}

// A rough slope is the rough ground's heights on a pyramid slope: each tile draws from the
// stream of its row and column, so the three layouts' tiles add up sample for sample (to the
// rounding of a fused multiply-add).
TEST(TerrainGenerator, RoughSlopeIsTheRoughGroundOnAPyramid) {
  auto with = [](const std::string& name) {
    SubTerrainConfig s = type(name);
    s.grade = {0.1, 0.36};
    s.amplitude = {0.05, 0.05};
    s.cell = 0.2;
    return generateTerrain(small({s})).field->heights;
  };
  const auto sum = with("rough_slope"), slope = with("pyramid_slope"), rough = with("rough");
  const auto sunk = with("rough_slope_inverted"), down = with("pyramid_slope_inverted");
  ASSERT_EQ(sum.size(), slope.size());
  double roughest = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    EXPECT_NEAR(sum[i], slope[i] + rough[i], 1e-15) << i;
    EXPECT_NEAR(sunk[i], down[i] + rough[i], 1e-15) << i;
    roughest = std::max(roughest, std::abs(rough[i]));
  }
  EXPECT_GT(roughest, 0.04);  // the roughness is there to add
  EXPECT_LE(roughest, 0.05);
}

// The velocity_rough task is legged_gym's rough layout: row r has difficulty d = r / 10 in its
// laws (stairs 0.05 + 0.18 d with a 0.31 m tread, slopes 0.4 d, obstacles 0.05 + 0.2 d), 8 m
// tiles with a 3 m platform, and its proportions of the 20 columns.
TEST(TerrainGenerator, VelocityRoughIsLeggedGymsLayout) {
  const TaskConfig task = loadTaskConfig("velocity_rough");
  const Terrain t = generateTerrain(task.terrain);
  ASSERT_EQ(t.rows, 10);
  ASSERT_EQ(t.columns, 20);
  EXPECT_EQ(t.tileSize, 8.0);
  auto count = [&](const std::string& type) { return static_cast<int>(t.columnsOf(type).size()); };
  EXPECT_EQ(count("pyramid_slope") + count("pyramid_slope_inverted"), 2);  // 10 % slopes
  EXPECT_EQ(count("rough_slope"), 2);                                      // 10 % rough slopes
  EXPECT_EQ(count("pyramid_stairs_inverted"), 7);                          // 35 % stairs up
  EXPECT_EQ(count("pyramid_stairs"), 5);                                   // 25 % stairs down
  EXPECT_EQ(count("obstacles"), 4);                                        // 20 % obstacles
  const int up = t.columnsOf("pyramid_stairs_inverted")[0], down = t.columnsOf("pyramid_stairs")[0];
  const int slope = t.columnsOf("pyramid_slope")[0];
  for (int row = 0; row < 10; ++row) {
    const double d = row / 10.0, x0 = row * t.tileSize;
    // Along a tile's centre line from its edge: a step of the law's rise every 0.31 m.
    const double rise = 0.05 + 0.18 * d;
    for (int k = 0; k < 8; ++k) {
      const double x = x0 + (k + 0.5) * 0.31;
      EXPECT_NEAR(sampleAt(t, x, t.centreY(down)), k * rise, 1e-9) << row << " " << k;
      EXPECT_NEAR(sampleAt(t, x, t.centreY(up)), -k * rise, 1e-9) << row << " " << k;
    }
    // The platform: 3 m, so (8 - 3) / 2 = 2.5 m of stairs, 8 whole steps of 0.31 m.
    EXPECT_NEAR(sampleAt(t, t.centreX(row) + 1.45, t.centreY(down)), 8 * rise, 1e-9);
    EXPECT_NEAR(sampleAt(t, x0 + 1.0, t.centreY(slope)), 0.4 * d * 1.0, 1e-9);
    // Obstacles: heights among 0, +-h/2 and +-h.
    const double h = 0.05 + 0.2 * d;
    for (int col : t.columnsOf("obstacles"))
      for (double u = 0.05; u < 8; u += 0.5) {
        const double z = std::abs(sampleAt(t, x0 + u, t.centreY(col) - 3.5));
        EXPECT_TRUE(z == 0 || std::abs(z - h) < 1e-9 || std::abs(z - h / 2) < 1e-9) << z;
      }
  }
}

TEST(TerrainGenerator, NegativeRiseIsAnErrorNamingTheKey) {
  const std::string e = terrainError("  types: {pyramid_stairs: {rise: [-0.05, 0.2]}}\n");
  EXPECT_NE(e.find("rough.yaml:5"), std::string::npos) << e;
  EXPECT_NE(e.find("rise"), std::string::npos) << e;
}
