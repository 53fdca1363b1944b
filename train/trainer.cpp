#include "train/trainer.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "algorithms/ppo.h"
#include "algorithms/shac.h"
#include "distributed/communicator.h"
#include "envs/locomotion_env.h"
#include "batch/batch_sim.h"
#include "io/atomic_file.h"
#include "io/read_file.h"
#include "runs/run_dir.h"
#include "runs/tfevents.h"
#include "train/checkpoint.h"
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

std::map<std::string, std::string> policyMetadata(const TrainConfig& c, envs::LocomotionEnv& env,
                                                  const std::string& runDir) {
  std::map<std::string, std::string> m;
  std::string layout, joints;
  for (const auto& [name, dim] : env.observationLayout())
    layout += (layout.empty() ? "" : ",") + name + ":" + std::to_string(dim);
  for (const auto& j : env.robot().model.joints) joints += (joints.empty() ? "" : ",") + j.name;
  m["task"] = c.task.name;
  m["task_yaml"] =
      envs::toYaml(c.task);  // the whole task as trained: evaluation and export rebuild it
  m["robot"] = c.task.robot;
  m["observations"] = layout;
  m["joints"] = joints;
  m["action_scale"] = std::to_string(c.task.actionScale);
  m["action_clip"] = std::to_string(c.task.actionClip);
  m["env_dt"] = std::to_string(c.task.envDt);
  m["contact"] = sim::toString(c.task.sim.contact.model);
  m["algorithm"] = c.algorithm;
  // The commit the run started from (a resumed run's too), else the checkout now.
  const std::string started = runs::startCommit(runDir);
  m["git"] = started.empty() ? runs::gitDescription() : started;
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

// --trace-iteration N must name an iteration this session runs (after `done`, up to `total`):
// otherwise nothing would be traced and nothing said.
void checkTraceIteration(int n, int done, int total) {
  if (n > 0 && (n <= done || n > total))
    throw std::runtime_error("--trace-iteration " + std::to_string(n) +
                             ": this session runs iterations " + std::to_string(done + 1) + " to " +
                             std::to_string(total));
}

// Every rank must train the same problem: rank 0's settings are compared with each rank's, and a
// difference is an error on every rank naming the first differing key.
void checkSameConfigEverywhere(const distributed::Communicator& comm, const TrainConfig& cfg) {
  if (comm.size() == 1) return;
  std::string mine;
  for (const auto& [k, v] : flatten(cfg)) mine += k + "\n" + v + "\n";
  const std::string first = comm.broadcastBytes(mine);
  std::string diff;
  if (mine != first) {
    std::istringstream a(first), b(mine);
    std::string ka, va, kb, vb;
    while (true) {
      const bool ha = static_cast<bool>(std::getline(a, ka) && std::getline(a, va));
      const bool hb = static_cast<bool>(std::getline(b, kb) && std::getline(b, vb));
      if (!ha && !hb) break;
      if (!ha || !hb || ka != kb || va != vb) {
        diff = "rank " + std::to_string(comm.rank()) + "'s config differs from rank 0's at " +
               (hb ? kb : ka) + ": " +
               (hb && ha && ka == kb ? "'" + vb + "' vs '" + va + "'" : "a key one of them lacks");
        break;
      }
    }
  }
  for (const auto& d : comm.allGatherBytes(diff))
    if (!d.empty())
      throw std::runtime_error(
          "distributed: " + d +
          " (every rank must resolve the same config: same files, same --set)");
}

// The world's episode statistics for the logs: Episode/* weighted by their episode counts, the
// mean return and length over every rank's window, sums of the counts.
void reduceEpisodeLogs(const distributed::Communicator& comm, const std::vector<std::string>& keys,
                       std::map<std::string, double>& m, double windowCount) {
  if (comm.size() == 1) return;
  const double count = m.count("Episode/count") ? m["Episode/count"] : 0;
  std::vector<double> v;
  for (const auto& k : keys) v.push_back(m.count(k) && std::isfinite(m[k]) ? m[k] * count : 0);
  auto finite = [](double x) { return std::isfinite(x) ? x : 0.0; };
  v.insert(v.end(), {count, m["Env/sim_failures"], m["Train/episodes"],
                     finite(m["Train/mean_reward"]) * windowCount,
                     finite(m["Train/mean_episode_length"]) * windowCount, windowCount});
  Tensor t = torch::tensor(v, torch::kDouble);
  comm.allReduceSum(t);
  const double* s = t.data_ptr<double>();
  const size_t n = keys.size();
  const double nan = std::nan("");
  for (size_t i = 0; i < n; ++i) m[keys[i]] = s[n] > 0 ? s[i] / s[n] : nan;
  m["Episode/count"] = s[n];
  m["Env/sim_failures"] = s[n + 1];
  m["Train/episodes"] = s[n + 2];
  m["Train/mean_reward"] = s[n + 5] > 0 ? s[n + 3] / s[n + 5] : nan;
  m["Train/mean_episode_length"] = s[n + 5] > 0 ? s[n + 4] / s[n + 5] : nan;
}

// Non-zero ranks print warnings and errors only, tagged with their rank.
struct RankLogging {
  spdlog::level::level_enum level = spdlog::get_level();
  explicit RankLogging(int rank) {
    if (rank == 0) return;
    spdlog::set_level(spdlog::level::warn);
    spdlog::set_pattern("[rank " + std::to_string(rank) + "] [%l] %v");
  }
  ~RankLogging() { spdlog::set_level(level); }
};

// ---- configuration and run folder (rank 0 alone writes the run folder) ----------------------
struct RunSetup {
  TrainConfig cfg;
  std::string runDir, resumeFrom;  // resumeFrom: the checkpoint a resumed run continues from
  int resumeIteration = -1;
};

// run.sim_device: cuda where it cannot run is an error before a run folder is made.
void checkSimDevice(const TrainConfig& cfg, const std::string& source) {
  if (cfg.run.simDevice != RunConfig::SimDevice::Cuda) return;
  if (const std::string why = batch::cudaUnavailable(); !why.empty())
    throw std::runtime_error(source + ": run.sim_device: cuda: " + why);
}

RunSetup setUpRun(const TrainArgs& args, const distributed::Communicator& comm) {
  const bool main = comm.isMain();
  std::vector<std::string> sets = args.sets;
  if (args.seed) sets.push_back("seed=" + std::to_string(*args.seed));
  if (args.verbose) sets.push_back("run.verbose=true");
  RunSetup r;
  TrainConfig& cfg = r.cfg;
  if (!args.resume.empty()) {
    r.runDir = args.resume;
    const std::string saved = (fs::path(r.runDir) / "config.yaml").string();
    // Rank 0 reads the run folder and tells the others what it found.
    std::string savedYaml;
    if (main) {
      if (!fs::exists(saved))
        throw std::runtime_error("--resume " + r.runDir +
                                 ": no config.yaml there (not a run folder?)");
      const auto cps = runs::listCheckpoints(r.runDir);
      if (cps.empty())
        throw std::runtime_error("--resume " + r.runDir + ": no model_<iter>.pt there");
      r.resumeIteration = cps.back().first;
      r.resumeFrom = cps.back().second;
      savedYaml = io::readFile(saved);
    }
    savedYaml = comm.broadcastBytes(savedYaml);
    r.resumeFrom = comm.broadcastBytes(r.resumeFrom);
    r.resumeIteration = static_cast<int>(comm.allReduceSum(main ? r.resumeIteration : 0));
    const TrainConfig before = parseTrainConfig(savedYaml, saved);
    cfg = parseTrainConfig(savedYaml, saved, sets);
    if (!args.config.empty()) {
      cfg = loadTrainConfig(args.config, sets);
      cfg.name = before.name;
    }
    checkSameProblem(before, cfg);
    checkTraceIteration(args.traceIteration, r.resumeIteration, cfg.iterations());
    checkSimDevice(cfg, args.config.empty() ? saved : args.config);
  } else {
    if (args.config.empty())
      throw std::runtime_error("train: give a config file (or --resume RUN)");
    cfg = loadTrainConfig(args.config, sets);
    checkTraceIteration(args.traceIteration, 0, cfg.iterations());
    checkSimDevice(cfg, args.config);
    if (main) r.runDir = runs::createRunDir(args.out, cfg.name);
  }
  checkSameConfigEverywhere(comm, cfg);
  return r;
}

// ---- threads: torch and the simulator's pool take turns on the same cores; the ranks on one
// machine share its cores (LOCAL_WORLD_SIZE, set by torchrun and --nproc). Sets torch's and
// returns {torch, simulator} thread counts.
std::pair<int, int> setThreads(const TrainConfig& cfg, const distributed::Communicator& comm) {
  int torchThreads = cfg.run.torchThreads, simThreads = cfg.run.simThreads;
  if (const int local = comm.world().localSize; local > 1) {
    const int cap = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local);
    if (simThreads > cap || torchThreads > cap)
      spdlog::info(
          "{} ranks on this machine's {} cores: {} simulator and {} torch thread(s) per rank",
          local, std::thread::hardware_concurrency(), std::min(simThreads, cap),
          std::min(torchThreads, cap));
    simThreads = std::min(simThreads, cap);
    torchThreads = std::min(torchThreads, cap);
  }
  envs::setTorchThreads(torchThreads);  // torch and OpenBLAS (its own pool)
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
    // already set in this process (tests run several trainings)
  }
  return {torchThreads, simThreads};
}

