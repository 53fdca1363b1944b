#include "algorithms/shac.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/returns.h"

namespace diffloco::algorithms {

using torch::Tensor;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Rows whose observations are finite and below 1e6 in magnitude: only their values may bootstrap
// (the reference's guard, algorithms.md 1.9, vectorised).
Tensor finiteRows(const Tensor& obs) {
  return obs.detach().abs().amax(-1) < 1e6;
}

}  // namespace

// The critic's fit on its thread (fitCritic): sums over its updates and the updates it left out.
struct Shac::CriticFit {
  double valueLoss = 0, norm = 0, seconds = 0;
  int updates = 0;
  std::vector<std::string> skipped;
};

Shac::Shac(envs::VecEnv& env, const ShacConfig& config, const policies::PolicyConfig& policy,
           std::uint64_t seed, distributed::Communicator comm)
    : Algorithm(env, seed, std::move(comm)), config_(config) {
  env_.setDifferentiable(true);
  torch::manual_seed(deriveSeed(seed, 0));
  actor_ = policies::Actor(env.numObs(), env.numActions(), policy);
  criticNorm_ = makeCriticNormalizer(policy);
  const int64_t criticIn = criticNorm_ ? env.numCriticObs() : env.numObs();
  critic_ = policies::Critic(criticIn, policy);
  target_ = policies::Critic(criticIn, policy);
  policies::copyModule(*critic_, *target_);
  for (auto& p : target_->parameters()) p.set_requires_grad(false);
  targetFlat_ = flattenParameters(target_->parameters());
  const auto& b = config_.adamBetas;
  actorOpt_ = std::make_unique<FlatAdam>(actor_->parameters(), config_.actorLr, b[0], b[1]);
  criticOpt_ = std::make_unique<FlatAdam>(critic_->parameters(), config_.criticLr, b[0], b[1]);
  criticFit_ = std::make_unique<policies::MlpRegression>(
      static_cast<int>(criticIn), policy.criticHidden, policy.activation, policy.layerNorm);
  if (criticFit_->numParameters() != criticOpt_->flat().numel())
    throw std::logic_error("Shac: the critic's parameters do not have the Mlp's layout");
  actorMean_ = std::make_unique<policies::FusedMlp>(
      static_cast<int>(env.numObs()), policy.actorHidden, static_cast<int>(env.numActions()),
      policy.activation, policy.layerNorm);
  targetValue_ = std::make_unique<policies::FusedMlp>(
      static_cast<int>(criticIn), policy.criticHidden, 1, policy.activation, policy.layerNorm);
  // The actor's flat buffer: log_std (the module's own parameter comes first), then its Mlp's.
  if (env.numActions() + actorMean_->numParameters() != actorOpt_->flat().numel() ||
      actor_->logStd().data_ptr<float>() != actorOpt_->flat().data_ptr<float>())
    throw std::logic_error("Shac: the actor's parameters do not have the Mlp's layout");
  broadcast({actorOpt_->flat(), criticOpt_->flat(), targetFlat_});
  criticComm_ = comm_.group("shac_critic");
}

std::vector<std::string> Shac::scalarKeys() const {
  return {"Loss/actor",
          "Loss/value",
          "Loss/learning_rate_actor",
          "Loss/learning_rate_critic",
          "Grad/actor_norm",
          "Grad/critic_norm",
          "Policy/mean_std",
          "Train/value_mean",
          "Perf/actor_backward_time",
          "Perf/critic_time"};
}

