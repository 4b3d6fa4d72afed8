// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fixed pseudo-random number per item (splitmix64's finalizer), so that the fault tests'
// plans of which item fails how are reproducible from the item's index alone.

#include <array>
#include <cstddef>
#include <cstdint>

namespace streampipe::testing {

[[nodiscard]] constexpr std::uint64_t scrambled(std::size_t i, std::uint64_t seed) noexcept {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

// Item i's fault in a plan where each of `faults` befalls one item in `period` and the rest
// get F{} (no fault).
template <typename F, std::size_t N>
[[nodiscard]] constexpr F planned_fault(std::size_t i, std::uint64_t seed, std::uint64_t period,
                                        const std::array<F, N>& faults) noexcept {
  const std::uint64_t slot = scrambled(i, seed) % period;
  return slot < N ? faults[slot] : F{};
}

}  // namespace streampipe::testing
