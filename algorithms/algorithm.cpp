#include "algorithms/algorithm.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <numeric>

namespace diffloco::algorithms {

using torch::Tensor;

namespace {
const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);
const double kNaN = std::numeric_limits<double>::quiet_NaN();

double mean(const std::deque<double>& d) {
  return d.empty() ? kNaN : std::accumulate(d.begin(), d.end(), 0.0) / d.size();
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// EpisodeTracker

EpisodeTracker::EpisodeTracker(int numEnvs, size_t window)
    : window_(window), ret_(torch::zeros({numEnvs}, kF64)), len_(torch::zeros({numEnvs}, kF64)) {}

void EpisodeTracker::step(const envs::StepResult& r) {
  ret_ += r.rewards.detach().to(torch::kDouble);
  len_ += 1;
  const Tensor& ids = r.extras.resetIds;
  if (ids.defined() && ids.numel() > 0) {
    const Tensor idc = ids.contiguous();
    const auto* id = idc.data_ptr<int64_t>();
    const double* ret = ret_.data_ptr<double>();
    const double* len = len_.data_ptr<double>();
    for (int64_t i = 0; i < idc.numel(); ++i) {
      returns_.push_back(ret[id[i]]);
      lengths_.push_back(len[id[i]]);
      if (returns_.size() > window_) returns_.pop_front(), lengths_.pop_front();
    }
    ret_.index_fill_(0, idc, 0.0);
    len_.index_fill_(0, idc, 0.0);
    finished_ += static_cast<double>(idc.numel());
  }
  const auto& log = r.extras.log;
  auto count = log.find("Episode/count");
  if (count != log.end() && count->second > 0) {
    for (const auto& [k, v] : log)
      if (k.rfind("Episode/", 0) == 0 && k != "Episode/count") logSums_[k] += v * count->second;
    logCount_ += count->second;
  }
  auto fails = log.find("Env/sim_failures");
  if (fails != log.end()) simFailures_ += fails->second;
}

double EpisodeTracker::meanReturn() const {
  return mean(returns_);
}
double EpisodeTracker::meanLength() const {
  return mean(lengths_);
}

std::map<std::string, double> EpisodeTracker::takeIterationLogs() {
  std::map<std::string, double> out;
  for (const auto& [k, v] : logSums_) out[k] = v / logCount_;
  out["Env/sim_failures"] = simFailures_;
  out["Train/episodes"] = finished_;
  out["Episode/count"] = logCount_;
  logSums_.clear();
  logCount_ = simFailures_ = finished_ = 0;
  return out;
}

void EpisodeTracker::save(torch::serialize::OutputArchive& a) const {
  a.write("episodes/ret", ret_);
  a.write("episodes/len", len_);
  a.write("episodes/returns",
          torch::tensor(std::vector<double>(returns_.begin(), returns_.end()), kF64));
  a.write("episodes/lengths",
          torch::tensor(std::vector<double>(lengths_.begin(), lengths_.end()), kF64));
}

void EpisodeTracker::load(torch::serialize::InputArchive& a) {
  Tensor r, l;
  a.read("episodes/ret", ret_);
  a.read("episodes/len", len_);
  a.read("episodes/returns", r);
  a.read("episodes/lengths", l);
  returns_.assign(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
  lengths_.assign(l.data_ptr<double>(), l.data_ptr<double>() + l.numel());
  logSums_.clear();
  logCount_ = simFailures_ = finished_ = 0;
}

// ---------------------------------------------------------------------------------------------
// Algorithm

Algorithm::Algorithm(envs::VecEnv& env, std::uint64_t seed, distributed::Communicator comm)
    : env_(env),
      comm_(std::move(comm)),
      gen_(at::make_generator<at::CPUGeneratorImpl>(deriveSeed(seed, 1))),
      episodes_(env.numEnvs()) {}

Tensor Algorithm::actionNoise(int64_t n, const torch::TensorOptions& options) {
  const Tensor all = at::normal(0.0, 1.0, {worldEnvs(), n}, gen_, options);
  return comm_.size() == 1 ? all : all.narrow(0, firstEnv(), env_.numEnvs());
}

Tensor Algorithm::localRows(const Tensor& worldIndices) const {
  if (comm_.size() == 1) return worldIndices;
  const int64_t w = worldEnvs(), n = env_.numEnvs();
  const Tensor t = worldIndices.div(w, "floor");
  const Tensor e = worldIndices.remainder(w) - firstEnv();
  const Tensor mine = (e >= 0) & (e < n);
  return (t * n + e).masked_select(mine);
}

void Algorithm::broadcast(std::initializer_list<Tensor> tensors) const {
  torch::NoGradGuard noGrad;
  for (Tensor t : tensors) comm_.broadcast(t);
}

void Algorithm::updateNormalizer(policies::Actor& actor, const Tensor& rawObs) const {
  updateNormalizer(actor->normalizer(), rawObs);
}

policies::ObservationNormalizer Algorithm::makeCriticNormalizer(
    const policies::PolicyConfig& policy) const {
  if (env_.numCriticObs() == 0) return nullptr;
  return policies::ObservationNormalizer(env_.numCriticObs(), 1e-5, policy.normalizeObservations);
}

void Algorithm::saveCriticNormalizer(torch::serialize::OutputArchive& a,
                                     policies::ObservationNormalizer& norm) {
  if (!norm) return;
  torch::serialize::OutputArchive n;
  norm->save(n);
  a.write("critic_normalizer", n);
}

void Algorithm::loadCriticNormalizer(torch::serialize::InputArchive& a,
                                     policies::ObservationNormalizer& norm) {
  torch::serialize::InputArchive n;
  const bool has = a.try_read("critic_normalizer", n);
  if (has != static_cast<bool>(norm))
    throw std::runtime_error(
        has ? "the checkpoint's critic reads its own critic_observations, this task's critic the "
              "policy's observations"
            : "the checkpoint's critic reads the policy's observations, this task's critic its "
              "own critic_observations (start from its policy file to keep only the actor)");
  if (!has) return;
  policies::ObservationNormalizer loaded(norm->dim(), norm->eps(), norm->enabled());
  loaded->load(n);
  if (loaded->dim() != norm->dim())
    throw std::runtime_error("the checkpoint's critic reads " + std::to_string(loaded->dim()) +
                             " observations, this task's critic " + std::to_string(norm->dim()));
  policies::copyModule(*loaded, *norm);
  norm->refresh();
}

void Algorithm::updateNormalizer(policies::ObservationNormalizer& norm, const Tensor& rawObs) const {
  if (!norm->enabled()) return;
  policies::Moments m = policies::Moments::of(rawObs, norm->dim());
  if (comm_.size() > 1) {
    // [count, mean, var] of every rank, merged in rank order: the same result on every rank.
    const Tensor packed = torch::cat({torch::full({1}, m.count, kF64), m.mean, m.var});
    const auto all = comm_.allGather(packed);
    const int64_t d = norm->dim();
    m = policies::Moments{};
    for (const Tensor& p : all)
      m.merge({p[0].item<double>(), p.narrow(0, 1, d), p.narrow(0, 1 + d, d)});
  }
  norm->update(m);
}

void Algorithm::save(torch::serialize::OutputArchive& a) {
  a.write("algorithm", c10::IValue(name()));
  a.write("iteration", c10::IValue(static_cast<int64_t>(iteration_)));
  a.write("generator", gen_.get_state());
  episodes_.save(a);
}

void Algorithm::checkAlgorithm(torch::serialize::InputArchive& a) const {
  c10::IValue v;
  a.read("algorithm", v);
  if (v.toStringRef() != name())
    throw std::runtime_error("checkpoint of algorithm '" + v.toStringRef() + "', not '" + name() +
                             "'");
}

void Algorithm::loadWarmStart(torch::serialize::InputArchive& a) {
  checkAlgorithm(a);
  loadNetworks(a);
}

void Algorithm::load(torch::serialize::InputArchive& a) {
  checkAlgorithm(a);
  c10::IValue v;
  a.read("iteration", v);
  iteration_ = static_cast<int>(v.toInt());
  Tensor state;
  a.read("generator", state);
  gen_.set_state(state);
  episodes_.load(a);
}

// ---------------------------------------------------------------------------------------------
// Helpers

double scheduledLearningRate(const std::string& schedule, double lr0, double decay, double lrFinal,
                             int i, int n) {
  if (schedule == "exponential") return lr0 * std::pow(decay, i);
  const double w = n <= 1 ? 0.0 : i / (n - 1.0);
  if (schedule == "linear") return (1 - w) * lr0 + w * lrFinal;
  if (schedule == "cosine") return lrFinal + (lr0 - lrFinal) * 0.5 * (1 + std::cos(M_PI * w));
  return lr0;
}

void allReduceGradients(const distributed::Communicator& c, std::initializer_list<Tensor> grads,
                        std::initializer_list<double*> scalars) {
  if (c.size() == 1) return;
  torch::NoGradGuard noGrad;
  std::vector<Tensor> parts(grads.begin(), grads.end());
  std::vector<float> values;
  for (const double* x : scalars) values.push_back(static_cast<float>(*x));
  parts.push_back(torch::tensor(values, torch::kFloat));
  Tensor packed = torch::cat(parts);
  c.allReduceSum(packed);
  int64_t at = 0;
  for (Tensor g : grads) {
    g.copy_(packed.narrow(0, at, g.numel()));
    at += g.numel();
  }
  for (double* x : scalars) *x = packed[at++].item<double>();
}

Tensor flattenParameters(const std::vector<Tensor>& params) {
  torch::NoGradGuard noGrad;
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  Tensor flat = torch::empty({n}, params.at(0).options().requires_grad(false));
  int64_t at = 0;
  for (auto p : params) {
    const int64_t k = p.numel();
    Tensor view = flat.narrow(0, at, k);
    view.copy_(p.detach().reshape(-1));
    p.set_data(view.view(p.sizes()));
    at += k;
  }
  return flat;
}

FlatAdam::FlatAdam(const std::vector<Tensor>& params, double lr, double beta1, double beta2,
                   double eps)
    : lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
  flat_ = flattenParameters(params);
  grad_ = torch::zeros_like(flat_);
  m_ = torch::zeros_like(flat_);
  v_ = torch::zeros_like(flat_);
  leaf_ = flat_.detach().requires_grad_(true);
  leaf_.mutable_grad() = grad_;
  int64_t at = 0;
  for (auto p : params) {
    const int64_t k = p.numel();
    p.mutable_grad() = grad_.narrow(0, at, k).view(p.sizes());
    at += k;
  }
}

double FlatAdam::clipGradNorm(double maxNorm) {
  torch::NoGradGuard noGrad;
  const double norm = grad_.norm().item<double>();
  if (std::isfinite(norm) && maxNorm > 0 && norm > maxNorm) grad_.mul_(maxNorm / (norm + 1e-6));
  return norm;
}

void FlatAdam::step() {
  torch::NoGradGuard noGrad;
  ++steps_;
  const double bc1 = 1 - std::pow(beta1_, static_cast<double>(steps_));
  const double bc2 = 1 - std::pow(beta2_, static_cast<double>(steps_));
  m_.mul_(beta1_).add_(grad_, 1 - beta1_);
  v_.mul_(beta2_).addcmul_(grad_, grad_, 1 - beta2_);
  const Tensor denom = (v_.sqrt() / std::sqrt(bc2)).add_(eps_);
  flat_.addcdiv_(m_, denom, -lr_ / bc1);
}

void FlatAdam::save(torch::serialize::OutputArchive& a, const std::string& prefix) const {
  a.write(prefix + "/exp_avg", m_);
  a.write(prefix + "/exp_avg_sq", v_);
  a.write(prefix + "/steps", c10::IValue(steps_));
  a.write(prefix + "/lr", c10::IValue(lr_));
}

void FlatAdam::load(torch::serialize::InputArchive& a, const std::string& prefix) {
  torch::NoGradGuard noGrad;
  Tensor m, v;
  c10::IValue steps, lr;
  a.read(prefix + "/exp_avg", m);
  a.read(prefix + "/exp_avg_sq", v);
  a.read(prefix + "/steps", steps);
  a.read(prefix + "/lr", lr);
  if (m.numel() != m_.numel())
    throw std::runtime_error("optimiser state of " + std::to_string(m.numel()) +
                             " parameters, the network has " + std::to_string(m_.numel()));
  m_.copy_(m);
  v_.copy_(v);
  steps_ = steps.toInt();
  lr_ = lr.toDouble();
}

}  // namespace diffloco::algorithms
