// gpu_check: the stages' step and VJP on a CUDA device against the same functions built for the
// host (sim::fixedStep, sim::fixedStepVjp), then their speed on the GPU and the CPU, and the
// environments' batch runner on the device (batch::BatchSim's BatchPath::Cuda, per-world
// randomisation, the copies to the device and back) against its CPU path. Writes JSON (docs/gpu.md
// shows runs). Without a GPU it runs the CPU parts, says that there is no device and exits 0.
// --skip-forward-timing leaves out the forward step's CPU and GPU timing sections.
//
//   gpu_check [--out FILE] [--worlds N] [--sizes 1024,4096,...] [--cpu-worlds N]
//             [--skip-forward-timing] [--feet-only] [--no-kneeling]
//             [--states PREFIX]... [--frame-dt S]
//
// The robot is ANYmal with its feet and its knee and shank spheres (sim::Model::legSpheres);
// --feet-only takes the leg spheres away, to measure what they cost. The random worlds include a
// quarter that kneel (batch/world_set.h) unless --no-kneeling. A world whose step fails (not finite)
// is counted (failed_fixed, failed_gpu); the CPU and GPU must fail on the same worlds.
// --states PREFIX (repeatable) runs instead on the states of a recorded rollout and its height
// field (tools/record/rollout_states.py; --frame-dt: the record's frame interval, default 0.02 s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch_sim.h"
#include "batch/cuda_batch.h"
#include "batch/world_set.h"
#include "batch/recorded_states.h"
#include "io/atomic_file.h"
#include "io/json.h"
#include "robots/robot.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"

using namespace diffloco;
using namespace diffloco::batch;
using sim::FixedData;
using sim::FixedSoftTape;
using sim::FixedTape;
using sim::forwardKinematics;

namespace {

using Json = nlohmann::ordered_json;

constexpr double kTolerance = 1e-10;

// A contact model on the plane or the bumpy height field; backward: the VJP on a smoothed copy of
// the height field (straight-through terrain, sim::ContactOptions::backwardTerrain).
// faithful: the height field's monotone surface with the closest-point contact (the ground that
// agrees with MuJoCo's hfield).
struct Case {
  sim::ContactModel model;
  bool terrain;
  bool backward = false;
  bool faithful = false;
  std::string name() const {
    return std::string(sim::toString(model)) + (terrain ? "/terrain" : "/plane") +
           (backward ? "+backward" : "") + (faithful ? "+closest" : "");
  }
};

// Every model on both grounds, straight_through too, and the smoothed model with a backward
// terrain (the rough-terrain task's).
std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (bool terrain : {false, true})
    for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft,
                    sim::ContactModel::StraightThrough})
      cases.push_back({cm, terrain});
  cases.push_back({sim::ContactModel::Smoothed, true, true});
  return cases;
}

// allCases and, for the parity sections, each model on the faithful ground.
std::vector<Case> parityCases() {
  std::vector<Case> cases = allCases();
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft})
    cases.push_back({cm, true, false, true});
  return cases;
}

// Per-world comparison: the largest difference and how many worlds exceed the tolerance it was
// asked for (`over`, what the exit code reads) and kTolerance (`over1e10`, what the JSON reports).
struct WorldDiff {
  Difference d;
  int over = 0, over1e10 = 0;
};

// targets: the target entries count too (adjoints).
WorldDiff compareWorlds(const WorldSet& a, const WorldSet& b, bool targets = false,
                        double tolerance = kTolerance) {
  WorldDiff r;
  r.d = targets ? compareWithTargets(a, b) : compare(a, b);
  for (int w = 0; w < a.n; ++w) {
    WorldSet x, y;
    x.n = y.n = 1;
    x.q.assign(a.q.begin() + w * NQ, a.q.begin() + (w + 1) * NQ);
    x.v.assign(a.v.begin() + w * NV, a.v.begin() + (w + 1) * NV);
    y.q.assign(b.q.begin() + w * NQ, b.q.begin() + (w + 1) * NQ);
    y.v.assign(b.v.begin() + w * NV, b.v.begin() + (w + 1) * NV);
    if (targets) {
      x.target.assign(a.target.begin() + w * NJ, a.target.begin() + (w + 1) * NJ);
      y.target.assign(b.target.begin() + w * NJ, b.target.begin() + (w + 1) * NJ);
    }
    const double rel = (targets ? compareWithTargets(x, y) : compare(x, y)).rel;
    r.over += !(rel <= tolerance);
    r.over1e10 += !(rel <= kTolerance);
  }
  return r;
}

Json json(const WorldDiff& w) {
  return {{"max_rel", w.d.rel}, {"max_abs", w.d.abs}, {"worlds_over_1e-10", w.over1e10}};
}

