#include "envs/terrain.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "envs/random_stream.h"

namespace diffloco::envs {

const std::vector<std::string>& subTerrainTypes() {
  static const std::vector<std::string> names{
      "flat",           "rough",           "pyramid_slope", "pyramid_slope_inverted",
      "pyramid_stairs", "pyramid_stairs_inverted", "obstacles",     "rough_slope",
      "rough_slope_inverted"};
  return names;
}

std::vector<int> Terrain::columnsOf(const std::string& type) const {
  std::vector<int> out;
  for (int c = 0; c < columns; ++c)
    if (columnType[c] == type) out.push_back(c);
  return out;
}

namespace {

int samplesPer(double length, double spacing) {
  return static_cast<int>(std::lround(length / spacing));
}

void check(bool ok, const std::string& key, const std::string& msg) {
  if (!ok) throw TerrainConfigError(key, msg);
}

double lerp(const config::Range& r, double d) { return r.lo + (r.hi - r.lo) * d; }

// One tile's heights, n x n samples (x fastest), local coordinates u, v in [0, size).
class TileWriter {
 public:
  TileWriter(const TerrainConfig& c, const SubTerrainConfig& t, double difficulty,
             std::uint64_t stream)
      : c_(c), t_(t), d_(difficulty), n_(samplesPer(c.tileSize, c.spacing)), rng_(stream) {}

  std::vector<double> heights() {
    std::vector<double> h(static_cast<size_t>(n_) * n_, 0.0);
    const std::string& type = t_.name;
    if (type == "rough" || type == "rough_slope" || type == "rough_slope_inverted") rough(h);
    if (type == "pyramid_slope") pyramid(h, lerp(t_.grade, d_), 0, false);
    if (type == "pyramid_slope_inverted") pyramid(h, lerp(t_.grade, d_), 0, true);
    if (type == "rough_slope") pyramid(h, lerp(t_.grade, d_), 0, false);
    if (type == "rough_slope_inverted") pyramid(h, lerp(t_.grade, d_), 0, true);
    if (type == "pyramid_stairs") pyramid(h, lerp(t_.rise, d_), t_.run, false);
    if (type == "pyramid_stairs_inverted") pyramid(h, lerp(t_.rise, d_), t_.run, true);
    if (type == "obstacles") obstacles(h);
    return h;
  }

 private:
  double uniform(double lo, double hi) { return lo + (hi - lo) * nextUniform(rng_); }
  double coord(int i) const { return i * c_.spacing; }
  // Distance from the tile's border towards its centre (Chebyshev), and whether a point is on
  // the central platform.
  double inward(int ix, int iy) const {
    const double s = c_.tileSize;
    return std::min({coord(ix), s - coord(ix), coord(iy), s - coord(iy)});
  }
  bool onPlatform(double u, double v) const {
    const double half = 0.5 * c_.platform, mid = 0.5 * c_.tileSize;
    return std::abs(u - mid) <= half && std::abs(v - mid) <= half;
  }

  void rough(std::vector<double>& h) {
    const double a = lerp(t_.amplitude, d_);
    const int m = std::max(1, static_cast<int>(std::ceil(c_.tileSize / t_.cell)));
    std::vector<double> lattice(static_cast<size_t>(m + 1) * (m + 1));
    for (double& x : lattice) x = uniform(-a, a);
    const double step = c_.tileSize / m;
    for (int iy = 0; iy < n_; ++iy)
      for (int ix = 0; ix < n_; ++ix) {
        const double gu = coord(ix) / step, gv = coord(iy) / step;
        const int i = std::min(static_cast<int>(gu), m - 1), j = std::min(static_cast<int>(gv), m - 1);
        const double fu = gu - i, fv = gv - j;
        auto at = [&](int a2, int b2) { return lattice[static_cast<size_t>(b2) * (m + 1) + a2]; };
        h[static_cast<size_t>(iy) * n_ + ix] =
            (1 - fv) * ((1 - fu) * at(i, j) + fu * at(i + 1, j)) +
            fv * ((1 - fu) * at(i, j + 1) + fu * at(i + 1, j + 1));
      }
  }

