// Checkpoints of a training run (model_<iter>.pt in the run folder): a torch archive with the
// format tag "diffloco-checkpoint-1", the resolved training config, the world size, the
// algorithm's whole state (networks, optimisers, normaliser, generator, iteration) and the env's
// (LocomotionEnv::stateDict()), so that a resumed run continues bit for bit. Opening one checks
// the archive before LibTorch reads it (io/zip_archive.h); every error names the file.
#pragma once

#include <string>

namespace diffloco::algorithms {
class Algorithm;
}
namespace diffloco::distributed {
class Communicator;
}
namespace diffloco::envs {
class LocomotionEnv;
}

namespace diffloco::train {

// <dir>/model_<iteration>.pt
std::string checkpointPath(const std::string& dir, int iteration);

// Writes the checkpoint atomically (a reader sees the old file or the complete new one). In a
// distributed run the networks, optimisers and generator are the same on every rank; each rank's
// envs and episode statistics are its own: rank 0 writes its state and stores every other rank's
// complete state, serialised, under ranks/<r>. Collective: every rank calls it.
void saveCheckpoint(const distributed::Communicator& comm, const std::string& path,
                    algorithms::Algorithm& algo, envs::LocomotionEnv& env,
                    const std::string& configYaml);

// Resume: rank 0 reads the checkpoint and sends it to every rank, which loads its own part (the
// run folder need not be visible to the other machines). A file that is not a checkpoint, is
// damaged, or was written for other networks, another env or another world size is an error
// naming it. Collective.
void loadCheckpoint(const distributed::Communicator& comm, const std::string& path,
                    algorithms::Algorithm& algo, envs::LocomotionEnv& env);

// init_from: the networks and normaliser of a checkpoint (a file, or a run folder's newest) of the
// same algorithm, or the actor and its normaliser of a policy file (either algorithm's, the same
// actor settings; the critic keeps its initialisation); everything else of the new run starts
// fresh. Errors begin with "init_from: " and name the file.
void warmStart(const std::string& from, algorithms::Algorithm& algo);

}  // namespace diffloco::train
