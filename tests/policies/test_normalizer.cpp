// The observation normaliser: Chan's merge equals the statistics of all samples at once, whatever
// the batching; the normalisation formula; identity when disabled; the statistics survive a save
// and load.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "policies/normalizer.h"

using namespace diffloco::policies;
using torch::Tensor;

TEST(Normalizer, MergedBatchesEqualAllSamplesAtOnce) {
  torch::manual_seed(0);
  const Tensor x = torch::randn({1000, 5}, torch::kDouble) * torch::tensor({1.0, 2.0, 0.1, 5.0, 1e-3},
                                                                            torch::kDouble) +
                   torch::tensor({0.0, -3.0, 10.0, 1.0, 0.5}, torch::kDouble);
  ObservationNormalizer n(5);
  // Uneven batches, float input (the env's observations are float).
  n->update(x.slice(0, 0, 1).to(torch::kFloat));
  n->update(x.slice(0, 1, 300).to(torch::kFloat));
  n->update(x.slice(0, 300, 1000).to(torch::kFloat).reshape({7, 100, 5}));
  const Tensor xf = x.to(torch::kFloat).to(torch::kDouble);
  EXPECT_EQ(n->count(), 1000);
  EXPECT_TRUE(torch::allclose(n->mean(), xf.mean(0), 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(n->var(), xf.var(0, false), 1e-10, 1e-14));
}

TEST(Normalizer, NormalizesWithTheEpsInsideTheRoot) {
  ObservationNormalizer n(2, 1e-2);
  n->update(torch::tensor({{1.0, 10.0}, {3.0, 10.0}}));
  // mean (2, 10), var (1, 0)
  const Tensor y = n->forward(torch::tensor({{4.0f, 10.5f}}));
  EXPECT_NEAR(y[0][0].item<float>(), 2 / std::sqrt(1.01), 1e-6);
  EXPECT_NEAR(y[0][1].item<float>(), 0.5 / std::sqrt(0.01), 1e-5);
  EXPECT_EQ(y.scalar_type(), torch::kFloat);
  // Differentiable in x.
  const Tensor x = torch::tensor({{4.0f, 1.0f}}, torch::requires_grad());
  n->forward(x).sum().backward();
  EXPECT_NEAR(x.grad()[0][0].item<float>(), 1 / std::sqrt(1.01), 1e-6);
}

TEST(Normalizer, BeforeAnySampleAndDisabled) {
  ObservationNormalizer fresh(3, 1e-5);
  const Tensor x = torch::tensor({{1.0f, -2.0f, 3.0f}});
  EXPECT_TRUE(torch::allclose(fresh->forward(x), x / std::sqrt(1 + 1e-5)));
  ObservationNormalizer off(3, 1e-5, false);
  off->update(torch::randn({10, 3}) * 5 + 3);
  EXPECT_TRUE(off->forward(x).equal(x));
  EXPECT_EQ(off->count(), 0);
}

TEST(Normalizer, SaveAndLoadKeepTheStatistics) {
  ObservationNormalizer a(4);
  a->update(torch::randn({50, 4}) * 3 + 1);
  const Tensor probe = torch::randn({2, 4});
  const Tensor before = a->forward(probe);
  torch::serialize::OutputArchive out;
  a->save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  ObservationNormalizer b(4);
  b->forward(probe);  // fill b's cache with its fresh statistics
  std::istringstream in(bytes.str());
  torch::serialize::InputArchive ar;
  ar.load_from(in);
  b->load(ar);
  b->refresh();
  EXPECT_TRUE(b->forward(probe).equal(before));
  EXPECT_EQ(b->count(), 50);
}

// The ranks of a distributed run merge their samples' moments: the union equals all samples at
// once, and merging moments into the normaliser equals updating it with the samples.
TEST(Normalizer, MomentsOfPartsMergeIntoTheWhole) {
  torch::manual_seed(1);
  const Tensor x = torch::randn({600, 3}, torch::kDouble) * 3 + 1;
  Moments m = Moments::of(x.slice(0, 0, 100), 3);
  m.merge(Moments::of(x.slice(0, 100, 600), 3)).merge(Moments::of(x.slice(0, 0, 0), 3));
  EXPECT_EQ(m.count, 600);
  EXPECT_TRUE(torch::allclose(m.mean, x.mean(0), 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(m.var, x.var(0, false), 1e-12, 1e-12));
  ObservationNormalizer a(3), b(3);
  a->update(x.slice(0, 0, 50));
  b->update(x.slice(0, 0, 50));
  a->update(x.slice(0, 50, 600));
  b->update(Moments::of(x.slice(0, 50, 300), 3).merge(Moments::of(x.slice(0, 300, 600), 3)));
  EXPECT_EQ(a->count(), b->count());
  EXPECT_TRUE(torch::allclose(a->mean(), b->mean(), 1e-13, 1e-13));
  EXPECT_TRUE(torch::allclose(a->var(), b->var(), 1e-12, 1e-13));
}
