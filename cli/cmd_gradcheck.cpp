// `diffloco gradcheck`: the backward pass against central finite differences.
#include <cstdio>
#include <stdexcept>

#include "cli/commands.h"
#include "experiments/gradcheck.h"
#include "io/json.h"

namespace diffloco::cli {

Runner addGradcheckCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gradcheck", "Check the simulator's hand-written gradients against finite differences");
  struct Args {
    std::string robot = "anymal", contact = "smoothed";
    GradcheckOptions o;
    bool json = false;
    double tol = 1e-5;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--robot", a->robot, "robot name or YAML path")->capture_default_str();
  cmd->add_option("--contact", a->contact, "hard | smoothed | soft")->capture_default_str();
  cmd->add_option("--horizon", a->o.horizon, "steps H")->capture_default_str()->check(
      CLI::Range(1, 1000));
  cmd->add_option("--state", a->o.state, "contact | distance")
      ->capture_default_str()
      ->check(CLI::IsMember({"contact", "distance"}));
  cmd->add_option("--terrain", a->o.terrain,
                  "flat | slope (15 %, the robot tilted onto it) | bump (3 cm) | step (a 3 cm edge "
                  "under the front feet)")
      ->capture_default_str()
      ->check(CLI::IsMember(gradcheckTerrains()));
  cmd->add_option("--slide", a->o.slide, "initial speed along the ground [m/s]")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0));
  cmd->add_option("--eps", a->o.eps, "finite-difference step")
      ->capture_default_str()
      ->check(CLI::Range(1e-12, 1.0));
  cmd->add_option("--seed", a->o.seed, "scenario seed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4294967295.0));
  cmd->add_option("--tol", a->tol, "exit code 1 when the worst relative error exceeds this")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_flag("--json", a->json, "print one JSON object");
  return [a] {
    Robot robot = loadRobot(a->robot);
    const sim::ContactModel cm = sim::parseContactModel(a->contact);
    if (cm == sim::ContactModel::StraightThrough)
      throw std::invalid_argument(
          "gradcheck: straight_through's backward pass is the smoothed model's derivative by "
          "design, so it does not match differences of its (hard) forward pass; check "
          "--contact smoothed and --contact hard instead");
    const sim::SimOptions opt = defaultSimOptions(robot, cm);
    const GradcheckReport r = gradcheck(robot, opt, a->o);
    if (a->json) {
      nlohmann::ordered_json groups = nlohmann::ordered_json::object();
      for (const auto& g : r.groups)
        groups[g.name] = {{"size", g.size},
                          {"rel_error", io::jsonNumber(g.relError)},
                          {"grad_norm", io::jsonNumber(g.gradNorm)},
                          {"excluded", g.excluded}};
      const nlohmann::ordered_json j{{"robot", robot.name},
                                     {"contact", a->contact},
                                     {"state", a->o.state},
                                     {"terrain", a->o.terrain},
                                     {"slide", a->o.slide},
                                     {"horizon", a->o.horizon},
                                     {"active_contacts", r.activeContacts},
                                     {"worst_rel_error", io::jsonNumber(r.worst)},
                                     {"groups", groups}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("gradcheck %s, %s contact, %s, %s ground, horizon %d (%d contacts at start)\n",
                  robot.name.c_str(), a->contact.c_str(), a->o.state.c_str(),
                  a->o.terrain.c_str(), a->o.horizon, r.activeContacts);
      std::printf("%-20s %6s %12s %12s %9s\n", "input", "size", "rel. error", "|grad|_inf",
                  "excluded");
      for (const auto& g : r.groups)
        std::printf("%-20s %6d %12.3e %12.3e %9d\n", g.name.c_str(), g.size, g.relError,
                    g.gradNorm, g.excluded);
      std::printf("worst relative error %.3e (tolerance %.1e): %s\n", r.worst, a->tol,
                  r.worst <= a->tol ? "ok" : "FAILED");
    }
    return r.worst <= a->tol ? 0 : 1;
  };
}

}  // namespace diffloco::cli
