#include "algorithms/ppo.h"

#include <chrono>
#include <cmath>

#include "algorithms/returns.h"

namespace diffloco::algorithms {

using torch::Tensor;

namespace {
double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}
}  // namespace

Ppo::Ppo(envs::VecEnv& env, const PpoConfig& config, const policies::PolicyConfig& policy,
         std::uint64_t seed, distributed::Communicator comm)
    : Algorithm(env, seed, std::move(comm)), config_(config), lr_(config.learningRate) {
  env_.setDifferentiable(false);
  torch::manual_seed(deriveSeed(seed, 0));
  actor_ = policies::Actor(env.numObs(), env.numActions(), policy);
  criticNorm_ = makeCriticNormalizer(policy);
  critic_ = policies::Critic(criticNorm_ ? env.numCriticObs() : env.numObs(), policy);
  const auto& b = config_.adamBetas;
  actorOpt_ = std::make_unique<FlatAdam>(actor_->parameters(), lr_, b[0], b[1]);
  criticOpt_ = std::make_unique<FlatAdam>(critic_->parameters(), lr_, b[0], b[1]);
  broadcast({actorOpt_->flat(), criticOpt_->flat()});
}

std::vector<std::string> Ppo::scalarKeys() const {
  return {"Loss/value", "Loss/surrogate",  "Loss/entropy",     "Loss/learning_rate",
          "Loss/kl",    "Grad/actor_norm", "Grad/critic_norm", "Policy/mean_std"};
}

Ppo::Rollout Ppo::rollout() {
  torch::NoGradGuard noGrad;
  const int T = config_.rollout;
  auto& norm = actor_->normalizer();
  // The critic's inputs: its own observations where the env has them, else the actor's.
  const bool own = static_cast<bool>(criticNorm_);
  const Tensor logStd = actor_->logStd().detach().clone();
  std::vector<Tensor> obsB, rawB, criticB, rawCriticB, actB, logpB, meanB, valB, rewB, doneB,
      nextB;
  Tensor obs = env_.observations().to(torch::kFloat);
  Tensor on = norm(obs);
  Tensor criticObs = own ? env_.criticObservations().to(torch::kFloat) : Tensor();
  Tensor cn = own ? criticNorm_(criticObs) : on;
  Tensor value = critic_->forward(cn);
  for (int t = 0; t < T; ++t) {
    const Tensor mean = actor_->mean(on);
    const Tensor a = actor_->sample(mean, actionNoise(mean.size(1), mean.options()));
    envs::StepResult r = env_.step(actor_->squash(a));
    episodes_.step(r);
    obsB.push_back(on);
    rawB.push_back(obs);
    if (own) {
      criticB.push_back(cn);
      rawCriticB.push_back(criticObs);
    }
    actB.push_back(a);
    meanB.push_back(mean);
    logpB.push_back(policies::gaussianLogProb(a, mean, logStd));
    valB.push_back(value);
    rewB.push_back(r.rewards.to(torch::kFloat));
    const Tensor done = r.terminated | r.truncated;
    doneB.push_back(done);

    obs = r.obs.to(torch::kFloat);
    on = norm(obs);
    if (own) criticObs = r.criticObs.to(torch::kFloat);
    cn = own ? criticNorm_(criticObs) : on;
    value = critic_->forward(cn);
    // Value of the state each env reached: the next input's value where the env goes on, the
    // terminal observation's where it was truncated, 0 where it terminated.
    Tensor next = value * done.logical_not().to(torch::kFloat);
    if (r.truncated.any().item<bool>()) {
      Tensor term = (own ? r.extras.terminalCriticObs : r.extras.terminalObs).to(torch::kFloat);
      const Tensor ok = (term.abs().amax(1) < 1e6) & r.truncated;
      term = torch::where(ok.unsqueeze(1), term, torch::zeros_like(term));
      next = next + critic_->forward(own ? criticNorm_(term) : norm(term)) * ok.to(torch::kFloat);
    }
    nextB.push_back(next);
  }
  Rollout ro;
  ro.obs = torch::stack(obsB);
  ro.rawObs = torch::stack(rawB);
  ro.criticObs = own ? torch::stack(criticB) : ro.obs;
  if (own) ro.rawCriticObs = torch::stack(rawCriticB);
  ro.actions = torch::stack(actB);
  ro.logProbs = torch::stack(logpB);
  ro.means = torch::stack(meanB);
  ro.values = torch::stack(valB);
  ro.rewards = torch::stack(rewB);
  ro.dones = torch::stack(doneB);
  ro.nextValues = torch::stack(nextB);
  ro.logStd = logStd;
  return ro;
}