// A parity row's first members: the case, its worlds, how many touch the ground at the start, and
// the CPU's steps that failed.
Json caseHeader(const Case& c, int worlds, const ContactCoverage& cov, int badFix) {
  return {{"case", c.name()},
          {"worlds", worlds},
          {"start_feet_touching", {{"none", cov.none}, {"some", cov.some}, {"all", cov.all}}},
          {"start_leg_touching", cov.legs},
          {"start_most_spheres_touching", cov.most},
          {"failed_fixed", badFix}};
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Milliseconds per launch of one kernel at the uploaded state: two warm-up launches, a probe of
// two, then as many launches as fill about 150 ms (5 to 500).
double msPerLaunch(CudaBatch& b, CudaBatch::Kernel k) {
  b.timeKernel(k, 2);
  const double probe = b.timeKernel(k, 2) / 2;
  const int steps = std::clamp(static_cast<int>(150.0 / std::max(probe, 1e-3)), 5, 500);
  return b.timeKernel(k, steps) / steps;
}

std::string shortNumber(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}

// A flag's number within [lo, hi], or an error naming the flag and what it got.
double flagNumber(const std::string& flag, const std::string& text, double lo, double hi) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !(x >= lo && x <= hi))
    throw std::invalid_argument(flag + ": expected a number in [" + shortNumber(lo) + ", " +
                                shortNumber(hi) + "], got '" + text + "'");
  return x;
}

int flagCount(const std::string& flag, const std::string& text, int lo, int hi) {
  const double x = flagNumber(flag, text, lo, hi);
  if (x != static_cast<int>(x))
    throw std::invalid_argument(flag + ": expected a whole number, got '" + text + "'");
  return static_cast<int>(x);
}

std::vector<int> parseSizes(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(flagCount("--sizes", item, 1, 1 << 22));
  return out;
}

