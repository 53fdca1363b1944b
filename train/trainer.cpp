#include "train/trainer.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "algorithms/ppo.h"
#include "algorithms/shac.h"
#include "envs/locomotion_env.h"
#include "io/atomic_file.h"
#include "runs/run_dir.h"
#include "runs/tfevents.h"
#include "train/config.h"

namespace diffloco::train {
namespace fs = std::filesystem;
using torch::Tensor;

namespace {

std::atomic<bool> gInterrupted{false};

extern "C" void onSigint(int) {
  gInterrupted = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills
}

// Installs the handler for the duration of a training.
struct SigintGuard {
  void (*previous)(int);
  SigintGuard() : previous(std::signal(SIGINT, onSigint)) { gInterrupted = false; }
  ~SigintGuard() { std::signal(SIGINT, previous); }
};

// train.log next to the console output for the duration of a training.
struct LogFile {
  std::shared_ptr<spdlog::sinks::sink> sink;
  explicit LogFile(const std::string& path)
      : sink(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path)) {
    sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
    spdlog::default_logger()->sinks().push_back(sink);
  }
  ~LogFile() {
    auto& s = spdlog::default_logger()->sinks();
    s.erase(std::remove(s.begin(), s.end(), sink), s.end());
  }
};

std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--:--";
  const long t = std::lround(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

// The env's state in a checkpoint: everything LocomotionEnv::stateDict() holds (state, last
// actions, observations, episode counters, commands, push schedule, world parameters, generators),
// so that a resumed run continues bit for bit.
void saveEnv(envs::LocomotionEnv& env, torch::serialize::OutputArchive& a) {
  for (const auto& [key, value] : env.stateDict()) a.write("env/" + key, value);
}

void loadEnv(envs::LocomotionEnv& env, torch::serialize::InputArchive& a) {
  std::map<std::string, Tensor> state;
  for (const auto& [key, value] : env.stateDict()) {
    Tensor t;
    if (!a.try_read("env/" + key, t))
      throw std::runtime_error("checkpoint has no env/" + key +
                               " (written by an older diffloco, or not a checkpoint)");
    state[key] = t;
  }
  env.loadStateDict(state);
}

std::map<std::string, std::string> policyMetadata(const TrainConfig& c, envs::LocomotionEnv& env) {
  std::map<std::string, std::string> m;
  std::string layout, joints;
  for (const auto& [name, dim] : env.observationLayout())
    layout += (layout.empty() ? "" : ",") + name + ":" + std::to_string(dim);
  for (const auto& j : env.robot().model.joints) joints += (joints.empty() ? "" : ",") + j.name;
  m["task"] = c.task.name;
  m["task_yaml"] = c.taskYaml;  // the whole task as trained: evaluation and export rebuild it
  m["robot"] = c.task.robot;
  m["observations"] = layout;
  m["joints"] = joints;
  m["action_scale"] = std::to_string(c.task.actionScale);
  m["action_clip"] = std::to_string(c.task.actionClip);
  m["env_dt"] = std::to_string(c.task.envDt);
  m["contact"] = sim::toString(c.task.sim.contact.model);
  m["algorithm"] = c.algorithm;
  m["git"] = runs::gitDescription();
  return m;
}

// Settings a resume may change: the number of iterations and how the run is run.
bool resumable(const std::string& key) {
  return key == "name" || key == "shac.iterations" || key == "ppo.iterations" ||
         key.rfind("run.", 0) == 0;
}

void checkSameProblem(const TrainConfig& run, const TrainConfig& now) {
  const auto a = flatten(run), b = flatten(now);
  std::map<std::string, std::string> am(a.begin(), a.end()), bm(b.begin(), b.end());
  std::string diffs;
  for (const auto& [k, v] : bm) {
    auto it = am.find(k);
    const std::string old = it == am.end() ? "(absent)" : it->second;
    if (old != v && !resumable(k)) diffs += "\n  " + k + ": " + old + " -> " + v;
  }
  for (const auto& [k, v] : am)
    if (!bm.count(k) && !resumable(k)) diffs += "\n  " + k + ": " + v + " -> (absent)";
  if (!diffs.empty())
    throw std::runtime_error(
        "--resume: the config differs from the run's in settings that define the learning "
        "problem (only iterations and run.* may change; start a new run otherwise):" +
        diffs);
}

std::string checkpointPath(const std::string& dir, int iteration) {
  return (fs::path(dir) / ("model_" + std::to_string(iteration) + ".pt")).string();
}

void saveCheckpoint(const std::string& path, algorithms::Algorithm& algo, envs::LocomotionEnv& env,
                    const std::string& configYaml) {
  torch::serialize::OutputArchive a;
  a.write("format", c10::IValue(std::string("diffloco-checkpoint-1")));
  a.write("config", c10::IValue(configYaml));
  algo.save(a);
  saveEnv(env, a);
  // Atomic: a reader (a resume after a crash) sees the old file or the complete new one.
  io::writeAtomically(path, [&](const std::string& tmp) { a.save_to(tmp); });
}

void openCheckpoint(const std::string& path, torch::serialize::InputArchive& a) {
  try {
    a.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a readable checkpoint (" + e.what_without_backtrace() +
                             ")");
  }
  c10::IValue format;
  if (!a.try_read("format", format) || format.toStringRef() != "diffloco-checkpoint-1")
    throw std::runtime_error(path + ": not a diffloco checkpoint");
}

void loadCheckpoint(const std::string& path, algorithms::Algorithm& algo,
                    envs::LocomotionEnv& env) {
  torch::serialize::InputArchive a;
  openCheckpoint(path, a);
  algo.load(a);
  loadEnv(env, a);
}

// init_from: a run folder (its last checkpoint) or a checkpoint file -> the checkpoint's path.
std::string warmStartCheckpoint(const std::string& from) {
  if (fs::is_directory(from)) {
    const auto cps = runs::listCheckpoints(from);
    if (cps.empty())
      throw std::runtime_error("init_from: " + from + ": no model_<iter>.pt in this folder");
    return cps.back().second;
  }
  if (!fs::is_regular_file(from))
    throw std::runtime_error("init_from: " + from +
                             ": no such run folder or checkpoint file (model_<iter>.pt)");
  return from;
}

// Networks and normaliser from a checkpoint; everything else of the new run starts fresh.
void warmStart(const std::string& from, algorithms::Algorithm& algo) {
  const std::string path = warmStartCheckpoint(from);
  torch::serialize::InputArchive a;
  try {
    openCheckpoint(path, a);  // its messages name the file
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("init_from: " + std::string(e.what()));
  }
  std::string error;
  try {
    algo.loadWarmStart(a);
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) throw std::runtime_error("init_from: " + path + ": " + error);
  spdlog::info("warm start: networks and normaliser from {}", path);
}

}  // namespace

TrainResult train(const TrainArgs& args) {
  // ---- configuration and run folder
  std::vector<std::string> sets = args.sets;
  if (args.seed) sets.push_back("seed=" + std::to_string(*args.seed));
  if (args.verbose) sets.push_back("run.verbose=true");
  TrainConfig cfg;
  std::string runDir, resumeFrom;
  int resumeIteration = -1;
  if (!args.resume.empty()) {
    runDir = args.resume;
    const std::string saved = (fs::path(runDir) / "config.yaml").string();
    if (!fs::exists(saved))
      throw std::runtime_error("--resume " + runDir + ": no config.yaml there (not a run folder?)");
    const TrainConfig before = loadTrainConfig(saved);
    cfg = loadTrainConfig(saved, sets);
    if (!args.config.empty()) {
      cfg = loadTrainConfig(args.config, sets);
      cfg.name = before.name;
    }
    checkSameProblem(before, cfg);
    const auto cps = runs::listCheckpoints(runDir);
    if (cps.empty()) throw std::runtime_error("--resume " + runDir + ": no model_<iter>.pt there");
    resumeIteration = cps.back().first;
    resumeFrom = cps.back().second;
  } else {
    if (args.config.empty())
      throw std::runtime_error("train: give a config file (or --resume RUN)");
    cfg = loadTrainConfig(args.config, sets);
    runDir = runs::createRunDir(args.out, cfg.name);
  }
  const std::string configYaml = toYaml(cfg);
  io::writeFileAtomic((fs::path(runDir) / "config.yaml").string(), configYaml);
  if (args.resume.empty()) runs::writeGitInfo(runDir);
  LogFile log((fs::path(runDir) / "train.log").string());

  // ---- threads: torch and the simulator's pool take turns on the same cores
  envs::setTorchThreads(cfg.run.torchThreads);  // torch and OpenBLAS (its own pool)
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
    // already set in this process (tests run several trainings)
  }

