// What a task pays for stepping (envs/stepping_incentive.h): the scripted trot lifts the feet along
// the task's reference, and the verdict separates go_like's proposed foot-height reference (every
// training seed tracked) from ANYmal's 0.1 m / 0.05 m^2 on go_like (seeds stood; docs/robots.md).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "envs/stepping_incentive.h"
#include "robots/robot.h"

using namespace diffloco;
using namespace diffloco::envs;

namespace {

TaskConfig velocityTask(const std::string& robot, double height = 0, double sigma = 0) {
  const std::string source = configDir() + "/tasks/velocity.yaml";
  YAML::Node y = YAML::LoadFile(source);
  y["robot"] = robot;
  if (height > 0) {
    y["rewards"]["foot_height_tracking"]["height"] = height;
    y["rewards"]["foot_height_tracking"]["sigma"] = sigma;
  }
  inlineRobotDefaults(y, source);
  inlineActuatorFile(y, source);
  TaskConfig t = parseTaskConfig(y, source);
  t.name = "velocity";
  return t;
}

SteppingIncentiveOptions quick() {
  SteppingIncentiveOptions o;
  o.envs = 32;
  o.seconds = 3.0;
  return o;
}

}  // namespace

TEST(SteppingIncentive, TheTrotLiftsTheFeetAlongTheReference) {
  const SteppingIncentive s = measureSteppingIncentive(velocityTask("go_like"), quick());
  ASSERT_GE(s.footHeightTerm, 0);
  EXPECT_EQ(s.standing.terms.size(), s.rewardNames.size());
  // Standing: zero actions, so the action terms are exactly zero.
  for (std::size_t k = 0; k < s.rewardNames.size(); ++k)
    if (s.rewardNames[k] == "action_l1" || s.rewardNames[k] == "action_rate") {
      EXPECT_EQ(s.standing.terms[k], 0.0) << s.rewardNames[k];
      EXPECT_LT(s.trot.terms[k], 0.0) << s.rewardNames[k];
    }
  EXPECT_GT(s.trot.meanLift, s.standing.meanLift + 0.005);
  EXPECT_GT(s.trot.terms[s.footHeightTerm], s.standing.terms[s.footHeightTerm]);
  EXPECT_LT(s.trot.terms[s.footHeightTerm], s.footHeightMax);
  double sum = 0;
  for (double v : s.trot.terms) sum += v;
  EXPECT_NEAR(s.trot.total, sum, 1e-12);
}

TEST(SteppingIncentive, SeparatesTheProposedReferenceFromAnymals) {
  // The command's defaults (64 envs, 4 s): the ANYmal reference's margin is small.
  const SteppingIncentive own = measureSteppingIncentive(velocityTask("go_like"));
  EXPECT_FALSE(own.standingPaysTooWell()) << steppingIncentiveReport(own);
  EXPECT_GT(own.margin(), 0.1);
  const SteppingIncentive anymalRef = measureSteppingIncentive(velocityTask("go_like", 0.1, 0.05));
  EXPECT_TRUE(anymalRef.standingPaysTooWell()) << steppingIncentiveReport(anymalRef);
  const std::string report = steppingIncentiveReport(anymalRef);
  EXPECT_NE(report.find("warning: standing pays too well"), std::string::npos) << report;
  EXPECT_NE(report.find("foot_height_tracking"), std::string::npos);
}
