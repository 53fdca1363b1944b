#include "export/open_policy.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "io/zip_archive.h"
#include "policies/error_message.h"

namespace diffloco::deploy {

namespace fs = std::filesystem;

namespace {

// The file (its checked bytes) as an exported policy (TorchScript with a metadata_json
// attribute); false if it is not.
bool openExported(const std::string& path, const std::string& bytes, OpenedPolicy& out) {
  torch::jit::Module m;
  try {
    std::istringstream in(bytes);
    m = torch::jit::load(in);
  } catch (const std::exception&) {  // c10::Error, or TorchScript's frontend errors
    return false;
  }
  if (!m.hasattr("metadata_json")) return false;
  const c10::IValue json = m.attr("metadata_json");
  if (!json.isString())
    throw std::runtime_error(path + ": an exported file whose metadata_json is not text");
  m.eval();
  out.kind = OpenedPolicy::Kind::kExported;
  out.exported = parsePolicyMetadata(json.toStringRef(), path);
  out.module = std::make_shared<torch::jit::Module>(std::move(m));
  return true;
}

// The file as a training checkpoint (model_<N>.pt): its actor and the config saved in it; false if
// it is not one.
bool openCheckpoint(const std::string& path, const std::string& bytes, OpenedPolicy& out) {
  torch::serialize::InputArchive a;
  try {
    a.load_from(bytes.data(), bytes.size());
  } catch (const std::exception&) {
    return false;
  }
  c10::IValue format, config;
  if (!a.try_read("format", format) || !format.isString() ||
      format.toStringRef() != "diffloco-checkpoint-1")
    return false;
  if (!a.try_read("config", config) || !config.isString())
    throw std::runtime_error(path + ": checkpoint without its config");
  out.kind = OpenedPolicy::Kind::kCheckpoint;
  out.config = train::parseTrainConfig(config.toStringRef(), path + " (config)");
  out.configFile = path;
  try {
    out.actor = policies::readActor(a);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": a damaged checkpoint (" + policies::messageOf(e) + ")");
  }
  return true;
}

}  // namespace

OpenedPolicy openPolicy(const std::string& path, const std::string& configPath) {
  OpenedPolicy out;
  fs::path file = path;
  const fs::path dir = fs::is_directory(file) ? file : file.parent_path();
  if (fs::is_directory(file)) file /= "policy.pt";
  if (!fs::exists(file))
    throw std::runtime_error(file.string() +
                             ": not found (expected a run folder with policy.pt, a policy.pt, a "
                             "checkpoint model_<N>.pt or a file written by diffloco export)");
  if (fs::is_directory(file) || !fs::is_regular_file(fs::status(file)))
    throw std::runtime_error(file.string() + ": not a regular file");
  out.file = file.string();

  // Checked before LibTorch reads it, and read once: each kind is tried on the same bytes.
  const std::string bytes = io::readCheckedZipArchive(out.file);
  if (openExported(out.file, bytes, out)) {
    out.taskYaml = out.exported.taskYaml;
    out.taskSource = out.file + " (task_yaml)";
    out.taskName = out.exported.task;
    return out;
  }
  if (!openCheckpoint(out.file, bytes, out)) {
    policies::LoadedPolicy p = policies::loadPolicyBytes(out.file, bytes);
    out.kind = OpenedPolicy::Kind::kPolicyFile;
    out.actor = p.actor;
    out.metadata = std::move(p.metadata);
  }
  out.actor->eval();

  // How it was trained: the checkpoint's config, else the one given, else config.yaml beside it.
  if (!out.config) {
    const fs::path config = configPath.empty() ? dir / "config.yaml" : fs::path(configPath);
    if (!configPath.empty() && !fs::exists(config))
      throw std::runtime_error(configPath + ": no such training config");
    if (fs::exists(config)) {
      out.config = train::loadTrainConfig(config.string());
      out.configFile = config.string();
    }
  }
  // The task: the file's own record first.
  const auto recorded = out.metadata.find("task_yaml");
  if (recorded != out.metadata.end()) {
    out.taskYaml = recorded->second;
    out.taskSource = out.file + " (task_yaml)";
  } else if (out.config) {
    out.taskYaml = envs::toYaml(out.config->task);
    out.taskSource = out.configFile + " (task)";
  }
  const auto name = out.metadata.find("task");
  out.taskName = name != out.metadata.end() ? name->second
                 : out.config               ? out.config->task.name
                                            : "";
  return out;
}

}  // namespace diffloco::deploy
