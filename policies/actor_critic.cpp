#include "policies/actor_critic.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/zip_archive.h"
#include "policies/error_message.h"

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
  const std::vector<double>& b = config_.squashBound;
  if (b.size() != 1 && static_cast<int64_t>(b.size()) != numActions)
    throw std::invalid_argument("policy.squash_bound: " + std::to_string(b.size()) +
                                " bounds for " + std::to_string(numActions) +
                                " actions (give one bound, or one per action)");
  if (b.size() > 1) {
    bound_ = torch::tensor(b, torch::kDouble);
    invBound_ = 1.0 / bound_;
  }
}

Tensor ActorImpl::sample(const Tensor& mean, at::Generator& gen) const {
  return sample(mean, at::normal(0.0, 1.0, mean.sizes(), gen, mean.options()));
}

Tensor ActorImpl::sample(const Tensor& mean, const Tensor& eps) const {
  return mean + logStd_.exp() * eps;
}

Tensor ActorImpl::squash(const Tensor& a) const {
  if (config_.squash != "tanh") return a;
  // As the export computes: the reciprocal rounded to the action's type, then tanh, then b.
  if (bound_.defined())
    return torch::tanh(a * invBound_.to(a.scalar_type())) * bound_.to(a.scalar_type());
  const double b = config_.squashBound[0];
  return b == 1.0 ? torch::tanh(a) : torch::tanh(a * (1.0 / b)) * b;
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
  // One bound as a number (what every reader of the file takes), several as a list.
  if (c.squashBound.size() == 1)
    archive.write("squash_bound", c10::IValue(c.squashBound[0]));
  else
    archive.write("squash_bound", c10::IValue(c.squashBound));
  archive.write("normalize_observations", c10::IValue(c.normalizeObservations));
  archive.write("normalizer_eps", c10::IValue(c.normalizerEps));
  torch::serialize::OutputArchive weights;
  actor->save(weights);
  archive.write("actor", weights);
}

Actor readActor(torch::serialize::InputArchive& archive) {
  // Every value is checked before it sizes anything: an edited or foreign archive is an error
  // naming the key, not a huge allocation or a network of another shape.
  c10::IValue v;
  auto get = [&](const char* key) -> const c10::IValue& {
    if (!archive.try_read(key, v)) throw std::runtime_error(std::string("no '") + key + "' entry");
    return v;
  };
  auto integer = [&](const char* key, int64_t lo, int64_t hi) {
    const c10::IValue& i = get(key);
    if (!i.isInt() || i.toInt() < lo || i.toInt() > hi)
      throw std::runtime_error(std::string("'") + key + "': expected an integer in [" +
                               std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return i.toInt();
  };
  auto widths = [&](const char* key) {
    const c10::IValue& i = get(key);
    if (!i.isIntList() || i.toIntVector().size() > 32)
      throw std::runtime_error(std::string("'") + key + "': expected up to 32 layer widths");
    std::vector<int> out;
    for (int64_t w : i.toIntVector()) {
      if (w < 1 || w > 65536)
        throw std::runtime_error(std::string("'") + key + "': a width outside [1, 65536]");
      out.push_back(static_cast<int>(w));
    }
    return out;
  };
  auto text = [&](const char* key, const std::vector<std::string>& allowed) {
    const c10::IValue& i = get(key);
    const std::string s = i.isString() ? i.toStringRef() : "";
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      throw std::runtime_error(std::string("'") + key + "': not one of the known values");
    return s;
  };
  auto flag = [&](const char* key) {
    const c10::IValue& i = get(key);
    if (!i.isBool()) throw std::runtime_error(std::string("'") + key + "': expected a boolean");
    return i.toBool();
  };
  auto positive = [&](const char* key) {
    const c10::IValue& i = get(key);
    if (!i.isDouble() || !(i.toDouble() > 0) || !std::isfinite(i.toDouble()))
      throw std::runtime_error(std::string("'") + key + "': expected a positive number");
    return i.toDouble();
  };
  PolicyConfig c;
  const int64_t numObs = integer("num_obs", 1, 100000);
  const int64_t numActions = integer("num_actions", 1, 10000);
  c.actorHidden = widths("actor_hidden");
  c.criticHidden = widths("critic_hidden");
  c.activation = text("activation", {"elu", "relu", "tanh"});
  c.layerNorm = flag("layer_norm");
  c.initStd = positive("init_std");
  c.squash = text("squash", {"none", "tanh"});
  // Absent in files written before the bound existed: plain tanh.
  if (archive.try_read("squash_bound", v)) {
    if (v.isDoubleList()) {
      c.squashBound = v.toDoubleVector();
      if (static_cast<int64_t>(c.squashBound.size()) != numActions ||
          !std::all_of(c.squashBound.begin(), c.squashBound.end(),
                       [](double b) { return b > 0 && std::isfinite(b); }))
        throw std::runtime_error("'squash_bound': expected one positive bound per action");
    } else {
      c.squashBound = {positive("squash_bound")};
    }
  }
  c.normalizeObservations = flag("normalize_observations");
  c.normalizerEps = positive("normalizer_eps");
  int64_t weights = 0, width = numObs;
  for (int h : c.actorHidden) weights += width * h, width = h;
  if (weights + width * numActions > 100000000)
    throw std::runtime_error("an actor of over 1e8 weights: not a policy this program wrote");
  Actor actor(numObs, numActions, c);
  // Read into a second actor, then copied: Module::load takes stored tensors as they are (any
  // shape); copyModule checks every name and shape against the architecture above.
  torch::serialize::InputArchive stored;
  if (!archive.try_read("actor", stored)) throw std::runtime_error("no 'actor' entry");
  Actor loaded(numObs, numActions, c);
  loaded->load(stored);
  copyModule(*loaded, *actor);
  for (const auto& tensors : {actor->named_parameters(), actor->named_buffers()})
    for (const auto& t : tensors)
      if (!torch::isfinite(t.value()).all().item<bool>())
        throw std::runtime_error("actor tensor '" + t.key() + "' has non-finite values");
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
  return loadPolicyBytes(path, io::readCheckedZipArchive(path));
}

LoadedPolicy loadPolicyBytes(const std::string& path, const std::string& bytes) {
  torch::serialize::InputArchive a;
  try {
    a.load_from(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a readable policy file (" + messageOf(e) + ")");
  }
  c10::IValue format;
  if (!a.try_read("format", format) || !format.isString() ||
      format.toStringRef() != "diffloco-policy-1")
    throw std::runtime_error(path + ": not a diffloco policy file (format key missing)");
  LoadedPolicy p;
  try {
    p.actor = readActor(a);
    c10::IValue keys, values;
    if (!a.try_read("metadata_keys", keys) || !a.try_read("metadata_values", values) ||
        !keys.isList() || !values.isList() || keys.toList().size() != values.toList().size())
      throw std::runtime_error("metadata: expected two lists of strings of the same length");
    const auto k = keys.toList(), v = values.toList();
    for (size_t i = 0; i < k.size(); ++i) {
      if (!k.get(i).isString() || !v.get(i).isString())
        throw std::runtime_error("metadata: expected strings");
      p.metadata[k.get(i).toStringRef()] = v.get(i).toStringRef();
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": a damaged policy file (" + messageOf(e) + ")");
  }
  return p;
}

}  // namespace diffloco::policies
