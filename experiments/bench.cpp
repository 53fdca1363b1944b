// Benchmarks behind `diffloco bench` (experiments/bench.h). Each figure is the best of several
// timed repeats, single threaded unless named otherwise; anchors (MuJoCo) are measured in the same
// process. The single step and its VJP are the stages' (sim/moreau_step.h, sim/moreau_step_vjp.h,
// sim/soft_step_vjp.h) on ANYmal packed for sim::Quadruped, as the batch runner and the training
// run them.
#include "experiments/bench.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "experiments/bench_envs.h"
#include "experiments/bench_training.h"
#include "batch/batch_sim.h"
#include "io/json.h"
#include "robots/robot.h"
#include "sim/pack.h"
#include "sim/soft_step_vjp.h"
#include "sim/terrain.h"

#ifdef DIFFLOCO_WITH_MUJOCO
#include "mujoco/mujoco_model.h"
#endif

namespace diffloco::experiments {
namespace {

using Clock = std::chrono::steady_clock;
using D = sim::Quadruped;

// One repeat: f() in batches of `inner` calls for at least `seconds`; microseconds per call.
template <class F>
double repeatMicros(F& f, double seconds, int inner) {
  long calls = 0;
  const auto t0 = Clock::now();
  double el = 0;
  do {
    for (int i = 0; i < inner; ++i) f();
    calls += inner;
    el = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (el < seconds);
  return el * 1e6 / calls;
}

// Runs f() in batches of `inner` calls until `seconds` / 5 have passed, 5 repeats; returns the best
// microseconds per call. Calls that take milliseconds (a batch step) need a small `inner`, or the
// first batch alone overruns `seconds` many times.
template <class F>
double timeMicros(F&& f, double seconds, int inner = 100) {
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) best = std::min(best, repeatMicros(f, seconds / 5, inner));
  return best;
}

// timeMicros of f and of g with their repeats alternated (f, g, f, g, ...), so that a ratio of
// the two compares them on the same machine state; {best of f, best of g}.
template <class F, class G>
std::pair<double, double> timeMicrosAlternated(F&& f, G&& g, double seconds, int inner = 100) {
  double bestF = 1e300, bestG = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    bestF = std::min(bestF, repeatMicros(f, seconds / 5, inner));
    bestG = std::min(bestG, repeatMicros(g, seconds / 5, inner));
  }
  return {bestF, bestG};
}

// The bench scenario: anymal standing on four feet, settled with the hard model, 10 iterations;
// the model packed for the stages.
struct Scenario {
  Robot robot;
  sim::VecX q, v;
  std::unique_ptr<sim::StepModel<D>> m;
};

Scenario settledAnymal() {
  Scenario s{loadRobot("anymal"), {}, {}, nullptr};
  s.robot.applyArmature(s.robot.model);
  s.m = std::make_unique<sim::StepModel<D>>(sim::toStepModel<D>(s.robot.model));
  const sim::FixedOptions o = sim::toStepOptions(s.robot.simOptions(sim::ContactModel::Hard));
  const sim::HeightFieldView plane = sim::toView(nullptr);
  s.q = s.robot.standingConfiguration();
  s.q[2] -= 0.002;  // slightly into the ground: all four feet in contact
  s.v = sim::VecX::Zero(s.robot.model.nv());
  sim::VecX qn = s.q, vn = s.v;
  for (int k = 0; k < 200; ++k) {
    sim::fixedStep(*s.m, o, plane, s.q.data(), s.v.data(), s.robot.defaultJointPos.data(),
                   qn.data(), vn.data());
    s.q = qn;
    s.v = vn;
  }
  return s;
}

// Timed calls of the stages in the scenario's state: a step (sim::fixedStep) and its VJP as the
// batch runner forms it (sim::fixedStepRecord and sim::fixedStepVjp, or sim::fixedSoftStepVjp; no
// parameters' adjoints), which recomputes the forward step. The VJP adds to one adjoint, not reset
// between calls.
struct StageCalls {
  const Scenario& s;
  const sim::StepModel<D>& m;
  sim::VecX& qn;
  sim::VecX& vn;
  const sim::VecX gq, gv;
  std::unique_ptr<sim::StepTape<D>> tape = std::make_unique<sim::StepTape<D>>();
  std::unique_ptr<sim::SoftTape<D>> softTape = std::make_unique<sim::SoftTape<D>>();
  sim::StateAdjoint<D> adj;

