// A tiny differentiable VecEnv for algorithm tests: N points in the plane move by 0.2 * action per
// step; reward 1 - |x|^2 (differentiable); an env is truncated when its episode reaches
// `maxLength` steps and terminated when its step count reaches terminateAt[i] (>= 0), so that the
// tests choose exactly where segments end. Resets draw x ~ U(-1, 1)^2 from the env's generator.
// It records what each step produced (detached) for hand computations. With
// setCriticObservations(true) the critic has its own observations (x, |x|^2).
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <optional>
#include <vector>

#include "envs/vec_env.h"

namespace diffloco::testing {

class PointEnv : public envs::VecEnv {
 public:
  PointEnv(int n, int maxLength, std::uint64_t seed = 0)
      : n_(n), maxLength_(maxLength), gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {
    terminateAt_ = torch::full({n}, -1, torch::kLong);
    reset();
  }

  int numEnvs() const override { return n_; }
  int numObs() const override { return 2; }
  int numCriticObs() const override { return critic_ ? 3 : 0; }
  torch::Tensor criticObservations() const override {
    return critic_ ? criticOf(x_) : torch::Tensor();
  }
  void setCriticObservations(bool on) { critic_ = on; }
  static torch::Tensor criticOf(const torch::Tensor& x) {
    return torch::cat({x, x.square().sum(1, true)}, 1);
  }
  int numActions() const override { return 2; }
  int maxEpisodeLength() const override { return maxLength_; }
  double envDt() const override { return 0.1; }
  const std::vector<std::string>& rewardNames() const override { return names_; }

  torch::Tensor reset() override {
    torch::NoGradGuard g;
    x_ = draw(n_);
    steps_ = torch::zeros({n_}, torch::kLong);
    return x_;
  }
  torch::Tensor observations() const override { return x_; }

  envs::StepResult step(const torch::Tensor& actions) override {
    std::optional<torch::NoGradGuard> g;
    if (!differentiable_) g.emplace();
    ++calls;
    const torch::Tensor next = x_ + 0.2 * actions.to(torch::kFloat);
    steps_ += 1;
    envs::StepResult r;
    r.rewards = 1 - next.square().sum(1);
    r.terminated = (steps_ == terminateAt_);
    r.truncated = (steps_ >= maxLength_) & r.terminated.logical_not();
    r.extras.terminalObs = next;
    const torch::Tensor done = r.terminated | r.truncated;
    r.extras.resetIds = done.nonzero().squeeze(1);
    x_ = next;
    if (r.extras.resetIds.numel() > 0) {
      const torch::Tensor fresh = draw(r.extras.resetIds.numel());
      x_ = x_.index_copy(0, r.extras.resetIds, fresh);
      steps_.index_fill_(0, r.extras.resetIds, 0);
      r.extras.log["Episode/count"] = static_cast<double>(r.extras.resetIds.numel());
    }
    r.obs = x_;
    if (critic_) {
      r.criticObs = criticOf(x_);
      r.extras.terminalCriticObs = criticOf(next);
    }
    actionsSeen.push_back(actions.detach().clone());
    rewardsSeen.push_back(r.rewards.detach().clone());
    terminalSeen.push_back(next.detach().clone());
    terminatedSeen.push_back(r.terminated.clone());
    truncatedSeen.push_back(r.truncated.clone());
    return r;
  }

  void setDifferentiable(bool on) override { differentiable_ = on; }
  bool differentiable() const override { return differentiable_; }
  void detach() override { x_ = x_.detach(); }
  torch::Tensor episodeLength() const override { return steps_; }
  void seed(std::uint64_t s) override { gen_.set_current_seed(s); }

  void setState(const torch::Tensor& x, const torch::Tensor& steps) {
    x_ = x.detach().clone();
    steps_ = steps.clone();
  }
  void setTerminateAt(const torch::Tensor& t) { terminateAt_ = t.clone(); }
  void clearRecords() {
    actionsSeen.clear(), rewardsSeen.clear(), terminalSeen.clear();
    terminatedSeen.clear(), truncatedSeen.clear();
  }

  std::vector<torch::Tensor> actionsSeen, rewardsSeen, terminalSeen, terminatedSeen, truncatedSeen;
  int calls = 0;

 private:
  torch::Tensor draw(int64_t k) { return torch::rand({k, 2}, gen_) * 2 - 1; }

  std::vector<std::string> names_{"r"};
  int n_, maxLength_;
  bool differentiable_ = false, critic_ = false;
  at::Generator gen_;
  torch::Tensor x_, steps_, terminateAt_;
};

}  // namespace diffloco::testing