// The VJP of the hard and smoothed steps: parity of `worlds` random worlds and seeds per case (on a
// GPU the fused and split kernels against the CPU's), the CPU's cost, and GPU timing of the
// forward, the forward storing its tape, the VJP reading it and the fused forward + VJP at each
// size, all at the same states. Appends "vjp_*" sections to js.
void vjpSections(Json& js, bool& allOk, const std::string& device,
                 const std::vector<double>& qStand, const FixedModel& fm,
                 const std::function<sim::SimOptions(const Case&)>& options, int worlds,
                 int cpuWorlds, const std::vector<int>& sizes, bool kneeling) {
  const std::vector<Case> cases = allCases();
  js["vjp_tape_bytes"] = sizeof(FixedTape);
  js["vjp_soft_scratch_bytes"] = sizeof(FixedSoftTape);
  js["vjp_difference"] = "max over q-bar, v-bar, qTarget-bar entries of |a - b| / (1 + |b|)";
  Json& parity = js["vjp_parity"] = Json::array();
  const std::vector<Case> checked = parityCases();
  for (size_t ci = 0; ci < checked.size(); ++ci) {
    const Case& c = checked[ci];
    const sim::SimOptions o = options(c);
    const HeightFieldView view = sim::toView(o.contact.terrain.get());
    const WorldSet start =
        randomWorlds(qStand, o.contact.terrain.get(), worlds, 400 + ci, kneeling);
    const WorldSet seeds = randomSeeds(worlds, 500 + ci);
    const ContactCoverage cov = contactCoverage(fm, view, start);
    WorldSet fix;
    const int badFix =
        vjpFixed(fm, sim::toStepOptionsBackward(o), sim::backwardView(o), start, seeds, fix);
    Json row = caseHeader(c, worlds, cov, badFix);
    std::printf("VJP %-14s cpu failed %d", c.name().c_str(), badFix);
    if (!device.empty()) {
      CudaBatch gpu(fm, sim::toStepOptions(o), view, worlds);
      gpu.setVjp(sim::toStepOptionsBackward(o), sim::backwardView(o));
      gpu.upload(start.q.data(), start.v.data(), start.target.data());
      gpu.uploadSeeds(seeds.q.data(), seeds.v.data());
      const bool soft = c.model == sim::ContactModel::Soft;  // no split VJP
      WorldSet fused = start, split = start;
      int bad = gpu.vjp(CudaBatch::VjpKind::Fused);
      gpu.downloadAdjoints(fused.q.data(), fused.v.data(), fused.target.data());
      const WorldDiff vsFixed = compareWorlds(fused, fix, true);
      allOk = allOk && vsFixed.over == 0;
      row["gpu_fused_vs_cpu_fixed"] = json(vsFixed);
      std::printf("; gpu vs cpu fixed %.3g (%d over)", vsFixed.d.rel, vsFixed.over);
      if (!soft) {
        bad += gpu.vjp(CudaBatch::VjpKind::Split);
        gpu.downloadAdjoints(split.q.data(), split.v.data(), split.target.data());
        const WorldDiff splitVsFused = compareWorlds(split, fused, true);
        allOk = allOk && splitVsFused.over == 0;
        row["gpu_split_vs_gpu_fused"] = json(splitVsFused);
        std::printf(", split vs fused %.3g", splitVsFused.d.rel);
      }
      allOk = allOk && bad == (soft ? 1 : 2) * badFix;
      row["failed_gpu"] = bad;
    }
    std::printf("\n");
    std::fflush(stdout);
    parity.push_back(std::move(row));
  }

  // CPU: the VJP (record + VJP), one thread.
  Json& cpuTiming = js["vjp_cpu_timing"] = Json::array();
  const int rounds = 7;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const sim::SimOptions o = options(c);
    const FixedOptions fo = sim::toStepOptionsBackward(o);
    const HeightFieldView view = sim::backwardView(o);
    const WorldSet start =
        randomWorlds(qStand, o.contact.terrain.get(), cpuWorlds, 600 + ci, kneeling);
    const WorldSet seeds = randomSeeds(cpuWorlds, 700 + ci);
    std::vector<double> tFix;
    WorldSet out;
    for (int r = 0; r < rounds; ++r) {
      const double t0 = seconds();
      vjpFixed(fm, fo, view, start, seeds, out);
      tFix.push_back((seconds() - t0) / cpuWorlds * 1e6);
    }
    std::sort(tFix.begin(), tFix.end());
    cpuTiming.push_back({{"case", c.name()},
                         {"worlds", cpuWorlds},
                         {"rounds", rounds},
                         {"fixed_vjp_us_median", tFix[rounds / 2]}});
    std::printf("VJP %-14s cpu us/VJP (forward recomputed): %.2f\n", c.name().c_str(),
                tFix[rounds / 2]);
    std::fflush(stdout);
  }
  if (device.empty()) return;

  Json& gpuTiming = js["vjp_gpu_timing"] = Json::array();
  for (const Case& c : cases)
    for (int n : sizes) {
      const sim::SimOptions o = options(c);
      const HeightFieldView view = sim::toView(o.contact.terrain.get());
      const WorldSet start = randomWorlds(qStand, o.contact.terrain.get(), n, 800, kneeling);
      const WorldSet seeds = randomSeeds(n, 801);
      CudaBatch gpu(fm, sim::toStepOptions(o), view, n, 128);
      gpu.setVjp(sim::toStepOptionsBackward(o), sim::backwardView(o));
      gpu.upload(start.q.data(), start.v.data(), start.target.data());
      gpu.uploadSeeds(seeds.q.data(), seeds.v.data());
      const bool soft = c.model == sim::ContactModel::Soft;  // forward and fused only
      double ms[4] = {0, 0, 0, 0};
      const CudaBatch::Kernel kinds[4] = {CudaBatch::Kernel::Forward, CudaBatch::Kernel::Record,
                                          CudaBatch::Kernel::VjpFromTape, CudaBatch::Kernel::Fused};
      for (int k = 0; k < 4; ++k) {
        if (soft && (k == 1 || k == 2)) continue;
        ms[k] = msPerLaunch(gpu, kinds[k]);
      }
      Json row{{"case", c.name()},
               {"worlds", n},
               {"ms_forward", ms[0]},
               {"ms_fused_forward_vjp", ms[3]},
               {"steps_per_s_forward", n / ms[0] * 1e3},
               {"steps_per_s_fused_forward_vjp", n / ms[3] * 1e3},
               {"ratio_fused_to_forward", ms[3] / ms[0]}};
      std::printf(
          "VJP %-14s %6d worlds: ms forward %.4f, fused forward+vjp %.4f (%.3g steps/s, "
          "x%.2f)",
          c.name().c_str(), n, ms[0], ms[3], n / ms[3] * 1e3, ms[3] / ms[0]);
      if (!soft) {
        const double split = ms[1] + ms[2];
        row["ms_forward_storing_tape"] = ms[1];
        row["ms_vjp_from_tape"] = ms[2];
        row["steps_per_s_forward_storing_tape"] = n / ms[1] * 1e3;
        row["steps_per_s_split_forward_plus_vjp"] = n / split * 1e3;
        row["ratio_split_to_forward"] = split / ms[0];
        std::printf(
            "; forward storing tape %.4f (%.3g steps/s), vjp from tape %.4f, split "
            "%.3g steps/s (x%.2f)",
            ms[1], n / ms[1] * 1e3, ms[2], n / split * 1e3, split / ms[0]);
      }
      gpuTiming.push_back(std::move(row));
      std::printf("\n");
      std::fflush(stdout);
    }
}

}  // namespace

// Worlds replicated cyclically to n (timing at sizes beyond the record's states).
WorldSet replicate(const WorldSet& w, int n) {
  WorldSet r;
  r.n = n;
  for (int k = 0; k < n; ++k) {
    const int s = k % w.n;
    r.q.insert(r.q.end(), w.q.begin() + s * NQ, w.q.begin() + (s + 1) * NQ);
    r.v.insert(r.v.end(), w.v.begin() + s * NV, w.v.begin() + (s + 1) * NV);
    r.target.insert(r.target.end(), w.target.begin() + s * NJ, w.target.begin() + (s + 1) * NJ);
  }
  return r;
}

