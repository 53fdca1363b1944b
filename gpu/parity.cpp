#include "gpu/parity.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "sim/data.h"
#include "sim/soft_step_vjp.h"
#include "sim/step.h"
#include "sim/step_vjp.h"

namespace diffloco::gpu {

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

int stepDynamic(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
                WorldSet& out) {
  out = in;
  sim::Data data(model);
  sim::VecX qn(NQ), vn(NV);
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const Eigen::Map<const sim::VecX> q(&in.q[static_cast<size_t>(k) * NQ], NQ);
    const Eigen::Map<const sim::VecX> v(&in.v[static_cast<size_t>(k) * NV], NV);
    const Eigen::Map<const sim::VecX> t(&in.target[static_cast<size_t>(k) * NJ], NJ);
    bad += !sim::step(model, opt, data, q, v, t, qn, vn);
    for (int i = 0; i < NQ; ++i) out.q[static_cast<size_t>(k) * NQ + i] = qn[i];
    for (int i = 0; i < NV; ++i) out.v[static_cast<size_t>(k) * NV + i] = vn[i];
  }
  return bad;
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

int vjpDynamic(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
               const WorldSet& seeds, WorldSet& out) {
  out = in;
  sim::Data data(model);
  sim::StepAdjoint adj(model);
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const size_t iq = static_cast<size_t>(k) * NQ, iv = static_cast<size_t>(k) * NV,
                 it = static_cast<size_t>(k) * NJ;
    const Eigen::Map<const sim::VecX> q(&in.q[iq], NQ), v(&in.v[iv], NV), t(&in.target[it], NJ);
    const Eigen::Map<const sim::VecX> gq(&seeds.q[iq], NQ), gv(&seeds.v[iv], NV);
    adj.setZero(model);
    sim::stepVjp(model, opt, data, q, v, t, gq, gv, adj);
    bad += !(adj.q.allFinite() && adj.v.allFinite() && adj.qTarget.allFinite());
    for (int i = 0; i < NQ; ++i) out.q[iq + i] = adj.q[i];
    for (int i = 0; i < NV; ++i) out.v[iv + i] = adj.v[i];
    for (int i = 0; i < NJ; ++i) out.target[it + i] = adj.qTarget[i];
  }
  return bad;
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

WorldSet skipping(const WorldSet& a, const WorldSet& b, const std::vector<char>& skip) {
  WorldSet r = a;
  for (int w = 0; w < a.n; ++w) {
    if (!skip[w]) continue;
    std::copy(b.q.begin() + w * NQ, b.q.begin() + (w + 1) * NQ, r.q.begin() + w * NQ);
    std::copy(b.v.begin() + w * NV, b.v.begin() + (w + 1) * NV, r.v.begin() + w * NV);
    if (!b.target.empty())
      std::copy(b.target.begin() + w * NJ, b.target.begin() + (w + 1) * NJ,
                r.target.begin() + w * NJ);
  }
  return r;
}

int adoptOverflowed(const FixedModel& model, const FixedOptions& o, const HeightFieldView& hf,
                    const WorldSet& start, const std::vector<char>& failed,
                    const WorldSet& reference, WorldSet& fixed) {
  int n = 0;
  FixedData d;
  for (int k = 0; k < start.n; ++k) {
    if (!failed[k]) continue;
    forwardKinematics(model, d, &start.q[static_cast<size_t>(k) * NQ]);
    const SphereCount c = spheresEntering(model, o, hf, d);
    if (c.feet + c.legs <= MAXACTIVE) return -1;
    ++n;
  }
  fixed = skipping(fixed, reference, failed);
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
    c.overflow += n.feet + n.legs > MAXACTIVE;
  }
  return c;
}

}  // namespace diffloco::gpu
