// `diffloco eval POLICY [--engine diffloco|mujoco] [--contact M] [--dt S] [--iterations N]
// [--episodes N] [--envs N] [--seed N] [--json] [--record FILE]`: sim-to-sim evaluation of a
// policy, optionally recording the rollout (cli/evaluation_setup.h has what play shares).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/evaluation_setup.h"
#include "io/json.h"
#include "viz/rollout_output.h"

namespace diffloco::cli {

namespace {

void print(const train::EvalResult& r, bool json) {
  const auto s = r.summary();
  if (json) {
    nlohmann::ordered_json j{{"task", r.task}, {"contact", r.contact}};
    if (!r.terrain.empty()) j["terrain"] = r.terrain;
    if (!r.engine.empty()) j["engine"] = r.engine;
    for (const auto& [k, v] : s) j[k] = io::jsonNumber(v);
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  if (r.contact == "mujoco")
    std::printf("task %s, %s: %d episodes (no return: MuJoCo computes no rewards)\n",
                r.task.c_str(), r.engine.c_str(), static_cast<int>(s.at("episodes")));
  else
    std::printf("task %s, contact %s, sim dt %g s, %d solver iterations, ground %s: %d episodes\n",
                r.task.c_str(), r.contact.c_str(), r.simDt, r.iterations, r.terrain.c_str(),
                static_cast<int>(s.at("episodes")));
  auto row = [&](const char* name, const std::string& key, const char* unit) {
    std::printf("  %-22s %10.4g +- %-10.4g %s\n", name, s.at(key + "_mean"), s.at(key + "_std"),
                unit);
  };
  row("return", "return", "");
  row("episode length", "length_s", "s");
  row("forward velocity", "forward_velocity", "m/s (world x)");
  row("heading speed", "heading_speed", "m/s (base x)");
  if (r.commands) {
    std::printf("  %-22s %10.4g m/s\n", "lin. velocity RMS err", s.at("lin_vel_rms"));
    std::printf("  %-22s %10.4g rad/s\n", "yaw rate RMS err", s.at("yaw_rate_rms"));
  }
  std::printf("  %-22s %10d of %d\n", "falls", r.falls(), static_cast<int>(s.at("episodes")));
  if (s.count("climbed"))
    std::printf("  %-22s %10d of %d (past %.3g m from the tile's centre)\n", "climbed", r.climbed(),
                static_cast<int>(s.at("episodes")), r.climbDistance);
  if (s.count("climbed_face"))
    std::printf("  %-22s %10d of %d (first through a face, not near a corner)\n", "climbed_face",
                r.climbedFace(), static_cast<int>(s.at("episodes")));
  if (s.count("terrain_level_mean"))
    std::printf("  %-22s %10.4g\n", "terrain level (mean)", s.at("terrain_level_mean"));
}

}  // namespace

Runner addEvalCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Evaluate a policy deterministically (actor mean) on the task it was trained on: return, "
      "episode length, speed, velocity-tracking errors and falls, mean +- std over episodes");
  auto a = std::make_shared<EvalArgs>();
  auto record = std::make_shared<std::string>();
  auto recordEnvs = std::make_shared<int>(4);
  auto json = std::make_shared<bool>(false);
  addEvalOptions(cmd, *a);
  addEvalCountOptions(cmd, *a);
  cmd->add_flag("--json", *json, "one JSON object on stdout");
  cmd->add_option("--record", *record,
                  "also write the rollout of the first envs' first episodes: .json (the record, "
                  "viz/rollout_record.h), .html (the interactive viewer), .mp4 or .gif (a video)");
  cmd->add_option("--record-envs", *recordEnvs, "envs (MuJoCo: episodes) that --record keeps")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  return [a, cmd, record, recordEnvs, json] {
    rejectOtherEngineOptions(cmd, *a);
    if (!record->empty()) viz::checkOutput(*record);  // before the evaluation, not after it
    Recording recording;
    recording.envs = record->empty() ? 0 : *recordEnvs;
    print(runEvaluation(*a, &recording), *json);
    if (recording.rollout) {
      const viz::OutputStats s = viz::writeRollout(*record, *recording.rollout, {});
      // stderr: stdout is the result (one JSON object with --json)
      std::fprintf(stderr, "rollout of %zu env(s) written to %s (%ld kB)\n",
                   recording.rollout->envs.size(), record->c_str(), s.bytes / 1024);
    }
    return 0;
  };
}

}  // namespace diffloco::cli