// --states: the recorded states of a policy's rollout (batch/recorded_states.h) on its height field,
// per contact model: the spheres in the contact problem at the recorded configurations, the step's
// parity (GPU vs CPU) and the GPU's forward and fused forward + VJP
// at the given sizes.
Json statesSection(bool& allOk, const std::string& device, const Robot& robot,
                   const FixedModel& fm, const std::string& prefix, double frameDt,
                   const std::vector<int>& sizes) {
  const RecordedStates rec = loadRecordedStates(robot.model, prefix, frameDt);
  const auto field = std::make_shared<sim::HeightField>(rec.field);
  const HeightFieldView view = sim::toView(field.get());
  std::printf("%s: %d states, field %d x %d, max body position error %.2g m\n", prefix.c_str(),
              rec.worlds.n, rec.field.nx, rec.field.ny, rec.maxPositionError);
  Json section{{"states", prefix.substr(prefix.find_last_of('/') + 1)},
               {"count", rec.worlds.n},
               {"frame_dt", frameDt},
               {"max_body_position_error_m", rec.maxPositionError},
               {"models", Json::array()}};
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
    sim::SimOptions o = robot.simOptions(cm);
    o.contact.terrain = field;
    const FixedOptions fo = sim::toStepOptions(o);
    // Spheres in the problem at the recorded configurations (the step's own set is at q_mid).
    long total = 0;
    int most = 0;
    std::vector<int> histogram(MAXSPHERES + 1, 0), count(rec.worlds.n);
    FixedData d;
    for (int k = 0; k < rec.worlds.n; ++k) {
      forwardKinematics(fm, d, &rec.worlds.q[static_cast<size_t>(k) * NQ]);
      const SphereCount entering = spheresEntering(fm, fo, view, d);
      const int n = entering.feet + entering.legs;
      count[k] = n;
      total += n;
      most = std::max(most, n);
      ++histogram[n];
    }
    WorldSet fix;
    const int badFix = stepFixed(fm, fo, view, rec.worlds, fix);
    Json model{{"model", sim::toString(cm)},
               {"spheres_in_problem_mean", static_cast<double>(total) / rec.worlds.n},
               {"spheres_in_problem_max", most},
               {"spheres_in_problem_histogram",
                std::vector<int>(histogram.begin(), histogram.begin() + most + 1)},
               {"failed_fixed", badFix}};
    std::printf("  %-8s spheres in the problem: mean %.2f, max %d; cpu failed %d",
                sim::toString(cm), static_cast<double>(total) / rec.worlds.n, most, badFix);
    if (!device.empty()) {
      CudaBatch gpu(fm, fo, view, rec.worlds.n);
      gpu.upload(rec.worlds.q.data(), rec.worlds.v.data(), rec.worlds.target.data());
      const int badGpu = gpu.step(1);
      WorldSet g = rec.worlds;
      gpu.download(g.q.data(), g.v.data());
      const WorldDiff vsFixed = compareWorlds(g, fix);
      allOk = allOk && vsFixed.over == 0 && badGpu == badFix;
      model["gpu_vs_cpu_fixed"] = json(vsFixed);
      model["failed_gpu"] = badGpu;
      Json& timing = model["gpu_timing"] = Json::array();
      std::printf("; gpu vs cpu fixed %.3g (%d over)\n", vsFixed.d.rel, vsFixed.over);
      for (size_t si = 0; si < sizes.size(); ++si) {
        const int n = sizes[si];
        // The recorded order, and the same worlds sorted by their contact count (neighbouring
        // threads then solve problems of one size): what divergence costs.
        const WorldSet start = replicate(rec.worlds, n);
        std::vector<int> order(n);
        for (int k = 0; k < n; ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
          return count[a % rec.worlds.n] < count[b % rec.worlds.n];
        });
        WorldSet sorted = start;
        for (int k = 0; k < n; ++k) {
          const int o2 = order[k];
          std::copy(start.q.begin() + o2 * NQ, start.q.begin() + (o2 + 1) * NQ,
                    sorted.q.begin() + k * NQ);
          std::copy(start.v.begin() + o2 * NV, start.v.begin() + (o2 + 1) * NV,
                    sorted.v.begin() + k * NV);
          std::copy(start.target.begin() + o2 * NJ, start.target.begin() + (o2 + 1) * NJ,
                    sorted.target.begin() + k * NJ);
        }
        const WorldSet seeds = randomSeeds(n, 901);
        double ms[2][2];
        for (int sortedOrder = 0; sortedOrder < 2; ++sortedOrder) {
          const WorldSet& w = sortedOrder ? sorted : start;
          CudaBatch b(fm, fo, view, n, 128);
          b.upload(w.q.data(), w.v.data(), w.target.data());
          b.uploadSeeds(seeds.q.data(), seeds.v.data());
          const CudaBatch::Kernel kinds[2] = {CudaBatch::Kernel::Forward, CudaBatch::Kernel::Fused};
          for (int k = 0; k < 2; ++k) {
            ms[sortedOrder][k] = msPerLaunch(b, kinds[k]);
          }
        }
        timing.push_back({{"worlds", n},
                          {"ms_forward", ms[0][0]},
                          {"ms_fused_forward_vjp", ms[0][1]},
                          {"steps_per_s_forward", n / ms[0][0] * 1e3},
                          {"steps_per_s_fused_forward_vjp", n / ms[0][1] * 1e3},
                          {"ms_forward_sorted_by_contacts", ms[1][0]},
                          {"ms_fused_forward_vjp_sorted_by_contacts", ms[1][1]}});
        std::printf(
            "  %-8s %6d worlds: ms forward %.4f (%.3g steps/s), fused forward+vjp %.4f "
            "(%.3g steps/s); sorted by contacts: %.4f, %.4f\n",
            sim::toString(cm), n, ms[0][0], n / ms[0][0] * 1e3, ms[0][1], n / ms[0][1] * 1e3,
            ms[1][0], ms[1][1]);
      }
    } else {
      std::printf("\n");
    }
    std::fflush(stdout);
    section["models"].push_back(std::move(model));
  }
  return section;
}

