// Actor and critic: the architecture of Table 6, the Gaussian (reparameterised samples, log-prob,
// entropy, KL against closed forms), squashing, and the policy file round trip.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>

#include "policies/actor_critic.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco::policies;
using torch::Tensor;

TEST(ActorCritic, ArchitectureOfTable6) {
  PolicyConfig c;  // (128, 64, 32) and (64, 64), ELU
  Actor actor(49, 12, c);
  Critic critic(49, c);
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& p : actor->named_parameters())
    if (p.key().find("weight") != std::string::npos) shapes.push_back(p.value().sizes().vec());
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{128, 49}, {64, 128}, {32, 64}, {12, 32}}));
  int64_t criticWeights = 0;
  for (const auto& p : critic->parameters()) criticWeights += p.numel();
  EXPECT_EQ(criticWeights, 49 * 64 + 64 + 64 * 64 + 64 + 64 + 1);
  EXPECT_TRUE(torch::allclose(actor->logStd(), torch::zeros({12})));  // init_std 1
  EXPECT_EQ(critic->forward(torch::zeros({5, 49})).sizes(), (std::vector<int64_t>{5}));
  // ELU hidden activations: a negative pre-activation gives exp(x) - 1, not 0.
  Mlp mlp(1, std::vector<int>{1}, 1, "elu", false);
  {
    torch::NoGradGuard g;
    for (auto& p : mlp->parameters()) p.fill_(1);
  }
  EXPECT_NEAR(mlp->forward(torch::tensor({{-3.0f}})).item<float>(), std::exp(-2.0) - 1 + 1, 1e-6);
}

TEST(ActorCritic, LayerNormAndSquash) {
  PolicyConfig c;
  c.layerNorm = true;
  c.squash = "tanh";
  c.initStd = std::exp(-1.0);
  Actor actor(6, 3, c);
  EXPECT_NEAR(actor->logStd()[0].item<float>(), -1.0, 1e-6);
  int layerNorms = 0;
  for (const auto& m : actor->modules())
    if (m->name() == "torch::nn::LayerNormImpl") ++layerNorms;
  EXPECT_EQ(layerNorms, 3);
  const Tensor a = torch::tensor({-10.0f, 0.5f, 3.0f});
  EXPECT_TRUE(torch::allclose(actor->squash(a), torch::tanh(a)));
  const Tensor out = actor->forward(torch::randn({4, 6}) * 100);
  EXPECT_LE(out.abs().max().item<float>(), 1.0f);
}

TEST(ActorCritic, BoundedSquashIsTanhScaledToItsBound) {
  // b tanh(a / b): within (-b, b), slope 1 at 0, and tanh itself at b = 1.
  PolicyConfig c;
  c.squash = "tanh";
  c.squashBound = {2.0};
  Actor actor(6, 3, c);
  const Tensor a = torch::tensor({-10.0f, 0.001f, 0.5f, 3.0f});
  EXPECT_TRUE(torch::allclose(actor->squash(a), 2.0 * torch::tanh(a / 2.0)));
  EXPECT_NEAR(actor->squash(a)[0].item<float>(), -2.0 * std::tanh(5.0), 1e-6);
  EXPECT_NEAR(actor->squash(a)[1].item<float>(), 0.001, 1e-9);
  const Tensor out = actor->forward(torch::randn({4, 6}) * 100);
  EXPECT_LE(out.abs().max().item<float>(), 2.0f);
  c.squashBound = {1.0};
  Actor plain(6, 3, c);
  EXPECT_TRUE(plain->squash(a).equal(torch::tanh(a)));
  // One bound per action: each column within its own bound, slope 1 at 0.
  c.squashBound = {1.0, 2.0, 0.5};
  Actor perAction(6, 3, c);
  const Tensor x = torch::tensor({{-10.0f, 0.001f, 3.0f}, {0.4f, -20.0f, 0.0002f}});
  const Tensor y = perAction->squash(x);
  const Tensor b = torch::tensor({1.0f, 2.0f, 0.5f});
  EXPECT_TRUE(torch::allclose(y, b * torch::tanh(x / b)));
  EXPECT_NEAR(y[0][1].item<float>(), 0.001, 1e-9);
  EXPECT_NEAR(y[1][2].item<float>(), 0.0002, 1e-10);
  EXPECT_TRUE(y.select(1, 0).equal(torch::tanh(x.select(1, 0))));
  const Tensor wide = perAction->forward(torch::randn({64, 6}) * 100).abs().amax(0);
  EXPECT_TRUE((wide <= b).all().item<bool>());
  // A list of another length is an error naming the key.
  c.squashBound = {1.0, 2.0};
  try {
    Actor wrong(6, 3, c);
    ADD_FAILURE() << "two bounds for three actions accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("policy.squash_bound: 2 bounds for 3 actions"),
              std::string::npos)
        << e.what();
  }
}

