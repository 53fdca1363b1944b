// sim/model_edit.cpp: a reordered model is the same robot (mass matrix, bias forces and feet from
// the rigid-body stages agree with the original's, entry by entry through the permutation); bad orders and feet are refused
// naming the joint or link; the feet found are the spheres at the ends of the legs.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "robots/robot.h"
#include "sim/model_edit.h"
#include "tests/sim/stages.h"

using namespace diffloco::sim;

namespace {

const Model& anymal() {
  static const Model m = diffloco::loadRobot("anymal").model;
  return m;
}

std::vector<std::string> names(const Model& m) {
  std::vector<std::string> n;
  for (const auto& j : m.joints) n.push_back(j.name);
  return n;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// IsaacLab's order (all HAA, then all HFE, then all KFE) and a leg permutation: the reordered model
// gives the original's H, bias forces and foot positions at random states, permuted.
TEST(ModelEdit, ReorderedModelIsTheSameRobot) {
  const Model& a = anymal();
  const std::vector<std::vector<std::string>> orders = {
      {"LF_HAA", "RF_HAA", "LH_HAA", "RH_HAA", "LF_HFE", "RF_HFE", "LH_HFE", "RH_HFE", "LF_KFE",
       "RF_KFE", "LH_KFE", "RH_KFE"},
      {"RH_HAA", "RH_HFE", "RH_KFE", "LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
       "LH_HAA", "LH_HFE", "LH_KFE"}};
  for (const auto& order : orders) {
    const Model b = reorderJoints(a, order);
    ASSERT_EQ(names(b), order);
    ASSERT_EQ(b.nfeet(), a.nfeet());
    std::vector<int> perm(a.nv());  // dof of b -> dof of a
    for (int k = 0; k < 6; ++k) perm[k] = k;
    for (int k = 0; k < b.nj(); ++k) perm[6 + k] = 6 + a.jointIndex(order[k]);
    const StepModel<Quadruped> fa = toStepModel<Quadruped>(a), fb = toStepModel<Quadruped>(b);
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0, 1);
    for (int trial = 0; trial < 20; ++trial) {
      VecX qa = neutralConfiguration(a), va(a.nv());
      for (int i = 0; i < a.nv(); ++i) va[i] = n(rng);
      for (int j = 0; j < a.nj(); ++j) qa[7 + j] = n(rng);
      qa.segment<4>(3) = Eigen::Vector4d(n(rng), n(rng), n(rng), n(rng)).normalized();
      VecX qb = qa, vb = va;
      for (int k = 0; k < b.nj(); ++k) qb[7 + k] = qa[1 + perm[6 + k]], vb[6 + k] = va[perm[6 + k]];
      diffloco::test::Kinematics<Quadruped> ka(fa, qa), kb(fb, qb);
      const MatX Ha = ka.massMatrix(), Hb = kb.massMatrix();
      const VecX taua = ka.biasForces(va), taub = kb.biasForces(vb);
      for (int r = 0; r < a.nv(); ++r) {
        EXPECT_NEAR(taub[r], taua[perm[r]], 1e-12);
        for (int c = 0; c < a.nv(); ++c) EXPECT_NEAR(Hb(r, c), Ha(perm[r], perm[c]), 1e-12);
      }
      for (int f = 0; f < a.nfeet(); ++f) {
        EXPECT_EQ(b.feet[f].name, a.feet[f].name);
        const Vec3 pa = ka.worldPoint(a.feet[f].body, a.feet[f].offset);
        const Vec3 pb = kb.worldPoint(b.feet[f].body, b.feet[f].offset);
        EXPECT_LT((pa - pb).norm(), 1e-13);
      }
    }
  }
}

TEST(ModelEdit, BadJointOrdersNameTheJoint) {
  std::vector<std::string> order = names(anymal());
  std::swap(order[0], order[1]);  // LF_HFE before LF_HAA, which carries it
  EXPECT_NE(errorOf([&] {
              reorderJoints(anymal(), order);
            }).find("joint 'LF_HFE' is listed before joint 'LF_HAA' that carries it"),
            std::string::npos);
  order = names(anymal());
  order[3] = "RF_HIP";
  EXPECT_NE(errorOf([&] {
              reorderJoints(anymal(), order);
            }).find("joint 'RF_HIP' is not a movable joint of the URDF (expected one of: LF_HAA"),
            std::string::npos);
  order = names(anymal());
  order[3] = "LF_HAA";
  EXPECT_NE(errorOf([&] { reorderJoints(anymal(), order); }).find("joint 'LF_HAA' is listed twice"),
            std::string::npos);
  order = names(anymal());
  order.pop_back();
  EXPECT_NE(errorOf([&] {
              reorderJoints(anymal(), order);
            }).find("joint 'RH_KFE' of the URDF is missing (11 listed, the URDF has 12"),
            std::string::npos);
}

TEST(ModelEdit, FeetAreSelectedByLinkAndFoundAtTheLegEnds) {
  const Model& a = anymal();
  EXPECT_EQ(findFeet(a), (std::vector<std::string>{"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"}));
  const Model b = selectFeet(a, {"RH_FOOT", "LF_FOOT"});
  ASSERT_EQ(b.nfeet(), 2);
  EXPECT_EQ(b.feet[0].name, "RH_FOOT");
  EXPECT_EQ(b.feet[0].body, a.feet[a.footIndex("RH_FOOT")].body);
  EXPECT_EQ(b.footDofs.size(), 2u);  // finalized for the new feet
  EXPECT_NE(errorOf([&] {
              selectFeet(a, {"LF_THIGH"});
            }).find("link 'LF_THIGH' carries no collision sphere"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              selectFeet(a, {"LF_SHANK"});
            }).find("link 'LF_SHANK' carries 6 collision spheres; a foot is one sphere"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              selectFeet(a, {"LF_FOOT", "LF_FOOT"});
            }).find("listed twice"),
            std::string::npos);
}