struct Flags {
  std::string outPath = "gpu_check.json";
  int worlds = 10000, cpuWorlds = 1000;
  std::vector<int> sizes{1024, 4096, 16384, 65536};
  bool skipForwardTiming = false, feetOnly = false, kneeling = true;
  std::vector<std::string> states;
  double frameDt = 0.02;
};

// The command line, or a message and exit status 2.
Flags parseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpu_check: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--skip-forward-timing")
      f.skipForwardTiming = true;
    else if (a == "--feet-only")
      f.feetOnly = true;
    else if (a == "--no-kneeling")
      f.kneeling = false;
    else if (a == "--out")
      f.outPath = next();
    else if (a == "--worlds")
      f.worlds = flagCount(a, next(), 1, 1 << 22);
    else if (a == "--cpu-worlds")
      f.cpuWorlds = flagCount(a, next(), 1, 1 << 22);
    else if (a == "--sizes")
      f.sizes = parseSizes(next());
    else if (a == "--states")
      f.states.push_back(next());
    else if (a == "--frame-dt")
      f.frameDt = flagNumber(a, next(), 1e-6, 10);
    else {
      std::fprintf(stderr,
                   "usage: gpu_check [--out FILE] [--worlds N] [--sizes 1024,4096,...] "
                   "[--cpu-worlds N] [--skip-forward-timing] [--feet-only] [--no-kneeling] "
                   "[--states PREFIX]... [--frame-dt S]\n");
      std::exit(2);
    }
  }
  return f;
}

// The robot, its standing pose, its fixed-size model and the two grounds every case runs on.
struct Setup {
  Robot robot;
  std::vector<double> qStand;
  FixedModel fm;
  std::shared_ptr<sim::HeightField> bumps, smoothBumps, monotoneBumps;

  explicit Setup(bool feetOnly) : robot(loadRobot("anymal")) {
    if (feetOnly) {  // what the knee and shank spheres cost: the same robot without them
      robot.model.legSpheres.clear();
      robot.model.finalize();
    }
    robot.applyArmature(robot.model);
    const sim::VecX qs = robot.standingConfiguration();
    qStand.assign(qs.data(), qs.data() + qs.size());
    fm = sim::toStepModel<sim::Quadruped>(robot.model);
    bumps = std::make_shared<sim::HeightField>(bumpyField(0.04, 11));
    smoothBumps = std::make_shared<sim::HeightField>(sim::smoothHeightField(*bumps, 0.05));
    monotoneBumps = std::make_shared<sim::HeightField>(*bumps);
    monotoneBumps->interpolant = sim::Interpolant::Monotone;
    monotoneBumps->finalize();
  }
  sim::SimOptions options(const Case& c) const {
    sim::SimOptions o = robot.simOptions(c.model);
    if (c.terrain) o.contact.terrain = c.faithful ? monotoneBumps : bumps;
    if (c.backward) o.contact.backwardTerrain = smoothBumps;
    if (c.faithful) o.contact.terrainContact = sim::TerrainContact::Closest;
    return o;
  }
};

// The JSON's opening members: device, date, robot and the simulator's settings.
Json header(const std::string& device, const Robot& robot) {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"device", device.empty() ? "none" : device},
          {"date", date},
          {"robot", "anymal"},
          {"dt", robot.dt},
          {"soft_substeps", sim::ContactOptions().softSubsteps},
          {"gs_iterations", sim::ContactOptions().iterations},
          {"tolerance", kTolerance},
          {"difference", "max over q, v entries of |a - b| / (1 + |b|), b the reference"}};
}