  // ---- env and algorithm
  const bool shac = cfg.algorithm == "shac";
  envs::EnvOptions eo;
  eo.numEnvs = cfg.numEnvs();
  eo.threads = cfg.run.simThreads;
  eo.dtype = torch::kFloat32;
  eo.differentiable = shac;
  eo.seed = algorithms::deriveSeed(cfg.seed, 2);
  envs::LocomotionEnv env(cfg.task, eo);
  // The curriculum's factors are a function of the iteration (set before each one); a new run's
  // first draws already follow them.
  applyCurriculum(cfg.curriculum, 0, env, resumeFrom.empty());
  std::unique_ptr<algorithms::Algorithm> algo;
  if (shac)
    algo = std::make_unique<algorithms::Shac>(env, cfg.shac, cfg.policy, cfg.seed);
  else
    algo = std::make_unique<algorithms::Ppo>(env, cfg.ppo, cfg.policy, cfg.seed);
  if (!resumeFrom.empty()) {
    loadCheckpoint(resumeFrom, *algo, env);
    spdlog::info("resumed {} at iteration {}", resumeFrom, algo->iteration());
    if (const int n = runs::removeStaleTemporaries(runDir))
      spdlog::info("removed {} temporary file(s) of interrupted writes from {}", n, runDir);
  } else if (!cfg.initFrom.empty()) {
    warmStart(cfg.initFrom, *algo);
  }
  const int total = algo->totalIterations();
  if (algo->iteration() > total)
    throw std::runtime_error("--resume: the run is at iteration " +
                             std::to_string(algo->iteration()) + ", past " + std::to_string(total) +
                             " iterations: set a larger " + cfg.algorithm + ".iterations");

