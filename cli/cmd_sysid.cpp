// `diffloco sysid`: system identification from recorded trajectories (ident/sysid.h).
//   sysid --model cube --data toss_*.csv --fit side,mu [--set side=0.06,mu=0.5] [--truth T]
//         fits the named parameters by Adam through k-step predictions; writes OUT/sysid_log.csv
//         (per iteration: loss, values, gradients) and OUT/params.txt (every parameter's value).
//   sysid --generate cube --out DIR [--set side=0.1,mu=0.3] [--count 8] [--seed 1]
//         synthetic data: simulates the model (hard contact by default) from random initial
//         states (cube: tosses; robots: drops with random joint targets), adds measurement noise,
//         writes DIR/toss_000.csv ... (cube) or DIR/run_000.csv ... and DIR/truth.txt.
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "ident/sysid.h"
#include "io/atomic_file.h"
#include "io/json.h"

namespace diffloco::cli {

namespace {

struct SysidArgs {
  std::string model = "cube", generate, out, contact = "straight_through", truth, json;
  std::vector<std::string> data, fit, set, weights;
  double cornerRadius = 1e-3;
  double cutoff = 0.05;
  int solverIterations = 10, softSubsteps = 0;
  sysid::FitOptions fo;
  sysid::GenerateOptions go;
  int printEvery = 10;
};

sysid::System buildSystem(const SysidArgs& a, const std::string& name) {
  sysid::System sys = name == "cube" ? sysid::cubeSystem(0.1, 0.37, 0.3, a.cornerRadius)
                                     : sysid::makeSystem(name);
  for (const auto& [n, v] : sysid::parseAssignments(a.set)) sys.set(n, v);
  sys.opt.contact.cutoff = a.cutoff;
  sys.opt.contact.iterations = a.solverIterations;
  if (a.softSubsteps > 0) sys.opt.contact.softSubsteps = a.softSubsteps;
  return sys;
}

int runGenerate(SysidArgs& a) {
  sysid::System sys = buildSystem(a, a.generate);
  if (a.out.empty()) a.out = "runs/sysid_data_" + sys.name;
  const auto trs = sysid::generate(sys, a.go);
  const std::string stem = sys.cube ? "toss_" : "run_";
  for (size_t k = 0; k < trs.size(); ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "%s%03zu.csv", stem.c_str(), k);
    sysid::writeTrajectory(a.out + "/" + name, sys.model, trs[k]);
  }
  sysid::writeParams(a.out + "/truth.txt", sys,
                     "true parameters of diffloco sysid --generate " + a.generate + " (contact " +
                         a.go.contact + ", dt " + std::to_string(a.go.dt) + ", seed " +
                         std::to_string(a.go.seed) + ")");
  spdlog::info("sysid --generate {}: {} trajectories of {} s at dt {} s ({} contact, noise x{}); "
               "wrote {}/{}000.csv ... and {}/truth.txt",
               sys.name, trs.size(), a.go.duration, a.go.dt, a.go.contact, a.go.noiseScale, a.out,
               stem, a.out);
  return 0;
}

// The names of --fit: each item split at its commas, empty names dropped.
std::vector<std::string> splitFitNames(const std::vector<std::string>& items) {
  std::vector<std::string> fitNames;
  for (const auto& item : items) {
    size_t start = 0;
    while (start <= item.size()) {
      const size_t comma = item.find(',', start);
      const std::string n = item.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start);
      if (!n.empty()) fitNames.push_back(n);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return fitNames;
}

// --weights NAME=VALUE,... into the loss weights.
void applyWeights(const std::vector<std::string>& weights, sysid::FitOptions& fo) {
  for (const auto& [n, v] : sysid::parseAssignments(weights)) {
    auto& w = fo.weights;
    if (n == "position") w.position = v;
    else if (n == "orientation") w.orientation = v;
    else if (n == "velocity") w.velocity = v;
    else if (n == "angular_velocity") w.angularVelocity = v;
    else if (n == "joint") w.joint = v;
    else if (n == "joint_velocity") w.jointVelocity = v;
    else
      throw std::invalid_argument("sysid --weights: unknown '" + n +
                                  "' (position, orientation, velocity, angular_velocity, joint, "
                                  "joint_velocity)");
  }
}

using Truth = std::vector<std::pair<std::string, double>>;

// The true value of parameter n, NaN when the truth file does not give it.
double truthOf(const Truth& truth, const std::string& n) {
  for (const auto& [k, v] : truth)
    if (k == n) return v;
  return std::nan("");
}

// The summary and the table of initial, fitted and true values, on stdout.
void printFitResult(const sysid::System& sys, const sysid::FitResult& r, const SysidArgs& a,
                    const Truth& truth) {
  std::printf("sysid %s: %d segments of %d steps, %.4f s per gradient step (wall; %.4f s CPU, %d "
              "thread(s)), final loss %.4e\n",
              sys.name.c_str(), r.segments, a.fo.horizon, r.secondsPerStep, r.cpuSecondsPerStep,
              a.fo.threads, r.finalLoss);
  std::printf("%-16s %12s %12s %12s %9s\n", "parameter", "initial", "fitted", "truth", "error");
  for (size_t i = 0; i < r.names.size(); ++i) {
    const double t = truthOf(truth, r.names[i]);
    if (std::isnan(t))
      std::printf("%-16s %12.6g %12.6g %12s %9s\n", r.names[i].c_str(), r.initial[i], r.final[i],
                  "-", "-");
    else
      std::printf("%-16s %12.6g %12.6g %12.6g %8.2f%%\n", r.names[i].c_str(), r.initial[i],
                  r.final[i], t, 100 * (r.final[i] - t) / t);
  }
  std::printf("wrote %s/sysid_log.csv and %s/params.txt\n", a.out.c_str(), a.out.c_str());
}

// --json: the result as one JSON object.
void writeFitJson(const sysid::System& sys, const sysid::FitResult& r, const SysidArgs& a,
                  const Truth& truth) {
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (size_t i = 0; i < r.names.size(); ++i) {
    auto& p = params[r.names[i]];
    p["initial"] = io::jsonNumber(r.initial[i]);
    p["fitted"] = io::jsonNumber(r.final[i]);
    const double t = truthOf(truth, r.names[i]);
    if (!std::isnan(t)) p["truth"] = io::jsonNumber(t);
  }
  const nlohmann::ordered_json j{{"model", sys.name},
                                 {"segments", r.segments},
                                 {"horizon", a.fo.horizon},
                                 {"iterations", a.fo.iterations},
                                 {"seconds_per_step", io::jsonNumber(r.secondsPerStep)},
                                 {"cpu_seconds_per_step", io::jsonNumber(r.cpuSecondsPerStep)},
                                 {"final_loss", io::jsonNumber(r.finalLoss)},
                                 {"params", params}};
  io::writeFileAtomic(a.json, j.dump() + "\n");
}

int runFit(SysidArgs& a) {
  if (a.data.empty())
    throw std::invalid_argument("sysid: --data FILE... is required (or --generate)");
  if (a.fit.empty()) throw std::invalid_argument("sysid: --fit NAME,... is required");
  sysid::System sys = buildSystem(a, a.model);
  sys.opt.contact.model = sim::parseContactModel(a.contact);
  const std::vector<std::string> fitNames = sys.expand(splitFitNames(a.fit));
  applyWeights(a.weights, a.fo);
  if (sys.opt.contact.model != sim::ContactModel::Soft) {
    for (const auto& n : fitNames)
      if (n.rfind("mass:", 0) == 0 && sys.model.nbodies() == 1)
        spdlog::warn("sysid: under {} contact a free body's motion does not depend on its mass "
                     "(impulses scale with it): '{}' is not identifiable",
                     a.contact, n);
  }
  const auto data = sysid::readTrajectories(a.data, sys.model);
  int rows = 0;
  for (const auto& tr : data) rows += tr.rows();
  if (a.out.empty()) a.out = "runs/sysid_" + sys.name;

  Truth truth;
  if (!a.truth.empty()) truth = sysid::readParams(a.truth);

  spdlog::info("sysid {}: {} trajectories ({} rows, dt {} s) from {} file(s); {} contact, "
               "horizon {}, stride {}, {} iterations, Adam lr {} -> {}",
               sys.name, data.size(), rows, data.front().dt, a.data.size(), a.contact,
               a.fo.horizon, a.fo.stride, a.fo.iterations, a.fo.lr, a.fo.lrFinal);
  std::string start;
  for (const auto& n : fitNames) start += fmt::format(" {}={:.6g}", n, sys.get(n));
  spdlog::info("sysid: fitting{}", start);

  const sysid::FitResult r = sysid::fit(sys, data, fitNames, a.fo, [&](const sysid::FitStep& st) {
    if (a.printEvery <= 0) return;
    if (st.iteration % a.printEvery != 0 && st.iteration + 1 != a.fo.iterations) return;
    std::string vals;
    for (size_t i = 0; i < fitNames.size(); ++i)
      vals += fmt::format("  {} {:.6g}", fitNames[i], st.values[i]);
    spdlog::info("it {:4d}  loss {:.4e}{}  ({:.3f} s)", st.iteration, st.loss, vals, st.seconds);
  });
  sysid::writeFitLog(a.out + "/sysid_log.csv", r);
  sysid::writeParams(a.out + "/params.txt", sys, "fitted by diffloco sysid");

  printFitResult(sys, r, a, truth);
  if (!a.json.empty()) writeFitJson(sys, r, a, truth);
  return 0;
}

}  // namespace

Runner addSysidCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "sysid",
      "System identification: fit masses, friction, PD gains, soft-contact coefficients or a "
      "cube's side length to recorded trajectories by gradient descent through k-step "
      "predictions; or generate synthetic data (--generate)");
  auto a = std::make_shared<SysidArgs>();
  auto& fo = a->fo;
  auto& go = a->go;
  cmd->add_option("--model", a->model, "cube, or a robot name / YAML path")->capture_default_str();
  cmd->add_option("--data", a->data,
                  "trajectory CSV files (columns t, x, y, z, qw, qx, qy, qz, [q_<joint>], vx, vy, "
                  "vz, wx, wy, wz, [v_<joint>], [target_<joint>], optional traj; see "
                  "ident/sysid.h)")
      ->expected(1, -1);
  cmd->add_option("--fit", a->fit,
                  "parameters to fit, comma-separated: side (cube), mass (all bodies) or "
                  "mass:<body>, mu, kp, kd, kappa, soft_kp, soft_kd, soft_kf")
      ->expected(1, -1);
  cmd->add_option("--set", a->set,
                  "NAME=VALUE,...: parameter values (fitting: the starting guess of fitted "
                  "parameters, the fixed value of the others; --generate: the truth)")
      ->expected(1, -1);
  cmd->add_option("--truth", a->truth, "a truth.txt to compare the fit with");
  cmd->add_option("--out", a->out,
                  "output folder (default runs/sysid_<model>, or runs/sysid_data_<model> with "
                  "--generate)");
  cmd->add_option("--contact", a->contact,
                  "contact model of the fit: straight_through (hard forward, smoothed gradient), "
                  "smoothed, hard, soft")
      ->capture_default_str();
  cmd->add_option("--cutoff", a->cutoff,
                  "feet farther from the ground than this stay out of the smoothed problem [m] "
                  "(straight_through's gradient reach)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--solver-iterations", a->solverIterations, "Gauss-Seidel sweeps")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--soft-substeps", a->softSubsteps, "soft model sub-steps (0: the default)")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--corner-radius", a->cornerRadius, "cube: radius of the corner spheres [m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--horizon", fo.horizon, "k: steps predicted from each recorded state")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--stride", fo.stride, "a segment starts at every stride-th recorded state")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--iterations", fo.iterations, "Adam iterations (gradient steps)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--lr", fo.lr, "Adam step on theta (p = p0 softplus(theta)), cosine-decayed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--lr-final", fo.lrFinal, "step at the last iteration")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--weights", a->weights,
                  "loss weights NAME=VALUE,...: position, orientation, velocity, "
                  "angular_velocity, joint, joint_velocity")
      ->expected(1, -1);
  cmd->add_option("--threads", fo.threads, "worker threads over segments")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--print-every", a->printEvery, "log every N iterations (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--json", a->json, "also write the result as one JSON object to this file");
  cmd->add_option("--generate", a->generate,
                  "write synthetic trajectories of this model (cube or a robot) instead of fitting");
  // --generate: at most 1000 trajectories of a minute, each at most 600 000 rows.
  cmd->add_option("--count", go.count, "--generate: trajectories")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--duration", go.duration, "--generate: seconds per trajectory")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 60.0));
  cmd->add_option("--dt", go.dt, "--generate: time step [s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-4, 0.1));
  cmd->add_option("--seed", go.seed, "--generate: random seed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4294967295.0));
  cmd->add_option("--noise-scale", go.noiseScale,
                  "--generate: multiplies every measurement-noise level (0: clean)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--generate-contact", go.contact, "--generate: contact model of the truth")
      ->capture_default_str();
  return [a]() -> int {
    if (!a->generate.empty()) return runGenerate(*a);
    return runFit(*a);
  };
}

}  // namespace diffloco::cli
