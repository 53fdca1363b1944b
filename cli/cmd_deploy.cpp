// `diffloco export RUN -o policy.pt` and `diffloco fit-actuator LOG.csv -o actuator.yaml`
// (export/export.h, ident/actuator_fit.h).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "export/export.h"
#include "ident/actuator_fit.h"

namespace diffloco::cli {

Runner addExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export",
      "Export a trained policy as one TorchScript file (forward(obs) -> action, joint_targets, "
      "actuator_torque, metadata_json) and/or an ONNX file (normaliser + actor, metadata in "
      "metadata_props), plus <stem>.yaml with the metadata (the contract: docs/deploy.md). An "
      "exported file as input is upgraded to the current metadata format");
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>("policy.pt");
  auto config = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("torchscript");
  auto describe = std::make_shared<bool>(false);
  cmd->add_option("run", *run,
                  "run folder (policy.pt + config.yaml), a policy.pt, or an exported file");
  cmd->add_flag("--describe-observations", *describe,
                "print the observation terms' definitions (the exported contract) as Markdown "
                "and exit");
  cmd->add_option("-o,--output", *out,
                  "file to write (.pt; .onnx with --format onnx; both: <stem>.pt and <stem>.onnx)")
      ->capture_default_str();
  cmd->add_option("--config", *config,
                  "training config of the policy (default: config.yaml beside policy.pt)");
  cmd->add_option("--format", *format, "torchscript, onnx, or both")
      ->check(CLI::IsMember({"torchscript", "onnx", "both"}))
      ->capture_default_str();
  return [run, out, config, format, describe] {
    if (*describe) {
      std::printf("%s", deploy::observationDefinitionsMarkdown().c_str());
      return 0;
    }
    if (run->empty()) throw std::runtime_error("export: give a run folder or policy file");
    const deploy::ExportResult r =
        deploy::exportPolicy(*run, *out, *config, deploy::parseExportFormat(*format));
    const auto& m = r.metadata;
    std::string written;
    for (const auto& p : {r.modulePath, r.onnxPath, r.yamlPath})
      if (!p.empty()) written += (written.empty() ? "" : ", ") + p;
    spdlog::info(
        "exported {} ({} observations, {} joints, control dt {} s, {} actuator kp {} kd "
        "{}{}; metadata {}) -> {}",
        m.source, m.numObs, m.numJoints(), m.controlDt, m.contactModel, m.kp, m.kd,
        m.actuatorSource.empty() ? "" : " from " + m.actuatorSource, m.format, written);
    return 0;
  };
}

Runner addFitActuatorCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "fit-actuator",
      "Fit the PD actuator model (kp, kd, delay, effort, speed-torque line, inertia) to a joint "
      "log (CSV: time,q_target,q,qd[,tau]); or write a synthetic log with --synthesize");
  auto log = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>("actuator.yaml");
  auto synth = std::make_shared<std::string>();
  auto fo = std::make_shared<ident::FitOptions>();
  auto dm = std::make_shared<ident::DriveModel>();
  cmd->add_option("log", *log, "joint log CSV");
  cmd->add_option("-o,--output", *out, "fitted actuator YAML")->capture_default_str();
  // Ranges: what a joint drive on a bench can be; absurd values are refused naming the flag
  // (a delay of 1e9 s overflowed the search).
  cmd->add_option("--inertia", fo->inertia,
                  "known effective inertia [kg m^2] (needed when the log has no tau column)")
      ->check(CLI::Range(0.0, 1e3));
  cmd->add_option("--friction", fo->friction, "known Coulomb friction [N m] (no tau column)")
      ->check(CLI::Range(0.0, 1e4));
  cmd->add_option("--damping", fo->damping, "known viscous damping [N m s/rad] (no tau column)")
      ->check(CLI::Range(0.0, 1e4));
  cmd->add_option("--load-inertia", fo->loadInertia,
                  "inertia of the bench load [kg m^2]: armature = fitted inertia - this")
      ->check(CLI::Range(0.0, 1e3));
  cmd->add_option("--max-delay", fo->maxDelay, "largest delay searched [s]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--synthesize", *synth,
                  "write a synthetic log from a known drive to this CSV instead of fitting");
  cmd->add_option("--kp", dm->kp, "synthetic drive: kp [N m/rad]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--kd", dm->kd, "synthetic drive: kd [N m s/rad]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--effort", dm->effort, "synthetic drive: torque limit [N m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e5));
  cmd->add_option("--saturation", dm->saturation, "synthetic drive: stall torque [N m]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e5));
  cmd->add_option("--velocity-limit", dm->velocityLimit, "synthetic drive: no-load speed [rad/s]")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e4));
  cmd->add_option("--true-inertia", dm->inertia, "synthetic drive: inertia [kg m^2]")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1e3));
  cmd->add_option("--true-friction", dm->friction, "synthetic drive: Coulomb friction [N m]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e4));
  cmd->add_option("--delay", dm->delay, "synthetic drive: command delay [s]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  // At least the 100 samples a fit needs (1 kHz), at most an hour (3.6 million samples).
  cmd->add_option("--duration", dm->duration, "synthetic log length [s]")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--seed", dm->seed, "synthetic noise seed")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4294967295.0));
  cmd->add_flag(
      "--no-torque", [dm](int64_t) { dm->withTorque = false; },
      "synthetic log without the tau column");
  return [log, out, synth, fo, dm] {
    if (!synth->empty()) {
      const ident::JointLog l = ident::synthesizeJointLog(*dm);
      char comment[320];
      std::snprintf(comment, sizeof comment,
                    "synthetic drive: kp %g kd %g effort %g saturation %g velocity_limit %g "
                    "inertia %g friction %g damping %g delay %g; noise q %g qd %g tau %g; seed %u",
                    dm->kp, dm->kd, dm->effort, dm->saturation, dm->velocityLimit, dm->inertia,
                    dm->friction, dm->damping, dm->delay, dm->noiseQ, dm->noiseQd, dm->noiseTau,
                    dm->seed);
      ident::writeJointLog(*synth, l, comment);
      spdlog::info("wrote {} ({} samples, {})", *synth, l.size(), comment);
      return 0;
    }
    if (log->empty())
      throw std::runtime_error("fit-actuator: give a joint log CSV or --synthesize");
    const ident::ActuatorFit f = ident::fitActuator(ident::readJointLog(*log), *fo);
    std::printf("%s\n", f.report().c_str());
    ident::writeActuatorYaml(*out, f);
    spdlog::info("wrote {} (use it in a task: actuator: {{file: {}}})", *out, *out);
    return 0;
  };
}

}  // namespace diffloco::cli
