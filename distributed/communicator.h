// Data-parallel training's collectives on torch.distributed's c10d (ProcessGroupGloo over a
// TCPStore, CPU tensors): which process this is among how many, and the few operations SHAC and
// PPO need. A world of one process has no process group and every collective leaves its input as
// it is, so that the algorithms have one code path.
//
// Processes meet at MASTER_ADDR:MASTER_PORT, where rank 0 serves the store (torchrun's
// conventions, worldFromEnvironment()). Every operation waits at most the world's timeout and then
// throws naming the operation and this rank: a rank that died or stalls stops the others instead
// of hanging them. Collectives of one group must be issued in the same order on every rank; a
// second thread issuing collectives needs its own group (group()).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace diffloco::distributed {

struct World {
  int rank = 0;
  int size = 1;
  int localRank = 0;  // rank among the processes of this machine
  int localSize = 1;  // processes on this machine (they share its cores)
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  double timeoutS = 300;  // longest wait of any operation, joining included
};

// torchrun's variables RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// and DIFFLOCO_DIST_TIMEOUT_S (seconds; default 300); GLOO_SOCKET_IFNAME picks the network
// interface. None set: a world of one. Throws naming the
// variable and the accepted range on a bad value.
World worldFromEnvironment();

class Communicator {
 public:
  Communicator();  // a world of one
  // Joins the world: blocks until every rank has joined, or throws after the timeout naming the
  // master's address (unreachable, or a port in use on rank 0).
  explicit Communicator(const World& world);

  int rank() const { return world_.rank; }
  int size() const { return world_.size; }
  bool isMain() const { return world_.rank == 0; }
  const World& world() const { return world_; }

  // Another group over the same processes (collective: every rank calls it, with the same name).
  Communicator group(const std::string& name) const;

  // In place, on every rank: the elementwise sum over the ranks (contiguous CPU tensor).
  void allReduceSum(at::Tensor& t) const;
  double allReduceSum(double x) const;
  // true on every rank when it is true on any.
  bool any(bool x) const;
  // In place: root's values on every rank (same shape and dtype everywhere).
  void broadcast(at::Tensor& t, int root = 0) const;
  // Every rank's tensor, in rank order (same shape and dtype on every rank).
  std::vector<at::Tensor> allGather(const at::Tensor& t) const;
  // Every rank's bytes, in rank order (any lengths).
  std::vector<std::string> allGatherBytes(const std::string& bytes) const;
  // root's bytes on every rank.
  std::string broadcastBytes(const std::string& bytes, int root = 0) const;

 private:
  struct Group;
  World world_;
  std::shared_ptr<Group> group_;  // null in a world of one
};

}  // namespace diffloco::distributed