envs::EnvOptions envOptions(const TrainConfig& cfg, const distributed::Communicator& comm,
                            int simThreads) {
  envs::EnvOptions eo;
  eo.numEnvs = cfg.numEnvs();
  eo.threads = simThreads;
  eo.dtype = torch::kFloat32;
  eo.differentiable = cfg.algorithm == "shac";
  eo.seed = algorithms::deriveSeed(cfg.seed, 2);
  eo.firstEnv = static_cast<std::int64_t>(comm.rank()) * cfg.numEnvs();
  eo.printSummary = comm.isMain();
  if (cfg.run.simDevice == RunConfig::SimDevice::Cuda) eo.simPath = batch::BatchPath::Cuda;
  return eo;
}

// ---- the algorithm, new, resumed or warm-started
std::unique_ptr<algorithms::Algorithm> makeAlgorithm(const TrainConfig& cfg, const RunSetup& run,
                                                     envs::LocomotionEnv& env,
                                                     const distributed::Communicator& comm) {
  std::unique_ptr<algorithms::Algorithm> algo;
  if (cfg.algorithm == "shac")
    algo = std::make_unique<algorithms::Shac>(env, cfg.shac, cfg.policy, cfg.seed, comm);
  else
    algo = std::make_unique<algorithms::Ppo>(env, cfg.ppo, cfg.policy, cfg.seed, comm);
  if (!run.resumeFrom.empty()) {
    loadCheckpoint(comm, run.resumeFrom, *algo, env);
    spdlog::info("resumed {} at iteration {}", run.resumeFrom, algo->iteration());
    if (const int n = comm.isMain() ? runs::removeStaleTemporaries(run.runDir) : 0)
      spdlog::info("removed {} temporary file(s) of interrupted writes from {}", n, run.runDir);
  } else if (!cfg.initFrom.empty()) {
    warmStart(cfg.initFrom, *algo);
  }
  if (algo->iteration() > algo->totalIterations())
    throw std::runtime_error("--resume: the run is at iteration " +
                             std::to_string(algo->iteration()) + ", past " +
                             std::to_string(algo->totalIterations()) +
                             " iterations: set a larger " + cfg.algorithm + ".iterations");
  return algo;
}