  // Rises from the border to the platform: continuously with `slope` (run = 0), or in steps of
  // height `slope` every `run` metres; `inverted`: sunk instead. Adds to what is there (a rough
  // slope is the rough ground's heights on a pyramid).
  void pyramid(std::vector<double>& h, double slope, double run, bool inverted) {
    const double top = 0.5 * (c_.tileSize - c_.platform);  // inward distance of the platform
    for (int iy = 0; iy < n_; ++iy)
      for (int ix = 0; ix < n_; ++ix) {
        const double w = std::min(inward(ix, iy), top);
        const double z = run > 0 ? slope * std::floor(w / run + 1e-9) : slope * w;
        h[static_cast<size_t>(iy) * n_ + ix] += inverted ? -z : z;
      }
  }

  void obstacles(std::vector<double>& h) {
    const double top = lerp(t_.height, d_);
    const double levels[4] = {-top, -0.5 * top, 0.5 * top, top};
    for (int k = 0; k < t_.count; ++k) {
      const double w = uniform(t_.size.lo, t_.size.hi), l = uniform(t_.size.lo, t_.size.hi);
      const double u0 = uniform(0, c_.tileSize - w), v0 = uniform(0, c_.tileSize - l);
      const double z = levels[std::min(3, static_cast<int>(4 * nextUniform(rng_)))];
      for (int iy = 0; iy < n_; ++iy)
        for (int ix = 0; ix < n_; ++ix) {
          const double u = coord(ix), v = coord(iy);
          if (u >= u0 && u <= u0 + w && v >= v0 && v <= v0 + l)
            h[static_cast<size_t>(iy) * n_ + ix] = z;
        }
    }
    for (int iy = 0; iy < n_; ++iy)  // the platform stays flat
      for (int ix = 0; ix < n_; ++ix)
        if (onPlatform(coord(ix), coord(iy))) h[static_cast<size_t>(iy) * n_ + ix] = 0;
  }

