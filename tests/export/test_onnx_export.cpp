// export/onnx_export: `--format onnx` writes an ONNX file whose metadata_props carry the same
// metadata as the TorchScript file. The numbers are checked by ONNX Runtime itself
// (tests/export/check_onnx.py, ctest deploy_onnx_runtime): this test writes its fixture, for a
// freshly exported SHAC walk actor (LayerNorm, tanh) and for both shipped policies upgraded from
// their older metadata: model.onnx, model.pt, 1000 observations and the TorchScript actions.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "envs/locomotion_env.h"
#include "export/export.h"
#include "io/atomic_file.h"
#include "robots/robot.h"
#include "runs/run_dir.h"
#include "tests/support/scratch_dir.h"
#include "train/config.h"

namespace diffloco::deploy {
namespace {

namespace fs = std::filesystem;
using torch::Tensor;

void writeMatrix(const fs::path& p, const Tensor& t) {
  const Tensor x = t.to(torch::kDouble).contiguous();
  std::ofstream out(p);
  out.precision(17);
  const double* d = x.data_ptr<double>();
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t j = 0; j < x.size(1); ++j)
      out << d[i * x.size(1) + j] << (j + 1 == x.size(1) ? "\n" : ",");
}

// 1000 observations: 700 around the normaliser's statistics (what the policy sees), 300 of a
// wide spread (saturating the tanh).
Tensor observations(torch::jit::Module& m) {
  torch::manual_seed(3);
  const Tensor mean = m.attr("obs_mean").toTensor(), scale = m.attr("obs_scale").toTensor();
  const int64_t n = mean.size(0);
  const Tensor typical = mean + torch::randn({700, n}) / scale;
  return torch::cat({typical, torch::randn({300, n}) * 3}).to(torch::kFloat32);
}

// Exports `input` in both formats into dir/<name>.{pt,onnx,yaml} and writes the fixture.
void writeCase(const fs::path& dir, const std::string& name, const std::string& input) {
  const ExportResult r =
      exportPolicy(input, (dir / (name + ".pt")).string(), "", ExportFormat::Both);
  ASSERT_TRUE(fs::exists(r.onnxPath));
  ASSERT_TRUE(fs::exists(r.modulePath));
  torch::jit::Module m = torch::jit::load(r.modulePath);
  torch::NoGradGuard noGrad;
  const Tensor obs = observations(m);
  writeMatrix(dir / (name + "_obs.csv"), obs);
  const Tensor actions = m.forward({obs}).toTensor();
  ASSERT_EQ(actions.size(0), obs.size(0));
  ASSERT_TRUE(torch::isfinite(actions).all().item<bool>()) << name;
  writeMatrix(dir / (name + "_actions.csv"), actions);
  const std::string metadata = m.attr("metadata_json").toStringRef();
  std::ofstream(dir / (name + "_metadata.json")) << metadata;
  // The ONNX file carries the TorchScript file's metadata verbatim (a protobuf string field).
  std::ifstream onnx(r.onnxPath, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(onnx)), std::istreambuf_iterator<char>());
  EXPECT_GT(metadata.size(), 1000u) << name;
  EXPECT_NE(bytes.find(metadata), std::string::npos) << name << ": the ONNX file lacks the metadata";
}

TEST(OnnxExport, WritesModelsForOnnxRuntime) {
  // DIFFLOCO_ONNX_FIXTURE names a folder that ctest deploy_onnx_runtime reads afterwards and that
  // stays; without it the files go with a ScratchDir.
  const char* env = std::getenv("DIFFLOCO_ONNX_FIXTURE");
  std::optional<testing::ScratchDir> scratch;
  if (!env) scratch.emplace("diffloco_test_onnx");
  const fs::path dir = env ? fs::path(env) : scratch->path();
  fs::create_directories(dir);
  // A run folder as diffloco train leaves it (SHAC walk: LayerNorm and tanh).
  const fs::path run = dir / "walk_run";
  fs::create_directories(run);
  const train::TrainConfig cfg = train::loadTrainConfig(configDir() + "/walk_quadruped_shac.yaml");
  envs::EnvOptions eo;
  eo.numEnvs = 1;
  eo.printSummary = false;
  envs::LocomotionEnv e(cfg.task, eo);
  torch::manual_seed(11);
  policies::Actor actor(e.numObs(), e.numActions(), cfg.policy);
  actor->normalizer()->update(torch::randn({500, e.numObs()}) * 2 + 0.5);
  io::writeFileAtomic((run / "config.yaml").string(), train::toYaml(cfg));
  policies::savePolicy((run / "policy.pt").string(), actor, {{"task", cfg.task.name}});
  try {
    exportPolicy(run.string(), (dir / "probe.onnx").string(), "", ExportFormat::Onnx);
  } catch (const std::runtime_error& err) {
    if (std::string(err.what()).find("without libonnx-dev") != std::string::npos)
      GTEST_SKIP() << err.what();
    throw;
  }
  writeCase(dir, "walk_run", run.string());
  // The same actor with a bounded tanh (b tanh(a / b)): two more operations in the graph.
  const fs::path bounded = dir / "walk_bounded";
  fs::create_directories(bounded);
  train::TrainConfig boundedCfg = cfg;
  boundedCfg.policy.squashBound = {1.5};
  policies::Actor boundedActor(e.numObs(), e.numActions(), boundedCfg.policy);
  policies::copyModule(*actor, *boundedActor);
  io::writeFileAtomic((bounded / "config.yaml").string(), train::toYaml(boundedCfg));
  policies::savePolicy((bounded / "policy.pt").string(), boundedActor,
                       {{"task", cfg.task.name}});
  writeCase(dir, "walk_bounded", bounded.string());
  const fs::path pretrained = fs::path(configDir()).parent_path() / "pretrained";
  for (const char* name : {"walk_quadruped", "velocity_anymal"})
    writeCase(dir, name, (pretrained / (std::string(name) + ".pt")).string());
}

}  // namespace
}  // namespace diffloco::deploy