// ---- logs: columns fixed at the start
std::vector<std::string> metricColumns(const TrainConfig& cfg, const algorithms::Algorithm& algo,
                                       const envs::LocomotionEnv& env) {
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
  for (const auto& k : algo.scalarKeys()) columns.push_back(k);
  for (const auto& name : env.rewardNames()) columns.push_back("Episode/rew_" + name);
  columns.push_back("Episode/length_s");
  columns.push_back("Env/sim_failures");
  columns.push_back("Curriculum/command_scale");
  columns.push_back("Curriculum/reset_noise_scale");
  columns.push_back("Curriculum/episode_length_s");
  columns.push_back("Curriculum/command_resample_scale");
  for (const auto& [name, ramp] : cfg.curriculum.rewards)
    columns.push_back("Curriculum/reward_weight_" + name);
  if (env.terrainLevels().defined()) {  // means over this rank's envs, then per type
    std::map<std::string, double> levels;
    env.logTerrainLevels(levels);
    columns.push_back("Curriculum/terrain_level");
    for (const auto& [key, level] : levels)
      if (key != "Curriculum/terrain_level") columns.push_back(key);
  }
  return columns;
}

// One iteration's row of metrics.csv: the algorithm's scalars, the episodes that ended (summed
// over the ranks), throughput and the curriculum's state.
std::map<std::string, double> iterationMetrics(
    const TrainConfig& cfg, const algorithms::IterationStats& s, algorithms::Algorithm& algo,
    envs::LocomotionEnv& env, const distributed::Communicator& comm,
    const std::vector<std::string>& episodeKeys, double iterS, double wallS) {
  const int done = algo.iteration();
  std::map<std::string, double> m = s.scalars;
  for (const auto& [k, v] : algo.episodes().takeIterationLogs()) m[k] = v;
  m["Train/mean_reward"] = algo.episodes().meanReturn();
  m["Train/mean_episode_length"] = algo.episodes().meanLength();
  reduceEpisodeLogs(comm, episodeKeys, m, static_cast<double>(algo.episodes().windowCount()));
  m["iteration"] = done;
  m["env_steps"] = static_cast<double>(done) * algo.stepsPerIteration() * comm.size();
  m["wall_s"] = wallS;
  m["Train/skipped_updates"] = s.skippedUpdates;
  m["Perf/total_fps"] = s.envSteps * comm.size() / iterS;
  m["Perf/collection_time"] = s.collectionS;
  m["Perf/learning_time"] = s.learnS;
  m["Perf/iteration_time"] = iterS;
  m["Curriculum/command_scale"] = env.commandScale();
  m["Curriculum/reset_noise_scale"] = env.resetNoiseScale();
  m["Curriculum/episode_length_s"] = env.maxEpisodeLength() * env.envDt();
  m["Curriculum/command_resample_scale"] = env.commandResampleScale();
  if (env.terrainLevels().defined()) env.logTerrainLevels(m);
  for (const auto& [name, ramp] : cfg.curriculum.rewards)
    m["Curriculum/reward_weight_" + name] = env.rewardWeight(name);
  return m;
}

