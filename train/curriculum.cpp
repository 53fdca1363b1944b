#include "train/curriculum.h"

#include "envs/locomotion_env.h"

namespace diffloco::train {

void applyCurriculum(const CurriculumConfig& c, int iteration, envs::LocomotionEnv& env,
                     bool newRun) {
  env.setCommandScale(c.commands.at(iteration));
  env.setResetNoiseScale(c.resetNoise.at(iteration));
  env.setEpisodeLengthScale(c.episodeLength.at(iteration));
  env.setCommandResampleScale(c.commandResample.at(iteration));
  if (newRun && (env.commandScale() != 1 || env.resetNoiseScale() != 1)) env.reset();
}

}  // namespace diffloco::train
