// The falling-mass toy (Figure 3 of the locomotion paper): the gradients chained through the
// hand-written step VJP against central finite differences of the rollout, exact free fall, and the
// discontinuities the figure is about (hard: velocity jump at the critical height; smoothed: none).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "experiments/toys/falling_mass.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;

namespace {

constexpr double kDt = 0.01, kT = 0.2, kRadius = 0.05, kG = 9.81;
constexpr int kSteps = 20;

sim::SimOptions options(sim::ContactModel cm, double kappa = 300) {
  sim::SimOptions opt;
  opt.dt = kDt;
  opt.contact.model = cm;
  opt.contact.kappa = kappa;
  return opt;
}

// The hard model's contact starts in step k (0-based) when the mid-step height of the free fall,
// h0 - g dt^2 k (k + 1) / 2 (exact for the midpoint/trapezoidal scheme under constant gravity),
// first reaches the sphere radius. These are the heights where the contact step changes.
double switchHeight(int k) {
  return kRadius + kG * kDt * kDt * k * (k + 1) / 2.0;
}
// The last one: above it the mass does not reach the ground within T.
double criticalHeight() {
  return switchHeight(kSteps - 1);
}

struct Fd {
  double dz, dvz;
};
Fd finiteDifference(const sim::Model& model, const sim::SimOptions& opt, double h0, double eps) {
  const auto up = toys::fall(model, opt, h0 + eps, kSteps, false);
  const auto down = toys::fall(model, opt, h0 - eps, kSteps, false);
  return {(up.z - down.z) / (2 * eps), (up.vz - down.vz) / (2 * eps)};
}

}  // namespace

TEST(FallingMass, ModelIsAFreeSphere) {
  const sim::Model model = toys::fallingMassModel(1.0, kRadius);
  EXPECT_EQ(model.nj(), 0);
  EXPECT_EQ(model.nq(), 7);
  EXPECT_EQ(model.nv(), 6);
  ASSERT_EQ(model.nfeet(), 1);
  EXPECT_DOUBLE_EQ(model.feet[0].radius, kRadius);
  EXPECT_EQ(model.feet[0].offset.norm(), 0.0);
  EXPECT_DOUBLE_EQ(model.totalMass(), 1.0);
}

// Far above the ground both models are a free fall: z_T = h0 - g T^2 / 2 and, through the VJP,
// dz/dh0 = 1 and dvz/dh0 = 0 exactly for the hard model (no contact in the problem); the smoothed
// model's sigmoid underflows to 0 at 10 m, so it is exact there too.
TEST(FallingMass, FreeFallGradientsAreExact) {
  const sim::Model model = toys::fallingMassModel(1.0, kRadius);
  for (double h0 : {10.0, 25.0}) {
    const auto hard = toys::fall(model, options(sim::ContactModel::Hard), h0, kSteps);
    EXPECT_NEAR(hard.z, h0 - 0.5 * kG * kT * kT, 1e-12);
    EXPECT_NEAR(hard.vz, -kG * kT, 1e-12);
    EXPECT_EQ(hard.dz_dh0, 1.0);
    EXPECT_EQ(hard.dvz_dh0, 0.0);
    const auto sm = toys::fall(model, options(sim::ContactModel::Smoothed), h0, kSteps);
    EXPECT_NEAR(sm.z, hard.z, 1e-12);
    EXPECT_EQ(sm.dz_dh0, 1.0);
    EXPECT_EQ(sm.dvz_dh0, 0.0);
  }
}

// The smoothed model is smooth in h0 (the mass only falls, so the normal projection never
// switches): the chained VJP must match central differences to 1e-5 relative, at heights with and
// without contact and at the hard model's critical height.
TEST(FallingMass, SmoothedGradientsMatchFiniteDifferences) {
  const sim::Model model = toys::fallingMassModel(1.0, kRadius);
  for (double kappa : {100.0, 300.0, 1000.0}) {
    const auto opt = options(sim::ContactModel::Smoothed, kappa);
    for (double h0 : {0.06, 0.15, 0.2, 0.23, criticalHeight(), 0.24, 0.25, 0.3}) {
      const auto r = toys::fall(model, opt, h0, kSteps);
      const Fd fd = finiteDifference(model, opt, h0, 1e-6);
      EXPECT_NEAR(r.dz_dh0, fd.dz, 1e-5 * std::max(1.0, std::abs(fd.dz)))
          << "kappa " << kappa << " h0 " << h0;
      EXPECT_NEAR(r.dvz_dh0, fd.dvz, 1e-5 * std::max(1.0, std::abs(fd.dvz)))
          << "kappa " << kappa << " h0 " << h0;
    }
  }
  // Near the critical height the velocity gradient is informative (large), unlike the hard one.
  const auto r = toys::fall(model, options(sim::ContactModel::Smoothed), criticalHeight(), kSteps);
  EXPECT_LT(r.dvz_dh0, -50.0);
}