// 1. Parity: one step of `worlds` random worlds per case on the CPU and, on a GPU, the device
// against it.
void paritySection(Json& js, bool& allOk, const std::string& device, const Setup& s,
                   const Flags& f) {
  const std::vector<Case> cases = parityCases();
  Json& parity = js["parity"] = Json::array();
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const sim::SimOptions o = s.options(c);
    const HeightFieldView view = sim::toView(o.contact.terrain.get());
    const WorldSet start =
        randomWorlds(s.qStand, o.contact.terrain.get(), f.worlds, 100 + ci, f.kneeling);
    const ContactCoverage cov = contactCoverage(s.fm, view, start);
    WorldSet fix;
    const int badFix = stepFixed(s.fm, sim::toStepOptions(o), view, start, fix);
    Json row = caseHeader(c, f.worlds, cov, badFix);
    std::printf("%-18s cpu failed %d", c.name().c_str(), badFix);
    if (!device.empty()) {
      CudaBatch gpu(s.fm, sim::toStepOptions(o), view, f.worlds);
      gpu.upload(start.q.data(), start.v.data(), start.target.data());
      const int badGpu = gpu.step(1);
      WorldSet g = start;
      gpu.download(g.q.data(), g.v.data());
      const WorldDiff vsFixed = compareWorlds(g, fix);
      allOk = allOk && vsFixed.over == 0 && badGpu == badFix;
      row["gpu_vs_cpu_fixed"] = json(vsFixed);
      row["failed_gpu"] = badGpu;
      std::printf("; gpu vs cpu fixed %.3g (%d over)", vsFixed.d.rel, vsFixed.over);
    }
    std::printf("\n");
    std::fflush(stdout);
    parity.push_back(std::move(row));
  }
}

// 2. CPU cost per step of the stages, one thread. Median and minimum over the rounds.
void cpuTimingSection(Json& js, const Setup& s, const Flags& f) {
  const std::vector<Case> cases = allCases();
  Json& timing = js["cpu_timing"] = Json::array();
  const int rounds = 7;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const sim::SimOptions o = s.options(c);
    const FixedOptions fo = sim::toStepOptions(o);
    const HeightFieldView view = sim::toView(o.contact.terrain.get());
    const WorldSet start =
        randomWorlds(s.qStand, o.contact.terrain.get(), f.cpuWorlds, 200 + ci, f.kneeling);
    std::vector<double> tFix;
    WorldSet out;
    for (int r = 0; r < rounds; ++r) {
      const double t0 = seconds();
      stepFixed(s.fm, fo, view, start, out);
      tFix.push_back((seconds() - t0) / f.cpuWorlds * 1e6);
    }
    std::sort(tFix.begin(), tFix.end());
    timing.push_back({{"case", c.name()},
                      {"worlds", f.cpuWorlds},
                      {"rounds", rounds},
                      {"fixed_us_median", tFix[rounds / 2]},
                      {"fixed_us_min", tFix[0]}});
    std::printf("%-18s cpu us/step: %.2f (min %.2f)\n", c.name().c_str(), tFix[rounds / 2],
                tFix[0]);
    std::fflush(stdout);
  }
}

// 3. GPU speed: steps of every world, one launch per step, timed by CUDA events after warm-up; at
// every size per case, then block sizes and register caps at 16 384 worlds.
void gpuTimingSection(Json& js, const Setup& s, const Flags& f) {
  Json& timing = js["gpu_timing"] = Json::array();
  auto timeOne = [&](const Case& c, int n, int threads, int regCap = 0) {
    const sim::SimOptions o = s.options(c);
    const HeightFieldView view = sim::toView(o.contact.terrain.get());
    const WorldSet start = randomWorlds(s.qStand, o.contact.terrain.get(), n, 300, f.kneeling);
    CudaBatch gpu(s.fm, sim::toStepOptions(o), view, n, threads);
    gpu.setRegisterCap(regCap);
    gpu.upload(start.q.data(), start.v.data(), start.target.data());
    gpu.step(3);  // warm-up
    const double probe = gpu.timeSteps(3) / 3;
    const int steps = std::clamp(static_cast<int>(250.0 / std::max(probe, 1e-3)), 5, 1000);
    const double ms = gpu.timeSteps(steps);
    const int bad = gpu.step(1);
    const double perStep = ms / steps;
    timing.push_back({{"case", c.name()},
                      {"worlds", n},
                      {"threads_per_block", threads},
                      {"register_cap", regCap},
                      {"steps", steps},
                      {"ms_per_step", perStep},
                      {"world_steps_per_s", n / perStep * 1e3},
                      {"nonfinite_after", bad}});
    std::printf(
        "%-18s %6d worlds, %3d threads/block, reg cap %3d: %.4f ms/step, %.3g "
        "world-steps/s\n",
        c.name().c_str(), n, threads, regCap, perStep, n / perStep * 1e3);
    std::fflush(stdout);
  };
  for (const Case& c : allCases())
    for (int n : f.sizes) timeOne(c, n, 128);
  for (int threads : {32, 64, 256}) timeOne({sim::ContactModel::Soft, false}, 16384, threads);
  for (int threads : {32, 64, 256}) timeOne({sim::ContactModel::Smoothed, false}, 16384, threads);
  for (int cap : {128, 64})
    for (auto cm : {sim::ContactModel::Soft, sim::ContactModel::Smoothed})
      timeOne({cm, false}, 16384, 128, cap);
}