Shac::Window Shac::rollout() {
  const int T = config_.horizon;
  const int64_t N = env_.numEnvs();
  const double gamma = config_.gamma;
  env_.detach();  // the window starts from constants: no gradient into earlier iterations
  auto& norm = actor_->normalizer();
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat);
  // The critic's inputs: its own observations where the env has them, else the actor's.
  const bool own = static_cast<bool>(criticNorm_);
  const auto criticInput = [&](const Tensor& raw) { return own ? criticNorm_(raw) : norm(raw); };

  Tensor obs = env_.observations().to(torch::kFloat);
  Tensor criticObs = own ? env_.criticObservations().to(torch::kFloat) : Tensor();
  Tensor loss = torch::zeros({}, f32);
  Tensor rewAcc = torch::zeros({N}, f32);  // discounted rewards of the current segment
  Tensor disc = torch::ones({N}, f32);     // gamma^k, k = steps into the current segment
  std::vector<Tensor> obsBuf, rawBuf, criticBuf, rawCriticBuf, nextObsBuf, rewBuf, doneBuf,
      bootBuf;
  for (int t = 0; t < T; ++t) {
    const Tensor on = norm(obs);
    rawBuf.push_back(obs.detach());
    obsBuf.push_back(on.detach());
    if (own) {
      rawCriticBuf.push_back(criticObs.detach());
      criticBuf.push_back(criticNorm_(criticObs).detach());
    }
    const Tensor mean = actorMean_->forward(
        on, actorOpt_->leaf().narrow(0, env_.numActions(), actorMean_->numParameters()));
    const Tensor a =
        actor_->squash(actor_->sample(mean, actionNoise(mean.size(1), mean.options())));
    envs::StepResult r = env_.step(a);
    episodes_.step(r);
    const Tensor rew = config_.rewardScale == 1 ? r.rewards.to(torch::kFloat)
                                                : r.rewards.to(torch::kFloat) * config_.rewardScale;
    Tensor done = r.terminated | r.truncated;
    const bool last = t == T - 1;
    const bool anyReset = r.extras.resetIds.numel() > 0;

    // The state each env reached (before any reset), normalised; rows that may not bootstrap
    // (terminated, or non-finite) are zeroed before the network so that no NaN enters the graph.
    Tensor term = (own ? r.extras.terminalCriticObs : r.extras.terminalObs).to(torch::kFloat);
    Tensor boot = r.terminated.logical_not();
    const Tensor ok = finiteRows(term);
    if (!ok.all().item<bool>()) {
      term = torch::where(ok.unsqueeze(1), term, torch::zeros_like(term));
      boot = boot & ok;
    }
    const Tensor termN = criticInput(term);
    rewAcc = rewAcc + disc * rew;
    if (last || anyReset) {
      // Segments that end here: resets inside the window, every env at its end.
      const Tensor v =
          targetValue_->forward(termN, targetFlat_).squeeze(-1) * boot.to(torch::kFloat);
      const Tensor segmentReturn = rewAcc + gamma * disc * v;
      if (last) done = torch::ones_like(done);
      loss = loss - (last ? segmentReturn.sum() : (segmentReturn * done.to(torch::kFloat)).sum());
    }
    if (!last && anyReset) {
      disc = torch::where(done, torch::ones_like(disc), disc * gamma);
      rewAcc = torch::where(done, torch::zeros_like(rewAcc), rewAcc);
    } else {
      disc = disc * gamma;
    }
    nextObsBuf.push_back(termN.detach());
    rewBuf.push_back(rew.detach());
    doneBuf.push_back(done);
    bootBuf.push_back(boot);
    obs = r.obs.to(torch::kFloat);
    if (own) criticObs = r.criticObs.to(torch::kFloat);
  }
  Window w;
  w.actorLoss = loss / static_cast<double>(T * worldEnvs());
  w.obs = torch::stack(obsBuf);
  w.rawObs = torch::stack(rawBuf);
  w.criticObs = own ? torch::stack(criticBuf) : w.obs;
  if (own) w.rawCriticObs = torch::stack(rawCriticBuf);
  w.rewards = torch::stack(rewBuf);
  w.dones = torch::stack(doneBuf);
  {
    torch::NoGradGuard noGrad;
    w.nextValues = targetValue_->forward(torch::stack(nextObsBuf), targetFlat_).squeeze(-1) *
                   torch::stack(bootBuf).to(torch::kFloat);
  }
  return w;
}

