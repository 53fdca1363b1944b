// Both robots, 4 feet in contact and at a distance, smoothed and soft models, horizons 1 and 16:
// worst relative error <= 1e-5 in double precision; the hard model the same on the coordinates
// whose finite-difference stencil keeps the contact sets (at most a tenth of any group excluded).
// On terrain (a slope with the robot tilted onto it, bumps, a step edge, sliding up an incline)
// the same bar: the contact frame's derivative through the height field's second derivatives is
// in the backward pass.
#include <gtest/gtest.h>

#include "experiments/gradcheck.h"

using namespace diffloco;

namespace {

void expectGradientsMatch(const std::string& robotName, sim::ContactModel cm,
                          const std::string& state, int horizon, double slide = 0,
                          const std::string& terrain = "flat") {
  Robot robot = loadRobot(robotName);
  const sim::SimOptions opt = defaultSimOptions(robot, cm);
  GradcheckOptions o;
  o.state = state;
  o.horizon = horizon;
  o.slide = slide;
  o.terrain = terrain;
  const GradcheckReport r = gradcheck(robot, opt, o);
  std::string detail;
  for (const auto& g : r.groups)
    detail += "  " + g.name + " " + std::to_string(g.relError) + " (|g| " +
              std::to_string(g.gradNorm) + ", excluded " + std::to_string(g.excluded) + ")\n";
  EXPECT_LE(r.worst, 1e-5) << robotName << " " << sim::toString(cm) << " " << state << " "
                           << terrain << " H=" << horizon << "\n"
                           << detail;
  if (state == "contact") EXPECT_GT(r.activeContacts, 0);
  // Only the hard model's kinks exclude coordinates, and never enough to hide a group.
  for (const auto& g : r.groups) {
    if (cm != sim::ContactModel::Hard) EXPECT_EQ(g.excluded, 0) << g.name << "\n" << detail;
    EXPECT_LE(g.excluded, g.size / 10) << g.name << "\n" << detail;
  }
}

}  // namespace

class Gradcheck : public ::testing::TestWithParam<
                      std::tuple<const char*, sim::ContactModel, const char*, int>> {};

TEST_P(Gradcheck, VjpMatchesFiniteDifferences) {
  const auto& [robot, cm, state, horizon] = GetParam();
  expectGradientsMatch(robot, cm, state, horizon);
}

INSTANTIATE_TEST_SUITE_P(
    Robots, Gradcheck,
    ::testing::Combine(::testing::Values("anymal", "quadruped"),
                       ::testing::Values(sim::ContactModel::Smoothed, sim::ContactModel::Soft,
                                         sim::ContactModel::Hard),
                       ::testing::Values("contact", "distance"), ::testing::Values(1, 16)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param)) + "_" + sim::toString(std::get<1>(info.param)) +
             "_" + std::get<2>(info.param) + "_H" + std::to_string(std::get<3>(info.param));
    });

TEST(GradcheckSliding, FrictionBranchesOverSixteenSteps) {
  for (auto cm : {sim::ContactModel::Smoothed, sim::ContactModel::Hard})
    expectGradientsMatch("quadruped", cm, "contact", 16, 1.5);
}

class GradcheckTerrain
    : public ::testing::TestWithParam<std::tuple<const char*, sim::ContactModel, const char*>> {};

TEST_P(GradcheckTerrain, VjpMatchesFiniteDifferences) {
  const auto& [terrain, cm, state] = GetParam();
  expectGradientsMatch("anymal", cm, state, 1, 0, terrain);
  expectGradientsMatch("quadruped", cm, state, 16, 0, terrain);
}

INSTANTIATE_TEST_SUITE_P(
    Terrains, GradcheckTerrain,
    ::testing::Combine(::testing::Values("slope", "bump", "step"),
                       ::testing::Values(sim::ContactModel::Smoothed, sim::ContactModel::Soft,
                                         sim::ContactModel::Hard),
                       ::testing::Values("contact", "distance")),
    [](const auto& info) {
      return std::string(std::get<0>(info.param)) + "_" + sim::toString(std::get<1>(info.param)) +
             "_" + std::get<2>(info.param);
    });

TEST(GradcheckTerrainSliding, UpAnIncline) {
  for (auto cm : {sim::ContactModel::Smoothed, sim::ContactModel::Hard, sim::ContactModel::Soft})
    expectGradientsMatch("quadruped", cm, "contact", 16, 1.0, "slope");
}