  const TerrainConfig& c_;
  const SubTerrainConfig& t_;
  double d_;
  int n_;
  std::uint64_t rng_;
};

}  // namespace

void validateTerrainConfig(const TerrainConfig& c) {
  check(c.spacing > 0 && std::isfinite(c.spacing), "spacing", "must be positive");
  check(c.tileSize > 0 && std::isfinite(c.tileSize), "tile_size", "must be positive");
  const double ratio = c.tileSize / c.spacing;
  check(std::abs(ratio - std::lround(ratio)) < 1e-6 * ratio && ratio >= 4, "spacing",
        "must divide tile_size into at least 4 cells");
  check(c.platform >= 0 && c.platform <= c.tileSize, "platform",
        "must be in [0, tile_size]");
  check(c.border >= 0 && std::isfinite(c.border), "border", "must be >= 0");
  check(c.rows >= 1, "rows", "must be >= 1 (a curriculum needs its levels)");
  check(c.columns >= 1, "columns", "must be >= 1");
  check(c.level < c.rows, "level", "must be below rows (" + std::to_string(c.rows) + ")");
  const double nx = 2 * std::ceil(c.border / c.spacing) + c.rows * ratio + 1;
  const double ny = 2 * std::ceil(c.border / c.spacing) + c.columns * ratio + 1;
  check(nx * ny <= static_cast<double>(kMaxTerrainSamples), "spacing",
        "the grid would have " + std::to_string(static_cast<long long>(nx)) + " x " +
            std::to_string(static_cast<long long>(ny)) + " samples, more than " +
            std::to_string(kMaxTerrainSamples) + " (" +
            std::to_string(kMaxTerrainSamples * 8 >> 20) + " MB): fewer tiles or a coarser grid");
  check(!c.types.empty(), "types", "needs at least one sub-terrain type");
  double total = 0;
  for (const auto& t : c.types) {
    const std::string key = "types." + t.name;
    const auto& names = subTerrainTypes();
    check(std::find(names.begin(), names.end(), t.name) != names.end(), key,
          "unknown sub-terrain type");
    check(t.proportion >= 0 && std::isfinite(t.proportion), key + ".proportion", "must be >= 0");
    total += t.proportion;
    check(t.cell > 0, key + ".cell", "must be positive");
    check(t.run > 0, key + ".run", "must be positive");
    // A tread of fewer than two samples has no flat top on the grid: no foot stands on it.
    if (t.name == "pyramid_stairs" || t.name == "pyramid_stairs_inverted")
      check(t.run >= 2 * c.spacing, key + ".run",
            "a tread of " + std::to_string(t.run) + " m is narrower than two grid cells (spacing " +
                std::to_string(c.spacing) + " m): no foot stands on it");
    check(t.size.lo > 0 && t.size.hi >= t.size.lo && t.size.hi <= c.tileSize, key + ".size",
          "must be 0 < min <= max <= tile_size");
    check(t.count >= 0 && t.count <= 10000, key + ".count", "must be in [0, 10000]");
  }
  check(total > 0, "types", "the proportions sum to 0");
}

bool throughTileFace(double dx, double dy) {
  const double a = std::abs(dx), b = std::abs(dy);
  return std::min(a, b) <= std::tan(M_PI / 8) * std::max(a, b);
}

Terrain generateTerrain(const TerrainConfig& c) {
  validateTerrainConfig(c);
  const int tileN = samplesPer(c.tileSize, c.spacing);
  const int borderN = static_cast<int>(std::ceil(c.border / c.spacing - 1e-9));
  auto hf = std::make_shared<sim::HeightField>();
  hf->spacing = c.spacing;
  hf->interpolant = c.interpolant;
  hf->nx = 2 * borderN + c.rows * tileN + 1;
  hf->ny = 2 * borderN + c.columns * tileN + 1;
  hf->originX = -borderN * c.spacing;
  hf->originY = -borderN * c.spacing;
  hf->heights.assign(static_cast<size_t>(hf->nx) * hf->ny, 0.0);

  Terrain t;
  t.rows = c.rows, t.columns = c.columns, t.tileSize = tileN * c.spacing;
  // Columns by proportion, in the order the types are given.
  double total = 0;
  for (const auto& s : c.types) total += s.proportion;
  std::vector<const SubTerrainConfig*> typeOf(c.columns);
  for (int col = 0; col < c.columns; ++col) {
    const double x = (col + 0.5) / c.columns * total;
    double acc = 0;
    typeOf[col] = &c.types.back();
    for (const auto& s : c.types) {
      acc += s.proportion;
      if (x < acc) {
        typeOf[col] = &s;
        break;
      }
    }
    t.columnType.push_back(typeOf[col]->name);
  }
  for (int row = 0; row < c.rows; ++row)
    for (int col = 0; col < c.columns; ++col) {
      const double d = c.rows > 1 ? static_cast<double>(row) / (c.rows - 1) : 1.0;
      TileWriter w(c, *typeOf[col], d,
                   deriveSeed(static_cast<std::uint64_t>(c.seed),
                              static_cast<std::uint64_t>(row) * 65536 + col));
      const std::vector<double> h = w.heights();
      for (int iy = 0; iy < tileN; ++iy)
        for (int ix = 0; ix < tileN; ++ix)
          hf->heights[static_cast<size_t>(borderN + col * tileN + iy) * hf->nx + borderN +
                      row * tileN + ix] = h[static_cast<size_t>(iy) * tileN + ix];
    }
  sim::validateHeightField(*hf, "generated terrain");
  hf->finalize();
  t.field = hf;
  return t;
}

}  // namespace diffloco::envs
