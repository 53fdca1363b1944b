#include "batch/world_set.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "sim/soft_step_vjp.h"

namespace diffloco::batch {

using sim::FixedAdjoint;
using sim::FixedData;
using sim::fixedSoftStepVjp;
using sim::FixedSoftTape;
using sim::fixedStep;
using sim::fixedStepRecord;
using sim::fixedStepVjp;
using sim::FixedTape;
using sim::forwardKinematics;
using sim::setZero;
using sim::sphereCentre;
using sim::sphereContact;

WorldSet randomWorlds(const std::vector<double>& qStand, const sim::HeightField* ground, int n,
                      unsigned seed, bool kneeling) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  WorldSet w;
  w.n = n;
  w.q.resize(static_cast<size_t>(n) * NQ);
  w.v.resize(static_cast<size_t>(n) * NV);
  w.target.resize(static_cast<size_t>(n) * NJ);
  for (int k = 0; k < n; ++k) {
    double* q = &w.q[static_cast<size_t>(k) * NQ];
    for (int i = 0; i < NQ; ++i) q[i] = qStand[i];
    q[0] = u(rng);
    q[1] = u(rng);
    q[2] += sim::groundHeight(ground, q[0], q[1]) + 0.04 * u(rng) - 0.01;
    if (kneeling && k % 4 == 3) q[2] -= 0.06 + 0.03 * u(rng);
    sim::Quat qt(1, 0.05 * u(rng), 0.05 * u(rng), 0.3 * u(rng));
    qt.normalize();
    q[3] = qt.w();
    q[4] = qt.x();
    q[5] = qt.y();
    q[6] = qt.z();
    for (int j = 0; j < NJ; ++j) q[7 + j] += 0.2 * u(rng);
    for (int i = 0; i < NV; ++i) w.v[static_cast<size_t>(k) * NV + i] = 0.5 * u(rng);
    for (int j = 0; j < NJ; ++j)
      w.target[static_cast<size_t>(k) * NJ + j] = qStand[7 + j] + 0.3 * u(rng);
  }
  return w;
}

sim::HeightField bumpyField(double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  sim::HeightField hf;
  hf.originX = hf.originY = -2.0;
  hf.spacing = 0.1;
  hf.nx = hf.ny = 41;
  hf.heights.resize(static_cast<size_t>(hf.nx) * hf.ny);
  for (double& h : hf.heights) h = amplitude * u(rng);
  hf.finalize();  // as every task's ground: the leg spheres' depth bound from the cells
  return hf;
}

sim::HeightField stairsField(double rise, double run) {
  sim::HeightField hf;
  hf.originX = hf.originY = -2.0;
  hf.spacing = 0.05;
  hf.nx = hf.ny = 81;
  hf.heights.resize(static_cast<size_t>(hf.nx) * hf.ny);
  for (int iy = 0; iy < hf.ny; ++iy)
    for (int ix = 0; ix < hf.nx; ++ix)
      hf.heights[static_cast<size_t>(iy) * hf.nx + ix] = rise * std::floor(ix * hf.spacing / run);
  hf.finalize();
  return hf;
}

std::vector<TerrainOption> terrainOptions(const std::vector<sim::HeightField>& grounds) {
  std::vector<TerrainOption> out;
  for (const sim::HeightField& ground : grounds)
    for (auto ip : {sim::Interpolant::CatmullRom, sim::Interpolant::Monotone})
      for (auto tc : {sim::TerrainContact::Vertical, sim::TerrainContact::Closest}) {
        if (ip == sim::Interpolant::CatmullRom && tc == sim::TerrainContact::Vertical) continue;
        auto field = std::make_shared<sim::HeightField>(ground);
        field->interpolant = ip;
        field->finalize();
        out.push_back({field, tc,
                       std::string(ground.spacing < 0.1 ? "stairs" : "bumps") + ", " +
                           sim::toString(ip) + ", " + sim::toString(tc)});
      }
  return out;
}

int stepFixed(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& hf,
              const WorldSet& in, WorldSet& out, std::vector<char>* failed) {
  out = in;
  if (failed) failed->assign(in.n, 0);
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const bool ok =
        fixedStep(model, opt, hf, &in.q[static_cast<size_t>(k) * NQ],
                  &in.v[static_cast<size_t>(k) * NV], &in.target[static_cast<size_t>(k) * NJ],
                  &out.q[static_cast<size_t>(k) * NQ], &out.v[static_cast<size_t>(k) * NV]);
    bad += !ok;
    if (failed) (*failed)[k] = !ok;
  }
  return bad;
}

