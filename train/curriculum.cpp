#include "train/curriculum.h"

#include <algorithm>
#include <stdexcept>

#include "config/did_you_mean.h"
#include "envs/locomotion_env.h"
#include "envs/task_config.h"

namespace diffloco::train {

void applyCurriculum(const CurriculumConfig& c, int iteration, envs::LocomotionEnv& env,
                     bool newRun) {
  env.setCommandScale(c.commands.at(iteration));
  env.setResetNoiseScale(c.resetNoise.at(iteration));
  env.setEpisodeLengthScale(c.episodeLength.at(iteration));
  env.setCommandResampleScale(c.commandResample.at(iteration));
  for (const auto& [name, weight] : c.rewards) env.setRewardWeight(name, weight.at(iteration));
  if (newRun && (env.commandScale() != 1 || env.resetNoiseScale() != 1)) env.reset();
}

envs::TaskConfig trainedTask(const CurriculumConfig& c, const envs::TaskConfig& task) {
  envs::TaskConfig t = task;
  for (const auto& entry : c.rewards) {
    const std::string& name = entry.first;  // (a lambda cannot capture a structured binding)
    const auto has = [&](const envs::TermConfig& r) { return r.name == name; };
    if (std::any_of(t.rewards.begin(), t.rewards.end(), has)) continue;
    envs::TermConfig term;
    term.name = name;
    term.def = envs::findTerm(envs::TermKind::Reward, name);
    if (!term.def) {
      std::vector<std::string> known;
      for (const auto& d : envs::termRegistry(envs::TermKind::Reward)) known.push_back(d.name);
      throw std::runtime_error("curriculum.rewards." + name + ": unknown reward term '" + name +
                               "'" + config::didYouMean(name, known));
    }
    std::map<std::string, std::vector<double>> params;
    for (const auto& p : term.def->params) params[p.name] = p.value;
    term.params = envs::TermParams(std::move(params));
    term.weight = entry.second.at(0);
    t.rewards.push_back(term);
  }
  return t;
}

}  // namespace diffloco::train
