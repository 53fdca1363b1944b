// The actor and the critic (locomotion paper, Tables 6 and 9: MLPs (128, 64, 32) and (64, 64),
// ELU), the Gaussian helpers the algorithms share, and the policy file.
//
// The actor owns the observation normaliser (policies/normalizer.h), so that whatever saves or
// exports the actor carries it (the normaliser forgotten at export is a recurring bug elsewhere,
// reference/ecosystem.md 5.5). The critic takes observations already normalised by the actor's
// normaliser. The Gaussian has a learned state-independent log-std: a std parameter itself can
// cross zero (rsl_rl #33/#124), its logarithm cannot.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "policies/config.h"
#include "policies/normalizer.h"

namespace diffloco::policies {

// Linear -> activation [-> LayerNorm] for each hidden width, then a Linear output layer. Default
// PyTorch initialisation (Kaiming-uniform, a = sqrt 5), as in rsl_rl and SHAC's actor.
class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t in, const std::vector<int>& hidden, int64_t out, const std::string& activation,
          bool layerNorm);
  torch::Tensor forward(const torch::Tensor& x) { return net_->forward(x); }

 private:
  torch::nn::Sequential net_;
};
TORCH_MODULE(Mlp);

class ActorImpl : public torch::nn::Module {
 public:
  ActorImpl(int64_t numObs, int64_t numActions, PolicyConfig config);

  torch::Tensor normalize(const torch::Tensor& obs) { return normalizer_->forward(obs); }
  // Mean of the Gaussian (before squashing) for normalised observations.
  torch::Tensor mean(const torch::Tensor& normObs) { return mlp_->forward(normObs); }
  const torch::Tensor& logStd() const { return logStd_; }  // [numActions]
  // Reparameterised sample mean + exp(logStd) * eps, eps ~ N(0, 1) drawn from gen.
  torch::Tensor sample(const torch::Tensor& mean, at::Generator& gen) const;
  // The same with the standard normal draws given: mean + exp(logStd) * eps.
  torch::Tensor sample(const torch::Tensor& mean, const torch::Tensor& eps) const;
  // The action handed to the env: tanh(a) or a (PolicyConfig::squash).
  torch::Tensor squash(const torch::Tensor& a) const;
  // Deterministic action for raw observations: squash(mean(normalize(obs))).
  torch::Tensor forward(const torch::Tensor& obs) { return squash(mean(normalize(obs))); }

  ObservationNormalizer& normalizer() { return normalizer_; }
  const PolicyConfig& config() const { return config_; }
  int64_t numObs() const { return numObs_; }
  int64_t numActions() const { return numActions_; }

 private:
  int64_t numObs_, numActions_;
  PolicyConfig config_;
  ObservationNormalizer normalizer_{nullptr};
  Mlp mlp_{nullptr};
  torch::Tensor logStd_;
  // Per-action tanh bounds and their reciprocals (double; not parameters or buffers, so the
  // files keep their entries): undefined with one bound for every action.
  torch::Tensor bound_, invBound_;
};
TORCH_MODULE(Actor);

class CriticImpl : public torch::nn::Module {
 public:
  CriticImpl(int64_t numObs, const PolicyConfig& config);
  // Values [...] for normalised observations [..., numObs].
  torch::Tensor forward(const torch::Tensor& normObs) { return mlp_->forward(normObs).squeeze(-1); }

 private:
  Mlp mlp_{nullptr};
};
TORCH_MODULE(Critic);

// Copies the parameters and buffers of `from` into `to` (same architecture), without autograd.
void copyModule(const torch::nn::Module& from, torch::nn::Module& to);

// Diagonal Gaussian with a log-std broadcast against the mean; sums over the last dimension.
torch::Tensor gaussianLogProb(const torch::Tensor& x, const torch::Tensor& mean,
                              const torch::Tensor& logStd);
torch::Tensor gaussianEntropy(const torch::Tensor& logStd);
// KL(old || new), closed form.
torch::Tensor gaussianKl(const torch::Tensor& meanOld, const torch::Tensor& logStdOld,
                         const torch::Tensor& meanNew, const torch::Tensor& logStdNew);

// The policy file (policy.pt, a torch archive): the actor with its normaliser, the settings needed
// to rebuild it, and free-form metadata (task, observation layout, ...). Written atomically.
void savePolicy(const std::string& path, Actor& actor,
                const std::map<std::string, std::string>& metadata = {});
struct LoadedPolicy {
  Actor actor{nullptr};
  std::map<std::string, std::string> metadata;
};
// The file is checked (io/zip_archive.h) before LibTorch reads it; errors name it.
LoadedPolicy loadPolicy(const std::string& path);
// The same for a file's bytes already read and checked (io::readCheckedZipArchive; `path` names
// it in errors).
LoadedPolicy loadPolicyBytes(const std::string& path, const std::string& bytes);

// An actor written into / read from an archive with the settings that rebuild it (checkpoints use
// this too).
void writeActor(torch::serialize::OutputArchive& archive, Actor& actor);
Actor readActor(torch::serialize::InputArchive& archive);

}  // namespace diffloco::policies
