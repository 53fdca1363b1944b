// Settings of the actor, the critic and the observation normaliser, as written under `policy:` in
// a training config (configs/*.yaml). Plain data with a Drake-style visit(): train/config.h reads
// and writes it strictly from YAML; nothing here depends on YAML or torch.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace diffloco::policies {

struct PolicyConfig {
  std::vector<int> actorHidden{128, 64, 32};  // Table 6 / 9
  std::vector<int> criticHidden{64, 64};      // Table 6 / 9
  std::string activation = "elu";             // Table 6
  // LayerNorm after every hidden activation: SHAC's reference networks have it (algorithms.md 1.2),
  // rsl_rl's do not.
  bool layerNorm = false;
  double initStd = 1.0;  // initial std of the Gaussian (rsl_rl 1.0; SHAC exp(-1) = 0.368)
  // Squashing of the Gaussian sample before it reaches the env: "tanh" is SHAC's convention (a
  // smooth bound, so pathwise gradients do not vanish at the env's clip), "none" is rsl_rl's.
  std::string squash = "none";
  // tanh's bound b: the action is b tanh(a / b), within (-b, b) with slope 1 at 0, so that a
  // policy warm-started from one of another bound acts alike where it did not saturate. 1: tanh.
  // One bound for every action, or one per action (a joint whose range must stay narrow).
  std::vector<double> squashBound{1.0};
  // Whether a bound differs from 1 (the squash is then not plain tanh).
  bool squashBounded() const {
    return std::any_of(squashBound.begin(), squashBound.end(), [](double b) { return b != 1.0; });
  }
  bool normalizeObservations = true;
  // (x - mean) / sqrt(var + eps): SHAC's RunningMeanStd form.
  double normalizerEps = 1e-5;

  template <class V>
  void visit(V& v) {
    v.field("actor_hidden", actorHidden, "hidden layer widths of the actor MLP", V::positive());
    v.field("critic_hidden", criticHidden, "hidden layer widths of the critic MLP", V::positive());
    v.field("activation", activation, "hidden activation", V::oneOf({"elu", "relu", "tanh"}));
    v.field("layer_norm", layerNorm, "LayerNorm after every hidden activation (SHAC reference)");
    v.field("init_std", initStd, "initial standard deviation of the Gaussian actor",
            V::greater(0));
    v.field("squash", squash, "squashing of the action sample: tanh (SHAC) or none (rsl_rl)",
            V::oneOf({"none", "tanh"}));
    v.field("squash_bound", squashBound,
            "tanh squash: actions b tanh(a / b) in (-b, b), slope 1 at 0 (1: tanh); one b for "
            "every action or a list of one per action",
            V::greater(0).orScalar());
    v.field("normalize_observations", normalizeObservations,
            "running mean/variance observation normaliser (part of the actor)");
    v.field("normalizer_eps", normalizerEps, "eps in (x - mean) / sqrt(var + eps)", V::greater(0));
  }
};

}  // namespace diffloco::policies
