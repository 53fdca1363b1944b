#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/action_history.h"

using diffloco::deploy::actionHistorySteps;

TEST(ActionHistory, StepsAreAnIntegerFromOneToSixteen) {
  EXPECT_EQ(actionHistorySteps(1), 1);
  EXPECT_EQ(actionHistorySteps(16), 16);
  for (double bad : {0.0, -1.0, 17.0, 2.5, std::nan(""), HUGE_VAL}) {
    try {
      actionHistorySteps(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(
                    "observations.action_history.steps must be an integer in [1, 16], not ", 0),
                0u)
          << e.what();
    }
  }
}
