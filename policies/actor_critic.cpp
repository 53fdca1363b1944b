#include "policies/actor_critic.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "io/atomic_file.h"

namespace diffloco::policies {

using torch::Tensor;

MlpImpl::MlpImpl(int64_t in, const std::vector<int>& hidden, int64_t out,
                 const std::string& activation, bool layerNorm) {
  int64_t width = in;
  for (int h : hidden) {
    net_->push_back(torch::nn::Linear(width, h));
    if (activation == "elu")
      net_->push_back(torch::nn::ELU());
    else if (activation == "relu")
      net_->push_back(torch::nn::ReLU());
    else if (activation == "tanh")
      net_->push_back(torch::nn::Tanh());
    else
      throw std::invalid_argument("Mlp: unknown activation '" + activation + "'");
    if (layerNorm) net_->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({h})));
    width = h;
  }
  net_->push_back(torch::nn::Linear(width, out));
  register_module("net", net_);
}

ActorImpl::ActorImpl(int64_t numObs, int64_t numActions, PolicyConfig config)
    : numObs_(numObs), numActions_(numActions), config_(std::move(config)) {
  normalizer_ = register_module(
      "normalizer",
      ObservationNormalizer(numObs, config_.normalizerEps, config_.normalizeObservations));
  mlp_ = register_module("mlp", Mlp(numObs, config_.actorHidden, numActions, config_.activation,
                                    config_.layerNorm));
  logStd_ = register_parameter("log_std",
                               torch::full({numActions}, std::log(config_.initStd)));
}

Tensor ActorImpl::sample(const Tensor& mean, at::Generator& gen) const {
  return sample(mean, at::normal(0.0, 1.0, mean.sizes(), gen, mean.options()));
}

Tensor ActorImpl::sample(const Tensor& mean, const Tensor& eps) const {
  return mean + logStd_.exp() * eps;
}

Tensor ActorImpl::squash(const Tensor& a) const {
  return config_.squash == "tanh" ? torch::tanh(a) : a;
}

CriticImpl::CriticImpl(int64_t numObs, const PolicyConfig& config) {
  mlp_ = register_module("mlp", Mlp(numObs, config.criticHidden, 1, config.activation,
                                    config.layerNorm));
}

void copyModule(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard noGrad;
  auto copy = [](const torch::OrderedDict<std::string, Tensor>& src,
                 torch::OrderedDict<std::string, Tensor> dst) {
    if (src.size() != dst.size())
      throw std::runtime_error("copyModule: the networks differ in their number of tensors (" +
                               std::to_string(src.size()) + " vs " + std::to_string(dst.size()) +
                               "): another architecture?");
    for (const auto& p : src) {
      Tensor* d = dst.find(p.key());
      if (!d || d->sizes() != p.value().sizes())
        throw std::runtime_error("copyModule: tensor '" + p.key() +
                                 "' is missing or has another shape: another architecture?");
      d->copy_(p.value());
    }
  };
  copy(from.named_parameters(), to.named_parameters());
  copy(from.named_buffers(), to.named_buffers());
}

Tensor gaussianLogProb(const Tensor& x, const Tensor& mean, const Tensor& logStd) {
  static const double kLogSqrt2Pi = 0.5 * std::log(2 * M_PI);
  return (-0.5 * ((x - mean) * (-logStd).exp()).square() - logStd - kLogSqrt2Pi).sum(-1);
}

Tensor gaussianEntropy(const Tensor& logStd) {
  static const double k = 0.5 + 0.5 * std::log(2 * M_PI);
  return (logStd + k).sum(-1);
}

Tensor gaussianKl(const Tensor& meanOld, const Tensor& logStdOld, const Tensor& meanNew,
                  const Tensor& logStdNew) {
  const Tensor varOld = (2 * logStdOld).exp(), varNew = (2 * logStdNew).exp();
  return (logStdNew - logStdOld + (varOld + (meanOld - meanNew).square()) / (2 * varNew) - 0.5)
      .sum(-1);
}

// ---------------------------------------------------------------------------------------------
// Files.

void writeActor(torch::serialize::OutputArchive& archive, Actor& actor) {
  const PolicyConfig& c = actor->config();
  auto ints = [](const std::vector<int>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  archive.write("num_obs", c10::IValue(actor->numObs()));
  archive.write("num_actions", c10::IValue(actor->numActions()));
  archive.write("actor_hidden", c10::IValue(ints(c.actorHidden)));
  archive.write("critic_hidden", c10::IValue(ints(c.criticHidden)));
  archive.write("activation", c10::IValue(c.activation));
  archive.write("layer_norm", c10::IValue(c.layerNorm));
  archive.write("init_std", c10::IValue(c.initStd));
  archive.write("squash", c10::IValue(c.squash));
  archive.write("normalize_observations", c10::IValue(c.normalizeObservations));
  archive.write("normalizer_eps", c10::IValue(c.normalizerEps));
  torch::serialize::OutputArchive weights;
  actor->save(weights);
  archive.write("actor", weights);
}

Actor readActor(torch::serialize::InputArchive& archive) {
  c10::IValue v;
  auto get = [&](const char* key) -> const c10::IValue& {
    archive.read(key, v);
    return v;
  };
  auto ints = [](const c10::IValue& i) {
    const auto l = i.toIntVector();
    return std::vector<int>(l.begin(), l.end());
  };
  PolicyConfig c;
  const int64_t numObs = get("num_obs").toInt();
  const int64_t numActions = get("num_actions").toInt();
  c.actorHidden = ints(get("actor_hidden"));
  c.criticHidden = ints(get("critic_hidden"));
  c.activation = get("activation").toStringRef();
  c.layerNorm = get("layer_norm").toBool();
  c.initStd = get("init_std").toDouble();
  c.squash = get("squash").toStringRef();
  c.normalizeObservations = get("normalize_observations").toBool();
  c.normalizerEps = get("normalizer_eps").toDouble();
  Actor actor(numObs, numActions, c);
  torch::serialize::InputArchive weights;
  archive.read("actor", weights);
  actor->load(weights);
  actor->normalizer()->refresh();
  return actor;
}

void savePolicy(const std::string& path, Actor& actor,
                const std::map<std::string, std::string>& metadata) {
  torch::serialize::OutputArchive a;
  a.write("format", c10::IValue(std::string("diffloco-policy-1")));
  writeActor(a, actor);
  std::vector<std::string> keys, values;
  for (const auto& [k, v] : metadata) keys.push_back(k), values.push_back(v);
  a.write("metadata_keys", c10::IValue(c10::List<std::string>(keys)));
  a.write("metadata_values", c10::IValue(c10::List<std::string>(values)));
  io::writeAtomically(path, [&](const std::string& tmp) { a.save_to(tmp); });
}

LoadedPolicy loadPolicy(const std::string& path) {
  torch::serialize::InputArchive a;
  try {
    a.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a readable policy file (" + e.what_without_backtrace() +
                             ")");
  }
  c10::IValue format;
  if (!a.try_read("format", format) || format.toStringRef() != "diffloco-policy-1")
    throw std::runtime_error(path + ": not a diffloco policy file (format key missing)");
  LoadedPolicy p;
  p.actor = readActor(a);
  c10::IValue keys, values;
  a.read("metadata_keys", keys);
  a.read("metadata_values", values);
  const auto k = keys.toList(), v = values.toList();
  for (size_t i = 0; i < k.size(); ++i) p.metadata[k.get(i).toStringRef()] = v.get(i).toStringRef();
  return p;
}

}  // namespace diffloco::policies
