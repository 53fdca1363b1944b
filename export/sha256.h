// SHA-256 of a byte string as 64 lowercase hex digits (FIPS 180-4). The exported metadata hashes
// the embedded robot URDF and the training config with it, so that a reader can tell whether the
// robot it has is the one the policy was trained on (Python: hashlib.sha256(text).hexdigest()).
// Plain C++: the robot-side library takes no crypto dependency for one checksum.
#pragma once

#include <string>

namespace diffloco::deploy {

std::string sha256Hex(const std::string& bytes);

}  // namespace diffloco::deploy
