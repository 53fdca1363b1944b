#include "train/checkpoint.h"

#include <spdlog/spdlog.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "algorithms/algorithm.h"
#include "distributed/communicator.h"
#include "envs/locomotion_env.h"
#include "io/atomic_file.h"
#include "io/read_file.h"
#include "io/zip_archive.h"
#include "policies/actor_critic.h"
#include "policies/error_message.h"
#include "runs/run_dir.h"

namespace diffloco::train {
namespace fs = std::filesystem;
using torch::Tensor;

namespace {

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

std::string toBytes(torch::serialize::OutputArchive& a) {
  std::string bytes;
  a.save_to([&bytes](const void* data, size_t n) {
    bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  return bytes;
}

void checkFormat(const std::string& name, torch::serialize::InputArchive& a) {
  c10::IValue format;
  if (!a.try_read("format", format) || !format.isString() ||
      format.toStringRef() != "diffloco-checkpoint-1")
    throw std::runtime_error(name + ": not a diffloco checkpoint");
}

void openCheckpointBytes(const std::string& name, const std::string& bytes,
                         torch::serialize::InputArchive& a) {
  io::checkZipArchive(name, bytes);  // before LibTorch reads it
  try {
    a.load_from(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    throw std::runtime_error(name + ": not a readable checkpoint (" + policies::messageOf(e) + ")");
  }
  checkFormat(name, a);
}

// The algorithm's and the env's state from an opened checkpoint; whatever is missing or of another
// shape is an error naming the file.
void loadState(const std::string& name, torch::serialize::InputArchive& a,
               algorithms::Algorithm& algo, envs::LocomotionEnv& env) {
  try {
    algo.load(a);
    loadEnv(env, a);
  } catch (const std::exception& e) {
    throw std::runtime_error(name + ": a damaged checkpoint (" + policies::messageOf(e) + ")");
  }
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

}  // namespace

std::string checkpointPath(const std::string& dir, int iteration) {
  return (fs::path(dir) / ("model_" + std::to_string(iteration) + ".pt")).string();
}

void saveCheckpoint(const distributed::Communicator& comm, const std::string& path,
                    algorithms::Algorithm& algo, envs::LocomotionEnv& env,
                    const std::string& configYaml) {
  torch::serialize::OutputArchive a;
  a.write("format", c10::IValue(std::string("diffloco-checkpoint-1")));
  a.write("config", c10::IValue(configYaml));
  a.write("world_size", c10::IValue(static_cast<int64_t>(comm.size())));
  algo.save(a);
  saveEnv(env, a);
  if (comm.size() > 1) {
    const auto states = comm.allGatherBytes(comm.isMain() ? std::string() : toBytes(a));
    if (!comm.isMain()) return;
    for (int r = 1; r < comm.size(); ++r) {
      const std::string& b = states[r];
      a.write("ranks/" + std::to_string(r),
              torch::from_blob(const_cast<char*>(b.data()), {static_cast<int64_t>(b.size())},
                               torch::kUInt8)
                  .clone());
    }
  }
  // Atomic: a reader (a resume after a crash) sees the old file or the complete new one.
  io::writeAtomically(path, [&](const std::string& tmp) { a.save_to(tmp); });
}

void loadCheckpoint(const distributed::Communicator& comm, const std::string& path,
                    algorithms::Algorithm& algo, envs::LocomotionEnv& env) {
  const std::string bytes = comm.broadcastBytes(comm.isMain() ? io::readFile(path) : std::string());
  torch::serialize::InputArchive a;
  openCheckpointBytes(path, bytes, a);
  c10::IValue world;
  const int64_t saved = a.try_read("world_size", world) && world.isInt() ? world.toInt() : 1;
  if (saved != comm.size())
    throw std::runtime_error(path + ": written by a run of " + std::to_string(saved) +
                             " rank(s); this one has " + std::to_string(comm.size()) +
                             ": resume with the same world size");
  if (comm.rank() > 0) {
    Tensor mine;
    if (!a.try_read("ranks/" + std::to_string(comm.rank()), mine))
      throw std::runtime_error(path + ": has no state of rank " + std::to_string(comm.rank()));
    const Tensor m = mine.contiguous();
    const auto* p = reinterpret_cast<const char*>(m.data_ptr<std::uint8_t>());
    torch::serialize::InputArchive r;
    const std::string name = path + " (rank " + std::to_string(comm.rank()) + ")";
    openCheckpointBytes(name, std::string(p, p + m.numel()), r);
    loadState(name, r, algo, env);
    return;
  }
  loadState(path, a, algo, env);
}

namespace {

// The settings of an actor that its parameters' shapes do not show.
void checkSameActor(const policies::PolicyConfig& file, const policies::PolicyConfig& run) {
  auto differs = [&](const std::string& key, const std::string& a, const std::string& b) {
    if (a != b)
      throw std::runtime_error("its actor has policy." + key + " " + a + ", this run's " + b);
  };
  auto widths = [](const std::vector<int>& w) {
    std::string s;
    for (int x : w) s += (s.empty() ? "[" : ", ") + std::to_string(x);
    return s + "]";
  };
  differs("actor_hidden", widths(file.actorHidden), widths(run.actorHidden));
  differs("activation", file.activation, run.activation);
  differs("layer_norm", file.layerNorm ? "true" : "false", run.layerNorm ? "true" : "false");
  differs("squash", file.squash, run.squash);
  // Not squash_bound: a fine-tune may widen the tanh's range (its slope at 0 stays 1).
  differs("normalize_observations", file.normalizeObservations ? "true" : "false",
          run.normalizeObservations ? "true" : "false");
}

// An exported policy (`diffloco export`'s TorchScript: the mean's MLP as w<l>, b<l>, ln<l>_w,
// ln<l>_b in the actor's parameter order, the normaliser as obs_mean and obs_scale =
// (var + eps)^-1/2 in float) into the run's actor. The file keeps neither the Gaussian's std (the
// run's policy.init_std stays) nor the number of samples behind the normaliser: its statistics
// are counted as kExportedNormalizerCount samples, so that the run's updates leave them in place.
constexpr double kExportedNormalizerCount = 1e15;

void warmStartFromExported(const std::string& bytes, policies::Actor& actor) {
  std::istringstream in(bytes);
  torch::jit::Module m = torch::jit::load(in);
  std::map<std::string, Tensor> file;
  for (const auto& p : m.named_parameters(false)) file[p.name] = p.value;
  for (const auto& b : m.named_buffers(false)) file[b.name] = b.value;
  const policies::PolicyConfig& cfg = actor->config();
  std::vector<std::string> names;  // the file's MLP tensors in the actor's parameter order
  for (size_t l = 0; l <= cfg.actorHidden.size(); ++l) {
    names.push_back("w" + std::to_string(l));
    names.push_back("b" + std::to_string(l));
    if (l < cfg.actorHidden.size() && cfg.layerNorm) {
      names.push_back("ln" + std::to_string(l) + "_w");
      names.push_back("ln" + std::to_string(l) + "_b");
    }
  }
  if (file.count("ln0_w") != static_cast<size_t>(cfg.layerNorm))
    throw std::runtime_error(std::string("its actor has policy.layer_norm ") +
                             (cfg.layerNorm ? "false" : "true") + ", this run's " +
                             (cfg.layerNorm ? "true" : "false"));
  // The activation and the squashing, from the operations of the file's forward().
  const std::string graph = m.get_method("forward").graph()->toString();
  auto count = [&](const std::string& op) {
    size_t n = 0;
    for (size_t at = graph.find(op); at != std::string::npos; at = graph.find(op, at + 1)) ++n;
    return n;
  };
  const size_t hidden = cfg.actorHidden.size();
  if (cfg.activation != "tanh" && count("aten::" + cfg.activation + "(") != hidden)
    throw std::runtime_error("its actor has another policy.activation than this run's " +
                             cfg.activation);
  const size_t tanhs = (cfg.activation == "tanh" ? hidden : 0) + (cfg.squash == "tanh" ? 1 : 0);
  if (count("aten::tanh(") != tanhs)
    throw std::runtime_error("its actor has another policy.activation or policy.squash than "
                             "this run's (" + cfg.activation + ", " + cfg.squash + ")");
  torch::NoGradGuard noGrad;
  size_t k = 0;
  for (auto& p : actor->named_parameters()) {
    if (p.key() == "log_std") continue;
    if (k == names.size() || !file.count(names[k]) ||
        file.at(names[k]).sizes() != p.value().sizes())
      throw std::runtime_error("the actor's tensor '" + p.key() +
                               "' is missing in the file or has another shape: another "
                               "architecture?");
    p.value().copy_(file.at(names[k++]));
  }
  if (k != names.size() || file.count("w" + std::to_string(hidden + 1)))
    throw std::runtime_error("the file's MLP has another depth: another architecture?");
  auto buffers = actor->named_buffers();
  const Tensor scale = file.at("obs_scale").to(torch::kDouble);
  if (scale.sizes() != buffers["normalizer.mean"].sizes())
    throw std::runtime_error("its observations are " + std::to_string(scale.numel()) +
                             ", this run's " + std::to_string(buffers["normalizer.mean"].numel()));
  buffers["normalizer.mean"].copy_(file.at("obs_mean").to(torch::kDouble));
  buffers["normalizer.var"].copy_(scale.square().reciprocal() - cfg.normalizerEps);
  buffers["normalizer.count"].fill_(kExportedNormalizerCount);
}

}  // namespace

void warmStart(const std::string& from, algorithms::Algorithm& algo) {
  const std::string path = warmStartCheckpoint(from);
  const std::string bytes = io::readFile(path);
  torch::serialize::InputArchive a;
  c10::IValue format;
  std::string error;
  try {
    io::checkZipArchive(path, bytes);  // before LibTorch reads it
    a.load_from(bytes.data(), bytes.size());
    a.try_read("format", format);
  } catch (const std::exception& e) {
    throw std::runtime_error("init_from: " + path + ": not a readable checkpoint (" +
                             policies::messageOf(e) + ")");
  }
  // A policy file (policy.pt) or an exported policy (pretrained/*.pt): its actor and
  // normaliser; the critic keeps its initialisation, so a policy of either algorithm can start a
  // run of the other.
  c10::IValue exportedMeta;
  const bool exported = a.try_read("metadata_json", exportedMeta);
  const bool policyFile =
      exported || (format.isString() && format.toStringRef() == "diffloco-policy-1");
  if (!policyFile) try {
      checkFormat(path, a);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("init_from: " + std::string(e.what()));
    }
  try {
    if (exported) {
      warmStartFromExported(bytes, algo.actor());
      algo.actor()->normalizer()->refresh();
    } else if (policyFile) {
      const policies::Actor loaded = policies::readActor(a);
      checkSameActor(loaded->config(), algo.actor()->config());
      policies::copyModule(*loaded, *algo.actor());
      algo.actor()->normalizer()->refresh();
    } else {
      algo.loadWarmStart(a);
    }
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) throw std::runtime_error("init_from: " + path + ": " + error);
  if (exported)
    spdlog::info("warm start: the actor's mean and its normaliser from the exported policy {} "
                 "(the std is policy.init_std; the critic starts fresh)",
                 path);
  else if (policyFile)
    spdlog::info("warm start: the actor and its normaliser from the policy file {} (the critic "
                 "starts fresh)",
                 path);
  else
    spdlog::info("warm start: networks and normaliser from {}", path);
}

}  // namespace diffloco::train
