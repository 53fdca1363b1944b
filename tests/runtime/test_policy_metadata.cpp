// runtime/policy_metadata: the contract round-trips (write -> read -> equal, JSON and YAML), every
// observation term of every shipped training config is exported with its definition, files of
// format 1 (pretrained/) are still read with their "no limit" values as null, and bad input is
// an error naming the file, line, key and what was expected.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "envs/locomotion_env.h"
#include "export/export.h"
#include "io/atomic_file.h"
#include "robots/robot.h"
#include "runs/run_dir.h"
#include "runtime/policy_metadata.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

namespace diffloco::deploy {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Exports an untrained actor of a shipped training config (a run folder as diffloco train leaves
// it, in a ScratchDir removed on return) and returns the metadata written.
PolicyMetadata exportedMetadata(const std::string& config) {
  const testing::ScratchDir scratch("diffloco_test_metadata");
  const fs::path dir = scratch / config;
  fs::create_directories(dir);
  const train::TrainConfig cfg = train::loadTrainConfig(configDir() + "/" + config);
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv env(cfg.task, eo);
  policies::Actor actor(env.numObs(), env.numActions(), cfg.policy);
  io::writeFileAtomic((dir / "config.yaml").string(), train::toYaml(cfg));
  policies::savePolicy((dir / "policy.pt").string(), actor, {{"task", cfg.task.name}});
  return exportPolicy(dir.string(), (dir / "exported.pt").string()).metadata;
}

void expectRoundTrip(const PolicyMetadata& m) {
  const PolicyMetadata fromJson = parsePolicyMetadata(toJson(m), "json");
  const PolicyMetadata fromYaml = parsePolicyMetadata(toYaml(m), "yaml");
  EXPECT_EQ(metadataDifferences(m, fromJson), std::vector<std::string>{});
  EXPECT_EQ(metadataDifferences(m, fromYaml), std::vector<std::string>{});
  EXPECT_EQ(toJson(fromYaml), toJson(m));
}

TEST(PolicyMetadata, EveryShippedConfigExportsAFullContractThatRoundTrips) {
  for (const char* config : {"walk_quadruped_shac.yaml", "walk_quadruped_ppo.yaml",
                             "velocity_anymal_shac.yaml", "velocity_anymal_ppo.yaml"}) {
    SCOPED_TRACE(config);
    const PolicyMetadata m = exportedMetadata(config);
    EXPECT_EQ(m.format, kMetadataFormat);
    ASSERT_FALSE(m.observations.empty());
    for (const auto& t : m.observations) {
      EXPECT_FALSE(t.definition.formula.empty()) << t.name;
      EXPECT_FALSE(t.definition.frame.empty()) << t.name;
      EXPECT_FALSE(t.definition.units.empty()) << t.name;
      EXPECT_FALSE(t.definition.conventions.empty()) << t.name;
    }
    EXPECT_NE(m.urdf.find("<robot"), std::string::npos);
    EXPECT_EQ(m.urdfSha256.size(), 64u);
    EXPECT_FALSE(m.baseLink.empty());
    EXPECT_EQ(m.feet.size(), 4u);
    EXPECT_TRUE(m.seed.has_value());
    EXPECT_TRUE(m.iterations.has_value());
    EXPECT_EQ(m.configSha256.size(), 64u);
    expectRoundTrip(m);
  }
}

TEST(PolicyMetadata, NullsAndCurriculumRoundTrip) {
  PolicyMetadata m = exportedMetadata("walk_quadruped_shac.yaml");
  ASSERT_TRUE(m.curriculum.has_value());  // the walk config has a curriculum: block
  m.saturation = 30.5;
  m.velocityLimit.reset();
  m.terminationTilt.reset();
  m.frictionRange = std::vector<double>{0.4, 1.2};
  m.pushVelocity = 0.5;
  m.seed.reset();
  m.curriculum = CurriculumFactors{1.25, 1.5, 0.2, 0.3};
  m.warmStart = {"runs/b", "runs/a"};
  m.urdf += "\ttab \"quote\" back\\slash \xc3\xa9\n";  // bytes a writer must escape or keep
  expectRoundTrip(m);
  const PolicyMetadata back = parsePolicyMetadata(toJson(m), "json");
  EXPECT_FALSE(back.velocityLimit.has_value());
  EXPECT_FALSE(back.seed.has_value());
  ASSERT_TRUE(back.curriculum.has_value());
  EXPECT_EQ(back.curriculum->commandResample, 0.3);
  EXPECT_EQ(exportedMetadata("velocity_anymal_shac.yaml").curriculum->commandResample, 0.3);
  EXPECT_EQ(back.urdf, m.urdf);
  // A single changed value is reported by its key.
  PolicyMetadata other = back;
  other.observations[0].definition.units = "ft";
  EXPECT_EQ(metadataDifferences(m, other),
            std::vector<std::string>{"observation.terms[0].definition.units"});
}

TEST(PolicyMetadata, ReadsFormatOneWithNullsForItsSentinels) {
  // The walk policy's metadata as shipped before format 2 (files in the field keep loading).
  const fs::path file = fs::path(configDir()).parent_path() / "tests" / "runtime" / "data" /
                        "walk_quadruped_format1.yaml";
  const PolicyMetadata m = parsePolicyMetadata(readText(file), file.string());
  EXPECT_EQ(m.format, kMetadataFormatV1);
  EXPECT_EQ(m.robot, "quadruped");
  EXPECT_FALSE(m.saturation.has_value());       // 1e10 in the file
  EXPECT_FALSE(m.terminationTilt.has_value());  // 0 in the file: no tilt termination
  ASSERT_TRUE(m.terminationHeight.has_value());
  EXPECT_DOUBLE_EQ(*m.terminationHeight, 0.25);
  EXPECT_TRUE(m.urdf.empty());
  EXPECT_FALSE(m.seed.has_value());
}

TEST(PolicyMetadata, DeployPageShowsTheRegistryDefinitions) {
  // One source: docs/deploy.md's table is the registry's (regenerate it with
  // `build/diffloco export --describe-observations`).
  const fs::path page = fs::path(configDir()).parent_path() / "docs" / "deploy.md";
  EXPECT_NE(readText(page).find(observationDefinitionsMarkdown()), std::string::npos)
      << page << " does not hold the output of `diffloco export --describe-observations`";
}

TEST(PolicyMetadata, BadInputNamesFileLineKeyAndExpectation) {
  const std::string good = toYaml(exportedMetadata("walk_quadruped_ppo.yaml"));
  auto errorOf = [](const std::string& text) {
    try {
      parsePolicyMetadata(text, "policy.yaml");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string bad = good;
  bad.replace(bad.find("  kp: "), 6, "  kp: fast #");
  EXPECT_NE(errorOf(bad).find("actuator.kp: expected a number"), std::string::npos) << errorOf(bad);
  EXPECT_NE(errorOf(bad).find("policy.yaml:"), std::string::npos) << errorOf(bad);
  bad = good;
  bad.replace(bad.find("  kd: "), 6, "  kdd: ");
  EXPECT_NE(errorOf(bad).find("actuator.kd: missing key"), std::string::npos) << errorOf(bad);
  bad = good + "extras:\n  x: 1\n";
  EXPECT_NE(errorOf(bad).find("unknown key 'extras'"), std::string::npos) << errorOf(bad);
  bad = good;
  bad.replace(bad.find("diffloco-exported-policy-2"), 26, "diffloco-exported-policy-9");
  EXPECT_NE(errorOf(bad).find("expected 'diffloco-exported-policy-2'"), std::string::npos)
      << errorOf(bad);
}

// Found by fuzz_policy_metadata (tests/fuzz/regressions/): a shipped metadata file with bytes
// erased; yaml-cpp's "invalid node" escaped the reader without the file's name.
TEST(PolicyMetadata, FuzzRegressionYamlErrorsNameTheFile) {
  const std::string path =
      std::string(DIFFLOCO_FUZZ_REGRESSIONS) + "/policy_metadata_invalid_node.yaml";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  try {
    parsePolicyMetadata(text, path);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace diffloco::deploy
