#include "distributed/communicator.h"

#define USE_C10D_GLOO  // Debian's libtorch_cpu is built with Gloo; its header needs the macro
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace diffloco::distributed {

namespace {

// An integer environment variable in [lo, hi], or `fallback` when unset.
long long intVariable(const char* name, long long lo, long long hi, long long fallback) {
  const char* text = std::getenv(name);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
    throw std::runtime_error("environment variable " + std::string(name) + "='" + text +
                             "': expected an integer in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
  return v;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string describe(const World& w) {
  return "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size);
}

}  // namespace

World worldFromEnvironment() {
  World w;
  const bool any = std::getenv("RANK") || std::getenv("WORLD_SIZE");
  if (!any) return w;
  if (!std::getenv("RANK") || !std::getenv("WORLD_SIZE"))
    throw std::runtime_error(
        "environment: RANK and WORLD_SIZE must be set together (torchrun's conventions)");
  w.size = static_cast<int>(intVariable("WORLD_SIZE", 1, 65536, 1));
  w.rank = static_cast<int>(intVariable("RANK", 0, w.size - 1, 0));
  w.localSize = static_cast<int>(intVariable("LOCAL_WORLD_SIZE", 1, w.size, 1));
  w.localRank = static_cast<int>(intVariable("LOCAL_RANK", 0, w.size - 1, w.rank));
  if (const char* addr = std::getenv("MASTER_ADDR")) {
    if (!*addr) throw std::runtime_error("environment variable MASTER_ADDR is empty");
    w.masterAddr = addr;
  }
  w.masterPort = static_cast<int>(intVariable("MASTER_PORT", 1, 65535, 29500));
  if (const char* t = std::getenv("DIFFLOCO_DIST_TIMEOUT_S")) {
    char* end = nullptr;
    const double s = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(s >= 1 && s <= 86400))
      throw std::runtime_error("environment variable DIFFLOCO_DIST_TIMEOUT_S='" + std::string(t) +
                               "': expected seconds in [1, 86400]");
    w.timeoutS = s;
  }
  return w;
}

struct Communicator::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  std::chrono::milliseconds timeout;
};

namespace {

c10::intrusive_ptr<c10d::ProcessGroupGloo> makeGroup(const c10::intrusive_ptr<c10d::Store>& store,
                                                     const std::string& name, const World& w,
                                                     std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // GLOO_SOCKET_IFNAME picks the network interface (as in PyTorch); otherwise the one the
  // hostname resolves to.
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  options->devices.push_back(ifname && *ifname
                                 ? c10d::ProcessGroupGloo::createDeviceForInterface(ifname)
                                 : c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(
      c10::make_intrusive<c10d::PrefixStore>(name, store), w.rank, w.size, options);
}

}  // namespace

Communicator::Communicator() = default;

Communicator::Communicator(const World& world) : world_(world) {
  if (world.size <= 1) return;
  const auto timeout = std::chrono::milliseconds(std::llround(world.timeoutS * 1000));
  const std::string where = world.masterAddr + ":" + std::to_string(world.masterPort);
  group_ = std::make_shared<Group>();
  group_->timeout = timeout;
  try {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(world.masterPort);
    // Under torchrun its agent already serves the store on MASTER_PORT: every rank is a client.
    const char* agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    o.isServer = world.rank == 0 && !(agentStore && std::string(agentStore) == "True");
    o.numWorkers = world.size;
    o.waitWorkers = true;
    o.timeout = timeout;
    group_->store = c10::make_intrusive<c10d::TCPStore>(world.masterAddr, o);
  } catch (const std::exception& e) {
    throw std::runtime_error("distributed (" + describe(world) + "): could not " +
                             (world.rank == 0 ? "serve the store at " + where + " (port in use?)"
                                              : "reach the master at " + where) +
                             " within " + seconds(world.timeoutS) + ": " + e.what());
  }
  try {
    group_->pg = makeGroup(group_->store, "main", world, timeout);
  } catch (const std::exception& e) {
    throw std::runtime_error("distributed (" + describe(world) +
                             "): could not form the process group at " + where + ": " + e.what());
  }
}

Communicator Communicator::group(const std::string& name) const {
  Communicator c;
  c.world_ = world_;
  if (!group_) return c;
  c.group_ = std::make_shared<Group>(*group_);
  try {
    c.group_->pg = makeGroup(group_->store, name, world_, group_->timeout);
  } catch (const std::exception& e) {
    throw std::runtime_error("distributed (" + describe(world_) + "): could not form group '" +
                             name + "': " + e.what());
  }
  return c;
}

namespace {

// Runs a collective and waits for it; a failure names the operation and the rank.
void run(const World& w, const char* what,
         const std::function<c10::intrusive_ptr<c10d::Work>()>& op) {
  try {
    op()->wait();
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (const auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    throw std::runtime_error("distributed (" + describe(w) + "): " + what + " failed: " + msg +
                             ". Another rank has died or stalled for longer than the timeout (" +
                             seconds(w.timeoutS) + ", DIFFLOCO_DIST_TIMEOUT_S)");
  }
}

}  // namespace

void Communicator::allReduceSum(at::Tensor& t) const {
  if (!group_) return;
  std::vector<at::Tensor> v{t};
  run(world_, "all-reduce", [&] { return group_->pg->allreduce(v); });
}

double Communicator::allReduceSum(double x) const {
  if (!group_) return x;
  at::Tensor t = at::full({1}, x, at::kDouble);
  allReduceSum(t);
  return t.item<double>();
}

bool Communicator::any(bool x) const {
  return allReduceSum(x ? 1.0 : 0.0) > 0;
}

void Communicator::broadcast(at::Tensor& t, int root) const {
  if (!group_) return;
  std::vector<at::Tensor> v{t};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  run(world_, "broadcast", [&] { return group_->pg->broadcast(v, o); });
}

std::vector<at::Tensor> Communicator::allGather(const at::Tensor& t) const {
  if (!group_) return {t};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < world_.size; ++r) out[0].push_back(at::empty_like(t));
  std::vector<at::Tensor> in{t.contiguous()};
  run(world_, "all-gather", [&] { return group_->pg->allgather(out, in); });
  return out[0];
}

std::vector<std::string> Communicator::allGatherBytes(const std::string& bytes) const {
  if (!group_) return {bytes};
  const std::vector<at::Tensor> sizes =
      allGather(at::full({1}, static_cast<std::int64_t>(bytes.size()), at::kLong));
  std::int64_t longest = 0;
  for (const auto& s : sizes) longest = std::max(longest, s.item<std::int64_t>());
  at::Tensor mine = at::zeros({std::max<std::int64_t>(longest, 1)}, at::kByte);
  std::memcpy(mine.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  const std::vector<at::Tensor> all = allGather(mine);
  std::vector<std::string> out;
  for (int r = 0; r < world_.size; ++r) {
    const auto* p = reinterpret_cast<const char*>(all[r].data_ptr<std::uint8_t>());
    out.emplace_back(p, p + sizes[r].item<std::int64_t>());
  }
  return out;
}

std::string Communicator::broadcastBytes(const std::string& bytes, int root) const {
  if (!group_) return bytes;
  at::Tensor size = at::full({1}, static_cast<std::int64_t>(bytes.size()), at::kLong);
  broadcast(size, root);
  const std::int64_t n = size.item<std::int64_t>();
  at::Tensor data = at::zeros({std::max<std::int64_t>(n, 1)}, at::kByte);
  if (world_.rank == root) std::memcpy(data.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  broadcast(data, root);
  const auto* p = reinterpret_cast<const char*>(data.data_ptr<std::uint8_t>());
  return std::string(p, p + n);
}

}  // namespace diffloco::distributed
