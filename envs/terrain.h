// Generated terrain for a task (the task's `terrain:` section), the way legged_gym and Isaac Lab
// build theirs: one height field made of square tiles, `rows` rows of increasing difficulty along
// x and `columns` columns of sub-terrain types along y, inside a flat border. Row r has difficulty
// d = r / (rows - 1) (the last row is the hardest: every ranged parameter at its upper value); a
// column's type follows the types' proportions in the order given. Each tile keeps a flat square
// `platform` at its centre, where envs spawn (except `rough`, which is rough everywhere).
//
// Sub-terrain types and their parameters ([lo, hi]: the value at d = 0 and at d = 1):
//   flat                      nothing
//   rough                     amplitude [lo, hi] m: heights U(-a, a) on a lattice of `cell` m,
//                             bilinear between lattice points
//   pyramid_slope             grade [lo, hi] (rise over run): the tile rises from its edges to the
//                             platform (the robot starts on top and walks down)
//   pyramid_slope_inverted    the same, sunk: the robot starts at the bottom and walks up
//   pyramid_stairs            rise [lo, hi] m, run m: square rings of steps rising to the
//                             platform (the robot starts on top: stairs down)
//   pyramid_stairs_inverted   the same, sunk (the robot starts at the bottom: stairs up)
//   obstacles                 height [lo, hi] m, size [min, max] m, count: rectangles raised or
//                             sunk by one of -h, -h/2, h/2, h, outside the platform
//   rough_slope               grade [lo, hi], amplitude [lo, hi] m, cell m: the rough ground's
//                             heights on a pyramid_slope (legged_gym's rough slopes), the
//                             platform included
//   rough_slope_inverted      the same on a pyramid_slope_inverted
// Generation is deterministic in `seed` (each tile draws from its own stream).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/range.h"
#include "sim/terrain.h"

namespace diffloco::envs {

struct SubTerrainConfig {
  std::string name;  // the type (see above)
  double proportion = 1;
  config::Range amplitude{0.02, 0.1};  // rough, rough slopes [m]
  double cell = 0.2;                   // rough, rough slopes: lattice of the random heights [m]
  config::Range grade{0.0, 0.4};       // slopes, rough slopes
  config::Range rise{0.05, 0.2};       // stairs [m]
  double run = 0.3;                    // stairs: depth of a step [m]
  config::Range height{0.05, 0.2};     // obstacles [m]
  config::Range size{0.5, 1.5};        // obstacles: sides of the rectangles [m]
  int count = 20;                      // obstacles per tile
};

struct TerrainCurriculumConfig {
  bool enabled = true;   // off: envs keep the level they started on
  int maxInitLevel = 4;  // envs start on levels U{0, ..., max_init_level}
  // At an episode's end an env moves up a level when its base ended farther than promote
  // (fraction of the tile size) from where it started, down when it covered less than demote
  // (fraction) of its commanded distance |v_xy*| x episode length; one that passes the last
  // level goes to a random level (legged_gym's rule).
  double promote = 0.5;
  double demote = 0.5;
  // What "commanded distance" means. "final_command" (legged_gym, Isaac Lab): the command at the
  // episode's end x the episode length; with commands resampled within an episode, a robot
  // that tracks every command perfectly is demoted in about a third of its episodes (its
  // displacement is a random walk). "commanded_path": the displacement a perfect tracker would
  // have made, the commands integrated along the base's heading; an episode that ended before
  // its time limit (a fall) moves down. "fall": only a fall moves down (a slow climber stays).
  std::string demoteAgainst = "final_command";
  // An env promoted past the last level: "random" (legged_gym, Isaac Lab) goes to a random level,
  // so that solved envs keep sampling every level; "stay" keeps it on the last level, so that
  // the hardest tiles get every env that can walk them.
  std::string pastLast = "random";
  // Where a promotion counts. "anywhere" (legged_gym): the base ended more than promote x
  // tile_size from the tile's centre. "face": more than that along the tile's x or y, with a
  // bearing within 22.5 degrees of that axis: up a pyramid's face, not by its corners, whose
  // convex ring corners the legs take one at a time (and where 0.5 x tile_size from the centre
  // is reached after about half the rings).
  std::string promoteThrough = "anywhere";
};

struct TerrainConfig {
  bool enabled = false;  // absent from a task: the plane z = 0
  double spacing = 0.05;   // grid spacing [m]
  double tileSize = 8.0;   // side of a tile [m]
  double platform = 2.0;   // side of the flat square at a tile's centre [m]
  double border = 3.0;     // flat border around the tiles [m]
  int rows = 10;           // difficulty levels
  int columns = 10;        // tiles per level (types by proportion)
  std::int64_t seed = 0;
  std::vector<SubTerrainConfig> types;
  TerrainCurriculumConfig curriculum;
  // Envs on a fixed level instead (evaluation on "the hardest level"): -1 none.
  int level = -1;
  // How the samples are joined: monotone (no lip at a step edge: the ground MuJoCo builds from
  // the same heights) unless set.
  sim::Interpolant interpolant = sim::Interpolant::Monotone;
  // > 0: the simulator's backward pass sees the terrain smoothed by a Gaussian of this standard
  // deviation [m] (sim::SimOptions' backwardTerrain: straight-through terrain); 0: the terrain.
  double backwardSmoothing = 0;
};

// Names of the sub-terrain types, in the order above.
const std::vector<std::string>& subTerrainTypes();

// The generated terrain: the height field and where its tiles are.
struct Terrain {
  std::shared_ptr<const sim::HeightField> field;
  int rows = 0, columns = 0;
  double tileSize = 0;
  std::vector<std::string> columnType;  // the sub-terrain type of each column
  double x0 = 0, y0 = 0;                // world (x, y) of tile (0, 0)'s corner

  // World (x, y) of the centre of tile (row, column).
  double centreX(int row) const { return x0 + (row + 0.5) * tileSize; }
  double centreY(int column) const { return y0 + (column + 0.5) * tileSize; }
  // Columns of a type (empty when no column has it).
  std::vector<int> columnsOf(const std::string& type) const;
};

// Whether a point (dx, dy) from a tile's centre lies through a face of the tile rather than near
// a corner: its bearing within 22.5 degrees of x or y. On a pyramid the rings' convex corners let
// the legs step up one at a time; a robot meeting a staircase meets its face. The curriculum's
// promote_through: face and the evaluations' climbed_face both ask this.
bool throughTileFace(double dx, double dy);

// Largest grid generateTerrain builds (samples): 64 M doubles = 512 MB.
constexpr long long kMaxTerrainSamples = 64LL << 20;

// What is wrong with a terrain config: `key` is the key path below the terrain section
// ("spacing", "types.rough.cell"), what() says "terrain.<key>: <problem>".
struct TerrainConfigError : std::invalid_argument {
  TerrainConfigError(const std::string& key, const std::string& problem)
      : std::invalid_argument("terrain." + key + ": " + problem), key(key), problem(problem) {}
  std::string key, problem;
};

// Throws TerrainConfigError when the config cannot be generated (no types, proportions that sum
// to zero, a grid beyond kMaxTerrainSamples, a spacing that does not divide the tile size, ...).
void validateTerrainConfig(const TerrainConfig& c);
Terrain generateTerrain(const TerrainConfig& c);

}  // namespace diffloco::envs
