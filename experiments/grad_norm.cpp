#include "experiments/grad_norm.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "envs/locomotion_env.h"
#include "io/atomic_file.h"
#include "policies/actor_critic.h"
#include "runs/gnuplot.h"

namespace diffloco::experiments {

using torch::Tensor;

policies::Actor makeGradNormActor(int numObs, int numActions, std::uint64_t seed) {
  policies::PolicyConfig pc;  // the actor of configs/*_shac.yaml
  pc.actorHidden = {128, 64, 32};
  pc.activation = "elu";
  pc.layerNorm = true;
  pc.squash = "tanh";
  pc.normalizeObservations = true;
  torch::manual_seed(seed);
  policies::Actor actor(numObs, numActions, pc);
  actor->to(torch::kDouble);
  actor->eval();
  return actor;
}

std::vector<double> windowGradNorms(envs::LocomotionEnv& env, policies::Actor& actor, int horizon,
                                    std::int64_t* resets) {
  if (!env.differentiable()) throw std::invalid_argument("windowGradNorms: env not differentiable");
  if (horizon < 1) throw std::invalid_argument("windowGradNorms: horizon must be >= 1");
  env.detach();
  Tensor obs = env.observations();
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  std::vector<Tensor> deltas;
  Tensor total = torch::zeros({}, f64);
  std::int64_t nReset = 0;
  for (int t = 0; t < horizon; ++t) {
    Tensor delta = torch::zeros({env.numEnvs(), env.numActions()}, f64).requires_grad_();
    deltas.push_back(delta);
    const Tensor a = actor->forward(obs.to(torch::kDouble)) + delta;
    const envs::StepResult r = env.step(a);
    total = total + r.rewards.to(torch::kDouble).sum();
    nReset += r.extras.resetIds.numel();
    obs = r.obs;
  }
  std::vector<Tensor> grads =
      torch::autograd::grad({total}, deltas, /*grad_outputs=*/{}, /*retain_graph=*/false,
                            /*create_graph=*/false, /*allow_unused=*/true);
  Tensor sq = torch::zeros({env.numEnvs()}, f64);
  for (const Tensor& g : grads)
    if (g.defined()) sq = sq + g.square().sum(-1);
  const Tensor norms = sq.sqrt().contiguous();
  env.detach();
  if (resets) *resets = nReset;
  return std::vector<double>(norms.data_ptr<double>(), norms.data_ptr<double>() + norms.numel());
}

GradNormResult runGradNorm(const GradNormOptions& o) {
  if (o.envs < 1 || o.windows < 1) throw std::invalid_argument("grad-norm: envs, windows >= 1");
  GradNormResult res;
  res.options = o;
  envs::setTorchThreads(1);
  for (const GradNormCase& c : o.cases) {
    std::vector<GradNormStat> row;
    for (int h : o.horizons) {
      if (h < 1) throw std::invalid_argument("grad-norm: horizons must be >= 1");
      envs::EnvOptions eo;
      eo.numEnvs = o.envs;
      eo.threads = o.threads;
      eo.dtype = torch::kDouble;
      eo.differentiable = true;
      eo.seed = o.seed;
      eo.printSummary = false;
      envs::LocomotionEnv env(envs::loadTaskConfig(c.task), eo);
      policies::Actor actor = makeGradNormActor(env.numObs(), env.numActions(), o.seed);
      env.reset();
      std::vector<double> all;
      GradNormStat s;
      for (int w = 0; w < o.windows; ++w) {
        std::int64_t resets = 0;
        const std::vector<double> g = windowGradNorms(env, actor, h, &resets);
        all.insert(all.end(), g.begin(), g.end());
        s.resets += resets;
      }
      double sum = 0;
      for (double x : all) sum += x;
      s.samples = static_cast<std::int64_t>(all.size());
      s.mean = sum / static_cast<double>(all.size());
      s.max = *std::max_element(all.begin(), all.end());
      std::sort(all.begin(), all.end());
      const size_t n = all.size();
      s.median = n % 2 ? all[n / 2] : 0.5 * (all[n / 2 - 1] + all[n / 2]);
      spdlog::info(
          "  {:<10} H {:>3}: mean |dR/da| {:10.4g}  median {:10.4g}  max {:10.4g}  ({} "
          "samples, {} resets)",
          c.label, h, s.mean, s.median, s.max, s.samples, s.resets);
      row.push_back(s);
    }
    res.stats.push_back(row);
  }
  return res;
}

std::string writeGradNormCsv(const GradNormResult& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "grad_norm.csv").string();
  std::ostringstream f;
  {
    f << "horizon";
    for (const auto& c : r.options.cases)
      f << "," << c.label << "_mean," << c.label << "_median," << c.label << "_max," << c.label
        << "_resets," << c.label << "_mean_over_h";
    f << "\n";
    f.precision(10);
    for (size_t h = 0; h < r.options.horizons.size(); ++h) {
      f << r.options.horizons[h];
      for (size_t c = 0; c < r.options.cases.size(); ++c) {
        const GradNormStat& s = r.stats[c][h];
        f << "," << s.mean << "," << s.median << "," << s.max << "," << s.resets << ","
          << s.mean / r.options.horizons[h];
      }
      f << "\n";
    }
  }
  io::writeFileAtomic(path, f.str());
  return path;
}