TEST(ActorCritic, ReparameterisedSamples) {
  PolicyConfig c;
  c.initStd = 0.5;
  Actor actor(2, 3, c);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const Tensor mean = torch::tensor({1.0f, -2.0f, 0.0f}).expand({20000, 3});
  const Tensor s = actor->sample(mean, gen);
  EXPECT_TRUE(torch::allclose(s.mean(0), torch::tensor({1.0f, -2.0f, 0.0f}), 0, 0.02));
  EXPECT_TRUE(torch::allclose(s.std(0), torch::full({3}, 0.5f), 0, 0.01));
  // d sample / d log_std = std * eps: the pathwise gradient reaches the log-std.
  const Tensor one = actor->sample(torch::zeros({1, 3}), gen);
  one.sum().backward();
  EXPECT_TRUE(torch::allclose(actor->logStd().grad(), one.detach().squeeze(0), 1e-6, 1e-6));
  // The same generator state gives the same samples.
  auto g1 = at::make_generator<at::CPUGeneratorImpl>(3), g2 = at::make_generator<at::CPUGeneratorImpl>(3);
  EXPECT_TRUE(actor->sample(mean, g1).equal(actor->sample(mean, g2)));
}

TEST(ActorCritic, GaussianFormulas) {
  const Tensor x = torch::tensor({{0.3, -1.2}}, torch::kDouble);
  const Tensor m = torch::tensor({{0.1, 0.4}}, torch::kDouble);
  const Tensor ls = torch::tensor({-0.5, 0.2}, torch::kDouble);
  double expect = 0;
  for (int i = 0; i < 2; ++i) {
    const double s = std::exp(ls[i].item<double>()), d = (x[0][i] - m[0][i]).item<double>();
    expect += -0.5 * d * d / (s * s) - std::log(s) - 0.5 * std::log(2 * M_PI);
  }
  EXPECT_NEAR(gaussianLogProb(x, m, ls).item<double>(), expect, 1e-12);
  EXPECT_NEAR(gaussianEntropy(ls).item<double>(),
              (-0.5 + 0.2) + 2 * (0.5 + 0.5 * std::log(2 * M_PI)), 1e-12);
  EXPECT_NEAR(gaussianKl(m, ls, m, ls).item<double>(), 0, 1e-14);
  // KL(N(0,1) || N(1, 2^2)) = log 2 + (1 + 1) / 8 - 1/2
  const Tensor kl = gaussianKl(torch::zeros({1, 1}, torch::kDouble), torch::zeros({1}, torch::kDouble),
                               torch::ones({1, 1}, torch::kDouble),
                               torch::full({1}, std::log(2.0), torch::kDouble));
  EXPECT_NEAR(kl.item<double>(), std::log(2.0) + 2.0 / 8 - 0.5, 1e-12);
}

TEST(ActorCritic, PolicyFileRoundTrip) {
  PolicyConfig c;
  c.actorHidden = {16, 8};
  c.squash = "tanh";
  c.layerNorm = true;
  Actor actor(5, 2, c);
  actor->normalizer()->update(torch::randn({100, 5}) * 2 + 1);
  {
    torch::NoGradGuard g;
    actor->logStd().fill_(-0.7);
  }
  const diffloco::testing::ScratchDir dir("diffloco_policy_test");
  const std::string path = (dir / "policy.pt").string();
  savePolicy(path, actor, {{"task", "walk"}, {"joints", "a,b"}});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  LoadedPolicy p = loadPolicy(path);
  const Tensor obs = torch::randn({3, 5});
  EXPECT_TRUE(p.actor->forward(obs).equal(actor->forward(obs)));
  EXPECT_EQ(p.actor->config().actorHidden, c.actorHidden);
  EXPECT_EQ(p.actor->config().squash, "tanh");
  EXPECT_EQ(p.actor->config().squashBound, std::vector<double>{1.0});
  EXPECT_EQ(p.actor->normalizer()->count(), 100);
  EXPECT_NEAR(p.actor->logStd()[1].item<float>(), -0.7, 1e-7);
  EXPECT_EQ(p.metadata.at("task"), "walk");
  EXPECT_EQ(p.metadata.at("joints"), "a,b");
  std::filesystem::remove(path);
  EXPECT_THROW(loadPolicy(path), std::runtime_error);
}