// Leg spheres: every sphere on the named links, after the feet in the contact stages' list, with
// their own dof paths; the feet stay what they were.
TEST(ModelEdit, LegSpheresComeFromTheirLinksAfterTheFeet) {
  const Model& a = anymal();
  const Model b = selectFeet(a, {"LF_FOOT", "RF_FOOT"}, {"RF_SHANK"});
  ASSERT_EQ(b.nfeet(), 2);
  ASSERT_EQ(b.legSpheres.size(), 6u);  // knee and five along the tube (configs/robots/anymal.urdf)
  EXPECT_EQ(b.nspheres(), 8);
  EXPECT_EQ(b.sphere(1).name, "RF_FOOT");
  EXPECT_EQ(b.sphere(2).name, "RF_SHANK");
  EXPECT_DOUBLE_EQ(b.sphere(2).radius, 0.07);
  EXPECT_EQ(b.sphere(2).body, b.sphere(1).body);  // the foot is fixed to the shank
  ASSERT_EQ(b.footDofs.size(), 8u);
  EXPECT_EQ(b.footDofs[2], b.footDofs[1]);
  EXPECT_EQ(b.footCommonDofs[0][2], 6);  // LF foot and RF shank share the base dofs alone
  // Reordering the joints carries the leg spheres' bodies along.
  std::vector<std::string> order;  // IsaacLab's: every HAA, then every HFE, then every KFE
  for (const char* j : {"HAA", "HFE", "KFE"})
    for (const char* leg : {"LF", "RF", "LH", "RH"}) order.push_back(std::string(leg) + "_" + j);
  const Model c = reorderJoints(b, order);
  EXPECT_EQ(c.bodies[c.legSpheres[0].body].name, "RF_SHANK");
  EXPECT_EQ(c.legSpheres[0].body, c.feet[1].body);
  EXPECT_NE(errorOf([&] { selectFeet(a, {"LF_FOOT"}, {"LF_FOOT"}); }).find("is a foot"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              selectFeet(a, {"LF_FOOT"}, {"LF_THIGH"});
            }).find("leg contact link 'LF_THIGH' carries no collision sphere"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              selectFeet(a, {"LF_FOOT"}, {"LF_SHANK", "LF_SHANK"});
            }).find("listed twice"),
            std::string::npos);
}