WorldSet randomSeeds(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  WorldSet s;
  s.n = n;
  s.q.resize(static_cast<size_t>(n) * NQ);
  s.v.resize(static_cast<size_t>(n) * NV);
  s.target.assign(static_cast<size_t>(n) * NJ, 0.0);
  for (double& x : s.q) x = u(rng);
  for (double& x : s.v) x = u(rng);
  return s;
}

int vjpFixed(const FixedModel& model, const FixedOptions& opt, const HeightFieldView& hf,
             const WorldSet& in, const WorldSet& seeds, WorldSet& out, std::vector<char>* failed) {
  out = in;
  if (failed) failed->assign(in.n, 0);
  const auto tape = std::make_unique<FixedTape>();  // tens of KB: not on the stack
  const auto softTape = std::make_unique<FixedSoftTape>();
  double qn[NQ], vn[NV];
  FixedAdjoint adj;
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const size_t iq = static_cast<size_t>(k) * NQ, iv = static_cast<size_t>(k) * NV,
                 it = static_cast<size_t>(k) * NJ;
    setZero(adj);
    bool ok;
    if (opt.model == FixedContact::Soft) {
      ok = fixedSoftStepVjp(model, opt, hf, &in.q[iq], &in.v[iv], &in.target[it], &seeds.q[iq],
                            &seeds.v[iv], *softTape, adj);
    } else {
      ok = fixedStepRecord(model, opt, hf, &in.q[iq], &in.v[iv], &in.target[it], qn, vn, *tape);
      if (ok)
        fixedStepVjp(model, opt, hf, &in.q[iq], &in.v[iv], &in.target[it], *tape, &seeds.q[iq],
                     &seeds.v[iv], adj);
    }
    bad += !ok;
    if (failed) (*failed)[k] = !ok;
    for (int i = 0; i < NQ; ++i) out.q[iq + i] = adj.q[i];
    for (int i = 0; i < NV; ++i) out.v[iv + i] = adj.v[i];
    for (int i = 0; i < NJ; ++i) out.target[it + i] = adj.qTarget[i];
  }
  return bad;
}

namespace {

Difference compareImpl(const WorldSet& a, const WorldSet& b, bool targets) {
  Difference d;
  auto scan = [&](const std::vector<double>& x, const std::vector<double>& y, int per) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = std::abs(x[i] - y[i]);
      const double r = e / (1 + std::abs(y[i]));
      if (!(e <= d.abs)) d.abs = e;  // a NaN is kept
      if (!(r <= d.rel)) {
        d.rel = r;
        d.world = static_cast<int>(i / per);
      }
    }
  };
  scan(a.q, b.q, NQ);
  scan(a.v, b.v, NV);
  if (targets) scan(a.target, b.target, NJ);
  return d;
}

}  // namespace

Difference compare(const WorldSet& a, const WorldSet& b) {
  return compareImpl(a, b, false);
}
Difference compareWithTargets(const WorldSet& a, const WorldSet& b) {
  return compareImpl(a, b, true);
}

SphereCount spheresEntering(const FixedModel& model, const FixedOptions& o,
                            const HeightFieldView& hf, const FixedData& d) {
  SphereCount n;
  for (int j = 0; j < model.nspheres; ++j) {
    const bool leg = j >= NFEET;
    if (sphereContact(hf, sphereCentre(model, d, j), model.footRadius[j], o.closestTerrain).depth >=
        (leg ? o.legEntry : o.footEntry))
      ++(leg ? n.legs : n.feet);
  }
  return n;
}

ContactCoverage contactCoverage(const FixedModel& model, const HeightFieldView& hf,
                                const WorldSet& worlds) {
  ContactCoverage c;
  FixedData d;
  FixedOptions touching{};  // entry at depth 0: touching the ground
  touching.footEntry = touching.legEntry = 0;
  for (int k = 0; k < worlds.n; ++k) {
    forwardKinematics(model, d, &worlds.q[static_cast<size_t>(k) * NQ]);
    const SphereCount n = spheresEntering(model, touching, hf, d);
    (n.feet == 0 ? c.none : n.feet == NFEET ? c.all : c.some)++;
    c.legs += n.legs > 0;
    c.most = std::max(c.most, n.feet + n.legs);
  }
  return c;
}

}  // namespace diffloco::batch