  // ---- logs: columns fixed at the start
  std::vector<std::string> columns = {"iteration",
                                      "env_steps",
                                      "wall_s",
                                      "Train/mean_reward",
                                      "Train/mean_episode_length",
                                      "Train/episodes",
                                      "Train/skipped_updates",
                                      "Perf/total_fps",
                                      "Perf/collection_time",
                                      "Perf/learning_time",
                                      "Perf/iteration_time"};
  for (const auto& k : algo->scalarKeys()) columns.push_back(k);
  for (const auto& name : env.rewardNames()) columns.push_back("Episode/rew_" + name);
  columns.push_back("Episode/length_s");
  columns.push_back("Env/sim_failures");
  columns.push_back("Curriculum/command_scale");
  columns.push_back("Curriculum/reset_noise_scale");
  columns.push_back("Curriculum/episode_length_s");
  columns.push_back("Curriculum/command_resample_scale");
  runs::MetricsCsv csv(runDir, columns, resumeIteration);
  std::unique_ptr<runs::EventWriter> tb;
  if (cfg.run.tensorboard) tb = std::make_unique<runs::EventWriter>(runDir);

  double wallBefore = 0;  // wall time of the run before this session (from metrics.csv)
  if (resumeIteration > 0) {
    const runs::Csv old = runs::readCsv(csv.path());
    if (!old.rows.empty()) wallBefore = old.rows.back()[old.column("wall_s")];
    if (!std::isfinite(wallBefore)) wallBefore = 0;
  }

  spdlog::info("run folder {}", runDir);
  spdlog::info(
      "{}: {} iterations x {} envs x {} steps; seed {}; torch threads {}, simulator "
      "threads {}; git {}",
      cfg.algorithm, total, env.numEnvs(), algo->stepsPerIteration() / env.numEnvs(), cfg.seed,
      cfg.run.torchThreads, cfg.run.simThreads, runs::gitDescription());

  SigintGuard sigint;
  const auto sessionStart = std::chrono::steady_clock::now();
  const int firstIteration = algo->iteration();
  int nanStreak = 0;
  TrainResult result;
  result.runDir = runDir;
  while (algo->iteration() < total) {
    const int it = algo->iteration();
    // Every random draw of the env in this iteration depends on (seed, iteration) only: resumed
    // and uninterrupted runs see the same draws.
    env.seed(algorithms::deriveSeed(cfg.seed, 1000 + static_cast<std::uint64_t>(it)));
    applyCurriculum(cfg.curriculum, it, env);
    const auto t0 = std::chrono::steady_clock::now();
    algorithms::IterationStats s = algo->iterate();
    const double iterS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int done = algo->iteration();
    const double session =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sessionStart).count();