  StageCalls(const Scenario& scenario, const sim::StepModel<D>& model, sim::VecX& qNext,
             sim::VecX& vNext)
      : s(scenario),
        m(model),
        qn(qNext),
        vn(vNext),
        gq(sim::VecX::Ones(D::NQ)),
        gv(sim::VecX::Ones(D::NV)) {
    sim::setZero(adj);
  }

  void step(const sim::FixedOptions& o, const sim::HeightFieldView& ground) {
    sim::fixedStep(m, o, ground, s.q.data(), s.v.data(), s.robot.defaultJointPos.data(), qn.data(),
                   vn.data());
  }

  void vjp(const sim::FixedOptions& o, const sim::HeightFieldView& ground) {
    const double *q = s.q.data(), *v = s.v.data(), *target = s.robot.defaultJointPos.data();
    if (o.model == sim::FixedContact::Soft) {
      sim::fixedSoftStepVjp(m, o, ground, q, v, target, gq.data(), gv.data(), *softTape, adj);
    } else {
      sim::fixedStepRecord(m, o, ground, q, v, target, qn.data(), vn.data(), *tape);
      sim::fixedStepVjp(m, o, ground, q, v, target, *tape, gq.data(), gv.data(), adj);
    }
  }
};

// A flat 8 m x 8 m height field (10 cm grid) under the scenario's base.
std::shared_ptr<const sim::HeightField> flatHeightField(const sim::VecX& q) {
  auto hf = std::make_shared<sim::HeightField>();
  hf->nx = hf->ny = 81;
  hf->spacing = 0.1;
  hf->originX = q[0] - 4.0;
  hf->originY = q[1] - 4.0;
  hf->heights.assign(hf->nx * hf->ny, 0.0);
  hf->finalize();
  return hf;
}

// The batch runner on the CPU, 2 threads, 256 worlds of the scenario's state, step and VJP (which
// recomputes the forward): the stages that the GPU runs, hard and smoothed, on the plane and the
// flat height field.
void benchBatchStages(std::map<std::string, double>& out, const Scenario& s,
                      const std::shared_ptr<const sim::HeightField>& terrain, double seconds) {
  const sim::Model& model = s.robot.model;
  const int n = 256;
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed}) {
    for (bool onTerrain : {false, true}) {
      sim::SimOptions opt = s.robot.simOptions(cm);
      opt.contact.iterations = 10;
      if (onTerrain) opt.contact.terrain = terrain;
      const std::string tag = std::string(sim::toString(cm)) + (onTerrain ? "_terrain" : "");
      batch::BatchSim batch(model, opt, n, 2);
      const sim::MatX q = s.q.replicate(1, n), v = s.v.replicate(1, n),
                      target = s.robot.defaultJointPos.replicate(1, n);
      const sim::MatX gq = sim::MatX::Ones(model.nq(), n), gv = sim::MatX::Ones(model.nv(), n);
      sim::MatX aq, av, at;
      const double step = timeMicros(
          [&] {
            batch.q = q;
            batch.v = v;
            batch.qTarget = target;
            batch.step();
          },
          seconds, 1);
      const double vjp =
          timeMicros([&] { batch.stepVjp(q, v, target, gq, gv, aq, av, at); }, seconds, 1);
      out["batch_step_us_fixed_" + tag] = step / n;
      out["batch_vjp_us_fixed_" + tag] = vjp / n;
    }
  }
}