std::string plotGradNorm(const GradNormResult& r, const std::string& dir) {
  runs::requireGnuplot("to draw grad_norm.png; the CSV was written");
  const auto base = std::filesystem::path(dir);
  std::filesystem::create_directories(base);
  const std::string gp = (base / "grad_norm.gp").string();
  const GradNormOptions& o = r.options;
  std::ofstream g(gp);
  if (!g) throw std::runtime_error(gp + ": cannot write");
  const char* colors[] = {"#1a9641", "#d7191c", "#2166ac", "#fdae61"};
  g << "# Generated by `diffloco toy grad-norm`; run `gnuplot grad_norm.gp` in this folder.\n"
    << "set terminal pngcairo size 1600,700 enhanced font 'DejaVu Sans,13'\n"
    << "set output 'grad_norm.png'\n"
    << "set datafile separator ','\n"
    << "set datafile columnheaders\n"
    << "set grid lc rgb '#dddddd'\n"
    << "set logscale xy\n"
    << "set xtics (";
  for (size_t h = 0; h < o.horizons.size(); ++h) g << (h ? ", " : "") << o.horizons[h];
  g << ")\n"
    << "set format y '10^{%L}'\n"
    << "set xlabel 'horizon H [env steps]'\n"
    << "set key top left\n"
    << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 3 lw 1.5 lc rgb '#555555'\n"
    << "set multiplot layout 1,2 title \"Gradient of the return w.r.t. the actions, fixed random "
       "policy (closed loop, "
    << o.envs << " envs x " << o.windows << " windows per point)\" font ',14'\n";
  for (int panel = 0; panel < 2; ++panel) {
    g << (panel == 0 ? "set title 'g = || d(sum_{t<H} r_t) / d(a_0 ... a_{H-1}) ||_2 per env: "
                       "mean (solid), median (dashed)'\n"
                     : "set title 'mean g / H (scaling of the SHAC actor loss)'\n")
      << "set ylabel '" << (panel == 0 ? "g" : "g / H") << "'\n"
      << "plot ";
    for (size_t c = 0; c < o.cases.size(); ++c) {
      const int col = 2 + 5 * static_cast<int>(c);
      const std::string color = colors[c % 4];
      const std::string title = o.cases[c].label + " (" + o.cases[c].task + ")";
      g << (c ? ", \\\n     " : "");
      if (panel == 0)
        g << "'grad_norm.csv' using 1:" << col << " with linespoints lw 2.5 pt 7 lc rgb '" << color
          << "' title '" << title << ", mean', \\\n     'grad_norm.csv' using 1:" << col + 1
          << " with linespoints lw 1.5 dt 2 pt 6 lc rgb '" << color << "' title '" << title
          << ", median'";
      else
        g << "'grad_norm.csv' using 1:" << col + 4 << " with linespoints lw 2.5 pt 7 lc rgb '"
          << color << "' title '" << title << "'";
    }
    g << "\n";
  }
  g << "unset multiplot\n";
  g.close();
  runs::runGnuplot(base.string(), "grad_norm.gp");
  return (base / "grad_norm.png").string();
}

}  // namespace diffloco::experiments