// The rollout's samples as [T N, .] rows, the advantages normalised, the value targets.
struct Ppo::Samples {
  Tensor obs, criticObs, actions, oldLogp, oldMean, oldValues, returns, advantages;
};

// Sums over an iteration's updates, for the logged means.
struct Ppo::UpdateSums {
  double value = 0, surrogate = 0, entropy = 0, kl = 0, actorNorm = 0, criticNorm = 0;
  int updates = 0, klCount = 0;
};

IterationStats Ppo::iterate() {
  const auto start = std::chrono::steady_clock::now();
  IterationStats s;
  Rollout ro = rollout();
  s.collectionS = seconds(start);
  const auto learnStart = std::chrono::steady_clock::now();

  const Samples d = samples(ro);
  // Minibatches of the world's samples: this rank computes its rows' share of each loss and the
  // ranks' gradients are summed.
  const int64_t total = d.obs.size(0) * comm_.size();
  const int64_t mb = std::max<int64_t>(1, total / config_.minibatches);
  UpdateSums sums;
  for (int e = 0; e < config_.epochs; ++e) {
    // A new permutation every epoch (rsl_rl reuses one for all epochs).
    const Tensor perm = torch::randperm(total, gen_, torch::TensorOptions().dtype(torch::kLong));
    for (int b = 0; b < config_.minibatches; ++b) {
      const int64_t size = std::min(mb, total - b * mb);
      updateMinibatch(d, localRows(perm.narrow(0, b * mb, size)), size, ro.logStd, sums, s);
    }
  }
  updateNormalizer(actor_, ro.rawObs);
  if (criticNorm_) updateNormalizer(criticNorm_, ro.rawCriticObs);
  ++iteration_;

  const double nan = std::nan("");
  const int updates = sums.updates;
  s.envSteps = stepsPerIteration();
  s.learnS = seconds(learnStart);
  s.scalars["Loss/value"] = updates ? sums.value / updates : nan;
  s.scalars["Loss/surrogate"] = updates ? sums.surrogate / updates : nan;
  s.scalars["Loss/entropy"] = updates ? sums.entropy / updates : nan;
  s.scalars["Loss/learning_rate"] = lr_;
  s.scalars["Loss/kl"] = sums.klCount ? sums.kl / sums.klCount : nan;
  s.scalars["Grad/actor_norm"] = updates ? sums.actorNorm / updates : nan;
  s.scalars["Grad/critic_norm"] = updates ? sums.criticNorm / updates : nan;
  s.scalars["Policy/mean_std"] = actor_->logStd().exp().mean().item<double>();
  return s;
}

Ppo::Samples Ppo::samples(const Rollout& ro) {
  const Tensor adv =
      gaeAdvantages(ro.rewards, ro.values, ro.nextValues, ro.dones, config_.gamma, config_.lambda);
  Samples d;
  d.returns = (adv + ro.values).reshape(-1);
  // Normalised with the world's mean and (unbiased) deviation.
  Tensor advN = adv.reshape(-1);
  const double n = static_cast<double>(advN.numel() * comm_.size());
  const double advMean = comm_.allReduceSum(advN.sum().item<double>()) / n;
  const double advVar =
      comm_.allReduceSum((advN - advMean).square().sum().item<double>()) / std::max(1.0, n - 1);
  d.advantages = (advN - advMean) / (std::sqrt(advVar) + 1e-8);
  const int64_t O = ro.obs.size(2), A = ro.actions.size(2);
  d.obs = ro.obs.reshape({-1, O});
  d.criticObs = ro.criticObs.reshape({-1, ro.criticObs.size(2)});
  d.actions = ro.actions.reshape({-1, A});
  d.oldLogp = ro.logProbs.reshape(-1);
  d.oldMean = ro.means.reshape({-1, A});
  d.oldValues = ro.values.reshape(-1);
  return d;
}

void Ppo::adaptLearningRate(const Tensor& oldMean, const Tensor& oldLogStd, const Tensor& mean,
                            int64_t size, UpdateSums& sums) {
  // rsl_rl: KL(old || new) of this minibatch, before the step, decides the rate.
  torch::NoGradGuard noGrad;
  const double kl = comm_.allReduceSum(policies::gaussianKl(oldMean, oldLogStd, mean.detach(),
                                                            actor_->logStd().detach())
                                           .sum()
                                           .item<double>()) /
                    static_cast<double>(size);
  if (std::isfinite(kl)) {
    if (kl > 2 * config_.desiredKl)
      lr_ = std::max(1e-5, lr_ / 1.5);
    else if (kl < config_.desiredKl / 2 && kl > 0)
      lr_ = std::min(1e-2, lr_ * 1.5);
    sums.kl += kl;
    ++sums.klCount;
  }
  actorOpt_->setLr(lr_);
  criticOpt_->setLr(lr_);
}

