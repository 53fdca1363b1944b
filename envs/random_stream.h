// splitmix64 (Steele, Lea and Flood 2014): the derivation of a run's seeds (algorithms, the
// trainer) and the per-env random streams of LocomotionEnv. Header-only, no torch.
#pragma once

#include <cstdint>

namespace diffloco::envs {

inline constexpr std::uint64_t kSplitmixIncrement = 0x9E3779B97F4A7C15ull;

// splitmix64's output function: a bijective mix of a 64-bit state.
inline std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed derived from (seed, stream): different streams of one seed do not overlap.
inline std::uint64_t deriveSeed(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(seed + kSplitmixIncrement * (stream + 1));
}

// The next U[0, 1) draw of a splitmix64 stream whose state is `state`.
inline double nextUniform(std::uint64_t& state) {
  state += kSplitmixIncrement;
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

}  // namespace diffloco::envs
