#include "sim/data.h"

namespace diffloco::sim {

Data::Data(const Model& model)
    : X(model.nbodies()), R(model.nbodies(), Mat3::Identity()), p(model.nbodies(), Vec3::Zero()) {}

}  // namespace diffloco::sim