// The console line of an iteration (and with run.verbose its reward terms and losses).
void logIteration(const TrainConfig& cfg, std::map<std::string, double>& m,
                  const algorithms::Algorithm& algo, const envs::LocomotionEnv& env, double iterS,
                  double wallS, double etaS) {
  spdlog::info(
      "{} it {:>5}/{} | return {:9.2f} | ep len {:6.2f} s | {:7.0f} steps/s | {:.3f} s/it "
      "| elapsed {} | ETA {}",
      cfg.algorithm, algo.iteration(), algo.totalIterations(), m["Train/mean_reward"],
      m["Train/mean_episode_length"] * env.envDt(), m["Perf/total_fps"], iterS, hms(wallS),
      hms(etaS));
  if (!cfg.run.verbose) return;
  std::string terms, losses;
  for (const auto& name : env.rewardNames()) {
    auto f = m.find("Episode/rew_" + name);
    if (f != m.end()) terms += fmt::format(" {} {:.3g};", name, f->second);
  }
  for (const auto& k : algo.scalarKeys()) losses += fmt::format(" {} {:.4g};", k, m[k]);
  if (!terms.empty()) spdlog::info("    episode rewards:{}", terms);
  spdlog::info("    {}", losses.empty() ? "" : losses.substr(1));
}