TEST(ActorCritic, CopyModuleRejectsAnotherArchitecture) {
  PolicyConfig a, b;
  b.criticHidden = {32};
  Critic x(4, a), y(4, a), z(4, b);
  copyModule(*x, *y);
  const Tensor in = torch::randn({2, 4});
  EXPECT_TRUE(x->forward(in).equal(y->forward(in)));
  EXPECT_THROW(copyModule(*x, *z), std::runtime_error);
}

// Edited or foreign policy files: every value is checked before it sizes a network, stored
// tensors against the architecture the file declares; errors name the file and what is wrong.
TEST(ActorCritic, DamagedPolicyFilesAreErrorsNamingTheFile) {
  namespace fs = std::filesystem;
  const diffloco::testing::ScratchDir dir("diffloco_damaged_policy");
  const std::string path = (dir / "policy.pt").string();
  PolicyConfig c;
  c.actorHidden = {8};
  Actor actor(5, 2, c), other(5, 3, c);
  // An archive like savePolicy's, with one entry replaced.
  auto write = [&](const std::string& key, const c10::IValue& value, Actor& weightsOf) {
    torch::serialize::OutputArchive a;
    a.write("format", c10::IValue(std::string("diffloco-policy-1")));
    const std::vector<std::pair<std::string, c10::IValue>> entries = {
        {"num_obs", c10::IValue(int64_t{5})},
        {"num_actions", c10::IValue(int64_t{2})},
        {"actor_hidden", c10::IValue(std::vector<int64_t>{8})},
        {"critic_hidden", c10::IValue(std::vector<int64_t>{8})},
        {"activation", c10::IValue(std::string("elu"))},
        {"layer_norm", c10::IValue(false)},
        {"init_std", c10::IValue(1.0)},
        {"squash", c10::IValue(std::string("none"))},
        {"normalize_observations", c10::IValue(true)},
        {"normalizer_eps", c10::IValue(1e-5)},
        {"metadata_keys", c10::IValue(c10::List<std::string>({"task"}))},
        {"metadata_values", c10::IValue(c10::List<std::string>({"walk"}))}};
    for (const auto& [k, v] : entries) a.write(k, k == key ? value : v);
    torch::serialize::OutputArchive w;
    weightsOf->save(w);
    a.write("actor", w);
    a.save_to(path);
  };
  auto expectError = [&](const std::string& fragment) {
    try {
      loadPolicy(path);
      ADD_FAILURE() << "no error; expected one with '" << fragment << "'";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
    }
  };
  write("", c10::IValue(), actor);  // intact
  EXPECT_EQ(loadPolicy(path).metadata.at("task"), "walk");
  write("num_obs", c10::IValue(int64_t{1} << 40), actor);
  expectError("'num_obs': expected an integer in [1, 100000]");
  write("actor_hidden", c10::IValue(std::vector<int64_t>{8, 1 << 30}), actor);
  expectError("'actor_hidden'");
  write("activation", c10::IValue(int64_t{3}), actor);
  expectError("'activation'");
  write("init_std", c10::IValue(std::nan("")), actor);
  expectError("'init_std'");
  write("metadata_keys", c10::IValue(int64_t{1}), actor);
  expectError("metadata");
  write("", c10::IValue(), other);  // weights of a 3-action actor under a 2-action header
  expectError("another shape");
  {
    torch::NoGradGuard g;
    other->logStd().fill_(std::nan(""));
  }
  write("num_actions", c10::IValue(int64_t{3}), other);
  expectError("non-finite");
}

// Found by fuzz_policy_file (tests/fuzz/regressions/): an edited archive whose code names an
// unknown TorchScript type. torch throws its frontend's error, not a c10::Error, and it escaped
// without the file's name.
// Edited archives the fuzzer found: one whose TorchScript error escaped without the file's name,
// one that crashed LibTorch's parser (SIGSEGV). Both are now refused by the archive check
// (io/zip_archive.h) before LibTorch reads them, with the file's name and the record.
TEST(ActorCritic, FuzzRegressionEditedArchivesAreErrorsNamingTheFile) {
  for (const char* name :
       {"policy_file_unknown_torchscript_type.pt", "policy_file_libtorch_segv.pt"}) {
    const std::string path = std::string(DIFFLOCO_FUZZ_REGRESSIONS) + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(path));
    try {
      loadPolicy(path);
      ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": not a valid archive (record '"),
                std::string::npos)
          << e.what();
    }
  }
}
