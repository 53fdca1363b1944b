// `diffloco robot init ROBOT.urdf -o robot.yaml`: propose a robot YAML for a URDF.
// `diffloco robot check robot.yaml [--task T]`: mass, inertia, joints, standing height, a standing
// test in hard contact and every warning; with a task, what standing and a trot in place earn under
// its rewards. The work is in robots/robot_tools.h and envs/stepping_incentive.h; this file parses
// and prints.
#include "cli/cmd_robot.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "envs/stepping_incentive.h"
#include "io/atomic_file.h"
#include "robots/robot_tools.h"
#include "train/config.h"

namespace diffloco::cli {

namespace {
struct RobotArgs {
  std::string urdf, output = "robot.yaml", yaml, task;
  std::vector<std::string> sets;
  bool force = false;
  StandOptions stand;
  envs::SteppingIncentiveOptions stepping;
};
}  // namespace

Runner addRobotCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("robot", "Bring your own robot: propose and check a robot YAML");
  cmd->require_subcommand(1);
  auto a = std::make_shared<RobotArgs>();
  auto* init = cmd->add_subcommand("init",
                                   "Propose a robot YAML for a URDF (joint order, feet, "
                                   "standing pose and height, torque limit; for mesh feet, a "
                                   "URDF with fitted foot spheres beside it)");
  init->add_option("urdf", a->urdf, "the robot's URDF")->required()->check(CLI::ExistingFile);
  init->add_option("-o,--output", a->output, "the YAML to write")->capture_default_str();
  init->add_flag("--force", a->force, "overwrite an existing output file");
  init->add_option("--kp", a->stand.kp,
                   "PD stiffness to propose and stand the robot with [N m/rad] (default 8 N m/rad "
                   "per kg)")
      ->check(CLI::Range(0.0, 1e6));
  init->add_option("--kd", a->stand.kd, "PD damping [N m s/rad] (default kp / 20)")
      ->check(CLI::Range(0.0, 1e6));
  auto* check = cmd->add_subcommand("check",
                                    "Print mass, inertia, joints, standing height, a "
                                    "standing test in hard contact and every warning");
  check->add_option("robot", a->yaml, "robot name in configs/robots or a YAML path")->required();
  check->add_option("--kp", a->stand.kp, "PD stiffness [N m/rad] (default 8 N m/rad per kg)")
      ->check(CLI::Range(0.0, 1e6));
  check->add_option("--kd", a->stand.kd, "PD damping [N m s/rad] (default kp / 20)")
      ->check(CLI::Range(0.0, 1e6));
  check->add_option("--seconds", a->stand.seconds, "length of the standing test [s]")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  check->add_option("--task", a->task,
                    "also roll the robot out standing and trotting in place under this task's "
                    "rewards (a name from configs/tasks or a path), on the flat floor, and warn "
                    "when standing pays as well as stepping");
  check->add_option("--set", a->sets,
                    "a task key for --task, as in eval: rewards.foot_height_tracking.height=0.08");
  check->add_option("--task-seconds", a->stepping.seconds, "length of each --task rollout [s]")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  check->add_option("--task-envs", a->stepping.envs, "envs per --task rollout")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  return [a, init, check]() -> int {
    if (init->parsed()) {
      if (!a->force && std::filesystem::exists(a->output)) {
        spdlog::error("robot init: {} exists (use --force to overwrite)", a->output);
        return 1;
      }
      std::vector<std::string> log;
      std::string sphereFeet;
      const std::string yaml = proposeRobotYaml(a->urdf, a->output, &log, a->stand, &sphereFeet);
      for (const auto& l : log) std::printf("%s\n", l.c_str());
      if (!sphereFeet.empty()) {
        const std::string path = sphereFeetUrdfPath(a->output);
        if (!a->force && std::filesystem::exists(path)) {
          spdlog::error("robot init: {} exists (use --force to overwrite)", path);
          return 1;
        }
        io::writeFileAtomic(path, sphereFeet);
        spdlog::info("robot init: wrote {} (the URDF with the fitted foot spheres)", path);
      }
      io::writeFileAtomic(a->output, yaml);
      spdlog::info("robot init: wrote {}; check it with `diffloco robot check {}`", a->output,
                   a->output);
      return 0;
    }
    RobotReport report;
    const Robot robot = loadRobot(a->yaml, &report);
    const StandResult s = standingTest(robot, a->stand);
    std::printf("%s", robotReport(robot, report, s).c_str());
    if (!a->task.empty()) {
      std::vector<std::string> sets = a->sets;
      sets.insert(sets.begin(), "robot=" + a->yaml);
      const envs::TaskConfig task = train::loadTaskWithSets(a->task, sets);
      std::printf(
          "\n%s",
          envs::steppingIncentiveReport(envs::measureSteppingIncentive(task, a->stepping)).c_str());
    }
    return s.stood ? 0 : 2;  // 2: loads, but does not stand
  };
}

}  // namespace diffloco::cli
