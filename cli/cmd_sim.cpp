// `diffloco sim`: drop a robot onto flat ground with PD holding its default pose; print a short
// trajectory summary and write every step to CSV.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "io/atomic_file.h"
#include "robots/robot.h"
#include "sim/stage_step.h"
#include "cli/commands.h"

namespace diffloco::cli {

namespace {
struct SimArgs {
  std::string robot = "anymal";
  std::string contact = "smoothed";
  double dt = 0.005, duration = 2.0, drop = 0.1, kappa = 300;
  // The robot's drive (its YAML's task_defaults.actuator) unless given.
  std::optional<double> kp, kd, armature;
  int iterations = 10;
  std::string csv = "sim.csv";
};

int runSim(const SimArgs& a) {
  Robot robot = loadRobot(a.robot);
  sim::Model& model = robot.model;
  for (auto& j : model.joints) j.armature = a.armature.value_or(robot.armature);
  sim::SimOptions opt = robot.simOptions(sim::parseContactModel(a.contact));
  opt.dt = a.dt;
  opt.contact.kappa = a.kappa;
  opt.contact.iterations = a.iterations;
  if (a.kp) opt.actuator.kp = *a.kp;
  if (a.kd) opt.actuator.kd = *a.kd;

  sim::StageStepper stepper(model, opt);  // the stages; throws for a model or options they lack
  const sim::VecX& impulse = stepper.sphereImpulse();
  sim::VecX q = robot.standingConfiguration(), v = sim::VecX::Zero(model.nv());
  q[2] += a.drop;
  sim::VecX qn(model.nq()), vn(model.nv());
  const int steps = static_cast<int>(std::round(a.duration / a.dt));

  io::checkReplaceable(a.csv);  // before the simulation, not after it
  std::ostringstream out;
  out << "t,x,y,z,qw,qx,qy,qz";
  for (const auto& f : model.feet) out << "," << f.name << "_fn";
  out << "\n";
  spdlog::info("sim: robot {} ({:.2f} kg, {} joints, {} feet), contact {}, dt {} s, {} steps",
               robot.name, model.totalMass(), model.nj(), model.nfeet(), a.contact, a.dt, steps);
  std::printf("%8s %10s", "t [s]", "height [m]");
  for (const auto& f : model.feet) std::printf(" %10s", (f.name + " [N]").c_str());
  std::printf("\n");
  const int printEvery = std::max(1, static_cast<int>(std::round(0.1 / a.dt)));
  for (int k = 1; k <= steps; ++k) {
    if (!stepper.step(q, v, robot.defaultJointPos, qn, vn)) {
      spdlog::error("sim: state became non-finite at step {}", k);
      return 1;
    }
    q = qn;
    v = vn;
    out << k * a.dt;
    for (int i = 0; i < 7; ++i) out << "," << q[i];
    for (int f = 0; f < model.nfeet(); ++f) out << "," << impulse[3 * f] / a.dt;
    out << "\n";
    if (k % printEvery == 0 || k == steps) {
      std::printf("%8.3f %10.4f", k * a.dt, q[2]);
      for (int f = 0; f < model.nfeet(); ++f) std::printf(" %10.1f", impulse[3 * f] / a.dt);
      std::printf("\n");
    }
  }
  io::writeFileAtomic(a.csv, out.str());
  double fz = 0;
  for (int f = 0; f < model.nfeet(); ++f) fz += impulse[3 * f] / a.dt;
  spdlog::info("sim: final base height {:.4f} m; total normal force {:.1f} N vs weight {:.1f} N; "
               "wrote {}",
               q[2], fz, model.totalMass() * 9.81, a.csv);
  return 0;
}
}  // namespace

Runner addSimCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("sim", "Drop a robot on the ground with PD holding the default pose");
  auto a = std::make_shared<SimArgs>();
  cmd->add_option("--robot", a->robot, "robot name in configs/robots or a YAML path")
      ->capture_default_str();
  cmd->add_option("--contact", a->contact, "hard | smoothed | soft")->capture_default_str();
  cmd->add_option("--dt", a->dt, "time step [s]")->check(CLI::Range(1e-5, 0.1))->capture_default_str();
  cmd->add_option("--duration", a->duration, "simulated time [s]")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--drop", a->drop, "initial height above the standing height [m]")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--kp", a->kp, "PD stiffness [N m/rad] (default: the robot's)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--kd", a->kd, "PD damping [N m s/rad] (default: the robot's)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--armature", a->armature, "joint armature [kg m^2] (default: the robot's)")
      ->check(CLI::Range(0.0, 1e3));
  cmd->add_option("--kappa", a->kappa, "sigmoid stiffness of the smoothed model [1/m]")
      ->check(CLI::Range(1e-3, 1e6))
      ->capture_default_str();
  cmd->add_option("--iterations", a->iterations, "Gauss-Seidel iterations")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--csv", a->csv, "output CSV")->capture_default_str();
  return [a] { return runSim(*a); };
}

}  // namespace diffloco::cli