// Counts iterations in a row with skipped (non-finite) updates; stops the run at
// run.max_nan_iterations, naming the last checkpoint.
void checkNonFinite(const TrainConfig& cfg, const algorithms::IterationStats& s, int done,
                    const std::string& runDir, bool main, int& nanStreak) {
  if (s.skippedUpdates == 0) {
    nanStreak = 0;
    return;
  }
  ++nanStreak;
  spdlog::warn(
      "iteration {}: {} update(s) skipped for a non-finite value (first: {}); {} "
      "iteration(s) in a row",
      done, s.skippedUpdates, s.skippedWhat, nanStreak);
  if (nanStreak < cfg.run.maxNanIterations) return;
  const auto cps =
      main ? runs::listCheckpoints(runDir) : std::vector<std::pair<int, std::string>>{};
  throw std::runtime_error(
      "stopping: " + std::to_string(nanStreak) +
      " iterations in a row with non-finite losses or gradients (run.max_nan_iterations = " +
      std::to_string(cfg.run.maxNanIterations) + "; last: " + s.skippedWhat +
      "). The last checkpoint is " + (cps.empty() ? "none" : cps.back().second) +
      "; lower the learning rates or the horizon, or check the task's rewards");
}

// The run's metrics files (rank 0: metrics.csv, TensorBoard's events when asked for), their
// columns, and the wall time of the run before this session (from metrics.csv when resumed).
struct RunLogs {
  std::vector<std::string> columns, episodeKeys;
  std::unique_ptr<runs::MetricsCsv> csv;
  std::unique_ptr<runs::EventWriter> tb;
  double wallBefore = 0;

  // One iteration's row (m: the metrics by column; a missing or non-finite one is left out of
  // the events).
  void write(int iteration, std::map<std::string, double>& m) const {
    if (csv) csv->row(m);
    if (!tb) return;
    std::map<std::string, double> scalars;
    for (const auto& c : columns)
      if (c != "iteration" && m.count(c) && std::isfinite(m[c])) scalars[c] = m[c];
    tb->scalars(iteration, scalars);
    tb->flush();
  }
};

RunLogs openLogs(const TrainConfig& cfg, const RunSetup& run, const algorithms::Algorithm& algo,
                 const envs::LocomotionEnv& env, bool main) {
  RunLogs logs;
  logs.columns = metricColumns(cfg, algo, env);
  for (const auto& c : logs.columns)
    if (c.rfind("Episode/", 0) == 0) logs.episodeKeys.push_back(c);
  if (!main) return logs;
  logs.csv = std::make_unique<runs::MetricsCsv>(run.runDir, logs.columns, run.resumeIteration);
  if (cfg.run.tensorboard) logs.tb = std::make_unique<runs::EventWriter>(run.runDir);
  if (run.resumeIteration > 0) {
    const runs::Csv old = runs::readCsv(logs.csv->path());
    if (!old.rows.empty()) logs.wallBefore = old.rows.back()[old.column("wall_s")];
    if (!std::isfinite(logs.wallBefore)) logs.wallBefore = 0;
  }
  return logs;
}

// Runs one iteration; with a trace of its torch operations and autograd nodes (rank 0) when it
// is the one asked for. Returns its statistics and wall time.
std::pair<algorithms::IterationStats, double> iterateTraced(algorithms::Algorithm& algo,
                                                            bool tracing,
                                                            const std::string& runDir) {
  const int it = algo.iteration();
  const auto t0 = std::chrono::steady_clock::now();
  std::ostringstream trace;
  auto recorder =
      tracing ? std::make_unique<torch::autograd::profiler::RecordProfile>(trace) : nullptr;
  algorithms::IterationStats s = algo.iterate();
  recorder.reset();  // writes the trace
  const double iterS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tracing) {
    const std::string path =
        (fs::path(runDir) / ("trace_iteration_" + std::to_string(it + 1) + ".json")).string();
    io::writeFileAtomic(path, trace.str());
    spdlog::info("wrote {} (tools/tables/trace_summary.py summarises it)", path);
  }
  return {std::move(s), iterS};
}

}  // namespace