// On the plane and on a height field (flat, so that the state and contacts are the same: the
// cost of sampling the surface, the contact frames and their adjoint is what differs), their
// repeats alternated.
void benchPlaneAndTerrain(std::map<std::string, double>& out, const Scenario& s, sim::VecX& qn,
                          sim::VecX& vn, const std::shared_ptr<const sim::HeightField>& terrain,
                          double seconds) {
  StageCalls calls(s, *s.m, qn, vn);
  const sim::HeightFieldView plane = sim::toView(nullptr), ground = sim::toView(terrain.get());
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed, sim::ContactModel::Soft}) {
    sim::SimOptions opt = s.robot.simOptions(cm);
    opt.contact.iterations = 10;
    opt.contact.softSubsteps = 1;  // per sub-step cost; a soft env step costs substeps x this
    const sim::FixedOptions o = sim::toStepOptions(opt);
    const std::string tag = sim::toString(cm), tagT = tag + "_terrain";
    auto stepOn = [&](const sim::HeightFieldView& g) { return [&, g] { calls.step(o, g); }; };
    std::tie(out["step_us_" + tag], out["step_us_" + tagT]) =
        timeMicrosAlternated(stepOn(plane), stepOn(ground), seconds);
    // The backward pass recomputes the forward step, so vjp_us includes one step.
    const sim::FixedOptions ob = sim::toStepOptionsBackward(opt);
    auto vjpOn = [&](const sim::HeightFieldView& g) { return [&, g] { calls.vjp(ob, g); }; };
    std::tie(out["vjp_us_" + tag], out["vjp_us_" + tagT]) =
        timeMicrosAlternated(vjpOn(plane), vjpOn(ground), seconds);
    for (const std::string& t : {tag, tagT})
      out["vjp_over_step_" + t] = out["vjp_us_" + t] / out["step_us_" + t];
  }
}

// What the leg spheres (knees, shanks: sim::Model::legSpheres) cost where they are checked
// against a height field but touch nothing: the same step with the feet alone.
void benchLegSpheres(std::map<std::string, double>& out, const Scenario& s, sim::VecX& qn,
                     sim::VecX& vn, const std::shared_ptr<const sim::HeightField>& terrain,
                     double seconds) {
  sim::Model feetOnly = s.robot.model;
  feetOnly.legSpheres.clear();
  feetOnly.finalize();
  const auto m = std::make_unique<sim::StepModel<D>>(sim::toStepModel<D>(feetOnly));
  StageCalls calls(s, *m, qn, vn);
  const sim::HeightFieldView ground = sim::toView(terrain.get());
  for (auto cm : {sim::ContactModel::Hard, sim::ContactModel::Smoothed}) {
    sim::SimOptions opt = s.robot.simOptions(cm);
    opt.contact.iterations = 10;
    const sim::FixedOptions o = sim::toStepOptions(opt);
    const std::string tag = std::string(sim::toString(cm)) + "_terrain";
    out["step_us_" + tag + "_feet_only"] = timeMicros([&] { calls.step(o, ground); }, seconds);
    out["leg_spheres_over_feet_only_step_" + tag] =
        out["step_us_" + tag] / out["step_us_" + tag + "_feet_only"];
  }
}

// What finalize() buys: the same hard step with the leg spheres' depth bound read from the
// 16 samples around each sphere rather than from its cell (sim::HeightField::cellBounds).
void benchCellBounds(std::map<std::string, double>& out, const Scenario& s, sim::VecX& qn,
                     sim::VecX& vn, const sim::HeightField& terrain, double seconds) {
  sim::HeightField samplesOnly = terrain;
  samplesOnly.cellBounds.clear();
  StageCalls calls(s, *s.m, qn, vn);
  const sim::HeightFieldView ground = sim::toView(&samplesOnly);  // no cell bounds
  sim::SimOptions opt = s.robot.simOptions(sim::ContactModel::Hard);
  opt.contact.iterations = 10;
  const sim::FixedOptions o = sim::toStepOptions(opt);
  out["step_us_hard_terrain_bound_from_samples"] =
      timeMicros([&] { calls.step(o, ground); }, seconds);
  out["bound_from_samples_over_cells_step_hard"] =
      out["step_us_hard_terrain_bound_from_samples"] / out["step_us_hard_terrain"];
}

// Batch throughput: 2048 worlds, 1 and 2 threads, smoothed contact.
void benchBatchThroughput(std::map<std::string, double>& out, const Scenario& s, double seconds) {
  const sim::Model& model = s.robot.model;
  for (int threads : {1, 2}) {
    const sim::SimOptions opt = s.robot.simOptions();
    batch::BatchSim batch(model, opt, 2048, threads);
    for (int w = 0; w < batch.worlds(); ++w) {
      batch.q.col(w) = s.q;
      batch.v.col(w) = s.v;
      batch.qTarget.col(w) = s.robot.defaultJointPos;
    }
    batch.step();
    const double us = timeMicros([&] { batch.step(); }, seconds, 1);
    out["batch_steps_per_s_" + std::to_string(threads) + "t"] = 2048.0 / (us * 1e-6);
  }
  out["batch_steps_per_s"] = out["batch_steps_per_s_2t"];
  out["batch_scaling"] = out["batch_steps_per_s_2t"] / out["batch_steps_per_s_1t"];
}