// 4. The environments' batch runner (batch::BatchSim) on the device (BatchPath::Cuda) against its
// CPU fixed path, with per-world friction, motor strength and added base mass (the tasks'
// randomisation), on the height field: one step and its VJP of `worlds` random worlds per case;
// then, in the rough task's model (smoothed, straight-through terrain), the wall time of a batch
// step and VJP at each size, the copies to the device and back included, against the CPU fixed
// path on all of this host's threads. Without a device: the section says why and is skipped.
double maxRel(const sim::MatX& a, const sim::MatX& b, int* over) {
  double worst = 0;
  *over = 0;
  for (int w = 0; w < a.cols(); ++w) {
    const double rel =
        ((a.col(w) - b.col(w)).cwiseAbs().array() / (1 + b.col(w).cwiseAbs().array())).maxCoeff();
    worst = std::max(worst, rel);
    *over += !(rel <= kTolerance);
  }
  return worst;
}

void randomiseWorlds(batch::BatchSim& b, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mu(0.3, 1.5), strength(0.8, 1.2), mass(-2, 5);
  for (int w = 0; w < b.worlds(); ++w) {
    b.setFriction(w, mu(rng));
    b.setMotorStrength(w, strength(rng));
    const double dm = mass(rng);
    if (w % 3 == 0) b.setAddedBaseMass(w, dm);
  }
}

void loadWorlds(batch::BatchSim& b, const WorldSet& ws) {
  b.q = Eigen::Map<const sim::MatX>(ws.q.data(), NQ, ws.n);
  b.v = Eigen::Map<const sim::MatX>(ws.v.data(), NV, ws.n);
  b.qTarget = Eigen::Map<const sim::MatX>(ws.target.data(), NJ, ws.n);
}

void batchSection(Json& js, bool& allOk, const Setup& s, const Flags& f) {
  Json& section = js["batch_sim"];
  const std::string why = batch::cudaUnavailable();
  if (!why.empty()) {
    section = {{"skipped", why}};
    return;
  }
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  section["cpu_threads"] = threads;
  Json& parity = section["parity"] = Json::array();
  for (const Case& c : allCases()) {
    if (!c.terrain) continue;
    const sim::SimOptions o = s.options(c);
    const WorldSet start = randomWorlds(s.qStand, o.contact.terrain.get(), f.worlds, 500, f.kneeling);
    const WorldSet seeds = randomSeeds(f.worlds, 501);
    batch::BatchSim cpu(s.robot.model, o, f.worlds, threads, batch::BatchPath::Fixed);
    batch::BatchSim dev(s.robot.model, o, f.worlds, threads, batch::BatchPath::Cuda);
    int failed[2];
    batch::BatchSim* both[2] = {&cpu, &dev};
    for (int k = 0; k < 2; ++k) {
      loadWorlds(*both[k], start);
      randomiseWorlds(*both[k], 502);
      failed[k] = both[k]->step();
    }
    int overQ, overV;
    const double dq = maxRel(dev.q, cpu.q, &overQ), dv = maxRel(dev.v, cpu.v, &overV);
    const sim::MatX sq = Eigen::Map<const sim::MatX>(seeds.q.data(), NQ, f.worlds);
    const sim::MatX sv = Eigen::Map<const sim::MatX>(seeds.v.data(), NV, f.worlds);
    const sim::MatX q0 = Eigen::Map<const sim::MatX>(start.q.data(), NQ, f.worlds);
    const sim::MatX v0 = Eigen::Map<const sim::MatX>(start.v.data(), NV, f.worlds);
    const sim::MatX t0 = Eigen::Map<const sim::MatX>(start.target.data(), NJ, f.worlds);
    sim::MatX a[2][3];
    for (int k = 0; k < 2; ++k) both[k]->stepVjp(q0, v0, t0, sq, sv, a[k][0], a[k][1], a[k][2]);
    const int failedVjp[2] = {
        static_cast<int>(std::count(cpu.failedVjp.begin(), cpu.failedVjp.end(), 1)),
        static_cast<int>(std::count(dev.failedVjp.begin(), dev.failedVjp.end(), 1))};
    int over[3];
    double dvjp = 0;
    for (int i = 0; i < 3; ++i) dvjp = std::max(dvjp, maxRel(a[1][i], a[0][i], &over[i]));
    const int overStep = std::max(overQ, overV), overVjp = std::max({over[0], over[1], over[2]});
    const bool ok =
        overStep == 0 && overVjp == 0 && failed[0] == failed[1] && failedVjp[0] == failedVjp[1];
    allOk = allOk && ok;
    parity.push_back({{"case", c.name()},
                      {"worlds", f.worlds},
                      {"step_max_rel", std::max(dq, dv)},
                      {"step_worlds_over_1e-10", overStep},
                      {"vjp_max_rel", dvjp},
                      {"vjp_worlds_over_1e-10", overVjp},
                      {"failed_cpu", failed[0]},
                      {"failed_cuda", failed[1]},
                      {"failed_vjp_cpu", failedVjp[0]},
                      {"failed_vjp_cuda", failedVjp[1]}});
    std::printf(
        "batch %-18s cuda vs cpu fixed: step %.3g (%d over), vjp %.3g (%d over), "
        "failed %d/%d step, %d/%d vjp\n",
        c.name().c_str(), std::max(dq, dv), overStep, dvjp, overVjp, failed[1], failed[0],
        failedVjp[1], failedVjp[0]);
    std::fflush(stdout);
  }
  Json& timing = section["timing"] = Json::array();
  const Case rough{sim::ContactModel::Smoothed, true, true};
  const sim::SimOptions o = s.options(rough);
  for (int n : f.sizes) {
    const WorldSet start = randomWorlds(s.qStand, o.contact.terrain.get(), n, 600, f.kneeling);
    const WorldSet seeds = randomSeeds(n, 601);
    const sim::MatX sq = Eigen::Map<const sim::MatX>(seeds.q.data(), NQ, n);
    const sim::MatX sv = Eigen::Map<const sim::MatX>(seeds.v.data(), NV, n);
    Json row = {{"case", rough.name()}, {"worlds", n}};
    for (auto path : {batch::BatchPath::Fixed, batch::BatchPath::Cuda}) {
      batch::BatchSim b(s.robot.model, o, n, threads, path);
      randomiseWorlds(b, 602);
      std::vector<double> step, vjp;
      sim::MatX aq, av, at;
      for (int r = 0; r < 6; ++r) {  // the first round warms up
        loadWorlds(b, start);
        const sim::MatX q0 = b.q, v0 = b.v, t0 = b.qTarget;
        double t = seconds();
        b.step();
        step.push_back(seconds() - t);
        t = seconds();
        b.stepVjp(q0, v0, t0, sq, sv, aq, av, at);
        vjp.push_back(seconds() - t);
      }
      std::sort(step.begin() + 1, step.end());
      std::sort(vjp.begin() + 1, vjp.end());
      const std::string tag = path == batch::BatchPath::Cuda ? "cuda" : "cpu";
      row[tag + "_step_ms"] = step[3] * 1e3;
      row[tag + "_vjp_ms"] = vjp[3] * 1e3;
      row[tag + "_step_world_steps_per_s"] = n / step[3];
      row[tag + "_vjp_world_steps_per_s"] = n / vjp[3];
    }
    std::printf("batch %-18s %6d worlds: step ms cpu %.3f / cuda %.3f, vjp ms cpu %.3f / cuda "
                "%.3f\n",
                rough.name().c_str(), n, row["cpu_step_ms"].get<double>(),
                row["cuda_step_ms"].get<double>(), row["cpu_vjp_ms"].get<double>(),
                row["cuda_vjp_ms"].get<double>());
    std::fflush(stdout);
    timing.push_back(std::move(row));
  }
}