void Ppo::updateMinibatch(const Samples& d, const Tensor& idx, int64_t size,
                          const Tensor& oldLogStd, UpdateSums& sums, IterationStats& s) {
  const double eps = config_.clip;
  const Tensor o = d.obs.index_select(0, idx);
  const Tensor mean = actor_->mean(o);
  const Tensor& logStd = actor_->logStd();
  const bool actorToo = iteration_ >= config_.criticWarmupIterations;
  if (config_.schedule == "adaptive" && actorToo)
    adaptLearningRate(d.oldMean.index_select(0, idx), oldLogStd, mean, size, sums);

  const Tensor logp = policies::gaussianLogProb(d.actions.index_select(0, idx), mean, logStd);
  const Tensor a = d.advantages.index_select(0, idx);
  const Tensor ratio = (logp - d.oldLogp.index_select(0, idx)).exp();
  const Tensor surr =
      torch::max(-a * ratio, -a * ratio.clamp(1 - eps, 1 + eps)).sum() / static_cast<double>(size);
  const Tensor v = critic_->forward(d.criticObs.index_select(0, idx));
  const Tensor ret = d.returns.index_select(0, idx);
  Tensor valueLoss;
  if (config_.clippedValueLoss) {
    const Tensor vOld = d.oldValues.index_select(0, idx);
    const Tensor vClip = vOld + (v - vOld).clamp(-eps, eps);
    valueLoss = torch::max((v - ret).square(), (vClip - ret).square()).sum();
  } else {
    valueLoss = (v - ret).square().sum();
  }
  valueLoss = valueLoss / static_cast<double>(size);
  // The entropy term reads no samples: each rank adds its 1/W share.
  const Tensor entropy = policies::gaussianEntropy(logStd);
  const Tensor loss =
      surr + config_.valueLossCoef * valueLoss - config_.entropyCoef / comm_.size() * entropy;

  actorOpt_->zeroGrad();
  criticOpt_->zeroGrad();
  double lv = loss.item<double>();
  if (std::isfinite(lv)) loss.backward();
  double surrV = surr.item<double>(), valueV = valueLoss.item<double>();
  allReduceGradients(comm_, {actorOpt_->grad(), criticOpt_->grad()}, {&lv, &surrV, &valueV});
  if (!std::isfinite(lv)) {
    s.skip("loss (" + std::to_string(lv) + ")");
    return;
  }
  const double an = actorOpt_->clipGradNorm(config_.maxGradNorm);
  const double cn = criticOpt_->clipGradNorm(config_.maxGradNorm);
  if (!std::isfinite(an) || !std::isfinite(cn)) {
    s.skip("gradient (actor norm " + std::to_string(an) + ", critic norm " + std::to_string(cn) +
           ")");
    return;
  }
  if (actorToo) actorOpt_->step();
  criticOpt_->step();
  sums.value += valueV;
  sums.surrogate += surrV;
  sums.entropy += entropy.item<double>();
  sums.actorNorm += an;
  sums.criticNorm += cn;
  ++sums.updates;
}

void Ppo::save(torch::serialize::OutputArchive& a) {
  Algorithm::save(a);
  policies::writeActor(a, actor_);
  torch::serialize::OutputArchive c;
  critic_->save(c);
  a.write("critic", c);
  saveCriticNormalizer(a, criticNorm_);
  actorOpt_->save(a, "actor_optimizer");
  criticOpt_->save(a, "critic_optimizer");
  a.write("learning_rate", c10::IValue(lr_));
}

void Ppo::load(torch::serialize::InputArchive& a) {
  Algorithm::load(a);
  loadNetworks(a);
  actorOpt_->load(a, "actor_optimizer");
  criticOpt_->load(a, "critic_optimizer");
  c10::IValue lr;
  a.read("learning_rate", lr);
  lr_ = lr.toDouble();  // the adaptive rate goes on where it was (rsl_rl #221)
  actorOpt_->setLr(lr_);
  criticOpt_->setLr(lr_);
}

void Ppo::loadNetworks(torch::serialize::InputArchive& a) {
  // Into separate modules, then copied: the live parameters are views into the optimisers'
  // flat buffers, which Module::load would detach.
  policies::copyModule(*policies::readActor(a), *actor_);
  actor_->normalizer()->refresh();
  loadCriticNormalizer(a, criticNorm_);
  torch::serialize::InputArchive c;
  a.read("critic", c);
  policies::Critic loaded(criticNorm_ ? criticNorm_->dim() : actor_->numObs(), actor_->config());
  loaded->load(c);
  policies::copyModule(*loaded, *critic_);
}

}  // namespace diffloco::algorithms
