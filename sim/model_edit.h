// Edits of a loaded Model that a robot description asks for: the joint order of the policy and the
// choice of feet. Each returns a new, finalized Model; the input is left as it is.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model.h"

namespace diffloco::sim {

// The same robot with its joints (and their bodies) in `order`: after this, joint i of the model is
// order[i], so q, v, actions and observations all follow the caller's order and nothing downstream
// needs a map. The simulator only needs a parent body before its children, so `order` may list the
// legs in any order, or all hips first, then all thighs (IsaacLab's order); a joint listed before
// the joint that carries it is refused. Throws std::invalid_argument naming the joint: unknown,
// listed twice, missing, or listed before its parent.
Model reorderJoints(const Model& model, const std::vector<std::string>& order);

// The same robot with only the feet on the named links, in the order of `links`, and as its leg
// spheres (Model::legSpheres) every collision sphere on the links in `legLinks`, both taken from
// all of the model's spheres (feet and leg spheres); other spheres are dropped. Throws
// std::invalid_argument for a foot link with no collision sphere or with more than one, a leg link
// with none, a link listed twice or named in both lists.
Model selectFeet(const Model& model, const std::vector<std::string>& links,
                 const std::vector<std::string>& legLinks = {});

// The feet a robot file would name when it names none: on every leaf body (one that moves no other
// body), the collision sphere farthest from that body's joint, i.e. the end of the leg; in the
// model's body order. Leaves without a sphere are skipped.
std::vector<std::string> findFeet(const Model& model);

}  // namespace diffloco::sim