TrainResult train(const TrainArgs& args) {
  // ---- the world: this process alone, or one rank of a distributed run (torchrun's variables)
  const distributed::Communicator comm(distributed::worldFromEnvironment());
  const bool main = comm.isMain();
  RankLogging rankLogging(comm.rank());

  const RunSetup run = setUpRun(args, comm);
  const TrainConfig& cfg = run.cfg;
  const std::string& runDir = run.runDir;
  const std::string configYaml = toYaml(cfg);
  std::unique_ptr<LogFile> log;
  if (main) {
    io::writeFileAtomic((fs::path(runDir) / "config.yaml").string(), configYaml);
    if (args.resume.empty()) runs::writeGitInfo(runDir);
    log = std::make_unique<LogFile>((fs::path(runDir) / "train.log").string());
  }
  const auto [torchThreads, simThreads] = setThreads(cfg, comm);

  // ---- env and algorithm. The task as trained: with the reward terms the curriculum adds (the
  // policy file and its evaluation keep cfg.task).
  envs::LocomotionEnv env(trainedTask(cfg.curriculum, cfg.task), envOptions(cfg, comm, simThreads));
  // The curriculum's factors are a function of the iteration (set before each one); a new run's
  // first draws already follow them.
  applyCurriculum(cfg.curriculum, 0, env, run.resumeFrom.empty());
  const std::unique_ptr<algorithms::Algorithm> algo = makeAlgorithm(cfg, run, env, comm);
  const int total = algo->totalIterations();

  // ---- logs
  const RunLogs logs = openLogs(cfg, run, *algo, env, main);
  spdlog::info("run folder {}", runDir);
  spdlog::info(
      "{}: {} iterations x {} envs x {} steps; seed {}; torch threads {}, simulator "
      "threads {}; git {}",
      cfg.algorithm, total, env.numEnvs(), algo->stepsPerIteration() / env.numEnvs(), cfg.seed,
      torchThreads, simThreads, runs::gitDescription());
  if (comm.size() > 1)
    spdlog::info("distributed: {} ranks x {} envs ({} envs in all), master {}:{}", comm.size(),
                 env.numEnvs(), comm.size() * env.numEnvs(), comm.world().masterAddr,
                 comm.world().masterPort);

  // ---- the iterations
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
    const bool tracing = it + 1 == args.traceIteration && comm.rank() == 0;
    const auto [s, iterS] = iterateTraced(*algo, tracing, runDir);
    const int done = algo->iteration();
    const double session =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sessionStart).count();

    std::map<std::string, double> m = iterationMetrics(cfg, s, *algo, env, comm, logs.episodeKeys,
                                                       iterS, logs.wallBefore + session);
    logs.write(done, m);
    logIteration(cfg, m, *algo, env, iterS, logs.wallBefore + session,
                 session / (done - firstIteration) * (total - done));
    checkNonFinite(cfg, s, done, runDir, main, nanStreak);

    // Every rank stops at the same iteration (Ctrl-C may reach them at different moments).
    const bool stop =
        comm.any(gInterrupted || (args.stopAfter >= 0 && done - firstIteration >= args.stopAfter));
    if (done % cfg.run.checkpointEvery == 0 || done == total || stop)
      saveCheckpoint(comm, checkpointPath(runDir, done), *algo, env, configYaml);
    if (stop) {
      if (gInterrupted)
        spdlog::warn("interrupted: wrote {}; continue with: diffloco train --resume {}",
                     checkpointPath(runDir, done), runDir);
      break;
    }
  }
  result.iteration = algo->iteration();
  result.finished = algo->iteration() >= total;
  if (result.finished && main) {
    const std::string policy = (fs::path(runDir) / "policy.pt").string();
    policies::savePolicy(policy, algo->actor(), policyMetadata(cfg, env, runDir));
    spdlog::info("done: {} iterations; wrote {}", total, policy);
  }
  return result;
}

}  // namespace diffloco::train