// The JSON written whole (a reader sees the old file or the new one) and the verdict.
int finish(Json& js, bool allOk, const std::string& outPath) {
  js["parity_ok"] = allOk;
  io::writeFileAtomic(outPath, js.dump(2) + "\n");
  std::printf("gpu_check: parity %s; wrote %s\n", allOk ? "ok" : "FAILED", outPath.c_str());
  return allOk ? 0 : 1;
}

int run(int argc, char** argv) {
  const Flags f = parseFlags(argc, argv);
  const Setup s(f.feetOnly);
  std::string device;
  try {
    device = cudaDeviceName();
  } catch (const std::exception& e) {
    device.clear();
  }
  std::printf("gpu_check: device %s\n", device.empty() ? "none (CPU parts only)" : device.c_str());
  Json js = header(device, s.robot);
  bool allOk = true;
  if (!f.states.empty()) {  // the recorded states alone
    Json& recorded = js["recorded_states"] = Json::array();
    for (const std::string& prefix : f.states)
      recorded.push_back(
          statesSection(allOk, device, s.robot, s.fm, prefix, f.frameDt, f.sizes));
    return finish(js, allOk, f.outPath);
  }
  paritySection(js, allOk, device, s, f);
  if (!f.skipForwardTiming) {
    cpuTimingSection(js, s, f);
    if (!device.empty()) gpuTimingSection(js, s, f);
  }
  vjpSections(
      js, allOk, device, s.qStand, s.fm, [&s](const Case& c) { return s.options(c); }, f.worlds,
      f.cpuWorlds, f.sizes, f.kneeling);
  batchSection(js, allOk, s, f);
  const int rc = finish(js, allOk, f.outPath);
  if (device.empty()) std::printf("gpu_check: no CUDA device, GPU parts skipped\n");
  return rc;
}

// Bad flags, files or a failed CUDA call: a message and exit status 2, not an abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_check: %s\n", e.what());
    return 2;
  }
}