#ifdef DIFFLOCO_WITH_MUJOCO
void benchMujocoAnchors(std::map<std::string, double>& out, const Scenario& s, double seconds) {
  out["mujoco_step_us"] = mj::benchStepMicros(s.robot.model, s.q, s.v, seconds);
  out["step_over_mujoco_hard"] = out["step_us_hard"] / out["mujoco_step_us"];
  out["step_over_mujoco_smoothed"] = out["step_us_smoothed"] / out["mujoco_step_us"];
  out["step_over_mujoco_hard_terrain"] = out["step_us_hard_terrain"] / out["mujoco_step_us"];
  out["step_over_mujoco_smoothed_terrain"] =
      out["step_us_smoothed_terrain"] / out["mujoco_step_us"];
  // Absolute times move +-30 % between machines of one kind; the ratio to MuJoCo's step measured
  // in the same run is what compares across them.
  for (const char* task : {"walk", "velocity", "velocity_rough"})
    out[std::string("shac_iteration_") + task + "_over_mujoco_step"] =
        out[std::string("shac_iteration_s_") + task] * 1e6 / out["mujoco_step_us"];
}
#endif

// `labels`: text beside the numbers (the MuJoCo version the anchors were measured with).
void printResults(const std::map<std::string, double>& out,
                  const std::map<std::string, std::string>& labels, bool json) {
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (auto& [k, val] : out) j[k] = io::jsonNumber(val);  // a section not measured: null
    for (auto& [k, text] : labels) j[k] = text;
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto& [k, val] : out) std::printf("%-28s %12.4g\n", k.c_str(), val);
    for (auto& [k, text] : labels) std::printf("%-28s %12s\n", k.c_str(), text.c_str());
  }
}

}  // namespace

int runBench(bool json, double seconds, const std::string& roughFrom) {
  std::map<std::string, double> out;
  Scenario s = settledAnymal();
  const sim::Model& model = s.robot.model;
  sim::VecX qn(model.nq()), vn(model.nv());

  const auto terrain = flatHeightField(s.q);
  benchPlaneAndTerrain(out, s, qn, vn, terrain, seconds);
  if (!model.legSpheres.empty()) benchLegSpheres(out, s, qn, vn, terrain, seconds);
  benchCellBounds(out, s, qn, vn, *terrain, seconds);
  for (const char* cm : {"hard", "smoothed", "soft"}) {
    out[std::string("terrain_over_flat_step_") + cm] =
        out[std::string("step_us_") + cm + "_terrain"] / out[std::string("step_us_") + cm];
    out[std::string("terrain_over_flat_vjp_") + cm] =
        out[std::string("vjp_us_") + cm + "_terrain"] / out[std::string("vjp_us_") + cm];
  }
  {  // the feet pressed in, in the contact problem of a smoothed step (every foot enters it)
    const sim::FixedOptions o = sim::toStepOptions(sim::SimOptions{});
    const auto d = std::make_unique<sim::StepData<D>>();
    const auto fc = std::make_unique<sim::Contacts<D>>();
    double u[D::NV];
    sim::hardOrSmoothedStep<D>(*s.m, o, sim::toView(nullptr), s.q.data(), s.v.data(),
                               s.robot.defaultJointPos.data(), qn.data(), vn.data(), *d, *fc, u,
                               nullptr, nullptr);
    out["contacts_in_bench_state"] = 0;
    for (int a = 0; a < fc->nc; ++a)
      out["contacts_in_bench_state"] += fc->active[a] < model.nfeet() && fc->contact[a].depth >= 0;
  }

  benchBatchThroughput(out, s, seconds);
  benchBatchStages(out, s, terrain, seconds);

  // Environments (LibTorch): sampling throughput and one SHAC window.
  benchEnvs(out, seconds);
  // Whole SHAC iterations of the three shipped SHAC configs.
  benchTraining(out, seconds, roughFrom);
  benchCriticStep(out, seconds);

  std::map<std::string, std::string> labels;
#ifdef DIFFLOCO_WITH_MUJOCO
  benchMujocoAnchors(out, s, seconds);
  // The anchor's library: MuJoCo's step time differs between versions.
  labels["mujoco_version"] = mj::versionString();
#endif

  printResults(out, labels, json);
  return 0;
}

}  // namespace diffloco::experiments