    std::map<std::string, double> m = s.scalars;
    for (const auto& [k, v] : algo->episodes().takeIterationLogs()) m[k] = v;
    m["iteration"] = done;
    m["env_steps"] = static_cast<double>(done) * algo->stepsPerIteration();
    m["wall_s"] = wallBefore + session;
    m["Train/mean_reward"] = algo->episodes().meanReturn();
    m["Train/mean_episode_length"] = algo->episodes().meanLength();
    m["Train/skipped_updates"] = s.skippedUpdates;
    m["Perf/total_fps"] = s.envSteps / iterS;
    m["Perf/collection_time"] = s.collectionS;
    m["Perf/learning_time"] = s.learnS;
    m["Perf/iteration_time"] = iterS;
    m["Curriculum/command_scale"] = env.commandScale();
    m["Curriculum/reset_noise_scale"] = env.resetNoiseScale();
    m["Curriculum/episode_length_s"] = env.maxEpisodeLength() * env.envDt();
    m["Curriculum/command_resample_scale"] = env.commandResampleScale();
    csv.row(m);
    if (tb) {
      std::map<std::string, double> scalars;
      for (const auto& c : columns)
        if (c != "iteration" && m.count(c) && std::isfinite(m[c])) scalars[c] = m[c];
      tb->scalars(done, scalars);
      tb->flush();
    }

    const double eta = session / (done - firstIteration) * (total - done);
    spdlog::info(
        "{} it {:>5}/{} | return {:9.2f} | ep len {:6.2f} s | {:7.0f} steps/s | {:.3f} s/it "
        "| elapsed {} | ETA {}",
        cfg.algorithm, done, total, m["Train/mean_reward"],
        m["Train/mean_episode_length"] * env.envDt(), m["Perf/total_fps"], iterS,
        hms(wallBefore + session), hms(eta));
    if (cfg.run.verbose) {
      std::string terms, losses;
      for (const auto& name : env.rewardNames()) {
        auto f = m.find("Episode/rew_" + name);
        if (f != m.end()) terms += fmt::format(" {} {:.3g};", name, f->second);
      }
      for (const auto& k : algo->scalarKeys()) losses += fmt::format(" {} {:.4g};", k, m[k]);
      if (!terms.empty()) spdlog::info("    episode rewards:{}", terms);
      spdlog::info("    {}", losses.empty() ? "" : losses.substr(1));
    }

    if (s.skippedUpdates > 0) {
      ++nanStreak;
      spdlog::warn(
          "iteration {}: {} update(s) skipped for a non-finite value (first: {}); {} "
          "iteration(s) in a row",
          done, s.skippedUpdates, s.skippedWhat, nanStreak);
      if (nanStreak >= cfg.run.maxNanIterations) {
        const auto cps = runs::listCheckpoints(runDir);
        throw std::runtime_error(
            "stopping: " + std::to_string(nanStreak) +
            " iterations in a row with non-finite losses or gradients (run.max_nan_iterations = " +
            std::to_string(cfg.run.maxNanIterations) + "; last: " + s.skippedWhat +
            "). The last checkpoint is " + (cps.empty() ? "none" : cps.back().second) +
            "; lower the learning rates or the horizon, or check the task's rewards");
      }
    } else {
      nanStreak = 0;
    }

    const bool stop =
        gInterrupted || (args.stopAfter >= 0 && done - firstIteration >= args.stopAfter);
    if (done % cfg.run.checkpointEvery == 0 || done == total || stop)
      saveCheckpoint(checkpointPath(runDir, done), *algo, env, configYaml);
    if (stop) {
      if (gInterrupted)
        spdlog::warn("interrupted: wrote {}; continue with: diffloco train --resume {}",
                     checkpointPath(runDir, done), runDir);
      break;
    }
  }
  result.iteration = algo->iteration();
  result.finished = algo->iteration() >= total;
  if (result.finished) {
    const std::string policy = (fs::path(runDir) / "policy.pt").string();
    policies::savePolicy(policy, algo->actor(), policyMetadata(cfg, env));
    spdlog::info("done: {} iterations; wrote {}", total, policy);
  }
  return result;
}

}  // namespace diffloco::train