// Between two contact switches the hard model is linear in h0 (the landing step is fixed); there
// its gradients must equal central differences, and they are dz/dh0 = 1, dvz/dh0 = 0.
TEST(FallingMass, HardGradientsMatchFiniteDifferencesAwayFromSwitches) {
  const sim::Model model = toys::fallingMassModel(1.0, kRadius);
  const auto opt = options(sim::ContactModel::Hard);
  std::vector<double> heights;
  for (int k = 3; k < kSteps - 1; k += 3)
    heights.push_back(0.5 * (switchHeight(k) + switchHeight(k + 1)));  // lands in step k + 1
  heights.push_back(criticalHeight() + 0.05);                          // never lands
  for (double h0 : heights) {
    const auto r = toys::fall(model, opt, h0, kSteps);
    const Fd fd = finiteDifference(model, opt, h0, 1e-6);
    EXPECT_NEAR(r.dz_dh0, fd.dz, 1e-6) << "h0 " << h0;
    EXPECT_NEAR(r.dvz_dh0, fd.dvz, 1e-6) << "h0 " << h0;
    EXPECT_NEAR(r.dz_dh0, 1.0, 1e-12) << "h0 " << h0;
    EXPECT_NEAR(r.dvz_dh0, 0.0, 1e-12) << "h0 " << h0;
  }
  // The sawtooth: across a switch the final height drops by about a step's travel, although the
  // gradient says +1 on both sides.
  const int k = 10;
  const double below = toys::fall(model, opt, switchHeight(k) - 1e-7, kSteps, false).z;
  const double above = toys::fall(model, opt, switchHeight(k) + 1e-7, kSteps, false).z;
  EXPECT_GT(below - above, 0.5 * kG * kDt * kDt * (k + 1))
      << "no sawtooth drop at h0 " << switchHeight(k);
}

// Hard: the final velocity jumps from ~0 (landed, inelastic) to -g T across the critical height.
// Smoothed: it varies continuously (no step larger than a small fraction of the jump on a fine
// grid).
TEST(FallingMass, HardVelocityJumpsSmoothedIsContinuous) {
  const sim::Model model = toys::fallingMassModel(1.0, kRadius);
  const double hc = criticalHeight();
  const auto hard = options(sim::ContactModel::Hard);
  EXPECT_NEAR(toys::fall(model, hard, hc - 1e-7, kSteps, false).vz, 0.0, 1e-9);
  EXPECT_NEAR(toys::fall(model, hard, hc + 1e-7, kSteps, false).vz, -kG * kT, 1e-9);

  for (double kappa : {100.0, 300.0}) {
    const auto sm = options(sim::ContactModel::Smoothed, kappa);
    double prev = toys::fall(model, sm, hc - 0.05, kSteps, false).vz, maxStep = 0;
    for (double h0 = hc - 0.05 + 1e-4; h0 <= hc + 0.05; h0 += 1e-4) {
      const double vz = toys::fall(model, sm, h0, kSteps, false).vz;
      maxStep = std::max(maxStep, std::abs(vz - prev));
      prev = vz;
    }
    EXPECT_LT(maxStep, 0.02 * kG * kT) << "kappa " << kappa;
    EXPECT_GT(toys::fall(model, sm, hc - 0.05, kSteps, false).vz, -0.05 * kG * kT);
    EXPECT_LT(toys::fall(model, sm, hc + 0.05, kSteps, false).vz, -0.95 * kG * kT);
  }
}

// The sweep: the stochastic model's value goes smoothly from ~0 to -g T while its averaged
// per-sample gradient is 0 everywhere (biased); the exact gradient of its expected value integrates
// to the change of the value; the CSV has its columns and is written atomically.
TEST(FallingMass, SweepStochasticGradientIsBiased) {
  toys::FallingMassOptions o;
  o.points = 81;
  o.samples = 32;
  o.kappas = {300.0};
  const toys::FallingMassSweep s = toys::runFallingMass(o);
  EXPECT_NEAR(s.criticalHeight, criticalHeight(), 1e-9);
  ASSERT_EQ(s.models.size(), 3u);
  const int st = s.index("stochastic");
  ASSERT_GE(st, 0);
  const auto& r = s.results[st];
  EXPECT_GT(r.front().vz, -0.01 * kG * kT);
  EXPECT_LT(r.back().vz, -0.99 * kG * kT);
  for (const auto& x : r) EXPECT_EQ(x.dvz_dh0, 0.0);
  double integral = 0;
  for (int i = 1; i < o.points; ++i)
    integral +=
        0.5 * (s.stochasticExactVz[i] + s.stochasticExactVz[i - 1]) * (s.h0[i] - s.h0[i - 1]);
  EXPECT_NEAR(integral, r.back().vz - r.front().vz, 0.05 * kG * kT);

  const diffloco::testing::ScratchDir scratch("diffloco_test_falling_mass");
  const auto dir = scratch / "out";
  const std::string csv = toys::writeFallingMassCsv(s, dir.string());
  EXPECT_FALSE(std::filesystem::exists(csv + ".tmp"));
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("h0,hard_z,hard_vz,hard_dz_dh0,hard_dvz_dh0,smoothed_k300_z,", 0), 0u)
      << header;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, o.points);
}
