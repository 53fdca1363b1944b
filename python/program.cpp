// The rest of the program as Python functions: train, evaluate, export and the command line
// itself, each calling what the `diffloco` program's subcommand calls. The GIL is released while
// they run; a training's Ctrl-C is the trainer's own (the current iteration ends, a checkpoint is
// written) and then arrives in Python as KeyboardInterrupt.
#include "cli/program.h"

#include <torch/extension.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/evaluation_setup.h"
#include "export/export.h"
#include "python/bindings.h"
#include "train/trainer.h"

namespace py = pybind11;

namespace diffloco::python {
namespace {

py::dict train(const std::string& config, const std::vector<std::string>& overrides,
               std::optional<std::int64_t> seed, const std::string& out, const std::string& resume,
               bool verbose, int stopAfter) {
  train::TrainArgs a;
  a.config = config;
  a.sets = overrides;
  a.seed = seed;
  a.out = out;
  a.resume = resume;
  a.verbose = verbose;
  a.stopAfter = stopAfter;
  const train::TrainResult r = withoutGil([&] { return train::train(a); });
  py::dict d;
  d["run_dir"] = r.runDir;
  d["iteration"] = r.iteration;
  d["finished"] = r.finished;
  // Stopped early but not by stop_after: the trainer's SIGINT handler caught a Ctrl-C.
  if (!r.finished && stopAfter < 0) {
    const std::string msg = "training interrupted at iteration " + std::to_string(r.iteration) +
                            "; continue with diffloco.train(resume=\"" + r.runDir + "\")";
    PyErr_SetString(PyExc_KeyboardInterrupt, msg.c_str());
    throw py::error_already_set();
  }
  return d;
}

// `diffloco eval`'s options as keyword arguments (names with '_' for '-'; True for a flag, a list
// for an option of several values; `set` a list of overrides): parsed by the program's own
// option definitions, so that defaults, ranges and messages are the program's.
py::dict evaluate(const std::string& policy, const py::kwargs& kwargs) {
  std::vector<std::string> args{"eval", policy};
  for (const auto& [key, value] : kwargs) {
    std::string flag = "--" + py::str(key).cast<std::string>();
    for (char& c : flag)
      if (c == '_') c = '-';
    if (py::isinstance<py::bool_>(value)) {
      if (value.cast<bool>()) args.push_back(flag);
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      const bool repeat = flag == "--set";  // --set takes one override per occurrence
      if (!repeat) args.push_back(flag);
      for (const auto& v : value) {
        if (repeat) args.push_back(flag);
        args.push_back(py::str(v));
      }
    } else {
      args.push_back(flag);
      args.push_back(py::str(value));
    }
  }
  CLI::App app;
  auto* cmd = app.add_subcommand("eval");
  cli::EvalArgs a;
  cli::addEvalOptions(cmd, a);
  cli::addEvalCountOptions(cmd, a);
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string("evaluate: ") + e.what());
  }
  cli::rejectOtherEngineOptions(cmd, a);
  const train::EvalResult r = withoutGil([&] { return cli::runEvaluation(a); });
  py::dict d;
  d["task"] = r.task;
  d["contact"] = r.contact;
  d["terrain"] = r.terrain;
  d["engine"] = r.engine;
  for (const auto& [k, v] : r.summary()) d[py::str(k)] = v;
  py::list episodes;
  for (const auto& e : r.episodes) {
    py::dict x;
    x["return"] = e.ret;
    x["length_s"] = e.lengthS;
    x["fell"] = e.fell;
    x["mean_vx"] = e.meanVx;
    x["mean_speed"] = e.meanSpeed;
    x["lin_vel_err2"] = e.linVelErr2;
    x["yaw_rate_err2"] = e.yawRateErr2;
    x["limit_excess"] = e.limitExcess;
    episodes.append(x);
  }
  d["episode_stats"] = episodes;
  return d;
}

py::dict exportPolicy(const std::string& run, const std::string& out, const std::string& format,
                      const std::string& config) {
  const deploy::ExportResult r = withoutGil(
      [&] { return deploy::exportPolicy(run, out, config, deploy::parseExportFormat(format)); });
  py::dict d;
  d["torchscript"] = r.modulePath.empty() ? py::object(py::none()) : py::str(r.modulePath);
  d["onnx"] = r.onnxPath.empty() ? py::object(py::none()) : py::str(r.onnxPath);
  d["yaml"] = r.yamlPath.empty() ? py::object(py::none()) : py::str(r.yamlPath);
  return d;
}

}  // namespace

void bindProgram(py::module_& m) {
  m.def("train", &train, py::arg("config") = "", py::arg("overrides") = std::vector<std::string>{},
        py::arg("seed") = py::none(), py::arg("out") = "runs", py::arg("resume") = "",
        py::arg("verbose") = false, py::arg("stop_after") = -1, R"doc(
`diffloco train CONFIG --set ... [--seed S] [--out DIR] [--resume RUN]`: trains and returns
{"run_dir", "iteration", "finished"}. stop_after: stop after this many iterations (a checkpoint
is written; resume=run_dir continues). Ctrl-C ends the current iteration, writes a checkpoint and
raises KeyboardInterrupt.)doc");
  m.def("evaluate", &evaluate, py::arg("policy"), R"doc(
`diffloco eval POLICY --key value ...` with the options as keyword arguments (episodes=1000,
terrain="pyramid_stairs", engine="mujoco", set=["randomization.push_velocity=0"], json is
implied): the summary (falls, lin_vel_rms, yaw_rate_rms, return_mean, ...) and "episode_stats",
one dict per episode.)doc");
  m.def("export", &exportPolicy, py::arg("run"), py::arg("out"), py::arg("format") = "torchscript",
        py::arg("config") = "", R"doc(
`diffloco export RUN -o OUT --format F`: the deployable policy; returns the paths written
{"torchscript", "onnx", "yaml"} (None: not written).)doc");
  m.def(
      "cli",
      [](const std::vector<std::string>& args) {
        return withoutGil([&] { return cli::runProgram(args); });
      },
      py::arg("args"), "runs the diffloco program with these arguments; returns its exit code");
}

}  // namespace diffloco::python
