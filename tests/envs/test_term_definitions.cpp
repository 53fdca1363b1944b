// envs/terms: every observation term has its deployment contract (formula, frame, units,
// conventions): it is exported with every policy that uses it (runtime/policy_metadata.h), so a
// term added without one would ship an undefined input.
#include <gtest/gtest.h>

#include "envs/terms.h"

namespace diffloco::envs {
namespace {

TEST(TermDefinitions, EveryObservationTermIsDefined) {
  const auto& terms = termRegistry(TermKind::Observation);
  ASSERT_FALSE(terms.empty());
  for (const auto& t : terms) {
    EXPECT_FALSE(t.definition.formula.empty()) << t.name;
    EXPECT_FALSE(t.definition.frame.empty()) << t.name;
    EXPECT_FALSE(t.definition.units.empty()) << t.name;
    EXPECT_FALSE(t.definition.conventions.empty()) << t.name;
  }
}

}  // namespace
}  // namespace diffloco::envs
