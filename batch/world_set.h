// Host-side helpers shared by the CPU tests (tests/batch) and gpu_check: random worlds in and out of
// contact, a bumpy height field, the stages' step and VJP over a set of worlds, and the difference
// measure between two results.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "batch/sim_names.h"
#include "sim/model.h"
#include "sim/options.h"
#include "sim/rigid_body.h"
#include "sim/terrain.h"

namespace diffloco::batch {

// n worlds, world-major: q[w * NQ + k], v[w * NV + k], target[w * NJ + j].
struct WorldSet {
  int n = 0;
  std::vector<double> q, v, target;
};

// Worlds around a standing configuration qStand (NQ entries): base moved by up to +-1 m in x and
// y, from 5 cm lower to 3 cm higher above the ground under it (some feet in contact, some not),
// tilted and turned, joints moved by up to 0.2 rad, random velocities and targets. With kneeling,
// every fourth world kneels: its base a further 3 to 9 cm lower, so that a robot's knees and
// shanks (its leg spheres) reach the ground.
WorldSet randomWorlds(const std::vector<double>& qStand, const sim::HeightField* ground, int n,
                      unsigned seed, bool kneeling = true);

// A height field of random samples, +-amplitude around 0, covering [-2, 2]^2 m at 0.1 m spacing.
sim::HeightField bumpyField(double amplitude, unsigned seed);
// Stairs along x over the same square at 5 cm spacing: steps of `rise` every `run` metres, up
// from x = -2 (each riser a one-cell ramp of the interpolant, where the closest surface point lies
// farthest from the one under a sphere's centre).
sim::HeightField stairsField(double rise, double run);

// A ground with one of the terrain options beside the default (vertical contact on Catmull-Rom):
// the closest-point contact, the monotone surface, or both; `name` for messages.
struct TerrainOption {
  std::shared_ptr<sim::HeightField> field;  // finalized with its interpolant
  sim::TerrainContact contact;
  std::string name;
};
// The three options on each of `grounds` (named "bumps" or "stairs" by their spacing).
std::vector<TerrainOption> terrainOptions(const std::vector<sim::HeightField>& grounds);

// One step of every world through sim::fixedStep (host build). Returns the number of worlds whose
// result is not finite; failed, if given, receives one flag per world (stepFixed: the step
// failed; vjpFixed: its forward did).
int stepFixed(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& hf,
              const WorldSet& in, WorldSet& out, std::vector<char>* failed = nullptr);

// Adjoints of one step's inputs, world-major as WorldSet: q holds q-bar (NQ per world), v v-bar
// (NV), target qTarget-bar (NJ). The seeds (adjoints of the step's outputs) use q and v.
// Random seeds: every entry uniform in [-1, 1].
WorldSet randomSeeds(int n, unsigned seed);

// The adjoints of every world's step through fixedStepRecord + fixedStepVjp (hard, smoothed) or
// fixedSoftStepVjp (soft), host build. Returns the number of worlds whose forward step failed (not
// finite, or sweeps and sub-steps the tapes do not hold).
int vjpFixed(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& hf,
             const WorldSet& in, const WorldSet& seeds, WorldSet& out,
             std::vector<char>* failed = nullptr);

// Largest |a - b| / (1 + |b|) over every q and v entry of every world (b: the reference), and the
// largest |a - b|.
struct Difference {
  double rel = 0, abs = 0;
  int world = -1;  // where rel is largest
};
Difference compare(const WorldSet& a, const WorldSet& b);
// The same over the target entries too (for adjoints).
Difference compareWithTargets(const WorldSet& a, const WorldSet& b);

// Feet and leg spheres at or past their entry depths in o (o.footEntry, o.legEntry) with the
// kinematics in d.
struct SphereCount {
  int feet = 0, legs = 0;
};
SphereCount spheresEntering(const FixedModel& model, const FixedOptions& o,
                            const HeightFieldView& hf, const sim::FixedData& d);

// Worlds with no foot, some feet and all feet touching the ground (depth >= 0) at their start;
// worlds with a leg sphere touching it, and the most spheres touching in one world.
struct ContactCoverage {
  int none = 0, some = 0, all = 0;
  int legs = 0, most = 0;
};
ContactCoverage contactCoverage(const FixedModel& model, const HeightFieldView& hf,
                                const WorldSet& worlds);

}  // namespace diffloco::batch
