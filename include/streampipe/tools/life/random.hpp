// SPDX-License-Identifier: Apache-2.0
#pragma once
// The random fill shared by host and device: a cell's state is a pure function of
// (seed, cell index, density), so a GPU fills exactly the board random_board() builds on
// the host without copying it. splitmix64 is the hash (Steele, Lea, Flood 2014).

#include <cmath>
#include <cstdint>
#include <stdexcept>

#if defined(__CUDACC__)
#define SP_LIFE_HD __host__ __device__
#else
#define SP_LIFE_HD
#endif

namespace streampipe::tools::life {

SP_LIFE_HD constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// density in [0, 1] as a threshold on 32 random bits; 1.0 gives 2^32 (every cell alive).
inline std::uint64_t density_threshold(double density) {
  if (!(density >= 0.0 && density <= 1.0)) throw std::invalid_argument("density must be in [0, 1]");
  return static_cast<std::uint64_t>(std::llround(density * 4294967296.0));
}

SP_LIFE_HD constexpr bool random_cell(std::uint64_t seed, std::uint64_t index, std::uint64_t threshold) noexcept {
  return (splitmix64(splitmix64(seed) ^ index) >> 32) < threshold;
}

}  // namespace streampipe::tools::life