IterationStats Shac::iterate() {
  const auto start = std::chrono::steady_clock::now();
  IterationStats s;
  const int n = config_.iterations;
  const double lrA =
      scheduledLearningRate(config_.lrSchedule, config_.actorLr, config_.actorLrDecay,
                            config_.actorLrFinal, iteration_, n);
  const double lrC =
      scheduledLearningRate(config_.lrSchedule, config_.criticLr, config_.criticLrDecay,
                            config_.criticLrFinal, iteration_, n);
  actorOpt_->setLr(lrA);
  criticOpt_->setLr(lrC);

  // Actor: back-propagation through the window. Critic: regression on TD(lambda) targets.
  // The two touch disjoint parameters and graphs (the actor's loss reads the frozen target critic),
  // so the critic is fitted on a second thread while the actor's backward pass runs: on two cores
  // this hides most of the critic's time. The results do not depend on the overlap.
  Window w = rollout();
  s.collectionS = seconds(start);
  const auto learnStart = std::chrono::steady_clock::now();
  const Tensor targets =
      lambdaReturns(w.rewards, w.nextValues, w.dones, config_.gamma, config_.lambda).reshape(-1);
  const Tensor x = w.criticObs.reshape({-1, w.criticObs.size(2)});

  CriticFit cf;
  std::exception_ptr criticError;
  std::thread criticThread([&] {
    try {
      cf = fitCritic(x, targets);
    } catch (...) {
      criticError = std::current_exception();
    }
  });
  double actorLoss = 0, actorNorm = std::nan("");
  try {
    actorLoss = updateActor(w, actorNorm, s);
  } catch (...) {
    criticThread.join();  // its collectives fail within the same timeout
    throw;
  }
  w.actorLoss = Tensor();  // frees the graph through the simulator
  const double backwardS = seconds(learnStart);
  criticThread.join();
  if (criticError) std::rethrow_exception(criticError);
  for (const auto& what : cf.skipped) s.skip(what);
  {
    torch::NoGradGuard noGrad;
    targetFlat_.mul_(config_.targetAlpha).add_(criticOpt_->flat(), 1 - config_.targetAlpha);
  }
  updateNormalizer(actor_, w.rawObs);
  if (criticNorm_) updateNormalizer(criticNorm_, w.rawCriticObs);
  ++iteration_;

  s.envSteps = stepsPerIteration();
  s.learnS = seconds(learnStart);
  s.scalars["Perf/actor_backward_time"] = backwardS;
  s.scalars["Perf/critic_time"] = cf.seconds;
  s.scalars["Loss/actor"] = actorLoss;
  s.scalars["Loss/value"] = cf.updates ? cf.valueLoss / cf.updates : std::nan("");
  s.scalars["Loss/learning_rate_actor"] = lrA;
  s.scalars["Loss/learning_rate_critic"] = lrC;
  s.scalars["Grad/actor_norm"] = actorNorm;
  s.scalars["Grad/critic_norm"] = cf.updates ? cf.norm / cf.updates : std::nan("");
  s.scalars["Policy/mean_std"] = actor_->logStd().exp().mean().item<double>();
  s.scalars["Train/value_mean"] = comm_.allReduceSum(targets.sum().item<double>()) /
                                  static_cast<double>(targets.numel() * comm_.size());
  return s;
}

double Shac::updateActor(Window& w, double& norm, IterationStats& s) {
  actorOpt_->zeroGrad();
  double loss = w.actorLoss.item<double>();
  if (std::isfinite(loss)) w.actorLoss.backward();
  // The world's loss is the sum of the ranks' shares.
  allReduceGradients(comm_, {actorOpt_->grad()}, {&loss});
  if (!std::isfinite(loss)) {
    s.skip("actor loss (" + std::to_string(loss) + ")");
    return loss;
  }
  norm = actorOpt_->clipGradNorm(config_.actorGradNorm);
  if (std::isfinite(norm))
    actorOpt_->step();
  else
    s.skip("actor gradient (norm " + std::to_string(norm) + ")");
  return loss;
}

Shac::CriticFit Shac::fitCritic(const Tensor& x, const Tensor& targets) {
  const auto criticStart = std::chrono::steady_clock::now();
  CriticFit cf;
  // Shuffled minibatches (the reference's contiguous, unshuffled time slices give minibatches
  // of a few consecutive steps each; shuffling decorrelates them).
  // Minibatches of the world's samples; this rank computes its rows' share of each loss
  // and the ranks' gradients are summed.
  const Tensor xc = x.to(torch::kFloat).contiguous();
  const Tensor yc = targets.to(torch::kFloat).contiguous();
  const int64_t total = x.size(0) * comm_.size();
  const int64_t mb = std::max<int64_t>(1, total / config_.criticMinibatches);
  for (int e = 0; e < config_.criticIterations; ++e) {
    const Tensor perm = torch::randperm(total, gen_, torch::TensorOptions().dtype(torch::kLong));
    for (int b = 0; b < config_.criticMinibatches; ++b) {
      const int64_t size = std::min(mb, total - b * mb);
      const Tensor idx = localRows(perm.narrow(0, b * mb, size)).to(torch::kLong).contiguous();
      criticOpt_->zeroGrad();
      double lv = criticFit_->lossAndGradient(
          criticOpt_->flat().data_ptr<float>(), xc.data_ptr<float>(), yc.data_ptr<float>(),
          idx.data_ptr<int64_t>(), idx.numel(), static_cast<double>(size),
          criticOpt_->grad().data_ptr<float>());
      allReduceGradients(criticComm_, {criticOpt_->grad()}, {&lv});
      if (!std::isfinite(lv)) {
        cf.skipped.push_back("critic loss (" + std::to_string(lv) + ")");
        continue;
      }
      const double gn = criticOpt_->clipGradNorm(config_.criticGradNorm);
      if (!std::isfinite(gn)) {
        cf.skipped.push_back("critic gradient (norm " + std::to_string(gn) + ")");
        continue;
      }
      criticOpt_->step();
      cf.valueLoss += lv;
      cf.norm += gn;
      ++cf.updates;
    }
  }
  cf.seconds = seconds(criticStart);
  return cf;
}

void Shac::save(torch::serialize::OutputArchive& a) {
  Algorithm::save(a);
  policies::writeActor(a, actor_);
  torch::serialize::OutputArchive c, t;
  critic_->save(c);
  target_->save(t);
  a.write("critic", c);
  a.write("target_critic", t);
  saveCriticNormalizer(a, criticNorm_);
  actorOpt_->save(a, "actor_optimizer");
  criticOpt_->save(a, "critic_optimizer");
}

void Shac::load(torch::serialize::InputArchive& a) {
  Algorithm::load(a);
  loadNetworks(a);
  actorOpt_->load(a, "actor_optimizer");
  criticOpt_->load(a, "critic_optimizer");
}

void Shac::loadNetworks(torch::serialize::InputArchive& a) {
  // Into separate modules, then copied: the live parameters are views into the optimisers'
  // flat buffers, which Module::load would detach.
  policies::copyModule(*policies::readActor(a), *actor_);
  actor_->normalizer()->refresh();
  loadCriticNormalizer(a, criticNorm_);
  const int64_t criticIn = criticNorm_ ? criticNorm_->dim() : actor_->numObs();
  for (auto [key, dst] : {std::pair{"critic", critic_}, std::pair{"target_critic", target_}}) {
    torch::serialize::InputArchive ar;
    a.read(key, ar);
    policies::Critic loaded(criticIn, actor_->config());
    loaded->load(ar);
    policies::copyModule(*loaded, *dst);
  }
}

}  // namespace diffloco::algorithms
